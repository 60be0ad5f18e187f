"""PDF files read as Markdown (pypdf): each page's text as paragraphs after its page marker, headings from the
document's outline or, without one, from font sizes.

Each page is extracted once: pypdf's text visitor gives every run of text with its font size and matrices, from
which :class:`_Lines` keeps each line's text, start and effective size (font size × the vertical scale of the
text and ``cm`` matrices: a 10 pt font drawn scaled ×1.8 reads as 18 pt).

* **Paragraphs** (one Markdown line each, ``md_escape``\\ d): a page's lines join until a blank line, a clear
  vertical gap (over 1.3 × the usual line pitch of that size), a jump up the page (a new column), a change of
  size, a bulleted line, or a short line ending a sentence (under 70 % of the page's long lines). A word
  hyphenated at a line end joins again (``contra-`` + ``tação`` → ``contratação``; ``pode-`` + ``-se`` →
  ``pode-se``; before a capital the hyphen stays). A paragraph never runs over a page break, so every chunk
  knows its pages.
* **Headings**: an outline (bookmarks) is the structure the author declared, so each entry is a heading of its
  depth, placed on its destination page before the line that reads as its title (case, spacing, punctuation and
  leading section numbers aside; that line is not repeated as text), else after the page's headings placed
  before it (at the top of its text). Without an outline, size tells: the body size is the size carrying the
  most characters, and a line is a heading when its size is ≥ 1.15 × the body size (larger print is what a
  heading looks like in nearly every layout; bold at body size marks emphasis as often, so weight is not read),
  it has at most 15 words (a large-print paragraph is not one) and it holds a letter (a page number or a year set
  large is not). Distinct heading sizes give the levels, largest = 1 (sizes within 5 % are one level; three at
  most). A heading wrapped over lines of one size is one heading.
* **Running heads and page numbers**: a line of at most 30 words (of any size: a gazette's masthead is often set
  large) among the first or last two lines of at least 60 % of the pages with text (three at least), digits aside
  (``Edição 12 — página 3``), is dropped.
* **Title and author**: the metadata ``/Title`` and ``/Author`` where they hold text other than a placeholder
  (``anonymous``, ``untitled``…, as writers fill in); a ``""`` title lets the caller fall back.

An encrypted file is opened with the empty password (many are, only to restrict printing); one that needs a
password, or a broken file, is :class:`~.formats.Unreadable` (``unreadable``); one with no text on any page (a
scan) is ``no_text``; pages without text among others are a warning.
"""

from __future__ import annotations

import logging
import math
import time
import re
from collections import Counter
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from ..core.kinds import Text
from .formats import FORMATS, Format, Read, Unreadable, lazy, md_escape, md_heading, one_line, page_marker

if TYPE_CHECKING:
    from pypdf import PdfReader

pypdf = lazy("pypdf")

# pypdf logs what it repairs in a broken file on its own logger; the reader says why a file is skipped itself.
logging.getLogger("pypdf").setLevel(logging.ERROR)

#: The most seconds one PDF may take to read (a real gazette reads at 50-250 pages a second): past it the file is
#: skipped as too large, never holding the folder for hours.
MAX_SECONDS = 120
#: A line is a heading (without an outline) when its size is at least this times the body size…
HEADING_RATIO = 1.15
#: … it has at most this many words…
HEADING_WORDS = 15
#: … and the heading sizes give at most this many levels.
HEADING_LEVELS = 3
#: Heading sizes closer than this ratio are one level.
LEVEL_TOLERANCE = 0.95
#: A vertical gap of more than this times the usual line pitch ends a paragraph.
PARAGRAPH_GAP = 1.3
#: The line pitch of a size is this quantile of the distances between its consecutive lines.
PITCH_QUANTILE = 0.2
#: A line ending a sentence that is shorter than this share of the page's long lines ends its paragraph.
SHORT_LINE = 0.7
#: A running head or page number: on the first or last lines of this share of the pages (and of 3 at least).
RUNNING_SHARE = 0.6
#: How many lines at the top and at the bottom of a page can be a running head or foot.
RUNNING_EDGE = 2
#: A running head has at most this many words (a gazette's: "DIÁRIO OFICIAL DO MUNICÍPIO DE … – Edição nº 1.234 – 3 de
#: março de 2026", 16).
RUNNING_WORDS = 30
#: Metadata values that writers fill in when nobody named a title or an author.
PLACEHOLDERS = frozenset({"anonymous", "unknown", "unspecified", "untitled", "none", "null"})
#: How many page numbers a warning lists.
LISTED_PAGES = 20

