"""Splitting parents into subchunks: sentences packed into windows of at most ``chunk_tokens`` words, a Markdown
or MDX parent section by section (text and code blocks apart, the section path and pages in the metadata), and
each chunk's content hash and optional context line."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

from ..core.text import split_sentences
from ..core.types import Chunk, Document
from . import markup
from .location import PAGE_END_KEY, PAGE_KEY
from .metadata import MAX_METADATA_TEXT_BYTES


def content_hash(*parts: object) -> str:
    """SHA-1 over the JSON of ``parts`` (stable key order): the identity of a chunk's indexed content."""
    return hashlib.sha1(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _windows(sentences: list[str], size: int, overlap: int) -> list[list[str]]:
    """Pack sentences into windows of at most ``size`` words; consecutive windows share trailing sentences
    of at most ``overlap`` words. A sentence longer than ``size`` is cut into word runs."""
    return [[text for text, _ in window] for window in _tagged_windows([(s, None) for s in sentences], size, overlap)]


def _tagged_windows(units: list[tuple[str, Any]], size: int, overlap: int) -> list[list[tuple[str, Any]]]:
    """:func:`_windows` of units that each carry a tag (which block of a Markdown section they come from); the
    word runs of a unit longer than ``size`` keep its tag."""
    pieces: list[tuple[str, Any]] = []
    for sentence, tag in units:
        words = sentence.split()
        if len(words) <= size:
            pieces.append((sentence, tag))
        else:
            step = size - overlap
            pieces.extend((" ".join(words[i : i + size]), tag) for i in range(0, len(words) - overlap, step))
    counts = [len(p.split()) for p, _ in pieces]
    windows: list[list[tuple[str, Any]]] = []
    start = 0
    while start < len(pieces):
        end, total = start, 0
        while end < len(pieces) and (total + counts[end] <= size or end == start):
            total += counts[end]
            end += 1
        windows.append(pieces[start:end])
        if end >= len(pieces):
            break
        back, shared = end, 0
        while back - 1 > start and shared + counts[back - 1] <= overlap:
            back -= 1
            shared += counts[back]
        start = back
    return windows


def document_text(doc: Document) -> str:
    """A parent's text as plain text: a Markdown or MDX document's as :func:`.markup.plain_text` reads it (its
    headings, text and code, one block per line), any other document's as it is."""
    return markup.plain_text(doc.text, doc.markup == markup.MDX) if doc.markup else doc.text


def context_line(doc: Document, max_words: int = 40) -> str:
    """Contextual retrieval's line for every chunk of ``doc`` (local adapter, no LLM): the parent's title and
    its first sentence as a summary, cut to ``max_words`` words."""
    sentences = split_sentences(document_text(doc))
    summary = " ".join((sentences[0] if sentences else "").split()[:max_words])
    return f"Documento: {doc.title or doc.id}. Resumo: {summary}"


def chunk_documents(docs: Iterable[Document], chunk_tokens: int, chunk_overlap: int,
                    contextual: bool = False) -> list[Chunk]:
    """Split parents into subchunks of at most ``chunk_tokens`` words on sentence boundaries.

    Args:
        contextual: attach :func:`context_line` to each chunk, stored apart from its text (the indexes read
            it; the context sent to the answer and the citations show the original text only).

    Returns:
        Chunks with ids ``"{parent_id}#{n}"`` (n from 0), each carrying its parent's metadata and title. A
        Markdown or MDX parent is chunked section by section (:func:`_markup_chunks`).
    """
    chunks: list[Chunk] = []
    for doc in docs:
        context = context_line(doc) if contextual else ""
        if doc.markup:
            chunks.extend(_markup_chunks(doc, chunk_tokens, chunk_overlap, context))
            continue
        for n, window in enumerate(_windows(split_sentences(doc.text), chunk_tokens, chunk_overlap)):
            text = " ".join(window)
            chunk_id = f"{doc.id}#{n}"
            chunks.append(Chunk(chunk_id, doc.id, n, doc.title, text, dict(doc.metadata),
                                content_hash(chunk_id, doc.title, text, dict(doc.metadata), context), context))
    return chunks


def _code_units(code: str, size: int) -> list[str]:
    """A code block cut into runs of whole lines of at most ``size`` words each (a longer line is a run of its
    own, which the windows cut into word runs)."""
    runs: list[list[str]] = [[]]
    words = 0
    for line in code.split("\n"):
        count = len(line.split())
        if runs[-1] and words + count > size:
            runs.append([])
            words = 0
        runs[-1].append(line)
        words += count
    return ["\n".join(run) for run in runs if any(line.strip() for line in run)]


def _joined(window: list[tuple[str, Any]], kind: str) -> str:
    """The pieces of one kind of a window: pieces of one block joined by a space (text) or a line break (code);
    blocks by a line break (text: every block is a line, so a sentence never runs into the next block) or a
    blank line (code)."""
    inner, outer = (" ", "\n") if kind == "text" else ("\n", "\n\n")
    out, last = "", None
    for piece, (piece_kind, block) in window:
        if piece_kind != kind:
            continue
        out += (inner if block == last else outer) + piece if out else piece
        last = block
    return out


def _markup_chunks(doc: Document, chunk_tokens: int, chunk_overlap: int, context: str) -> list[Chunk]:
    """A Markdown or MDX parent's chunks: each section (:func:`.markup.parse`) packed into windows of its own,
    so no chunk spans two sections. A chunk's ``text`` holds its text blocks, one line each (a paragraph, a
    list item, a table row); its ``code`` its code blocks; its ``context`` the section path after the
    contextual line, if any; its metadata the section path under :data:`.markup.SECTION_KEY` and, in a paged
    source (page markers, :func:`.formats.page_marker`), its first page under :data:`.location.PAGE_KEY` and its last
    under :data:`.location.PAGE_END_KEY` where it runs over more than one."""
    chunks: list[Chunk] = []
    for section in markup.parse(doc.text, doc.markup == markup.MDX):
        units: list[tuple[str, Any]] = []
        for b, block in enumerate(section.blocks):
            pieces = _code_units(block.text, chunk_tokens) if block.kind == "code" else split_sentences(block.text)
            units.extend((piece, (block.kind, b)) for piece in pieces)
        label = section.label
        if len(label.encode("utf-8")) > MAX_METADATA_TEXT_BYTES:  # what every backend's text field holds
            label = label.encode("utf-8")[:MAX_METADATA_TEXT_BYTES].decode("utf-8", "ignore")
        meta = {**doc.metadata, markup.SECTION_KEY: label} if label else dict(doc.metadata)
        line = "\n".join(part for part in (context, label) if part)
        for window in _tagged_windows(units, chunk_tokens, chunk_overlap):
            text, code = _joined(window, "text"), _joined(window, "code")
            n = len(chunks)
            chunk_id = f"{doc.id}#{n}"
            pages = sorted({section.blocks[b].page for _, (_, b) in window} - {0})
            here = dict(meta)
            if pages:
                here[PAGE_KEY] = pages[0]
                if pages[-1] != pages[0]:
                    here[PAGE_END_KEY] = pages[-1]
            parts = (chunk_id, doc.title, text, dict(here), line) + ((code,) if code else ())
            chunks.append(Chunk(chunk_id, doc.id, n, doc.title, text, here, content_hash(*parts), line, code))
    return chunks
