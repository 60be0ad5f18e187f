"""The tests' one fake embedder: cheap, deterministic, no model."""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np


class HashEmbedder:
    """A bag-of-tokens embedder: each BM25 token (the project's tokenizer, so NFC and NFD agree) is hashed to
    one of ``dim`` signed coordinates; vectors are L2-normalized. Deterministic, no model: the real model is
    not what these tests are about. The empty bag maps to a fixed unit vector. ``calls`` counts the calls of
    :meth:`embed_queries` (a cache's test reads it)."""

    name = "test-hash-64"
    batch = 64

    def __init__(self, dim: int = 64, name: str | None = None) -> None:
        self.dim, self.calls = dim, 0
        if name is not None:
            self.name = name

    def _one(self, text: str) -> np.ndarray:
        from retrieval.core.text import tokenize

        vector = np.zeros(self.dim, dtype=np.float32)
        for token in tokenize(text):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            vector[digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        if not vector.any():
            vector[0] = 1.0
        return vector / np.linalg.norm(vector)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.vstack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)
