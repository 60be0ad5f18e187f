"""Presentations read as structure: PPTX (python-pptx).

Each slide is a page: a page marker (:func:`~retrieval.ingest.formats.page_marker`) opens slide ``n``, so a chunk
cites "p. 4" for slide 4. The slide's title placeholder is a level-1 heading, so each chunk's section is its
slide's title (a slide without a title is headed ``Slide n``, so its text never reads as the previous slide's).
Then the slide's shapes, top to bottom and left to right (groups walked in turn): each text frame's paragraphs
one line each, those of a content placeholder (or with a bullet of their own) as list items at their level;
tables as Markdown tables, whose rows the chunker reads as ``Header: cell`` lines. Pictures, charts, SmartArt and
the date, footer and slide-number placeholders are left out.

Speaker notes are kept: after the slide's content, a paragraph ``Notas:`` and then the notes' paragraphs, one
line each (a presenter's notes often hold the words the slide only lists).

The title is the core properties' title, else the first slide title. A PPTX is a ZIP: its members are checked
(:func:`~retrieval.ingest.archive.guard_zip`) before python-pptx loads them.
"""

from __future__ import annotations

import io
import re
from functools import cache
from pathlib import Path
from typing import Any, Iterable


from ..core.kinds import Text
from .formats import (FORMATS, Format, Read, Unreadable, lazy, md_escape, md_heading, md_list, md_table, one_line,
                      page_marker)
from .archive import guard_zip, read_zip, zip_holding

_SPACE = re.compile(r"\s+")
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
#: The paragraph before a slide's speaker notes.
NOTES_LABEL = "Notas:"
#: Placeholders whose paragraphs are bulleted unless a paragraph says otherwise (the master's body style).
pptx = lazy("pptx")


@cache
def _kinds() -> tuple[frozenset[Any], frozenset[Any], frozenset[Any]]:
    """The placeholder kinds read as bullets, left out as slide chrome, and read as the slide's title."""
    from pptx.enum.shapes import PP_PLACEHOLDER as P

    return (frozenset((P.BODY, P.OBJECT, P.VERTICAL_BODY, P.VERTICAL_OBJECT)),
            frozenset((P.DATE, P.FOOTER, P.SLIDE_NUMBER, P.HEADER)),
            frozenset((P.TITLE, P.CENTER_TITLE, P.VERTICAL_TITLE)))


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class _Slide:
    """One slide's Markdown blocks, in order (consecutive list items as one list)."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self._items: list[tuple[int, str]] = []

    def _flush(self) -> None:
        if self._items:
            self.blocks.append(md_list(self._items))
            self._items = []

    def paragraph(self, text: str) -> None:
        if text := _clean(text):
            self._flush()
            self.blocks.append(md_escape(text))

    def item(self, level: int, text: str) -> None:
        if text := _clean(text):
            self._items.append((level, text))

    def table(self, rows: list[list[str]]) -> None:
        if table := md_table([[_clean(c) for c in row] for row in rows]):
            self._flush()
            self.blocks.append(table)

    def done(self) -> list[str]:
        self._flush()
        return self.blocks


def _ph(shape: Any) -> Any:
    """A shape's ``p:ph`` element (it is a placeholder), or ``None``."""
    try:
        return shape._element.ph  # python-pptx's oxml element: one XPath, where each public property runs its own
    except AttributeError:
        return None


def _bullet_of(pPr: Any) -> bool | None:
    """Whether a paragraph's (or list style level's) properties set a bullet (``True``), set none (``False``), or
    leave it to the style above (``None``)."""
    if pPr is None:
        return None
    if pPr.find(_A + "buNone") is not None:
        return False
    if any(pPr.find(_A + t) is not None for t in ("buChar", "buAutoNum", "buBlip")):
        return True
    return None


class _Layouts:
    """Each slide layout's placeholders, read once a file: ``idx -> (top, left, list style)``; a slide's
    placeholder without a position of its own sits where its layout's does, and bullets as its list style says."""

    def __init__(self) -> None:
        self._seen: dict[int, dict[int, tuple[int, int, Any]]] = {}

    def of(self, slide: Any) -> dict[int, tuple[int, int, Any]]:
        layout = slide.slide_layout
        key = id(layout.part)
        if key not in self._seen:
            found: dict[int, tuple[int, int, Any]] = {}
            for placeholder in layout.placeholders:
                body = getattr(placeholder._element, "txBody", None)
                styles = body.find(_A + "lstStyle") if body is not None else None
                found.setdefault(placeholder.placeholder_format.idx,
                                 (int(placeholder.top or 0), int(placeholder.left or 0), styles))
            self._seen[key] = found
        return self._seen[key]


