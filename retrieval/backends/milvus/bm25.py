"""Our BM25 as Milvus sparse vectors: a token is a sparse dimension by a 32-bit FNV-1a hash (:func:`term_id`), a
row holds its document-side weights (:func:`doc_weights`, with its tenant's ``avgdl``), a query the Lucene IDF of
its tokens over the tenant's chunks; their inner product is the local engine's BM25. The tenant statistics
(:class:`TenantStats`) are computed from the chunks at load, per tenant, so a tenant's scores never depend on
another tenant's chunks (Milvus's own BM25 function keeps collection-wide statistics)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ...core.text import tokenize
from ...core.types import Chunk
from ..lexical import K1, B


def term_id(token: str) -> int:
    """The sparse dimension of a token: 32-bit FNV-1a of its UTF-8 bytes (stable across processes)."""
    h = 0x811C9DC5
    for byte in token.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


@dataclass
class TenantStats:
    """One tenant's BM25 statistics: chunk count, total length in tokens, chunks per token."""

    n: int = 0
    total: int = 0
    df: Counter = field(default_factory=Counter)

    @property
    def avgdl(self) -> float:
        return self.total / self.n if self.n else 0.0

    @property
    def key(self) -> str:
        """What the stored document weights depend on besides the chunk itself."""
        return f"{self.total}/{self.n}"


def tenant_stats(chunks: Iterable[Chunk], tenant_field: str) -> dict[Any, TenantStats]:
    """Per tenant value (``None`` when absent), the statistics of :class:`TenantStats` (one tokenization)."""
    stats: dict[Any, TenantStats] = {}
    for chunk in chunks:
        s = stats.setdefault(chunk.metadata.get(tenant_field), TenantStats(df=Counter()))
        tokens = tokenize(chunk.indexed_text)
        s.n += 1
        s.total += len(tokens)
        s.df.update(set(tokens))
    return stats


def tenant_names(chunks: Iterable[Chunk], tenant_field: str) -> dict[Any, TenantStats]:
    """Per tenant value, its chunk count only (no tokenization): the tenants of a collection without BM25."""
    stats: dict[Any, TenantStats] = {}
    for chunk in chunks:
        stats.setdefault(chunk.metadata.get(tenant_field), TenantStats(df=Counter())).n += 1
    return stats


def doc_weights(tokens: Sequence[str], avgdl: float) -> dict[str, float]:
    """Document-side BM25 weight of each token: ``tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl))``."""
    norm = K1 * (1 - B + B * len(tokens) / avgdl) if avgdl else K1
    return {t: tf * (K1 + 1) / (tf + norm) for t, tf in Counter(tokens).items()}


def sparse_vector(weights: Mapping[str, float]) -> dict[int, float]:
    """Token weights as a Milvus sparse vector (colliding tokens' weights add up, as one dimension)."""
    out: dict[int, float] = {}
    for token, w in weights.items():
        d = term_id(token)
        out[d] = out.get(d, 0.0) + float(w)
    return out
