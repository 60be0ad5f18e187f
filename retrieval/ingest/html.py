"""HTML pages read as structure: the main content (trafilatura), headings as section paths, lists and tables kept.

:func:`read_html` decodes the bytes (:func:`decode_html`), drops what is never content (scripts, styles,
navigation, footer, cookie banners) and turns layout tables into blocks, then reads the page twice: as its own
blocks (headings, paragraphs, list items, table rows, ``<pre>``) and through trafilatura, which picks the main
content. The page's blocks that trafilatura picked are written, each heading with content under it kept
(:func:`_content_blocks`): trafilatura decides what is content, the page's own headings give the section paths
(trafilatura drops the headings of pages without ``<article>``/``<main>``, and runs a short page's text into one
line). Where those blocks do not hold trafilatura's text (an article only in JSON-LD), its XML (``<head
rend="h2">``, ``<p>``, ``<list>``, ``<table>``) is written instead; where it finds nothing, the whole page is.

Every piece of text is escaped (:func:`~retrieval.ingest.formats.md_escape`): a page's ``*``, ``_``, ``#`` or
``<b>`` reads back as those characters, never as syntax. Only a page with no text at all is
:class:`~retrieval.ingest.formats.Unreadable` (``no_text``).
"""

from __future__ import annotations

import codecs
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lxml.html
from lxml import etree

from ..core.kinds import Text
from .formats import FORMATS, Format, Read, Unreadable, lazy, md_code, md_escape, md_heading, md_list, md_table

charset_normalizer = lazy("charset_normalizer")
trafilatura = lazy("trafilatura")

# trafilatura logs its own doubts about short or empty pages; the reader says what it skipped itself.
logging.getLogger("trafilatura").setLevel(logging.CRITICAL)

# -- encoding ------------------------------------------------------------------------------------------------
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
#: How far into the file a declaration is looked for (the HTML standard's prescan reads 1,024 bytes; old pages
#: put long ``<head>``\\ s before their ``<meta>``).
DECLARATION_BYTES = 4096
_XML_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']", re.I)
_META_CHARSET = re.compile(rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.I)
#: Declared encodings read as another, as browsers do (the WHATWG Encoding Standard's labels): a page that says
#: ISO-8859-1 or ASCII is written in Windows-1252 (its curly quotes, dashes and ``€`` are 0x80-0x9F bytes).
_AS_BROWSERS_READ = {"iso8859-1": "cp1252", "ascii": "cp1252", "iso8859-9": "cp1254", "iso8859-11": "cp874",
                     "utf-16": "utf-8", "utf-16-le": "utf-8", "utf-16-be": "utf-8", "utf-32": "utf-8",
                     "utf-32-le": "utf-8", "utf-32-be": "utf-8"}
_UNDEFINED_CP1252 = re.compile("[\udc80-\udcff]")


def _declared(data: bytes) -> str | None:
    """The encoding the page declares in its first :data:`DECLARATION_BYTES` (an XML declaration, a
    ``<meta charset>`` or ``http-equiv`` content type), as Python names it and browsers read it; ``None`` when it
    declares none or one Python does not know."""
    head = data[:DECLARATION_BYTES]
    found = _XML_DECLARATION.match(head) or _META_CHARSET.search(head)
    if not found:
        return None
    try:
        name = codecs.lookup(found.group(1).decode("ascii")).name
    except LookupError:
        return None
    return _AS_BROWSERS_READ.get(name, name)


def _strict(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeError, LookupError):  # a codec that is no text encoding (punycode) raises UnicodeError
        return None