def _text_frame(shape: Any, kind: Any, styles: Any, out: _Slide) -> None:
    """A shape's paragraphs: list items where bulleted (the paragraph's own bullet, else its layout placeholder's
    list style, else the placeholder's kind), else paragraphs."""
    bulleted = kind in _kinds()[0]
    for paragraph in shape.text_frame.paragraphs:
        text = paragraph.text
        if not text.strip():
            continue
        level = paragraph.level
        bullet = _bullet_of(paragraph._p.pPr)
        if bullet is None and bulleted and styles is not None:
            bullet = _bullet_of(styles.find(f"{_A}lvl{min(level, 8) + 1}pPr"))
        if bullet if bullet is not None else bulleted:
            out.item(level, text)
        else:
            out.paragraph(text)


def _table(shape: Any) -> list[list[str]]:
    return [[cell.text for cell in row.cells] for row in shape.table.rows]


def _shapes(shapes: Iterable[Any], out: _Slide, title_id: int | None, layout: dict[int, tuple[int, int, Any]]) \
        -> None:
    """Write shapes in reading order (top to bottom, then left to right; the file's order among equals)."""
    from pptx.shapes.group import GroupShape  # the library's, imported with it (formats.lazy)

    placed: list[tuple[int, int, int, Any, Any, Any]] = []  # top, left, order, shape, its kind, its styles
    for shape in shapes:
        if shape.shape_id == title_id:
            continue
        ph = _ph(shape)
        kind = ph.type if ph is not None else None
        if kind in _kinds()[1]:
            continue
        base = layout.get(ph.idx) if ph is not None else None
        element = shape._element
        top, left = element.y, element.x
        if top is None and base is not None:
            top, left = base[0], base[1]
        placed.append((int(top or 0), int(left or 0), len(placed), shape, kind, base[2] if base else None))
    for _, _, _, shape, kind, styles in sorted(placed, key=lambda p: p[:3]):
        if isinstance(shape, GroupShape):  # its shapes in turn
            _shapes(shape.shapes, out, title_id, layout)
        elif getattr(shape, "has_table", False):
            out.table(_table(shape))
        elif getattr(shape, "has_text_frame", False):
            _text_frame(shape, kind, styles, out)


def _title_shape(slide: Any) -> Any:
    title = slide.shapes.title
    if title is not None:
        return title
    return next((s for s in slide.shapes if (ph := _ph(s)) is not None and ph.type in _kinds()[2]), None)


def _notes(slide: Any) -> list[str]:
    if not slide.has_notes_slide:
        return []
    frame = slide.notes_slide.notes_text_frame
    if frame is None:
        return []
    return [line for line in (_clean(p.text) for p in frame.paragraphs) if line]


def read_pptx(data: bytes, path: Path) -> Read:
    """A PPTX as Markdown: a page marker before each slide, its title as a level-1 heading, its text, lists and
    tables, then its speaker notes (see the module's docstring).

    Args:
        data: the file's bytes.
        path: the file (unused).

    Returns:
        A :class:`Read` with ``pages`` the slide count, titled by the core properties' title, else the first slide
        title; ``author`` (core properties) as metadata where set.

    Raises:
        Unreadable: ``unreadable`` (not a ZIP, a ZIP bomb, not a presentation, broken XML), ``no_text`` (no text
        on any slide).
    """
    archive = read_zip(data)
    guard_zip(archive)
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
        slides = list(presentation.slides)
    except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml's and zipfile's errors alike
        raise Unreadable("unreadable", f"not a readable presentation ({one_line(exc)})") from None
    out: list[str] = []
    first_title = ""
    has_text = False
    layouts = _Layouts()
    try:
        for number, slide in enumerate(slides, 1):
            title_shape = _title_shape(slide)
            title = _clean(title_shape.text_frame.text) if title_shape is not None \
                and title_shape.has_text_frame else ""
            first_title = first_title or title
            content = _Slide()
            _shapes(slide.shapes, content, title_shape.shape_id if title_shape is not None else None,
                    layouts.of(slide))
            blocks = content.done()
            notes = _notes(slide)
            if notes:
                blocks += [md_escape(NOTES_LABEL)] + [md_escape(line) for line in notes]
            has_text = has_text or bool(title or blocks)
            out += [page_marker(number), md_heading(1, title or f"Slide {number}"), *blocks]
    except Unreadable:
        raise
    except Exception as exc:  # a broken part found while reading a slide
        raise Unreadable("unreadable", f"a slide could not be read ({one_line(exc)})") from None
    if not has_text:
        raise Unreadable("no_text", "no text on any slide" if slides else "a presentation without slides")
    core = presentation.core_properties
    metadata = {"author": _clean(core.author)} if _clean(core.author or "") else {}
    return Read("\n\n".join(out), "markdown", _clean(core.title or "") or first_title, metadata, len(slides))


def looks_like_pptx(data: bytes) -> bool:
    """Whether the bytes are a ZIP holding ``ppt/presentation.xml``."""
    return zip_holding(data, "ppt/presentation.xml")


PPTX = FORMATS.declare(Format("pptx", Text("PPTX", "PPTX"), (".pptx",), read_pptx, sniff=looks_like_pptx,
                              library="python-pptx 1.0"))
