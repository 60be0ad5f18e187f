"""One process' memory with a ceiling (setting ``memory_mb``): what a corpus will take, checked when it loads,
and the caches sized from what is left.

A process holds three things: the models and libraries (a fixed part, measured once the reader and the judge
have read), the corpus (its chunks, their BM25 postings and the vector index: a part per chunk, measured at
1k, 10k and 100k chunks by ``make bench-scale``) and the caches. Only the caches can give way, so a ceiling
sizes them from what the first two leave: the reader's passage states kept in memory (the largest: 768 bytes
a token, some 300 MB by default) and the question caches; a corpus whose fixed and per-chunk parts alone
exceed the ceiling is refused in one line naming what it needs. The reader's states on disk are mapped, not
held: they count against ``reader_state_mb``, not here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CorpusError

#: The models and libraries of one process once the reader and the judge have read (torch, the reader's fp32
#: encoder, e5-small's engine, the judge's boosters, Chroma's and faiss' runtimes), in MB. With CHUNK_KB, the
#: line through a serving worker's RSS at 10k and 100k chunks, rounded up: measured 913 / 1,026 / 1,488 MB at
#: 1k / 10k / 100k, estimated 985 / 1,032 / 1,498 (docs/benchmark.md, "Memory").
MODELS_MB = 980.0
#: One chunk's share, in KB: its text and metadata, its BM25 postings, its vector and HNSW links.
CHUNK_KB = 5.3
#: A token of a passage's states in the reader's memory cache (fp16, 384 values), in bytes.
TOKEN_BYTES = 768
#: The reader's memory cache without a ceiling, in tokens (about 300 MB).
DEFAULT_CACHE_TOKENS = 400_000
#: The least a ceiling must leave to the caches, in MB (a window of candidates: some 30 passages).
MIN_CACHE_MB = 16.0


class MemoryDoesNotFit(CorpusError):
    """The corpus' estimated memory exceeds ``memory_mb`` (a corpus error: the app keeps the corpus it had and
    says why in one line, as for a file it cannot read)."""


@dataclass(frozen=True)
class MemoryPlan:
    """What a process will hold with a corpus, and the caches sized to fit ``ceiling_mb`` (0: no ceiling)."""

    ceiling_mb: float
    chunks: int
    models_mb: float
    corpus_mb: float
    cache_tokens: int

    @property
    def cache_mb(self) -> float:
        return self.cache_tokens * TOKEN_BYTES / 2**20

    @property
    def total_mb(self) -> float:
        return self.models_mb + self.corpus_mb + self.cache_mb

    def line(self) -> str:
        """One line: the estimate and, under a ceiling, what the caches were given."""
        ceiling = f" of RETRIEVAL_MEMORY_MB={self.ceiling_mb:,.0f}" if self.ceiling_mb else " (no ceiling)"
        return (f"memory: about {self.total_mb:,.0f} MB{ceiling}: models {_mb(self.models_mb)}, "
                f"{self.chunks:,} chunks {_mb(self.corpus_mb)}, reader cache {_mb(self.cache_mb)} "
                f"({self.cache_tokens:,} tokens)")


def _mb(value: float) -> str:
    """MB for a line: one decimal under 10 (a small corpus' 0.4 MB is not "0")."""
    return f"{value:,.1f} MB" if value < 10 else f"{value:,.0f} MB"


def plan_memory(ceiling_mb: float, chunks: int) -> MemoryPlan:
    """The plan for a corpus of ``chunks`` under ``ceiling_mb`` (0: no ceiling, the default caches).

    Under a ceiling, the reader's cache takes what the models and the corpus leave, at most its default.

    Raises:
        MemoryDoesNotFit: the models and the corpus leave less than :data:`MIN_CACHE_MB` (one line, naming the
            MB needed and the settings to change).
    """
    corpus_mb = chunks * CHUNK_KB / 1024
    if not ceiling_mb:
        return MemoryPlan(0.0, chunks, MODELS_MB, corpus_mb, DEFAULT_CACHE_TOKENS)
    left = ceiling_mb - MODELS_MB - corpus_mb
    if left < MIN_CACHE_MB:
        need = MODELS_MB + corpus_mb + MIN_CACHE_MB
        raise MemoryDoesNotFit(
            f"a corpus of {chunks:,} chunks needs about {need:,.0f} MB of memory (models {_mb(MODELS_MB)}, "
            f"chunks {_mb(corpus_mb)}, caches at least {_mb(MIN_CACHE_MB)}), over "
            f"RETRIEVAL_MEMORY_MB={ceiling_mb:,.0f}: raise it, or serve fewer chunks from one process "
            f"(docs/deployments.md)")
    tokens = min(DEFAULT_CACHE_TOKENS, int(left * 2**20 / TOKEN_BYTES))
    return MemoryPlan(float(ceiling_mb), chunks, MODELS_MB, corpus_mb, tokens)