def decode_html(data: bytes, declarations: bool = True) -> tuple[str, str, tuple[str, ...]]:
    """A page's bytes as text: ``(text, encoding, warnings)``; ``declarations=False`` skips step 2 (a text or
    Markdown file, whose words are not a page's declaration).

    The rule, first that applies:

    1. a byte order mark (UTF-8, UTF-16, UTF-32) names the encoding;
    2. the page's own declaration in its first 4 KB (``<?xml encoding>``, ``<meta charset>``, ``<meta
       http-equiv="Content-Type" content="…; charset=…">``), read as browsers read it: ISO-8859-1 and ASCII as
       Windows-1252 (a superset whose 0x80-0x9F bytes are the curly quotes and dashes that pages written on
       Windows hold), a UTF-16 label on ASCII-compatible bytes as UTF-8. A declared Windows-1252 decodes its five
       undefined bytes as the C1 controls browsers give them. A declaration the bytes do not decode under is
       ignored (with a warning) and the next steps decide;
    3. UTF-8, if the bytes decode strictly (pure ASCII included);
    4. Windows-1252 if it decodes them: the collections read here are Portuguese, and their undeclared pages (a
       municipality's laws) are Windows-1252, where generic detectors often guess cp1250 or another Latin
       neighbour that turns ``ç``, ``ã`` and ``º`` into other letters; Windows-1252 decodes every byte but five,
       so this is nearly always the answer for bytes that are not UTF-8;
    5. charset-normalizer's best guess, only when Windows-1252 cannot decode them (one of its five undefined
       bytes: the page is then unlikely to be Latin-1 family);
    6. UTF-8 with replacement characters.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, errors="replace"), encoding, ()
    warnings: list[str] = []
    declared = _declared(data) if declarations else None
    if declared:
        if declared == "cp1252":
            decoded = data.decode("cp1252", errors="surrogateescape")
            return _UNDEFINED_CP1252.sub(lambda m: chr(ord(m.group()) - 0xDC00), decoded), declared, ()
        text = _strict(data, declared)
        if text is not None:
            return text, declared, ()
        warnings.append(f"the page declares {declared} but is not written in it; the encoding was detected")
    for encoding in ("utf-8", "cp1252"):
        text = _strict(data, encoding)
        if text is not None:
            return text, encoding, tuple(warnings)
    best = charset_normalizer.from_bytes(data).best()
    if best is not None and best.encoding:
        return str(best), best.encoding, tuple(warnings)
    warnings.append("no encoding decodes the page; undecodable bytes were replaced")
    return data.decode("utf-8", errors="replace"), "utf-8", tuple(warnings)


# -- blocks -------------------------------------------------------------------------------------------------------
_SPACE = re.compile(r"\s+")
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_XML_DECLARATION_TEXT = re.compile(r"^\s*<\?xml[^>]*\?>")


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass
class _Block:
    """One piece of a page: ``kind`` ``heading`` (``level`` 1-6), ``paragraph``, ``item`` (``level``: its list
    depth), ``row`` (``cells``; ``level`` numbers the table, so consecutive rows of one table stay one table) or
    ``code``. ``chrome``: a heading in a ``<header>`` outside ``<article>`` and ``<main>``, the site's name more
    often than the content's (kept only where trafilatura keeps it too)."""

    kind: str
    text: str = ""
    level: int = 0
    cells: list[str] = field(default_factory=list)
    chrome: bool = False

    @property
    def words(self) -> list[str]:
        return (" ".join(self.cells) if self.kind == "row" else self.text).split()


class _Blocks:
    """A page's blocks, in order."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []
        self._tables = 0

    def heading(self, level: int, text: str, chrome: bool = False) -> None:
        if text := _clean(text):
            self.blocks.append(_Block("heading", text, min(max(level, 1), 6), chrome=chrome))

    def paragraph(self, text: str) -> None:
        if text := _clean(text):
            self.blocks.append(_Block("paragraph", text))

    def item(self, depth: int, text: str) -> None:
        if text := _clean(text):
            self.blocks.append(_Block("item", text, depth))

    def table(self, rows: list[list[str]]) -> None:
        self._tables += 1
        for row in rows:
            cells = [_clean(c) for c in row]
            if any(cells):
                self.blocks.append(_Block("row", level=self._tables, cells=cells))

    def code(self, code: str) -> None:
        if code.strip():
            self.blocks.append(_Block("code", code.strip("\n")))

    def markdown(self, blocks: list[_Block] | None = None) -> str:
        """The blocks as Markdown: each piece escaped, consecutive list items one list, consecutive rows of one
        table one table."""
        out: list[str] = []
        blocks = self.blocks if blocks is None else blocks
        i = 0
        while i < len(blocks):
            block = blocks[i]
            j = i + 1
            if block.kind in ("item", "row"):
                while j < len(blocks) and blocks[j].kind == block.kind and (block.kind == "item"
                                                                           or blocks[j].level == block.level):
                    j += 1
            if block.kind == "heading":
                out.append(md_heading(block.level, block.text))
            elif block.kind == "item":
                out.append(md_list([(b.level, b.text) for b in blocks[i:j]]))
            elif block.kind == "row":
                out.append(md_table([b.cells for b in blocks[i:j]]))
            elif block.kind == "code":
                out.append(md_code(block.text))
            else:
                out.append(md_escape(block.text))
            i = j
        return "\n\n".join(piece for piece in out if piece)


# -- trafilatura's XML -----------------------------------------------------------------------------------------
def _inline(el: Any) -> str:
    """The text of an element of trafilatura's XML, a space at each line break and between block children."""
    out = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str):
            out.append(" " if child.tag == "lb" else " " + _inline(child) + " ")
        out.append(child.tail or "")
    return "".join(out)


