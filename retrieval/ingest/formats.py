"""Document formats, each declared once: its extensions, a content sniff and its reader.

A folder corpus (:func:`retrieval.ingest.folder.folder_documents`) picks a file's :class:`Format` by its
extension; the format's :attr:`Format.sniff` checks the bytes are what the extension says (a ``.pdf`` that is
not a PDF is skipped as unreadable, never read as something else); :attr:`Format.read` turns the bytes into a
:class:`Read`: Markdown (or plain text) with the document's structure, so every format goes through one chunker
(:mod:`.markup`): headings become each chunk's section path, and page markers (:func:`page_marker`) give each
chunk its page.

Declaring a new format is one call::

    FORMATS.declare(Format("rtf", Text("RTF", "RTF"), (".rtf",), read_rtf, sniff=lambda b: b.startswith(b"{\\\\rtf")))

and the folder reader reads it, ``index`` lists and counts it, and the app's table shows it, with no other
file changed.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..core.kinds import Registry, Text

#: The page marker a reader writes before each page's text (a Markdown comment of its own, between blank
#: lines): :func:`retrieval.ingest.markup.parse` gives each block the page of the last marker above it.
PAGE_MARKER = re.compile(r"^<!--\s*page\s+(\d+)\s*-->$")


class _Lazy:
    """A library imported on its first use: a reader's library costs its import (trafilatura, openpyxl, pypdf,
    python-pptx: about 0.6 s together) only in a process that reads a file of its format, never in ``ask``."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        self.__dict__.update(module.__dict__)  # later lookups find the names without this method
        return getattr(module, attr)


def lazy(name: str) -> Any:
    """The library ``name``, imported at its first attribute lookup (:class:`_Lazy`)."""
    return _Lazy(name)


def page_marker(number: int) -> str:
    """The Markdown block that opens page ``number`` (from 1): ``<!-- page 4 -->``."""
    return f"<!-- page {int(number)} -->"


_ESCAPED = re.compile(r"([\\`*_\[\]<>#|~&!{}])")
_LEADING = re.compile(r"^(\s*)([-+=]|\d+[.)])(?=\s|$)")


def md_escape(text: str) -> str:
    """``text`` (one line of a document's words) as Markdown that reads back as exactly that text: the
    characters that Markdown would read as syntax are backslash-escaped (``*``, ``_``, ``#``, ``<``, ``&``, a
    leading ``-`` or ``1.``…). Line breaks become spaces: one call is one block's line."""
    line = " ".join(text.split())
    line = _ESCAPED.sub(r"\\\1", line)
    return _LEADING.sub(lambda m: m.group(1) + "".join("\\" + c if not c.isdigit() else c for c in m.group(2)),
                        line)


def md_heading(level: int, text: str) -> str:
    """A Markdown heading of ``level`` (1-6; deeper levels are written as 6)."""
    return "#" * min(max(int(level), 1), 6) + " " + md_escape(text)


#: The most characters one table writes (about 2 MB of text: a 40-page table): past it the rows are left out. A
#: 37 KB DOCX whose one 500 KB cell is merged down 8,281 rows, or a 2 KB ODT repeating a 100 KB cell 100 × 100
#: times, would otherwise write gigabytes.
MAX_TABLE_CHARS = 2_000_000


