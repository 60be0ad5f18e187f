"""E-books read as structure: EPUB 2 and 3, read from the ZIP with lxml (no e-book library: the common one,
ebooklib, is AGPL).

``META-INF/container.xml`` names the package document (the OPF); its spine lists the book's XHTML documents in
reading order, each read by the HTML reader (:func:`retrieval.ingest.html.read_html`), so each chapter's headings
become sections, its lists and tables lines. A chapter that opens without a heading of its own is headed by its
entry in the book's table of contents (the EPUB 3 navigation document, else the EPUB 2 NCX), else by its
``<title>`` where that is not the book's, so its text never reads as the previous chapter's. A spine document
with no text (a cover picture, the navigation document) is passed over; one that cannot be read is left out with
a warning (the HTML reader's own warnings about a chapter, such as "no main content found", are not repeated).

The title is the OPF's ``dc:title``; ``dc:creator`` is the ``author`` metadata (a list where the book names
several). An EPUB is reflowable: it has no pages, and no page markers are written.

Every member read is checked first (:func:`~retrieval.ingest.archive.guard_zip`) against a ZIP bomb, and every
path the container or the OPF names must stay inside the archive: one that climbs out of it (``..``), is absolute
or names another scheme refuses the file.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from lxml import etree

from ..core.kinds import Text
from .formats import FORMATS, Format, Read, Unreadable, md_heading, one_line
from .html import read_html
from .archive import member, read_zip, zip_of_mimetype

_SPACE = re.compile(r"\s+")
MIMETYPE = b"application/epub+zip"
CONTAINER = "META-INF/container.xml"
_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=True, huge_tree=False)
#: The spine's media types read as chapters (others, such as an SVG page of a fixed-layout book, are passed over).
_CHAPTER_TYPES = frozenset(("application/xhtml+xml", "text/html", "application/xml", "text/xml", ""))
_EPUB_NS = "{http://www.idpf.org/2007/ops}"


def _clean(text: str | None) -> str:
    return _SPACE.sub(" ", text or "").strip()


def _xml(archive: zipfile.ZipFile, name: str) -> Any:
    data = member(archive, name)
    if data is None:
        raise Unreadable("unreadable", f"no {name} in the EPUB")
    try:
        root = etree.fromstring(data, _XML)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise Unreadable("unreadable", f"{name} is not readable XML ({one_line(exc)})") from None
    if root is None:
        raise Unreadable("unreadable", f"{name} is not readable XML")
    return root


def _inside(base: str, href: str) -> str:
    """``href`` (relative to the member ``base``) as a member name, its fragment dropped.

    Raises:
        Unreadable: ``unreadable``, the path leaves the archive (``..`` past its root, absolute, another scheme).
    """
    parts = urlsplit(href)
    path = unquote(parts.path)
    if parts.scheme or parts.netloc or path.startswith("/") or "\\" in path or "\0" in path:
        raise Unreadable("unreadable", f"{_clean(href)[:100]!r} points outside the EPUB")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), path))
    if joined == ".." or joined.startswith("../") or joined in (".", ""):
        raise Unreadable("unreadable", f"{_clean(href)[:100]!r} points outside the EPUB")
    return joined


def _package_path(archive: zipfile.ZipFile) -> str:
    """The OPF's member name, from the container's first OEBPS package ``rootfile``."""
    rootfiles = [r for r in _xml(archive, CONTAINER).iter("{*}rootfile") if r.get("full-path")]
    chosen = next((r for r in rootfiles if (r.get("media-type") or "") == "application/oebps-package+xml"),
                  rootfiles[0] if rootfiles else None)
    if chosen is None:
        raise Unreadable("unreadable", f"{CONTAINER} names no package document")
    return _inside("", chosen.get("full-path", ""))


def _dc(package: Any, name: str) -> list[str]:
    metadata = package.find("{*}metadata")
    if metadata is None:
        return []
    found = [_clean("".join(el.itertext())) for el in metadata.iter("{http://purl.org/dc/elements/1.1/}" + name)]
    return [f for f in found if f]


def _toc_labels(archive: zipfile.ZipFile, package: Any, opf: str, manifest: dict[str, tuple[str, str, str]],
                warnings: list[str]) -> dict[str, str]:
    """Each chapter's member name -> its first label in the table of contents (the navigation document's ``toc``
    nav, else the NCX); ``{}`` where the book has neither or it cannot be read."""
    nav = next((path for path, _, props in manifest.values() if "nav" in props.split()), None)
    spine = package.find("{*}spine")
    ncx_id = spine.get("toc") if spine is not None else None
    ncx = manifest[ncx_id][0] if ncx_id in manifest else next(
        (path for path, kind, _ in manifest.values() if kind == "application/x-dtbncx+xml"), None)
    labels: dict[str, str] = {}
    try:
        if nav:
            root = _xml(archive, nav)
            navs = list(root.iter("{*}nav"))
            toc = next((n for n in navs if n.get(_EPUB_NS + "type") == "toc"), navs[0] if navs else None)
            for link in toc.iter("{*}a") if toc is not None else ():
                href = link.get("href") or ""
                if urlsplit(href).path and (label := _clean("".join(link.itertext()))):
                    labels.setdefault(_inside(nav, href), label)
        if not labels and ncx:
            root = _xml(archive, ncx)
            for point in root.iter("{*}navPoint"):
                content, text = point.find("{*}content"), point.find("{*}navLabel/{*}text")
                if content is not None and urlsplit(content.get("src") or "").path and text is not None \
                        and (label := _clean("".join(text.itertext()))):
                    labels.setdefault(_inside(ncx, content.get("src", "")), label)
    except Unreadable as exc:  # the table of contents only names chapters: the book reads without it
        warnings.append(f"table of contents not read ({exc})")
        return {}
    return labels


def _starts_with_heading(markdown: str) -> bool:
    return markdown.lstrip().startswith("#")


def read_epub(data: bytes, path: Path) -> Read:
    """An EPUB as Markdown: its spine's chapters in reading order, each read as HTML (see the module's docstring).

    Args:
        data: the file's bytes.
        path: the file (each chapter is read as ``path`` joined with its member name, for the HTML reader).

    Returns:
        A :class:`Read` titled by ``dc:title`` (``""`` without one), ``author`` from ``dc:creator``; no pages; a
        warning for each chapter that could not be read.

    Raises:
        Unreadable: ``unreadable`` (not a ZIP, a ZIP bomb, no container or package document, broken XML, a path
        out of the archive, an empty spine), ``no_text`` (no chapter holds text).
    """
    archive = read_zip(data)
    opf = _package_path(archive)
    package = _xml(archive, opf)
    manifest: dict[str, tuple[str, str, str]] = {}  # id -> (member name, media type, properties)
    manifest_el = package.find("{*}manifest")
    for item in manifest_el.iter("{*}item") if manifest_el is not None else ():
        if (ident := item.get("id")) and (href := item.get("href")):
            manifest[ident] = (href, (item.get("media-type") or "").strip().lower(), item.get("properties") or "")
    spine = package.find("{*}spine")
    order = [ref.get("idref") for ref in spine.iter("{*}itemref")] if spine is not None else []
    # every path the book reads is checked before any is read: one that leaves the archive refuses the file
    manifest = {i: (_inside(opf, href), kind, props) for i, (href, kind, props) in manifest.items()
                if i in order or "nav" in props.split() or kind == "application/x-dtbncx+xml"}
    # each document once, by its member (one 1 MB chapter listed under 200 ids was read 200 times)
    chapters = list({manifest[i][0]: manifest[i] for i in dict.fromkeys(order) if i in manifest}.values())
    if not chapters:
        raise Unreadable("unreadable", "the EPUB's spine lists no document")
    warnings: list[str] = []
    titles = _dc(package, "title")
    book_title = titles[0] if titles else ""
    labels = _toc_labels(archive, package, opf, manifest, warnings)
    out: list[str] = []
    for name, kind, _ in chapters:
        if kind not in _CHAPTER_TYPES:
            continue
        content = member(archive, name)
        if content is None:
            warnings.append(f"chapter {name} is missing from the EPUB")
            continue
        try:
            chapter = read_html(content, Path(path or "") / name, lift_title=False)  # a chapter's heading stays
        except Unreadable as exc:
            if exc.reason != "no_text":
                warnings.append(f"chapter {name} could not be read ({exc})")
            continue
        except Exception as exc:  # one broken chapter never loses the book
            warnings.append(f"chapter {name} could not be read ({one_line(exc)})")
            continue
        markdown = chapter.text.strip()
        if not markdown:
            continue
        if not _starts_with_heading(markdown):
            heading = labels.get(name) or (chapter.title if chapter.title and chapter.title != book_title else "")
            if heading:
                out.append(md_heading(1, heading))
        out.append(markdown)
    if not out:
        raise Unreadable("no_text", "no text in any chapter")
    creators = _dc(package, "creator")
    metadata: dict[str, Any] = {}
    if creators:
        metadata["author"] = creators[0] if len(creators) == 1 else creators
    return Read("\n\n".join(out), "markdown", book_title, metadata, 0, tuple(warnings))


def looks_like_epub(data: bytes) -> bool:
    """Whether the bytes are a ZIP whose ``mimetype`` member is ``application/epub+zip``."""
    return zip_of_mimetype(data, MIMETYPE)


EPUB = FORMATS.declare(Format("epub", Text("EPUB", "EPUB"), (".epub",), read_epub, sniff=looks_like_epub,
                              library="lxml, trafilatura 2.3"))