_NOT_WORD = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d+")
#: Leading section numbers of a compared title (``2 1 `` of ``2.1 Naming``, punctuation already spaces).
_NUMBERING = re.compile(r"^(?:\d+ )+")
_SENTENCE_END = (".", "!", "?", ":", ";")
#: Control characters out of a line (as spaces); DEL is WinAnsi's other code of the bullet (reportlab writes it,
#: pypdf reads it as DEL).
_CONTROLS = {**{c: " " for c in range(32)}, 0x7F: "•"}
#: A line that opens a list item: a bullet, or a dash and a space.
_BULLET = re.compile(r"^(?:[•◦▪▫●○■□►▸➢✓]|[-–—]\s)")


@dataclass(slots=True)
class _Line:
    """One line of a page: its text (spaces collapsed), the height of its baseline where it starts (``y``, in
    user space, up the page) and its effective font size (the size carrying most of its characters, to half a
    point)."""

    text: str
    y: float
    size: float


class _Lines:
    """The text visitor of one page's extraction (``page.extract_text(visitor_text=...)``): collects the page's
    lines (:attr:`lines`) in one pass. pypdf ends each line of its output with ``"\\n"``; a run of text starts
    where its matrices (``tm × cm``) put it."""

    __slots__ = ("lines", "_parts", "_sizes", "_at")

    def __init__(self) -> None:
        self.lines: list[_Line] = []
        self._parts: list[str] = []
        self._sizes: dict[float, int] = {}
        self._at: float | None = None

    def __call__(self, text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        if not text:
            return
        for i, piece in enumerate(text.split("\n")):
            if i:
                self.end()
            if not piece:
                continue
            self._parts.append(piece)
            chars = len(piece) - piece.count(" ")
            if not chars or not piece.strip():
                continue
            scale = math.hypot(tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3])
            effective = round(abs(float(size)) * scale * 2) / 2
            self._sizes[effective] = self._sizes.get(effective, 0) + chars
            if self._at is None:
                self._at = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]

    def end(self) -> None:
        """Close the line being collected (the extraction's end closes the last one)."""
        text = " ".join("".join(self._parts).translate(_CONTROLS).split())
        if text and self._at is not None and self._sizes:
            self.lines.append(_Line(text, self._at, max(self._sizes, key=self._sizes.__getitem__)))
        self._parts, self._sizes, self._at = [], {}, None


