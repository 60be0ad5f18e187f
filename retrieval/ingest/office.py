"""Word processor documents read as structure: DOCX (python-docx) and ODT (its XML, read with lxml).

Both readers walk the document's body in order, paragraphs and tables interleaved, and write it as Markdown from
escaped pieces (:func:`~retrieval.ingest.formats.md_escape`): headings (a DOCX's ``Heading N`` style or outline
level, an ODT's ``text:h``) become ``#`` headings, so each chunk's section path; list paragraphs become ``- item``
lines (nested lists indented); tables become Markdown tables, whose rows the chunker reads as ``Header: cell``
lines. The ``Title`` paragraph (the first one) is the document's title, else the file's own properties' title.
Neither format has pages (page breaks are the word processor's layout): no page markers are written.

A DOCX or ODT is a ZIP: each member read is checked first (:func:`.archive.guard_zip`) against a ZIP bomb.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

from lxml import etree

from ..core.kinds import Text
from .archive import guard_zip, member, read_zip, zip_holding, zip_of_mimetype
from .formats import FORMATS, Format, Read, Unreadable, lazy, md_escape, md_heading, md_list, md_table, one_line

docx = lazy("docx")

_SPACE = re.compile(r"\s+")

#: The most grid columns one DOCX table cell is read as spanning.
MAX_SPAN = 100


# -- Markdown blocks -----------------------------------------------------------------------------------------------


class _Blocks:
    """Markdown blocks gathered in order (consecutive list items as one list), joined by blank lines."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.items: list[tuple[int, str]] = []

    def _flush(self) -> None:
        if self.items:
            self.blocks.append(md_list(self.items))
            self.items = []

    def heading(self, level: int, text: str) -> None:
        text = _SPACE.sub(" ", text).strip()
        if text:
            self._flush()
            self.blocks.append(md_heading(level, text))

    def paragraph(self, text: str) -> None:
        text = _SPACE.sub(" ", text).strip()
        if text:
            self._flush()
            self.blocks.append(md_escape(text))

    def item(self, depth: int, text: str) -> None:
        text = _SPACE.sub(" ", text).strip()
        if text:
            self.items.append((depth, text))

    def table(self, rows: list[list[str]]) -> None:
        spaced: dict[int, str] = {}  # a merged or repeated cell is one text object in many rows: cleaned once

        def clean(cell: str) -> str:
            if id(cell) not in spaced:
                spaced[id(cell)] = _SPACE.sub(" ", cell).strip()
            return spaced[id(cell)]

        table = md_table([clean(c) for c in row] for row in rows)  # lazily: rows past the table's limit never are
        if table:
            self._flush()
            self.blocks.append(table)

    def markdown(self) -> str:
        self._flush()
        return "\n\n".join(self.blocks)


# -- DOCX ----------------------------------------------------------------------------------------------------------
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
W_P, W_TBL, W_TR, W_TC, W_SDT, W_SDT_CONTENT = (_W + t for t in ("p", "tbl", "tr", "tc", "sdt", "sdtContent"))
_W_T, _W_TAB, _W_BR, _W_CR, _W_HYPHEN = (_W + t for t in ("t", "tab", "br", "cr", "noBreakHyphen"))
#: What a paragraph's text leaves out: its and its runs' properties, drawings, pictures and text boxes (whose
#: paragraphs would run into this one's, and which Word writes twice, for old and new readers), deleted text.
_W_SKIP = frozenset([_W + t for t in ("pPr", "rPr", "drawing", "pict", "object", "txbxContent", "del", "moveFrom",
                                      "instrText", "delText")] + [_MC + "Fallback"])
#: A heading style's name, in English (python-docx and Word write built-in names in English) or as a localized
#: Word or LibreOffice writes it: ``heading 2``, ``Título 2``, ``Überschrift 2``.
_HEADING_STYLE = re.compile(
    r"^(?:heading|t[ií]tulo|cabe[cç]alho|[uü]berschrift|titre|encabezado|titolo|kop)\s*(\d)$", re.I)
_TITLE_STYLE = re.compile(r"^(?:title|t[ií]tulo|titre|titel|titolo)$", re.I)
_LIST_DEPTH = re.compile(r"(\d)$")
#: A table of contents' entry style (``toc 1``…, Word's built-in name): its entries repeat the headings.
_TOC_STYLE = re.compile(r"^toc \d$", re.I)


