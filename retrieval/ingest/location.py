"""Where a chunk sits in its source: its page (or page range) and its section path, as every place that shows a
chunk reads it (the rank grid, the provenance card, the answer's citations, the judging page, the trace JSON's
items, the exports).

The chunker (:func:`retrieval.ingest.chunking.chunk_documents`) writes them into each chunk's metadata:
:data:`SECTION_KEY` (the headings above the chunk, joined by ``" › "``), :data:`PAGE_KEY` (its first page, from 1)
and :data:`PAGE_END_KEY` (its last page, only where it runs over more than one).
"""

from __future__ import annotations

from typing import Any, Mapping

#: The chunk metadata key of a chunk's section path (``Capítulo I › Seção II``).
SECTION_KEY = "section"
#: Between two headings of a section path.
SECTION_SEPARATOR = " › "
#: The chunk metadata key of a chunk's first page (an int from 1; a paged source only: a PDF).
PAGE_KEY = "page"
#: The chunk metadata key of a chunk's last page, present only where it differs from :data:`PAGE_KEY`.
PAGE_END_KEY = "page_end"
#: The keys of :func:`location`, in its order: each item of the trace's lists carries them where its chunk has them,
#: under the same names, so :func:`location` and :func:`location_label` read a trace item as they read metadata.
LOCATION_KEYS = (SECTION_KEY, PAGE_KEY, PAGE_END_KEY)


def location(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's place in its source as the trace and the exports write it: ``{"section": str, "page": int,
    "page_end": int}``, each key only where the chunk has it (``{}`` for a chunk of a JSONL corpus)."""
    out: dict[str, Any] = {}
    section = metadata.get(SECTION_KEY)
    if isinstance(section, str) and section:
        out["section"] = section
    page = metadata.get(PAGE_KEY)
    if type(page) is int and page > 0:
        out["page"] = page
        end = metadata.get(PAGE_END_KEY)
        if type(end) is int and end > page:
            out["page_end"] = end
    return out


def pages_label(where: Mapping[str, Any], lang: str = "en") -> str:
    """``p. 4`` or ``pp. 4-5`` (the same abbreviations in English and Portuguese), ``""`` without a page."""
    page = where.get("page")
    if not page:
        return ""
    end = where.get("page_end")
    return f"pp. {page}-{end}" if end else f"p. {page}"


def location_label(metadata: Mapping[str, Any], lang: str = "en") -> str:
    """A chunk's place in one line: ``p. 4 · Capítulo I › Seção II``; ``""`` where it has neither. ``metadata``:
    a chunk's metadata, its :func:`location`, or an item of the trace's lists (they carry the same keys)."""
    where = location(metadata)
    return " · ".join(part for part in (pages_label(where, lang), where.get("section", "")) if part)


def cited_label(title: str, metadata: Mapping[str, Any], lang: str = "en") -> str:
    """A cited chunk's document and place in one line: ``Diário Oficial, 12/03/2024 · p. 4 · Seção II``; the
    title left out where it is empty, ``""`` where the chunk has neither title nor place."""
    return " · ".join(part for part in (title.strip(), location_label(metadata, lang)) if part)