def md_table(rows: Iterable[list[str]]) -> str:
    """Rows of cells as a Markdown (GFM) table, the first row as the header; the chunker reads each body row as
    one line ``Header: cell; Header: cell``. An empty list gives ``""``. Rows past :data:`MAX_TABLE_CHARS` are
    left out (the first row is always written); a text repeated in many cells is escaped once."""
    escaped: dict[str, str] = {}
    kept: list[list[str]] = []
    total = 0
    for row in rows:
        if not any(c.strip() for c in row):
            continue
        cells = [escaped[c] if c in escaped else escaped.setdefault(c, md_escape(c)) for c in row]
        size = sum(len(c) + 3 for c in cells)
        if kept and total + size > MAX_TABLE_CHARS:
            break
        total += size
        kept.append(cells)
    if not kept:
        return ""
    width = max(len(r) for r in kept)
    kept = [r + [""] * (width - len(r)) for r in kept]
    lines = ["| " + " | ".join(kept[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in kept[1:]]
    return "\n".join(lines)


def md_list(items: list[tuple[int, str]]) -> str:
    """List items ``(depth, text)`` as a Markdown bullet list, each item's text escaped; an item deeper than the
    one above it by more than one level is lifted to one level below it (Markdown reads an item indented past its
    parent's content as a code block), the first item is at depth 0."""
    lines: list[str] = []
    previous = -1
    for depth, text in items:
        if not text.strip():
            continue
        depth = max(0, min(depth, previous + 1))
        lines.append("  " * depth + "- " + md_escape(text))
        previous = depth
    return "\n".join(lines)


def md_code(code: str) -> str:
    """A code block, fenced by more backticks than any run of them in it."""
    code = code.strip("\n")
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", code)), default=0) + 1)
    return f"{fence}\n{code}\n{fence}"


def one_line(exc: BaseException) -> str:
    """An exception's message in one line of at most 200 characters (its type's name where it has none): what a
    skipped file's reason quotes of a library's error."""
    return " ".join(str(exc).split())[:200] or type(exc).__name__


class Unreadable(Exception):
    """A file a reader cannot make text of; ``reason`` is a :data:`SKIP_REASONS` name (``no_text`` for a scan
    with no text layer, ``unreadable`` for a broken or encrypted file), the message says why in one line."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Read:
    """What a reader made of one file.

    Attributes:
        text: the document as Markdown (``markup="markdown"``: headings, lists, tables, page markers) or plain
            text (``markup=""``).
        title: the document's title where the file names one (an HTML ``<title>``, a DOCX's Title style or core
            properties, a PDF's metadata); ``""`` lets the folder reader take the first heading or the file name.
        metadata: what the file declares of itself (a PDF's author…), scalars or lists of scalars; the folder
            reader adds ``format`` and ``folder``.
        pages: the file's page count where it has pages (a PDF), else 0.
        warnings: one line each about what was left out (a value dropped, a page without text).
    """

    text: str
    markup: str = "markdown"
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    pages: int = 0
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Format:
    """One document format.

    Attributes:
        name: the format's name, as ``index`` counts it and the ``format`` metadata holds it (``pdf``).
        label: its name for people.
        extensions: lower-case suffixes with their dot (``(".htm", ".html")``).
        read: ``(data, path) -> Read``; raises :class:`Unreadable` (or any exception: the file is skipped as
            unreadable with its message).
        sniff: ``data -> bool``, whether the bytes are of this format (``None``: any bytes).
        library: the library that reads it, for the docs and ``index``'s table.
        max_bytes: the largest file of this format read (``None``: the folder's limit,
            :data:`retrieval.ingest.folder.MAX_FILE_BYTES`); a larger one is skipped as ``too_large``.
    """

    name: str
    label: Text
    extensions: tuple[str, ...]
    read: Callable[[bytes, Path], Read]
    sniff: Callable[[bytes], bool] | None = None
    library: str = ""
    max_bytes: int | None = None


#: Every format a folder corpus reads, in declaration order (:mod:`.readers` declares the shipped ones).
FORMATS: Registry[Format] = Registry("document format")


def sniffs(fmt: Format, data: bytes) -> bool:
    """Whether ``data`` are of ``fmt`` by its sniff (any bytes where it has none); a sniff that cannot read the bytes
    (a corrupt ZIP member) says they are not."""
    try:
        return fmt.sniff is None or bool(fmt.sniff(data))
    except Exception:
        return False


def format_for(path: Path) -> Format | None:
    """The declared format of ``path``'s extension, or ``None``."""
    suffix = path.suffix.lower()
    return next((f for f in FORMATS if suffix in f.extensions), None)