def _is_toc(el: Any) -> bool:
    """Whether a content control is a table of contents (Word writes one as a ``w:sdt`` whose document part
    gallery is "Table of Contents")."""
    gallery = el.find(f"{_W}sdtPr/{_W}docPartObj/{_W}docPartGallery")
    return gallery is not None and (gallery.get(_W + "val") or "").lower() == "table of contents"


def _docx_text(el: Any, out: list[str]) -> None:
    """Append the text of a paragraph (or run, hyperlink, field, inserted run…) to ``out``."""
    for child in el:
        tag = child.tag
        if tag == _W_T:
            out.append(child.text or "")
        elif tag == _W_TAB:
            out.append("\t")
        elif tag in (_W_BR, _W_CR):
            out.append(" ")
        elif tag == _W_HYPHEN:
            out.append("-")
        elif isinstance(tag, str) and tag not in _W_SKIP:
            _docx_text(child, out)


def _paragraph_text(p: Any) -> str:
    out: list[str] = []
    _docx_text(p, out)
    return "".join(out)


class _Styles:
    """A DOCX's paragraph styles, looked up once each: ``(kind, level)``, kind ``"title"``, ``"heading"``,
    ``"list"``, ``"toc"`` (a table of contents' entry, left out) or ``""``."""

    def __init__(self, document: Any) -> None:
        self._styles = document.styles.element
        self._seen: dict[str, tuple[str, int]] = {}

    def of(self, style_id: str | None) -> tuple[str, int]:
        if not style_id:
            return "", 0
        if style_id not in self._seen:
            self._seen[style_id] = self._lookup(style_id)
        return self._seen[style_id]

    def _lookup(self, style_id: str) -> tuple[str, int]:
        style, first = self._styles.get_by_id(style_id), True
        for _ in range(8):  # the style and its bases: a custom style based on Heading 2 is a heading
            if style is None:
                break
            name = (style.name_val or style_id).strip()
            if _TITLE_STYLE.match(name) and first:
                return "title", 0
            if _TOC_STYLE.match(name) and first:
                return "toc", 0
            if heading := _HEADING_STYLE.match(name):
                return "heading", int(heading.group(1))
            level = _outline_level(style.pPr)
            if level:
                return "heading", level
            if first and name.lower().startswith("list"):
                found = _LIST_DEPTH.search(name)
                return "list", int(found.group(1)) - 1 if found else 0
            base, first = style.basedOn_val, False
            style = self._styles.get_by_id(base) if base else None
        return "", 0


def _outline_level(pPr: Any) -> int:
    """The heading level (1-9) a ``w:pPr``'s ``w:outlineLvl`` gives, or 0 (none, or 9: body text)."""
    if pPr is None:
        return 0
    found = pPr.find(_W + "outlineLvl")
    if found is None:
        return 0
    try:
        value = int(found.get(_W + "val", "9"))
    except ValueError:
        return 0
    return value + 1 if 0 <= value < 9 else 0


def _list_depth(pPr: Any) -> int | None:
    """The list level of a paragraph with numbering (``w:numPr``, its ``w:ilvl``), or ``None`` without."""
    if pPr is None:
        return None
    num = pPr.find(_W + "numPr")
    if num is None:
        return None
    ilvl = num.find(_W + "ilvl")
    numid = num.find(_W + "numId")
    if numid is not None and numid.get(_W + "val") == "0":  # numbering turned off
        return None
    try:
        return int(ilvl.get(_W + "val", "0")) if ilvl is not None else 0
    except ValueError:
        return 0


def _docx_cell_text(tc: Any) -> str:
    """A table cell's text: its paragraphs, and those of tables inside it, joined by spaces."""
    parts: list[str] = []
    for child in tc:
        if child.tag == W_P:
            parts.append(_paragraph_text(child))
        elif child.tag == W_TBL:
            parts.extend(_docx_cell_text(inner) for inner in child.iter(W_TC))
        elif child.tag == W_SDT:
            content = child.find(W_SDT_CONTENT)
            if content is not None:
                parts.append(_docx_cell_text(content))
    return " ".join(p for p in parts if p.strip())


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _row_cells(tr: Any) -> list[Any]:
    """A table row's ``w:tc``\\ s, those inside content controls and custom XML included."""
    cells: list[Any] = []
    for child in tr:
        if child.tag == W_TC:
            cells.append(child)
        elif child.tag in (W_SDT, _W + "customXml"):
            inner = child.find(W_SDT_CONTENT) if child.tag == W_SDT else child
            if inner is not None:
                cells.extend(_row_cells(inner))
    return cells


