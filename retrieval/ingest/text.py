"""Markdown, MDX and plain text files: their front matter (:mod:`.metadata`), their title and their body.

The body keeps its source: a Markdown or MDX file is read as structure when it is chunked (:mod:`.markup`).
Text is UTF-8; a file that is not is read as Windows-1252 where those bytes decode (the code page of most
Portuguese files written on Windows), else as the encoding ``charset-normalizer`` finds, and says so in a
warning: the HTML reader's rule (:func:`retrieval.ingest.html.decode_html`) without a page's declarations.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.kinds import Text
from . import markup
from .formats import FORMATS, Format, Read, Unreadable
from .html import decode_html
from .metadata import read_front_matter


#: An ATX heading line (CommonMark: up to three spaces, one to six ``#``, a space, the text, optional closing ``#``s).
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def split_title(body: str, markdown: bool) -> tuple[str | None, str]:
    """The title line of a file's body and the body without it, or ``(None, body)`` when it has none.

    Markdown: the first non-empty line when it is an ATX heading (any level), before any body text. Text: the
    first non-empty line when more non-empty lines follow. A heading that is the file's only line is not a
    title: its text (without the ``#`` marks) is the body.
    """
    lines = body.split("\n")
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None, body
    rest = "\n".join(lines[first + 1:]).lstrip("\r\n")
    if markdown:
        heading = _ATX.match(lines[first].rstrip("\r"))
        if heading is None or not heading.group(1).strip():
            return None, body
        if not rest.strip():
            return None, heading.group(1).strip()
        return heading.group(1).strip(), rest
    if not rest.strip():
        return None, body
    return lines[first].strip(), rest


def _not_binary(data: bytes) -> bool:
    return b"\x00" not in data[:8192]


def _decoded(data: bytes, path: Path) -> tuple[str, list[str]]:
    """The file's text (the HTML reader's rule without a page's declarations: a BOM, UTF-8, Windows-1252, else
    charset-normalizer's guess) and a warning where it was not UTF-8."""
    text, encoding, warnings = decode_html(data, declarations=False)
    if encoding == "utf-8" and not warnings:
        return text, []
    return text, [f"{path}: not UTF-8, read as {encoding}", *(f"{path}: {w}" for w in warnings)]


def read_markdown(data: bytes, path: Path, mdx: bool = False) -> Read:
    """A Markdown (or MDX) file: front matter, the title (its first ATX heading before any body text, as plain
    text, else the front matter's ``title``), the source without either.

    Raises:
        Unreadable: ``no_text`` where nothing is left once read as Markdown (only tags, comments or imports).
    """
    raw, warnings = _decoded(data, path)
    meta, body, more = read_front_matter(raw, str(path))
    declared = str(meta.pop("title", "") or "")
    heading, text = split_title(markup.strip_esm(body) if mdx else body, markdown=True)
    title = (markup.plain_inline(heading, mdx) if heading else "") or declared
    if not text.strip() or not markup.parse(text, mdx):
        raise Unreadable("no_text", f"no text once read as {'MDX' if mdx else 'Markdown'}")
    return Read(text, markup.MDX if mdx else markup.MARKDOWN, title, meta, 0, tuple(warnings + more))


def read_mdx(data: bytes, path: Path) -> Read:
    return read_markdown(data, path, mdx=True)


def read_text(data: bytes, path: Path) -> Read:
    """A text file: front matter, the title (the front matter's ``title``, else its first non-empty line when
    more follow), the text."""
    raw, warnings = _decoded(data, path)
    meta, body, more = read_front_matter(raw, str(path))
    declared = str(meta.pop("title", "") or "")
    if declared:
        title, text = declared, body
    else:
        first, text = split_title(body, markdown=False)
        title = first or ""
    if not text.strip():
        raise Unreadable("no_text", "an empty file")
    return Read(text, "", title, meta, 0, tuple(warnings + more))


MARKDOWN = FORMATS.declare(Format("markdown", Text("Markdown", "Markdown"), (".md", ".markdown"), read_markdown,
                                  _not_binary, "markdown-it-py 4.3"))
MDX = FORMATS.declare(Format("mdx", Text("MDX", "MDX"), (".mdx",), read_mdx, _not_binary, "markdown-it-py 4.3"))
TEXT = FORMATS.declare(Format("text", Text("text", "texto"), (".txt",), read_text, _not_binary, "Python"))
