"""An index's vectors, for every dense store (Chroma, Milvus): what besides the corpus and the model changes
them (:func:`index_variant`), the chunks embedded batch by batch (:func:`embedded_batches`, :func:`embed_chunks`),
and what a sync did (:class:`SyncReport`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from ..core.types import Chunk


@dataclass(frozen=True)
class SyncReport:
    """What a sync did: chunk counts (``added + updated`` were embedded), whether a collection was rebuilt (new
    model), and the collections of the layout."""

    added: int
    updated: int
    removed: int
    unchanged: int
    rebuilt: bool
    #: Chunks whose stored vector was moved from a collection of another layout instead of embedded.
    migrated: int = 0
    #: The dense layout in words (:attr:`DenseLayout.kind`; empty where the store has no such layout, as
    #: Milvus), its number of collections, and the collections this sync created and dropped (a tenant added or
    #: removed; a layout change).
    layout: str = ""
    collections: int = 1
    created: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    #: Where this corpus (same chunking) was indexed before by another encoder and this index starts afresh: that
    #: encoder's name (its vectors are kept under their own name, never mixed with these); else "".
    earlier_model: str = ""


def index_variant(chunk_tokens: int, chunk_overlap: int, contextual: bool = False,
                  passage_template: str = "title-newline") -> str:
    """What, besides the corpus and the model, changes the vectors: chunking, the context line and the
    passage template (the default template adds nothing, so existing collections keep their names)."""
    return (f"chunks-{chunk_tokens}-{chunk_overlap}" + ("+context" if contextual else "")
            + ("" if passage_template == "title-newline" else f"+{passage_template}"))


def embedded_batches(todo: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray], batch: int, progress: bool,
                     on_progress: Callable[[int, int], None] | None = None,
                     passage_template: str = "title-newline",
                     encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None
                     ) -> Iterator[tuple[Sequence[Chunk], np.ndarray]]:
    """``(chunks, their vectors)`` batch by batch, each as soon as it is embedded, so the caller writes it before the
    next is encoded. The embedder reads :meth:`Chunk.passage`; ``encode_chunks`` (the e5 one-pass encoder, which
    keeps the reader's states of the same pass) reads the chunks themselves, or, where it has a ``stream`` (a Ray
    cluster's), streams them back in the order its workers finish. A progress bar with its ETA on stderr, and
    ``on_progress(embedded, total)`` after each batch."""
    if not todo:
        return
    from tqdm import tqdm

    with tqdm(total=len(todo), desc="embedding chunks", unit="chunk", file=sys.stderr,
              disable=not progress) as bar:
        stream = getattr(encode_chunks, "stream", None)   # a cluster's encoder streams its batches back
        if stream is not None:
            batches = stream(todo, batch)
        else:
            batches = ((todo[start : start + batch],
                        encode_chunks(todo[start : start + batch]) if encode_chunks is not None
                        else embed([c.passage(passage_template) for c in todo[start : start + batch]]))
                       for start in range(0, len(todo), batch))
        done = 0   # counted here: a disabled bar (progress=False) counts nothing
        for rows, vectors in batches:
            yield rows, np.asarray(vectors, dtype=np.float32)
            done += len(rows)
            bar.update(len(rows))
            if on_progress:
                on_progress(done, len(todo))


def embed_chunks(todo: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray], batch: int, progress: bool,
                 on_progress: Callable[[int, int], None] | None = None,
                 passage_template: str = "title-newline",
                 encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None) -> np.ndarray:
    """Every vector of :func:`embedded_batches` at once: ``(len(todo), dim)``."""
    parts = [vectors for _, vectors in embedded_batches(todo, embed, batch, progress, on_progress, passage_template,
                                                         encode_chunks)]
    return np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)