def _docx_table(tbl: Any) -> list[list[str]]:
    """A table's rows of cell texts, read on its grid: a cell merged across columns (``w:gridSpan``) gives its
    text once, the columns it spans after the first are empty (each body row stays aligned with the header); a
    cell merged down rows (``w:vMerge``) is repeated in each (every row line reads whole); columns a row skips
    (``w:gridBefore``) are empty. Read from the XML, not python-docx's ``row.cells``, which rebuilds the grid for
    every row (a quarter of a DOCX's reading time on a table of ten rows)."""
    rows: list[list[str]] = []
    above: dict[int, str] = {}  # grid column -> the text of the cell last started there
    for tr in tbl.iter(W_TR):
        if _ancestor(tr, W_TBL) is not tbl:
            continue
        before = tr.find(f"{_W}trPr/{_W}gridBefore")
        cells = [""] * min(_int(before.get(_W + "val") if before is not None else None, 0), MAX_SPAN)
        for tc in _row_cells(tr):
            props = tc.find(_W + "tcPr")
            span = merge = None
            if props is not None:
                span, merge = props.find(_W + "gridSpan"), props.find(_W + "vMerge")
            width = min(max(_int(span.get(_W + "val") if span is not None else None, 1), 1), MAX_SPAN)
            if merge is not None and merge.get(_W + "val", "continue") != "restart":
                text = above.get(len(cells), "")
            else:
                text = _docx_cell_text(tc)
                above[len(cells)] = text
            cells += [text] + [""] * (width - 1)
        rows.append(cells)
    return rows


def _ancestor(el: Any, tag: str) -> Any:
    parent = el.getparent()
    while parent is not None and parent.tag != tag:
        parent = parent.getparent()
    return parent


def _docx_blocks(container: Any, styles: _Styles, out: _Blocks, title: list[str]) -> None:
    """Write a body's (or content control's) paragraphs and tables in order."""
    for child in container:
        tag = child.tag
        if tag == W_TBL:
            out.table(_docx_table(child))
        elif tag in (W_SDT, W_SDT_CONTENT) or tag == _W + "customXml":
            inner = child.find(W_SDT_CONTENT) if tag == W_SDT else child
            if inner is not None and not _is_toc(child):
                _docx_blocks(inner, styles, out, title)
        elif tag == W_P:
            text = _paragraph_text(child).strip()
            if not text:
                continue
            pPr = child.pPr
            kind, level = styles.of(child.style)
            if kind == "toc":
                continue
            if kind == "title" and not title:
                title.append(_SPACE.sub(" ", text))
                continue
            if kind != "heading" and (outline := _outline_level(pPr)):
                kind, level = "heading", outline
            depth = _list_depth(pPr)
            if kind == "heading":
                out.heading(level, text)
            elif kind == "list" or depth is not None:
                out.item(depth if depth is not None else level, text)
            else:
                out.paragraph(text)


def read_docx(data: bytes, path: Path) -> Read:
    """A DOCX as Markdown: its body's headings, paragraphs, lists and tables, in order.

    Args:
        data: the file's bytes.
        path: the file (unused).

    Returns:
        A :class:`Read` titled by the first ``Title`` paragraph (not repeated in the text), else the core
        properties' title; ``author`` (core properties) as metadata where set.

    Raises:
        Unreadable: ``unreadable`` (not a ZIP, a ZIP bomb, not a Word document, broken XML), ``no_text`` (no
        text in the body).
    """
    guard_zip(read_zip(data))
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml's and zipfile's errors alike
        raise Unreadable("unreadable", f"not a readable Word document ({one_line(exc)})") from None
    out = _Blocks()
    title: list[str] = []
    _docx_blocks(document.element.body, _Styles(document), out, title)
    markdown = out.markdown()
    if not markdown:
        raise Unreadable("no_text", "no text in the document")
    core = document.core_properties
    metadata = {"author": core.author.strip()} if (core.author or "").strip() else {}
    return Read(markdown, "markdown", title[0] if title else _SPACE.sub(" ", core.title or "").strip(), metadata)


def looks_like_docx(data: bytes) -> bool:
    """Whether the bytes are a ZIP holding ``word/document.xml``."""
    return zip_holding(data, "word/document.xml")


