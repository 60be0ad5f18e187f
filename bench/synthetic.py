"""Synthetic corpora for the benchmark: N subchunks of seeded pseudo-words with codes and two tenants, and
queries drawn from their own documents. They time the machinery; they are not a benchmark of real data.

:class:`SyntheticEmbedder` gives their dense vectors (sums of fixed word vectors near a 32-dimensional
subspace), so a million chunks need no model forward pass; every query still pays the real model's.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

SEED = 13


def _vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """Pseudo-Portuguese words made of syllables (unique, deterministic for a seed)."""
    onsets = ["", "b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "lh", "nh", "br", "pr", "tr"]
    vowels = ["a", "e", "i", "o", "u", "ao", "ei", "ou"]
    words: dict[str, None] = {}
    while len(words) < size:
        n = int(rng.integers(2, 5))
        words["".join(onsets[rng.integers(len(onsets))] + vowels[rng.integers(len(vowels))] for _ in range(n))] = None
    return list(words)


def synthetic_corpus(path: Path, n_chunks: int, seed: int = SEED) -> Path:
    """Write ``n_chunks`` one-chunk documents (30-100 words, Zipf-distributed vocabulary of 30k pseudo-words,
    a product code such as ``PX-417``, a ``year`` field) as JSONL. Reproducible from ``seed``; SYNTHETIC."""
    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    vocab = np.array(_vocabulary(30_000, rng))
    tmp = path.with_suffix(".part")
    with tmp.open("w", encoding="utf-8") as out:
        for start in range(0, n_chunks, 10_000):
            m = min(10_000, n_chunks - start)
            lengths = rng.integers(30, 101, m)
            ranks = np.minimum(rng.zipf(1.15, int(lengths.sum())), len(vocab)) - 1
            words = vocab[ranks]
            codes = rng.integers(1, 1000, m)
            offset = 0
            for j in range(m):
                w = words[offset : offset + lengths[j]].tolist()
                offset += lengths[j]
                sentences = [" ".join(w[k : k + 14]) for k in range(0, len(w), 14)]
                text = f"Produto PX-{codes[j]}. " + ". ".join(s.capitalize() for s in sentences) + "."
                i = start + j
                out.write(json.dumps({"id": f"syn-{i}", "title": "", "text": text,
                                      "metadata": {"year": 2020 + i % 6}}) + "\n")
    tmp.rename(path)
    return path


def synthetic_questions(path: Path, n_chunks: int, n: int = 60, seed: int = SEED) -> list[tuple[str, dict[str, Any]]]:
    """``n`` queries drawn from ``n`` seeded documents of the synthetic corpus at ``path``: 3-6 of the document's
    own words (preferring mid-frequency ones), and in one query of three the document's product code. No filters.

    Each query therefore has a document that contains all of its terms, as a user's question usually does."""
    pick = random.Random(seed)
    wanted = sorted(pick.sample(range(n_chunks), min(n, n_chunks)))
    rank = {w: i for i, w in enumerate(_vocabulary(30_000, np.random.default_rng(seed)))}
    texts: list[str] = []
    with path.open(encoding="utf-8") as lines:
        target = iter(wanted)
        nxt = next(target, None)
        for i, line in enumerate(lines):
            if i == nxt:
                texts.append(json.loads(line)["text"])
                nxt = next(target, None)
                if nxt is None:
                    break
    out = []
    for text in texts:
        code, _, body = text.partition(". ")
        words = list(dict.fromkeys(w.lower() for w in re.findall(r"[^\W\d_]+", body)))
        middle = [w for w in words if 20 <= rank.get(w, -1) < 5000] or words
        chosen = pick.sample(middle, min(len(middle), pick.randint(3, 6)))
        if pick.random() < 1 / 3:
            chosen.append(code.removeprefix("Produto "))
        out.append((" ".join(chosen), {}))
    return out


class SyntheticEmbedder:
    """Dense vectors for a SYNTHETIC corpus, where embedding every chunk with the real model is out of reach
    (about a day for a million chunks here). A text's vector is the normalized IDF-weighted sum of fixed
    pseudo-random word vectors (one per distinct word; ``LATENT``-dimensional structure plus ``NOISE``), so
    vectors share structure the way real embeddings do: texts with words in common are near each other, and HNSW search
    behaves as it does on real data (pure random vectors have no neighbourhoods and make HNSW recall
    meaningless). Queries are also run through the real model, so the ``embed_query`` stage pays a real
    forward pass, but the vector searched is the synthetic one. Not a retrieval model."""

    LATENT, NOISE = 32, 0.5

    def __init__(self, real: Any, seed: int = SEED) -> None:
        self.real = real
        self.dim = int(real.embed_queries(["dimensão"]).shape[1])
        self.name = f"{real.name}+synthetic-vectors"
        self.batch = 4096
        vocab = _vocabulary(30_000, np.random.default_rng(seed))
        self._row = {w: i for i, w in enumerate(vocab)}
        rng = np.random.default_rng(seed)
        # Word vectors near a 32-dimensional subspace, plus isotropic noise: real sentence embeddings have a low
        # intrinsic dimension, and HNSW's recall depends on it (pure random vectors in 384 dimensions have no
        # neighbourhoods; HNSW recall@20 on them was 0.1 at 100k).
        basis = rng.standard_normal((self.LATENT, self.dim)) / np.sqrt(self.LATENT)
        table = rng.standard_normal((len(vocab), self.LATENT)) @ basis + self.NOISE * rng.standard_normal(
            (len(vocab), self.dim))
        self._table = (table / np.linalg.norm(table, axis=1, keepdims=True)).astype(np.float32)
        self._weight = np.log(2.0 + np.arange(len(vocab), dtype=np.float32))  # rarer (higher Zipf rank) weighs more
        self._extra: dict[str, np.ndarray] = {}

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.real.embed_queries(texts)  # the real forward pass, paid and timed
        return self.embed_passages(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rows, extra = [], []
            for word in set(re.findall(r"[^\W_]+(?:-\d+)?", text.lower())):
                row = self._row.get(word)
                if row is not None:
                    rows.append(row)
                elif any(ch.isdigit() for ch in word):  # product codes; other unknown words carry no weight
                    extra.append(word)
            if rows:
                idx = np.fromiter(rows, np.int64, len(rows))
                out[i] = self._weight[idx] @ self._table[idx]
            for word in extra:  # codes: a hashed vector with the weight of a rare word
                out[i] += self._weight[-1] * self._vector(word)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def _vector(self, word: str) -> np.ndarray:
        v = self._extra.get(word)
        if v is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            v /= np.linalg.norm(v)
            if len(self._extra) < 100_000:
                self._extra[word] = v
        return v