def _heading_level(el: Any) -> int:
    found = re.fullmatch(r"h([1-6])", (el.get("rend") or "").strip().lower())
    return int(found.group(1)) if found else 2


def _walk_xml(el: Any, out: _Blocks) -> None:
    """Write the children of ``el`` (trafilatura's ``<main>``, a ``<quote>``, a ``<div>``) as blocks; text
    directly inside it (trafilatura's ``<main>Texto</main>`` for a page of loose text) as paragraphs."""
    out.paragraph(el.text or "")
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == "head":
            out.heading(_heading_level(child), _inline(child))
        elif tag == "list":
            _xml_list(child, out, 0)
        elif tag == "table":
            out.table([[_inline(cell) for cell in row.iter("cell")] for row in child.iter("row")])
        elif tag == "code":
            out.code("".join(child.itertext()))
        elif tag in ("quote", "div", "main", "body", "section"):
            _walk_xml(child, out)
        elif tag and tag not in ("graphic", "comments", "lb"):  # p, and whatever else holds text
            out.paragraph(_inline(child))
        out.paragraph(child.tail or "")


def _xml_list(el: Any, out: _Blocks, depth: int) -> None:
    for item in el:
        if item.tag != "item":
            continue
        text = item.text or ""
        for child in item:
            if child.tag != "list" and isinstance(child.tag, str):
                text += " " + _inline(child) + " "
            text += child.tail or ""
        out.item(depth, text)
        for sub in item:
            if sub.tag == "list":
                _xml_list(sub, out, depth + 1)


def _main_content(tree: Any) -> Any:
    """trafilatura's main content of the page, as the tree of its XML output (``<head rend="h2">``, ``<p>``,
    ``<list>``, ``<table>``…, under a ``<body>``), or ``None`` where it finds none. Taken from
    :func:`trafilatura.bare_extraction` rather than ``extract(output_format="xml")``, which would hash the text
    for a fingerprint (a third of the time) and serialize the tree to be parsed again."""
    found = trafilatura.bare_extraction(tree, output_format="python", include_tables=True, include_formatting=False,
                                        include_links=False, include_comments=False, include_images=False,
                                        favor_recall=True, with_metadata=False)
    body = getattr(found, "body", None)
    return body if body is not None and "".join(body.itertext()).strip() else None


# -- the page's own structure ----------------------------------------------------------------------------------
#: Elements left out of the page before anything reads it.
_DROPPED = ("script", "style", "noscript", "template", "nav", "footer", "svg", "iframe", "object")
_BLOCK_TAGS = frozenset(
    "address article aside blockquote body center dd details dialog div dl dt fieldset figcaption figure form "
    "h1 h2 h3 h4 h5 h6 header hgroup hr li main ol p pre section summary table tbody td tfoot th thead tr ul "
    "caption".split())
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
#: The ``id`` or ``class`` of a cookie banner; one is dropped if its text is no longer than :data:`BANNER_CHARS`
#: (a page about cookies, or a section classed ``consent-terms``, is longer than a banner).
_BANNER = re.compile(r"cookie|consent|gdpr|lgpd", re.I)
BANNER_CHARS = 1500
_NEVER_BANNER = frozenset(("html", "body", "main", "article"))
#: A table cell with more text than this lays the page out (:func:`_unlayout_tables`).
LAYOUT_CELL_CHARS = 1000
#: The most columns (or rows) one table cell is read as spanning.
MAX_SPAN = 100


def _tag(el: Any) -> str:
    """An element's tag, lower case; ``""`` for a comment, and for a script (the JSON data left for trafilatura),
    whose text is not the page's."""
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    return "" if tag == "script" else tag


def _html_text(el: Any) -> str:
    """An element's text, a space for each ``<br>`` and around each block child; walked without recursion (an
    old page's unclosed ``<font>``\\ s nest a thousand deep)."""
    out: list[str] = []
    walk = etree.iterwalk(el, events=("start", "end"))
    for event, node in walk:
        tag = _tag(node)
        if node is el:
            if event == "start":
                out.append(node.text or "")
            continue
        if not tag:  # a comment or a script: its tail only
            if event == "end":
                out.append(node.tail or "")
            else:
                walk.skip_subtree()
            continue
        if event == "start":
            out.append(" " if tag == "br" or tag in _BLOCK_TAGS else "")
            out.append(node.text or "")
        else:
            out.append(" " if tag in _BLOCK_TAGS else "")
            out.append(node.tail or "")
    return "".join(out)