# -- ODT -----------------------------------------------------------------------------------------------------------
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_META = "{urn:oasis:names:tc:opendocument:xmlns:meta:1.0}"
ODT_MIMETYPE = b"application/vnd.oasis.opendocument.text"
#: The most times one repeated table cell or row is written (a spreadsheet-like table repeats its last empty
#: cell a thousand times).
MAX_REPEAT = 100
_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
#: Inline elements whose text is not the paragraph's: comments, footnotes (their bodies follow the paragraph),
#: frames (images, text boxes), ruby annotations, deleted text's change marks.
_ODT_INLINE_SKIP = frozenset([_OFFICE + "annotation", _TEXT + "note", _TEXT + "ruby-text",
                              _TEXT + "change-start", _TEXT + "change-end", _TEXT + "change"])
#: Block elements left out: the table of contents and other indexes (their entries repeat the headings), the
#: tracked changes (deleted text), declarations.
_ODT_BLOCK_SKIP = frozenset(_TEXT + t for t in (
    "table-of-content", "illustration-index", "table-index", "object-index", "user-index",
    "alphabetical-index", "bibliography", "tracked-changes", "sequence-decls", "variable-decls",
    "user-field-decls", "dde-connection-decls", "soft-page-break"))


def _odt_text(el: Any, out: list[str], notes: list[Any]) -> None:
    """Append an ODT paragraph's (or span's) text to ``out``; its footnotes' bodies to ``notes``."""
    if el.text:
        out.append(el.text)
    for child in el:
        tag = child.tag
        if tag == _TEXT + "s":
            try:
                out.append(" " * min(max(int(child.get(_TEXT + "c", "1")), 1), 64))
            except ValueError:
                out.append(" ")
        elif tag == _TEXT + "tab":
            out.append("\t")
        elif tag == _TEXT + "line-break":
            out.append("\n")
        elif tag == _TEXT + "note":
            body = child.find(_TEXT + "note-body")
            if body is not None:
                notes.append(body)
        elif isinstance(tag, str) and tag not in _ODT_INLINE_SKIP and not tag.startswith("{urn:oasis:names:tc:"
                                                                                         "opendocument:xmlns:drawing"):
            _odt_text(child, out, notes)
        if child.tail:
            out.append(child.tail)


class _Odt:
    """One ODT's body written as blocks."""

    def __init__(self, title_styles: set[str]) -> None:
        self.out = _Blocks()
        self.title: str = ""
        self._title_styles = title_styles

    def text(self, el: Any) -> tuple[str, list[Any]]:
        out: list[str] = []
        notes: list[Any] = []
        _odt_text(el, out, notes)
        return "".join(out), notes

    def blocks(self, container: Any) -> None:
        for child in container:
            tag = child.tag
            if not isinstance(tag, str) or tag in _ODT_BLOCK_SKIP:
                continue
            if tag == _TEXT + "h":
                text, notes = self.text(child)
                try:
                    level = int(child.get(_TEXT + "outline-level", "1"))
                except ValueError:
                    level = 1
                self.out.heading(max(level, 1), text)
                self.notes(notes)
            elif tag == _TEXT + "p":
                text, notes = self.text(child)
                if not self.title and text.strip() and child.get(_TEXT + "style-name") in self._title_styles:
                    self.title = _SPACE.sub(" ", text).strip()
                else:
                    self.out.paragraph(text)
                self.notes(notes)
            elif tag == _TEXT + "list":
                self.list_items(child, 0)
            elif tag == _TABLE + "table":
                self.out.table(self.table(child))
            else:  # text:section, office:text, text:note-body, text:index-body…: their blocks in order
                self.blocks(child)

    def notes(self, bodies: list[Any]) -> None:
        for body in bodies:
            self.blocks(body)

    def list_items(self, el: Any, depth: int) -> None:
        for item in el:
            if item.tag not in (_TEXT + "list-item", _TEXT + "list-header"):
                continue
            texts: list[str] = []
            notes: list[Any] = []
            for child in item:
                if child.tag == _TEXT + "list":
                    self.out.item(depth, " ".join(texts))
                    texts = []
                    self.list_items(child, depth + 1)
                elif child.tag == _TEXT + "h":  # a numbered heading: still a heading
                    self.blocks([child])
                elif child.tag == _TEXT + "p":
                    text, found = self.text(child)
                    texts.append(text)
                    notes.extend(found)
                elif child.tag == _TABLE + "table":
                    self.out.table(self.table(child))
            self.out.item(depth, " ".join(texts))
            self.notes(notes)

    def cell(self, el: Any) -> str:
        parts: list[str] = []
        for child in el.iter(_TEXT + "p", _TEXT + "h"):
            parts.append(self.text(child)[0])
        return " ".join(p for p in parts if p.strip())

    def table(self, el: Any) -> list[list[str]]:
        """A table's rows of cell texts: a repeated cell or row written up to :data:`MAX_REPEAT` times, a cell
        covered by a merged one empty, each row's trailing empty cells dropped."""
        rows: list[list[str]] = []
        for row in el.iter(_TABLE + "table-row"):
            if _ancestor(row, _TABLE + "table") is not el:
                continue  # a row of a table inside a cell: that cell's text
            cells: list[str] = []
            for cell in row:
                if cell.tag not in (_TABLE + "table-cell", _TABLE + "covered-table-cell"):
                    continue
                text = self.cell(cell) if cell.tag == _TABLE + "table-cell" else ""
                cells.extend([text] * _repeat(cell, _TABLE + "number-columns-repeated"))
            while cells and not cells[-1].strip():
                cells.pop()
            rows.extend([cells] * _repeat(row, _TABLE + "number-rows-repeated"))
        return rows


