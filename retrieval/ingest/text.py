"""Markdown, MDX and plain text files: their front matter (:mod:`.metadata`), their title and their body.

The body keeps its source: a Markdown or MDX file is read as structure when it is chunked (:mod:`.markup`).
Text is UTF-8; a file that is not is read as Windows-1252 where those bytes decode (the code page of most
Portuguese files written on Windows), else as the encoding ``charset-normalizer`` finds, and says so in a
warning (:func:`decode_text`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.kinds import Text
from . import markup
from .formats import FORMATS, Format, Read, Unreadable
from .metadata import read_front_matter


def decode_text(data: bytes, declared: str | None = None) -> tuple[str, str]:
    """``data`` as text and the encoding read: a BOM's, else ``declared`` (ISO-8859-1 read as Windows-1252, as
    browsers do), else UTF-8 where it decodes strictly, else Windows-1252 where it decodes (Portuguese files
    written on Windows: detectors often guess cp1250 for them, which turns ``ã`` into ``ă``), else
    ``charset-normalizer``'s best guess.

    Raises:
        Unreadable: no encoding reads the bytes.
    """
    import codecs

    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(name, errors="replace"), name
    if declared:
        name = declared.strip().lower()
        name = "cp1252" if name in {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "us-ascii", "ascii"} else name
        try:
            return data.decode(name), name
        except (LookupError, UnicodeError):
            pass
    for name in ("utf-8", "cp1252"):
        try:
            return data.decode(name), name
        except UnicodeDecodeError:
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise Unreadable("unreadable", "not text in any encoding found")
    return str(best), best.encoding


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
    text, encoding = decode_text(data)
    if encoding in ("utf-8", "utf-8-sig"):
        return text, []
    return text, [f"{path}: not UTF-8, read as {encoding}"]


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
