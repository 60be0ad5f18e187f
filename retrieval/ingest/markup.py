"""Markdown and MDX files read as structure (markdown-it-py, CommonMark with GFM tables and strikethrough).

A folder corpus' ``.md`` and ``.mdx`` files keep their source as :attr:`~retrieval.core.types.Document.text`
(``markup`` says which); :func:`parse` reads that source into :class:`Section`\\ s, one per heading, each a list of
:class:`Block`\\ s, and the chunker (:func:`retrieval.ingest.chunking.chunk_documents`) chunks each section apart:

* **text** blocks are plain text, one line each: a paragraph, one list item's paragraph (nested items are their
  own lines), one table row (``Header: cell; Header: cell``), a quote's paragraph, the text of an HTML block.
  No Markdown syntax is left: heading and list markers, emphasis, backticks (inline code becomes its text), link
  syntax (``[x](y)`` → ``x``; an image gives its alt text), HTML tags and comments, table pipes; in MDX, the
  ``import`` / ``export`` blocks, JSX tags and ``{…}`` expressions as well;
* **code** blocks (fenced or indented) are kept as they are written: indexed, never cut into sentences;
* a block quote nested deeper than :data:`MAX_QUOTE_DEPTH` levels reads as that deep (:func:`flatten_quotes`):
  markdown-it drops whatever nests past its limit, and a file quoted 100,000 deep was "no text";
* a heading opens a section: its **path** is the chain of headings above it (``("Hooks", "useLayoutEffect",
  "Uso")``), kept as each chunk's ``section`` metadata (:data:`SECTION_KEY`, joined by :data:`SECTION_SEPARATOR`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import zip_longest
from typing import Any, Sequence

from .formats import PAGE_MARKER
from .location import SECTION_KEY, SECTION_SEPARATOR  # noqa: F401 - the key every chunk's section is kept under

#: :attr:`Document.markup` of a folder's ``.md`` and ``.mdx`` files (other documents have ``""``: plain text).
MARKDOWN, MDX = "markdown", "mdx"
#: The file suffixes read as Markdown, and which flavour each is.
SUFFIXES = {".md": MARKDOWN, ".mdx": MDX}


@dataclass(frozen=True)
class Block:
    """One unit of a section: ``kind`` ``"text"`` (one line of plain text) or ``"code"`` (a code block as
    written, without its fences); ``page``: the page it is on (from the last page marker above it,
    :func:`retrieval.ingest.formats.page_marker`), ``0`` in a source without pages."""

    kind: str
    text: str
    page: int = 0


@dataclass(frozen=True)
class Section:
    """The blocks under one heading, in order; ``path`` is the chain of headings above them (empty before the
    first heading)."""

    path: tuple[str, ...]
    blocks: tuple[Block, ...]

    @property
    def label(self) -> str:
        """The path as shown and stored: ``Hooks › useLayoutEffect › Uso`` (``""`` before any heading)."""
        return SECTION_SEPARATOR.join(self.path)


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


# -- MDX ---------------------------------------------------------------------------------------------------
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ESM = re.compile(r"^(?:import|export)\b")
#: A JSX tag: ``<Tabs>``, ``</Tabs.Item>``, ``<Note type="info" open={true} />`` (attribute values quoted or in
#: braces, one level of nested braces).
_JSX_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s+(?:[^<>{}\"']|\"[^\"]*\"|'[^']*'|\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})*)?"
                      r"\s*/?>|<>|</>")
#: A JSX expression in text (``{props.versão}``, ``{/* nota */}``), one level of nested braces.
_JSX_EXPRESSION = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


def _fenced(line: str, fence: str | None) -> tuple[str | None, bool]:
    """The code fence open after ``line`` (``fence``: the one open before it), and whether ``line`` is a fence's
    opening, body or closing line (left as written by every pass over the source's lines)."""
    opened = _FENCE.match(line)
    if fence is not None:
        closes = opened is not None and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
            and not line.strip().lstrip(fence[0])
        return (None if closes else fence), True
    return (opened.group(1), True) if opened else (None, False)


def strip_esm(text: str) -> str:
    """An MDX source without its ``import`` / ``export`` blocks (outside code fences): a line starting with
    either word opens a block that runs to the next blank line, as MDX reads them."""
    out: list[str] = []
    fence: str | None = None
    in_esm = False
    for line in text.split("\n"):
        if fence is not None:
            fence, _ = _fenced(line, fence)
            out.append(line)
            continue
        if in_esm:
            if line.strip():
                continue
            in_esm = False  # the blank line that ends the block stays: what follows is a block of its own
        if _ESM.match(line):
            in_esm = True
            continue
        fence, _ = _fenced(line, None)
        out.append(line)
    return "\n".join(out)


# -- admonitions -------------------------------------------------------------------------------------------
#: A MkDocs / Python-Markdown admonition or collapsible block: ``!!! warning "Title"`` or ``??? note``, its body
#: indented by four spaces below it.
_ADMONITION = re.compile(r'^(?P<indent>[ ]{0,3})(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+[\w-]+)*'
                         r'(?:[ \t]+"(?P<title>[^"]*)")?[ \t]*$')


def admonitions(text: str) -> str:
    """``text`` with each admonition read as what it shows: its title (if it has one) as a paragraph, then its
    body dedented as ordinary blocks. Written as is, ``!!! warning "Atenção"`` was the start of its body's
    paragraph (the body's indent is a lazy continuation), and an answer quoted ``!!! warning`` as text."""
    if "!!!" not in text and "???" not in text:
        return text
    out: list[str] = []
    fence: str | None = None
    body = False
    for line in text.split("\n"):
        if body:
            if not line.strip():
                out.append("")
                continue
            if line.startswith("    ") or line.startswith("\t"):
                out.append(line[4:] if line.startswith("    ") else line[1:])
                continue
            body = False
        fence, in_code = _fenced(line, fence)
        if not in_code and (found := _ADMONITION.match(line)) is not None:
            title = (found.group("title") or "").strip()
            out += [title, ""] if title else [""]
            body = True
            continue
        out.append(line)
    return "\n".join(out)


# -- deep quotes ---------------------------------------------------------------------------------------------
#: The deepest block quote read as written; a line quoted deeper reads as quoted this deep. markdown-it stops
#: reading a document where its blocks nest :data:`_parser`'s ``maxNesting`` (20) levels deep and drops the rest
#: without a word: a file of 50 nested ``>`` was "no text". Quotes count one level each and the paragraph inside
#: one more, so 8 leaves room for lists nested inside them.
MAX_QUOTE_DEPTH = 8
_QUOTE_PREFIX = re.compile(r"(?: {0,3}>[ \t]?)+")
_QUOTE_HEAD = re.compile(rf"(?: {{0,3}}>[ \t]?){{{MAX_QUOTE_DEPTH - 1}}}")


def flatten_quotes(text: str) -> str:
    """``text`` with every line quoted more than :data:`MAX_QUOTE_DEPTH` deep (``>>>>…>`` or ``> > > …`` at the
    start of a line outside a top-level code fence) quoted that deep: its first markers and its last one kept as
    written (so what follows the last ``>`` reads as before: a paragraph, or indented code), the others dropped.
    A quote nests no meaning past a few levels, and markdown-it would drop it. One pass over the lines, no
    recursion: 100,000 markers on one line take milliseconds."""
    if ">" not in text:
        return text
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        fence, in_code = _fenced(line, fence)
        if not in_code and (whole := _QUOTE_PREFIX.match(line)) is not None \
                and whole.group().count(">") > MAX_QUOTE_DEPTH:
            head = _QUOTE_HEAD.match(line)
            assert head is not None  # the prefix holds more markers than the head takes
            line = head.group() + line[whole.group().rfind(">"):]
        out.append(line)
    return "\n".join(out)


# -- inline text ---------------------------------------------------------------------------------------------
_VOID_TAG = re.compile(r"<\s*(?:br|hr|img|wbr)\b", re.I)
_SPACES = re.compile(r"\s+")


def _inline(children: Sequence[Any] | None, mdx: bool) -> str:
    """The plain text of an inline token's children: text and inline code as they read, breaks as spaces, an
    image as its alt text; emphasis, link and HTML markers dropped."""
    out: list[str] = []
    for tok in children or ():
        kind = tok.type
        if kind in ("text", "code_inline", "text_special"):
            out.append(tok.content)
        elif kind in ("softbreak", "hardbreak"):
            out.append(" ")
        elif kind == "image":
            out.append(_inline(tok.children, mdx))
        elif kind == "html_inline":
            out.append(" " if _VOID_TAG.match(tok.content) else "")
    text = "".join(out)
    if mdx:
        text = _JSX_EXPRESSION.sub("", _JSX_TAG.sub("", text))
    return _SPACES.sub(" ", text).strip()


def plain_inline(text: str, mdx: bool = False) -> str:
    """One line of Markdown (a heading's text) as plain text."""
    tokens = _parser().parseInline(text)
    return _inline(tokens[0].children if tokens else (), mdx)


_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_RAW_ELEMENT = re.compile(r"<(script|style)\b.*?(?:</\1\s*>|$)", re.S | re.I)
#: A processing instruction is bounded (1,000 characters): an unbounded ``<\?.*?\?>`` scanned to the end of the text
#: from each unclosed ``<?`` (100 KB of them took 20 s).
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<![^<>]*>|<\?[^<>]{0,1000}?\?>", re.S)


def _html_lines(source: str, mdx: bool) -> list[str]:
    """The text of an HTML (or JSX) block, one line per source line that holds any: comments, scripts, styles
    and tags dropped, entities decoded."""
    text = _RAW_ELEMENT.sub("", _COMMENT.sub("", source))
    if mdx:
        text = _JSX_EXPRESSION.sub("", _JSX_TAG.sub("", text))
    text = _HTML_TAG.sub(" ", text)
    return [line for line in (_SPACES.sub(" ", html.unescape(raw)).strip() for raw in text.split("\n")) if line]


# -- blocks and sections ---------------------------------------------------------------------------------------
def _row_line(header: Sequence[str], cells: Sequence[str]) -> str:
    """A table row as one line: each cell after its column's header (``Plano: Pro; Preço: R$ 50``)."""
    return "; ".join(f"{h}: {c}" if h else c for h, c in zip_longest(header, cells, fillvalue="") if c)


@lru_cache(maxsize=512)
def parse(text: str, mdx: bool = False) -> tuple[Section, ...]:
    """The sections of a Markdown (or MDX) source, in order, each with its blocks; sections without a block
    are left out. A source whose only content is headings gives their texts as the blocks of one section."""
    if mdx:
        text = strip_esm(text)
    tokens = _parser().parse(flatten_quotes(admonitions(text)))
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    headings: list[str] = []
    blocks: list[Block] = []
    path: tuple[str, ...] = ()
    row: list[str] | None = None
    header: list[str] = []
    in_head, body_rows = False, 0
    page = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "heading_open":
            title = _inline(tokens[i + 1].children, mdx) if i + 1 < len(tokens) else ""
            if blocks:
                sections.append(Section(path, tuple(blocks)))
                blocks = []
            level = int(tok.tag[1:])
            while stack and stack[-1][0] >= level:
                stack.pop()
            if title:
                stack.append((level, title))
                headings.append(title)
            path = tuple(name for _, name in stack)
            i += 3  # heading_open, inline, heading_close
            continue
        if kind == "table_open":
            header, body_rows = [], 0
        elif kind == "thead_open":
            in_head = True
        elif kind == "thead_close":
            in_head = False
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            if in_head:
                header = row or []
            elif row and (line := _row_line(header, row)):
                blocks.append(Block("text", line, page))
                body_rows += 1
            row = None
        elif kind == "table_close":
            if not body_rows and any(header):  # a table of one header row: the header is its text
                blocks.append(Block("text", "; ".join(h for h in header if h), page))
        elif kind == "inline":
            line = _inline(tok.children, mdx)
            if row is not None:
                row.append(line)
            elif line:
                blocks.append(Block("text", line, page))
        elif kind in ("fence", "code_block"):
            source = tok.content.rstrip()
            if source.strip():
                blocks.append(Block("code", source, page))
        elif kind == "html_block" and (marker := PAGE_MARKER.match(tok.content.strip())):
            page = int(marker.group(1))
        elif kind == "html_block":
            blocks.extend(Block("text", line, page) for line in _html_lines(tok.content, mdx))
        i += 1
    if blocks:
        sections.append(Section(path, tuple(blocks)))
    if not sections and headings:
        sections.append(Section((), tuple(Block("text", h, page) for h in headings)))
    return tuple(sections)


def plain_text(text: str, mdx: bool = False) -> str:
    """A Markdown source as plain text, one block per line: each section's headings, text and code."""
    lines: list[str] = []
    shown: tuple[str, ...] = ()
    for section in parse(text, mdx):
        common = 0
        while common < min(len(shown), len(section.path)) and shown[common] == section.path[common]:
            common += 1
        lines.extend(section.path[common:])
        shown = section.path
        lines.extend(block.text for block in section.blocks)
    return "\n".join(lines)