def _repeat(el: Any, attribute: str) -> int:
    try:
        return min(max(int(el.get(attribute, "1")), 1), MAX_REPEAT)
    except ValueError:
        return 1


def _odt_xml(archive: zipfile.ZipFile, name: str) -> Any:
    raw = member(archive, name)
    if raw is None:
        return None
    try:
        return etree.fromstring(raw, _XML)
    except etree.XMLSyntaxError as exc:
        raise Unreadable("unreadable", f"{name} is not well-formed XML ({one_line(exc)})") from None


def _title_styles(content: Any) -> set[str]:
    """The paragraph styles that are the ``Title`` style: it and the automatic styles whose parent it is."""
    names = {"Title"}
    for style in content.iter(_STYLE + "style"):
        if style.get(_STYLE + "parent-style-name") in names:
            names.add(style.get(_STYLE + "name") or "")
    return names


def read_odt(data: bytes, path: Path) -> Read:
    """An ODT (OpenDocument text) as Markdown, read from its ``content.xml``: ``text:h`` headings (their outline
    level), ``text:p`` paragraphs, ``text:list`` items, ``table:table`` tables, in order; footnotes after their
    paragraph; the table of contents, comments and tracked deletions left out.

    Args:
        data: the file's bytes.
        path: the file (unused).

    Returns:
        A :class:`Read` titled by the first ``Title`` paragraph (not repeated in the text), else ``meta.xml``'s
        ``dc:title``; ``author`` (``dc:creator``, else ``meta:initial-creator``) as metadata where set.

    Raises:
        Unreadable: ``unreadable`` (not a ZIP, a ZIP bomb, no or broken ``content.xml``), ``no_text``.
    """
    archive = read_zip(data)
    content = _odt_xml(archive, "content.xml")
    if content is None:
        raise Unreadable("unreadable", "no content.xml in the file (not an OpenDocument text)")
    body = content.find(f"{_OFFICE}body/{_OFFICE}text")
    reader = _Odt(_title_styles(content))
    if body is not None:
        reader.blocks(body)
    markdown = reader.out.markdown()
    if not markdown:
        raise Unreadable("no_text", "no text in the document")
    title, metadata = reader.title, {}
    meta = _odt_xml(archive, "meta.xml")
    if meta is not None:
        title = title or _SPACE.sub(" ", meta.findtext(f".//{_DC}title") or "").strip()
        author = (meta.findtext(f".//{_DC}creator") or meta.findtext(f".//{_META}initial-creator") or "").strip()
        if author:
            metadata["author"] = author
    return Read(markdown, "markdown", title, metadata)


def looks_like_odt(data: bytes) -> bool:
    """Whether the bytes are a ZIP whose ``mimetype`` member is ``application/vnd.oasis.opendocument.text``."""
    return zip_of_mimetype(data, ODT_MIMETYPE)


DOCX = FORMATS.declare(Format("docx", Text("DOCX", "DOCX"), (".docx",), read_docx, sniff=looks_like_docx,
                              library="python-docx 1.2"))
ODT = FORMATS.declare(Format("odt", Text("ODT", "ODT"), (".odt",), read_odt, sniff=looks_like_odt,
                             library="lxml (ODF XML)"))