def _key(text: str) -> str:
    """``text`` as titles are compared: case, spacing and punctuation aside."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


# -- opening ---------------------------------------------------------------------------------------------------
def _open(data: bytes) -> PdfReader:
    """A reader of ``data``, decrypted with the empty password where it is encrypted.

    Raises:
        Unreadable: ``unreadable``: not a PDF pypdf can read, or encrypted with a password.
    """
    try:
        reader = pypdf.PdfReader(BytesIO(data), strict=False)
    except Exception as exc:
        raise Unreadable("unreadable", f"not a readable PDF ({one_line(exc)})") from exc
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except pypdf.errors.DependencyError as exc:
            raise Unreadable("unreadable", f"encrypted PDF whose cipher cannot be read here ({one_line(exc)})") \
                from exc
        except Exception as exc:
            raise Unreadable("unreadable", f"encrypted PDF that cannot be opened ({one_line(exc)})") from exc
        if opened == pypdf.PasswordType.NOT_DECRYPTED:
            raise Unreadable("unreadable", "encrypted PDF (a password is needed)")
    return reader


def _info(reader: PdfReader, key: str) -> str:
    """The metadata (document information) entry ``key`` as one line, ``""`` where it is missing, not text,
    or a placeholder."""
    try:
        meta = reader.metadata
        value = meta.get(key) if meta else None
        if value is not None and hasattr(value, "get_object"):
            value = value.get_object()
    except Exception:
        return ""
    if not isinstance(value, str):
        return ""
    text = " ".join(value.replace("\x00", " ").split())
    return "" if text.casefold() in PLACEHOLDERS else text


# -- the document's lines ------------------------------------------------------------------------------------------
def _body_size(pages: list[list[_Line]]) -> float:
    """The size carrying the most characters in the document (0 without text)."""
    chars: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            chars[line.size] += len(line.text)
    return chars.most_common(1)[0][0] if chars else 0.0


def _is_heading(line: _Line, body: float) -> bool:
    """Whether a line reads as a heading by its size (see the module's docstring)."""
    return (body > 0 and line.size >= HEADING_RATIO * body and len(line.text.split()) <= HEADING_WORDS
            and any(c.isalpha() for c in line.text))


def _drop_running(pages: list[list[_Line]], body: float) -> None:
    """Remove running heads and feet (page numbers among them) from ``pages``, in place."""
    with_text = [lines for lines in pages if lines]
    if len(with_text) < 3:
        return

    def key(line: _Line) -> str | None:
        if len(line.text.split()) > RUNNING_WORDS:  # a heading-sized line repeated on most pages is one too
            return None
        return _DIGITS.sub("#", _key(line.text)) or None

    def edges(lines: list[_Line]) -> list[int]:
        return sorted(set(range(min(RUNNING_EDGE, len(lines)))) | set(range(max(len(lines) - RUNNING_EDGE, 0),
                                                                             len(lines))))

    seen: Counter[str] = Counter()
    for lines in with_text:
        seen.update({k for i in edges(lines) if (k := key(lines[i]))})
    need = max(3, math.ceil(RUNNING_SHARE * len(with_text)))
    running = {k for k, count in seen.items() if count >= need}
    if not running:
        return
    for lines in with_text:
        drop = {i for i in edges(lines) if key(lines[i]) in running}
        lines[:] = [line for i, line in enumerate(lines) if i not in drop]


def _pitches(pages: list[list[_Line]]) -> dict[float, float]:
    """The usual distance between the baselines of two lines of one paragraph, by size: a low quantile
    (:data:`PITCH_QUANTILE`) of the distances between consecutive lines of that size (those between 0.9 and 2.5 ×
    the size): paragraph gaps are wider, and in a short document they can be as many as the lines' pitches."""
    seen: dict[float, list[float]] = {}
    for lines in pages:
        for prev, line in zip(lines, lines[1:]):
            if prev.size == line.size and 0.9 * line.size <= prev.y - line.y <= 2.5 * line.size:
                seen.setdefault(line.size, []).append(prev.y - line.y)
    return {size: sorted(drops)[int(PITCH_QUANTILE * (len(drops) - 1))] for size, drops in seen.items()}


# -- headings ------------------------------------------------------------------------------------------------------
#: One item of a page: a heading ``(level, title)`` or a line of text.
_Item = tuple[int, str] | _Line


def _outline(reader: PdfReader, count: int) -> dict[int, list[tuple[int, str]]]:
    """The outline's entries by destination page (from 0), each ``(depth from 1, title)``, in outline order;
    entries without a title or a page of this file are left out."""
    try:
        outline = reader.outline
    except Exception:
        return {}
    found: dict[int, list[tuple[int, str]]] = {}

    def walk(items: Iterable[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            title = getattr(item, "title", None)
            title = " ".join(title.split()) if isinstance(title, str) else ""
            try:
                page = reader.get_destination_page_number(item)
            except Exception:
                page = None
            if title and isinstance(page, int) and 0 <= page < count:
                found.setdefault(page, []).append((depth, title))

    try:
        walk(outline, 1)
    except RecursionError:
        return {}
    return found


def _find(keys: list[str], title: str, start: int, taken: set[int]) -> tuple[int, int] | None:
    """Where the line (or two or three consecutive lines) reading as ``title`` is, from ``start``:
    ``(index, lines)``; else a line that reads as it once leading section numbers are set aside on both sides
    (``2.1 ASN.1 syntax`` for ``ASN.1 syntax``); else a line that starts with the title gives ``(index, 0)``
    (the heading goes before it, the line stays); ``None`` where none does."""
    for i in range(start, len(keys)):
        if i in taken:
            continue
        joined = ""
        for span in range(1, 4):
            if i + span - 1 >= len(keys) or i + span - 1 in taken:
                break
            joined = f"{joined} {keys[i + span - 1]}".strip()
            if joined == title:
                return i, span
            if not title.startswith(joined):
                break
    bare = _NUMBERING.sub("", title)
    if bare:
        for i in range(start, len(keys)):
            if i not in taken and _NUMBERING.sub("", keys[i]) == bare:
                return i, 1
    for i in range(start, len(keys)):
        if i not in taken and keys[i].startswith(title + " "):
            return i, 0
    return None


def _place_outline(lines: list[_Line], entries: list[tuple[int, str]]) -> list[_Item]:
    """A page's lines with its outline entries placed as headings (see the module's docstring)."""
    keys = [_key(line.text) for line in lines]
    before: dict[int, list[tuple[int, str]]] = {}
    taken: set[int] = set()
    cursor = 0
    for depth, title in entries:
        at, span = cursor, 0
        want = _key(title)
        if want and (spot := _find(keys, want, cursor, taken)):
            at, span = spot
        before.setdefault(at, []).append((depth, title))
        taken.update(range(at, at + span))
        cursor = at + span
    items: list[_Item] = []
    for i, line in enumerate(lines):
        items.extend(before.pop(i, ()))
        if i not in taken:
            items.append(line)
    for rest in before.values():  # placed after the page's last line
        items.extend(rest)
    return items


def _size_levels(pages: list[list[_Line]], body: float) -> dict[float, int]:
    """Each heading size's level: largest first, sizes within :data:`LEVEL_TOLERANCE` one level, at most
    :data:`HEADING_LEVELS`."""
    sizes = sorted({line.size for lines in pages for line in lines if _is_heading(line, body)}, reverse=True)
    levels: dict[float, int] = {}
    level, top = 0, math.inf
    for size in sizes:
        if size < LEVEL_TOLERANCE * top:
            level, top = min(level + 1, HEADING_LEVELS), size
        levels[size] = level
    return levels


def _size_headings(lines: list[_Line], body: float, levels: dict[float, int]) -> list[_Item]:
    """A page's lines with the lines that read as headings by their size made headings; a heading wrapped over
    consecutive lines of one size is one."""
    items: list[_Item] = []
    last: _Line | None = None
    for line in lines:
        if not _is_heading(line, body):
            items.append(line)
            last = None
            continue
        if last is not None and last.size == line.size and 0 < last.y - line.y <= 1.6 * line.size:
            level, title = items[-1]  # type: ignore[misc]
            items[-1] = (level, f"{title} {line.text}")
        else:
            items.append((levels[line.size], line.text))
        last = line
    return items


# -- paragraphs ------------------------------------------------------------------------------------------------------
def _join(paragraph: str, line: str) -> str:
    """A paragraph with its next line: a word hyphenated at the break joins again (a hyphen the next line
    repeats stays one; before a capital or a digit the hyphen stays, without a space); else a space between."""
    last = paragraph[-1:]
    if last == "\u00ad":  # a soft hyphen: always a break inside a word
        return paragraph[:-1] + line
    if last in ("-", "\u2010") and paragraph[-2:-1].isalpha():
        if line[:1].islower():
            return paragraph[:-1] + line
        if line[:1] in ("-", "\u2010"):
            return paragraph + line[1:]
        return paragraph + line
    return f"{paragraph} {line}"


def _continues(prev: _Line, line: _Line, pitches: dict[float, float], long: float) -> bool:
    """Whether ``line`` goes on the paragraph that ``prev`` (the line above it) is in."""
    small, large = sorted((prev.size, line.size))
    if small and large / small > HEADING_RATIO:
        return False
    drop = prev.y - line.y
    if abs(drop) < 0.3 * large:  # one baseline, split by the extraction
        return True
    if drop < 0 or _BULLET.match(line.text):  # up the page (a new column or a box), or a list item
        return False
    if drop > PARAGRAPH_GAP * max(pitches.get(line.size, 1.2 * line.size), line.size):
        return False
    return not (prev.text.endswith(_SENTENCE_END) and len(prev.text) < SHORT_LINE * long)


def _blocks(items: list[_Item], pitches: dict[float, float]) -> list[str]:
    """A page's items as Markdown blocks: headings, and paragraphs of one line each."""
    lengths = sorted(len(item.text) for item in items if isinstance(item, _Line))
    long = lengths[int(0.8 * (len(lengths) - 1))] if len(lengths) >= 3 else 0.0
    blocks: list[str] = []
    paragraph: str | None = None
    prev: _Line | None = None
    for item in items:
        if not isinstance(item, _Line):
            if paragraph is not None:
                blocks.append(md_escape(paragraph))
            paragraph, prev = None, None
            blocks.append(md_heading(item[0], item[1]))
            continue
        if paragraph is not None and prev is not None and _continues(prev, item, pitches, long):
            paragraph = _join(paragraph, item.text)
        else:
            if paragraph is not None:
                blocks.append(md_escape(paragraph))
            paragraph = item.text
        prev = item
    if paragraph is not None:
        blocks.append(md_escape(paragraph))
    return [block for block in blocks if block.strip()]


def _pages_phrase(numbers: list[int], what: str) -> str:
    """``page 3 has no text layer`` / ``pages 3, 5 have …`` (the first :data:`LISTED_PAGES` listed)."""
    if len(numbers) == 1:
        return f"page {numbers[0]} has {what}"
    listed = ", ".join(map(str, numbers[:LISTED_PAGES]))
    more = f", … ({len(numbers)} in all)" if len(numbers) > LISTED_PAGES else ""
    return f"pages {listed}{more} have {what}"


# -- the reader ----------------------------------------------------------------------------------------------------
def read_pdf(data: bytes, path: Path) -> Read:
    """A PDF as Markdown: a page marker before each page's text, its paragraphs one line each, headings from the
    outline or from font sizes (see the module's docstring).

    Raises:
        Unreadable: ``unreadable`` for a broken file or one that needs a password, ``no_text`` for a file with
            no text on any page (a scan).
    """
    reader = _open(data)
    try:
        count = len(reader.pages)
    except Exception as exc:
        raise Unreadable("unreadable", f"a PDF whose pages cannot be read ({one_line(exc)})") from exc
    if not count:
        raise Unreadable("unreadable", "a PDF without pages")
    pages: list[list[_Line]] = []
    failed: list[tuple[int, str]] = []
    deadline = time.monotonic() + MAX_SECONDS
    for n in range(count):
        if time.monotonic() > deadline:  # 10,000 pages drawing one shared 300 KB stream took 0.65 s each
            raise Unreadable("too_large", f"more than {MAX_SECONDS} s to read ({n} of its {count:,} pages read)")
        visitor = _Lines()
        try:
            reader.pages[n].extract_text(visitor_text=visitor)
        except Exception as exc:
            failed.append((n + 1, one_line(exc)))
        visitor.end()
        pages.append(visitor.lines)
    if not any(pages):
        if failed:
            raise Unreadable("unreadable", f"no page's text could be read (page {failed[0][0]}: {failed[0][1]})")
        where = f"any of its {count} pages" if count > 1 else "its page"
        raise Unreadable("no_text", f"no text layer on {where}: a scanned PDF? Run OCR first, e.g. ocrmypdf")
    failed_pages = {n for n, _ in failed}
    blank = [n for n, lines in enumerate(pages, 1) if not lines and n not in failed_pages]
    warnings = []
    if blank:
        warnings.append(_pages_phrase(blank, "no text layer"))
    if failed:
        warnings.append(_pages_phrase([n for n, _ in failed], f"text that could not be read ({failed[0][1]})"))

    body = _body_size(pages)
    _drop_running(pages, body)
    outline = _outline(reader, count)
    levels = {} if outline else _size_levels(pages, body)
    pitches = _pitches(pages)
    out: list[str] = []
    for n, lines in enumerate(pages):
        items = _place_outline(lines, outline.get(n, [])) if outline else _size_headings(lines, body, levels)
        out.append(page_marker(n + 1))
        out.extend(_blocks(items, pitches))
    author = _info(reader, "/Author")
    return Read("\n\n".join(out) + "\n", markup="markdown", title=_info(reader, "/Title"),
                metadata={"author": author} if author else {}, pages=count, warnings=tuple(warnings))


#: The PDF format (declared once, at import).
PDF = FORMATS.declare(Format("pdf", Text("PDF", "PDF"), (".pdf",), read_pdf,
                             sniff=lambda data: b"%PDF-" in data[:1024], library="pypdf 7.1"))
