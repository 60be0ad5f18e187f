"""The bi-encoder reranker (kind ``bi-encoder``): the cosine between the question and each passage under a second
embedding model (``bi-encoder:use-m3``, ``bi-encoder:e5-small``): offline rescoring. It is *not* a cross-encoder
(question and passage are never read together) and is never labelled as one.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from ...backends.embedders import load_embedder
from ...core.kinds import Text
from ...core.reasons import Reason, declare
from .base import COULD_NOT_LOAD, KINDS, LOADED, LoadContext, PassageReranker, RerankerKind, RerankerSpec, prefixed

NO_MODEL = declare("rerank.no_embedding_model",
                   en="reranker {spec!q} names no embedding model (use bi-encoder:use-m3 or bi-encoder:e5-small)",
                   pt="o reranqueador {spec!q} não nomeia modelo de embeddings (use bi-encoder:use-m3 ou "
                   "bi-encoder:e5-small)")
#: The bi-encoder the app offers.
OFFERED = "bi-encoder:use-m3"


class BiEncoderReranker(PassageReranker):
    """Cosine between the question and each passage under a second embedding model. Passage vectors are
    kept in a bounded in-memory cache (keyed by the passage text), so repeated candidates cost nothing."""

    kind = "bi-encoder"
    score_kind = "cosine (bi-encoder rescoring)"

    def __init__(self, name: str, embedder: Any, cache_size: int = 50_000) -> None:
        self.name, self._embedder, self._cache_size = name, embedder, cache_size
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        # The lock guards the cache only; the embedder runs outside it (serialising itself where its engine is
        # not re-entrant), so one request's embedding does not hold up another's cache look-up.
        q = self._embedder.embed_queries([question])[0]
        with self._lock:
            found = {x: self._cache[x] for x in dict.fromkeys(passages) if x in self._cache}
        missing = [x for x in dict.fromkeys(passages) if x not in found]
        if missing:
            fresh = dict(zip(missing, self._embedder.embed_passages(missing)))
            found.update(fresh)
            with self._lock:
                if len(self._cache) + len(fresh) > self._cache_size:
                    self._cache.clear()
                self._cache.update(fresh)
        p = np.stack([found[x] for x in passages])
        return (p @ q).astype(np.float64)


def load(spec: RerankerSpec, context: LoadContext) -> tuple[BiEncoderReranker | None, Reason]:
    if not spec.name.strip():
        return None, NO_MODEL(spec=spec.text)
    embedder, reason = load_embedder(spec.name, context.allow_downloads)
    if embedder is None:
        return None, COULD_NOT_LOAD(spec=spec.text, error=reason)
    return BiEncoderReranker(spec.text, embedder), LOADED(name=spec.text, kind=BiEncoderReranker.kind)


KINDS.declare(RerankerKind(
    name=BiEncoderReranker.kind,
    label=Text("Bi-encoder rescoring ({name}, offline)", "Renotação por bi-encoder ({name}, offline)"),
    described=Text("{name} (offline rescoring, not a cross-encoder)", "{name} (renotação offline, não é cross-encoder)"),
    parse=prefixed("bi-encoder"), load=load, offer=OFFERED,
    score_label=Text("cosine (bi-encoder rescoring)", "cosseno (renotação por bi-encoder)")))