def _html_list(el: Any, out: _Blocks, depth: int) -> None:
    for li in el:
        if _tag(li) != "li":
            continue
        text = li.text or ""
        for child in li:
            tag = _tag(child)
            if tag and tag not in ("ul", "ol"):
                text += " " + _html_text(child) + " " if tag in _BLOCK_TAGS else _html_text(child)
            text += child.tail or ""
        out.item(depth, text)
        for sub in li:
            if _tag(sub) in ("ul", "ol"):
                _html_list(sub, out, depth + 1)


def _span(cell: Any, attribute: str) -> int:
    try:
        return min(max(int(cell.get(attribute) or 1), 1), MAX_SPAN)
    except ValueError:
        return 1


def _html_table(table: Any) -> list[list[str]]:
    """A table's rows of cells (not those of tables inside it); a cell spanning columns gives its text once, then
    an empty cell for each other column it spans (each row stays aligned with the header); a cell spanning rows
    is repeated in each (every row line reads whole)."""
    rows: list[list[str]] = []
    below: dict[int, tuple[str, int]] = {}  # column -> (text, rows left) of the cells spanning down
    for tr in table.iter("tr"):
        if _enclosing(tr, "table") is not table:
            continue
        cells: list[str] = []
        for cell in tr:
            if _tag(cell) not in ("td", "th"):
                continue
            _fill_spans(cells, below)
            text, down = _html_text(cell), _span(cell, "rowspan")
            if down > 1:
                below[len(cells)] = (text, down - 1)
            cells += [text] + [""] * (_span(cell, "colspan") - 1)
        _fill_spans(cells, below)
        rows.append(cells)
    return rows


def _fill_spans(cells: list[str], below: dict[int, tuple[str, int]]) -> None:
    """Append to a row the texts of the cells above that span down into its next columns."""
    while len(cells) in below:
        text, left = below.pop(len(cells))
        cells.append(text)
        if left > 1:
            below[len(cells) - 1] = (text, left - 1)


def _walk_html(el: Any, out: _Blocks, chrome: bool = False) -> None:
    """Write the children of an HTML block element as blocks: the inline runs between its block children as
    paragraphs; headings, lists, tables and ``<pre>`` as themselves; other block children walked in turn."""
    run: list[str] = [el.text or ""]
    for child in el:
        tag = _tag(child)
        if tag not in _BLOCK_TAGS and tag != "br":
            run.append(_html_text(child) if tag else "")
            run.append(child.tail or "")
            continue
        out.paragraph("".join(run))
        run = []
        if tag in _HEADINGS:
            out.heading(int(tag[1]), _html_text(child), chrome)
        elif tag in ("ul", "ol"):
            _html_list(child, out, 0)
        elif tag == "table":
            out.table(_html_table(child))
        elif tag == "pre":
            out.code(child.text_content())
        elif tag not in ("br", "hr"):
            _walk_html(child, out, chrome or (tag == "header" and _enclosing(child, "article", "main") is None))
        run.append(child.tail or "")
    out.paragraph("".join(run))


def _strip_boilerplate(tree: Any) -> None:
    """Drop from the page, in place, what is never its content: scripts (but JSON data, where trafilatura finds
    the article of a page rendered by script), styles, navigation, the footer and cookie banners (a short element
    whose ``id`` or ``class`` names cookies or consent). Done before trafilatura too: on a short page its last
    resort takes the raw text of the whole page, menus and banners included."""
    for el in list(tree.iter(*_DROPPED)):
        if el.getparent() is not None and not (el.tag == "script" and "json" in (el.get("type") or "")):
            el.drop_tree()
    for el in list(tree.iter()):
        if _tag(el) and el.tag not in _NEVER_BANNER and el.getparent() is not None \
                and _BANNER.search(f"{el.get('id') or ''} {el.get('class') or ''}") \
                and len(el.text_content()) <= BANNER_CHARS:
            el.drop_tree()


def _unlayout_tables(tree: Any) -> None:
    """Turn, in place, the tables that lay a page out into ``<div>``\\ s, so that their content is read as
    headings and paragraphs rather than as one table row: a table is layout if it says so (``role=presentation``)
    or one of its cells holds a heading, another table, or more than :data:`LAYOUT_CELL_CHARS` of text. Old
    municipal sites put the whole page (menu column, law text column, address row) in one such table."""
    for table in list(tree.iter("table")):
        if table.tag != "table":  # already turned into a div, as the cell of a layout table's
            continue
        cells = [c for c in table.iter("td", "th") if _enclosing(c, "table") is table]
        layout = (table.get("role") or "").lower() in ("presentation", "none") or any(
            c.find(".//table") is not None or any(c.find(f".//{h}") is not None for h in ("h1", "h2", "h3"))
            or len(c.text_content()) > LAYOUT_CELL_CHARS for c in cells)
        if not layout:
            continue
        for el in [table, *(e for e in table.iter("tr", "td", "th", "tbody", "thead", "tfoot", "caption")
                            if _enclosing(e, "table") is table)]:
            el.tag = "div"


def _enclosing(el: Any, *tags: str) -> Any:
    parent = el.getparent()
    while parent is not None and parent.tag not in tags:
        parent = parent.getparent()
    return parent


def _whole_body(tree: Any) -> _Blocks:
    """The page's whole ``<body>`` as blocks (its boilerplate already stripped)."""
    body = tree.find(".//body")
    out = _Blocks()
    _walk_html(body if body is not None else tree, out)
    return out


# -- the page's structure, trafilatura's choice of content ----------------------------------------------------------
#: The share of a block's word trigrams that trafilatura's text must hold for the block to be content, and the
#: share of trafilatura's words the kept blocks must hold for the page's own structure to be used.
BLOCK_COVERED, CONTENT_COVERED = 0.5, 0.8


def _grams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _content_blocks(body: _Blocks, main: Any) -> list[_Block] | None:
    """The page's own blocks that trafilatura took as content (:data:`BLOCK_COVERED` of a block's word trigrams
    in its text; a block of two words as a pair in it, of one word as the whole text of one of its elements),
    and each heading with content kept under it; or ``None`` where the kept blocks hold less than
    :data:`CONTENT_COVERED` of trafilatura's words (it found text the page's structure does not show, such as an
    article body in JSON-LD).

    Why: trafilatura decides well what is content, but drops the headings of pages without semantic containers
    (its recovery pass for such pages collects paragraphs and tables only) and runs a short page's text into one
    line; the page's own headings, under which its content sits, are the section paths."""
    words = " ".join(main.itertext()).split()
    if not words:
        return None
    trigrams, pairs = _grams(words, 3), _grams(words, 2)
    whole = {_clean(t) for t in main.itertext() if t.strip()}
    headings = {_clean(_inline(h)) for h in main.iter("head")}
    kept: list[bool] = []
    blocks = body.blocks
    i = 0
    while i < len(blocks):
        j = i + 1  # a table's rows are judged together (a short row, such as a rowspan's, matches nothing alone)
        while blocks[i].kind == "row" and j < len(blocks) and blocks[j].kind == "row" \
                and blocks[j].level == blocks[i].level:
            j += 1
        unit = [w for b in blocks[i:j] for w in b.words]
        if blocks[i].kind == "heading":
            keep = False
        elif len(unit) >= 3:
            unit_grams = _grams(unit, 3)
            keep = len(unit_grams & trigrams) >= BLOCK_COVERED * len(unit_grams)
        elif len(unit) == 2:
            keep = tuple(unit) in pairs
        else:
            keep = " ".join(unit) in whole
        kept += [keep] * (j - i)
        i = j
    content = [False] * 7  # content[level]: kept content after this point, before a heading of that level or higher
    for i in range(len(body.blocks) - 1, -1, -1):
        block = body.blocks[i]
        if block.kind != "heading":
            if kept[i]:
                content = [True] * 7
            continue
        kept[i] = content[block.level] and (not block.chrome or block.text in headings)
        content[block.level:] = [False] * (7 - block.level)
    content_blocks = [b for b, keep in zip(body.blocks, kept) if keep]
    found = Counter(w for b in content_blocks for w in b.words)
    return content_blocks if sum((Counter(words) & found).values()) >= CONTENT_COVERED * len(words) else None


# -- the reader ----------------------------------------------------------------------------------------------
#: ``huge_tree``: nesting up to 2,048 deep, not 256 (past it libxml2 stops, and the rest of the page is lost).
_PARSER = lxml.html.HTMLParser(collect_ids=False, default_doctype=False, remove_comments=True, remove_pis=True,
                               huge_tree=True)


def _parse(text: str) -> Any:
    text = _INVALID_XML.sub("", _XML_DECLARATION_TEXT.sub("", text, count=1))
    try:
        return lxml.html.document_fromstring(text, parser=_PARSER)
    except (etree.ParserError, ValueError):
        return None


def _title(tree: Any) -> str:
    """The page's ``<title>`` (else its ``og:title``), whitespace collapsed; ``""`` if none."""
    for el in tree.iter("title"):
        if _enclosing(el, "svg") is None and (title := _clean(el.text_content())):
            return title
    for el in tree.iter("meta"):
        if (el.get("property") or el.get("name") or "").lower() == "og:title":
            return _clean(el.get("content") or "")
    return ""


def read_html(data: bytes, path: Path, lift_title: bool = True) -> Read:
    """An HTML page as Markdown: its main content's headings, paragraphs, lists, tables and code, escaped.

    The page's navigation, footer, cookie banners, scripts and styles are dropped and its layout tables turned
    into blocks; trafilatura picks the main content; the page's own blocks that it picked are written, with
    each heading that has content under it (:func:`_content_blocks`); where they do not hold trafilatura's text,
    trafilatura's own XML is written instead; where trafilatura finds nothing, the whole page is.

    Args:
        data: the file's bytes, in any encoding (:func:`decode_html`).
        path: the file (unused: the bytes say it all).
        lift_title: a heading that opens the page with none of its level or above after it is the page's title
            (:func:`_title_heading`), not a section (an EPUB chapter keeps its heading as its section).

    Returns:
        A :class:`Read` with the page's ``<title>`` (``""`` without one); its warnings say when the page's
        declared encoding was wrong or no main content was found.

    Raises:
        Unreadable: ``no_text``, the page holds no text at all.
    """
    text, _, warnings = decode_html(data)
    tree = _parse(text)
    if tree is None:
        raise Unreadable("no_text", "no text in the page")
    title = _title(tree)
    _strip_boilerplate(tree)
    _unlayout_tables(tree)
    try:
        body = _whole_body(tree)
    except RecursionError:  # blocks nested past Python's stack: trafilatura's blocks only
        body = _Blocks()
    main = _main_content(tree)
    if main is None:
        markdown = body.markdown()
        if markdown:
            warnings += ("no main content found; the whole page was read",)
    elif body.blocks and (blocks := _content_blocks(body, main)) is not None:
        markdown = body.markdown(blocks)
    else:
        extracted = _Blocks()
        _walk_xml(main, extracted)
        markdown = extracted.markdown()
    if not markdown:
        raise Unreadable("no_text", "no text in the page")
    if lift_title:
        heading, markdown = _title_heading(markdown)
        title = heading or title
    return Read(markdown, "markdown", title, {}, 0, warnings)


_HEADING_LINE = re.compile(r"^(#{1,6}) (.*)$")


def _title_heading(markdown: str) -> tuple[str, str]:
    """The page's title heading and the Markdown without it, or ``("", markdown)``: as a Markdown file's title,
    the heading that opens the page before any text, where no other heading of its level or above follows (a
    law's ``<h1>Lei Municipal nº 101…</h1>`` above its chapters); its sections then start below it instead of
    repeating the title in every section path."""
    blocks = markdown.split("\n\n")
    first = _HEADING_LINE.match(blocks[0])
    if first is None or len(blocks) < 2:
        return "", markdown
    level = len(first.group(1))
    for block in blocks[1:]:
        other = _HEADING_LINE.match(block)
        if other is not None and len(other.group(1)) <= level:
            return "", markdown
    return _unescape(first.group(2)), "\n\n".join(blocks[1:])


def _unescape(text: str) -> str:
    """:func:`~retrieval.ingest.formats.md_escape`'s text back (its backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", text)


def looks_like_html(data: bytes) -> bool:
    """Whether the bytes look like HTML/XML text: no NUL byte in the first 1 KB (unless it opens with a UTF-16
    byte order mark)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return True
    return b"\x00" not in data[:1024]


#: The largest HTML page read: a page's tree costs about 80 times its bytes in memory (a 50 MB page of one line
#: took 3.9 GB and 144 s); a municipal law's page is well under 1 MB.
MAX_HTML_BYTES = 10 * 2**20

HTML = FORMATS.declare(Format("html", Text("HTML", "HTML"), (".html", ".htm", ".xhtml"), read_html,
                              sniff=looks_like_html, library="trafilatura 2.3", max_bytes=MAX_HTML_BYTES))
