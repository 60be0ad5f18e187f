"""The reader's model: e5's first blocks read the question and the passage apart, its last blocks read them
together (a late-joined cross-encoder, as in MacAvaney et al., 2020, "Efficient document re-ranking for
transformers by precomputing term representations", PreTTR), and its score starts from what the encoder
already knows.

``logit = a · cos(q, p) + b + w · h₀``

* ``cos(q, p)``: e5's own bi-encoder cosine (mean-pooled, the frozen encoder run on each text alone), so an
  untrained reader ranks as the dense retriever does; ``a`` and ``b`` start from a logistic fit of that
  cosine on the training pairs;
* ``h₀``: the state of the question's ``<s>`` after the joined blocks (copies of e5's last
  ``layers − split`` blocks, trained) over ``[question states ; passage states]``; ``w`` starts at zero, so
  training learns what reading both together adds.

The logit is a log-odds that the passage answers the question (sigmoid → probability).
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from retrieval.learned.reader.encoder import E5Encoder, batch_ids, mean_pool


class LateJointReader(nn.Module):
    """Score (question, passage) pairs; see the module docstring for the formula."""

    def __init__(self, encoder: E5Encoder, split: int):
        super().__init__()
        if not 0 <= split < len(encoder.blocks):
            raise ValueError(f"split must be in [0, {len(encoder.blocks)}), got {split}")
        self.encoder = encoder.eval()
        for p in self.encoder.parameters():
            p.requires_grad_(False)
        self.split = split
        self.joint = nn.ModuleList(copy.deepcopy(b) for b in encoder.blocks[split:])
        for p in self.joint.parameters():
            p.requires_grad_(True)
        hidden = encoder.config["hidden"]
        self.head = nn.Linear(hidden, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)
        self.span = nn.Linear(hidden, 2)   # answer start / end logits per token (the SQuAD 2.0 recipe)
        self.a = nn.Parameter(torch.tensor(1.0))
        self.b = nn.Parameter(torch.tensor(0.0))

    @torch.no_grad()
    def lower(self, sequences: list[list[int]], pad: int) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Each text alone through the frozen blocks: ``(states after block split, pooled unit vector)``.

        The states are what the joined blocks read (one (tokens, hidden) tensor per text); the pooled vector
        is the frozen encoder's whole-text embedding (the bi-encoder side of the score)."""
        ids, mask = batch_ids(sequences, pad)
        x = self.encoder.run_layers(self.encoder.embed(ids), mask, 0, self.split)
        states = [x[i, :len(s)].clone() for i, s in enumerate(sequences)]
        top = self.encoder.run_layers(x, mask, self.split, len(self.encoder.blocks))
        return states, nn.functional.normalize(mean_pool(top, mask), dim=-1)

    def joint_states(self, q_states: list[torch.Tensor], p_states: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """``[question ; passage]`` through the joined blocks: states (pairs, tokens, hidden) and the mask."""
        seqs = [torch.cat([q, p], 0) for q, p in zip(q_states, p_states)]
        width = max(s.shape[0] for s in seqs)
        hidden = seqs[0].shape[1]
        x = torch.zeros(len(seqs), width, hidden, dtype=torch.float32)
        mask = torch.zeros(len(seqs), width, dtype=torch.bool)
        for i, s in enumerate(seqs):
            x[i, :s.shape[0]] = s.float()
            mask[i, :s.shape[0]] = True
        for block in self.joint:
            x = block(x, mask)
        return x, mask

    def forward(self, q_states: list[torch.Tensor], p_states: list[torch.Tensor], cos: torch.Tensor,
                with_spans: bool = False):
        """Logits (n_pairs,) for pairs given their frozen states and bi-encoder cosines; with ``with_spans``
        also the start and end logits (n_pairs, tokens), padding at −inf."""
        x, mask = self.joint_states(q_states, p_states)
        logit = self.a * cos + self.b + self.head(x[:, 0]).squeeze(-1)
        if not with_spans:
            return logit
        se = self.span(x).masked_fill(~mask[..., None], float("-inf"))
        return logit, se[..., 0], se[..., 1]


def span_support(start: torch.Tensor, end: torch.Tensor, q_lengths: list[int], max_answer: int = 30) -> torch.Tensor:
    """SQuAD 2.0's answer score: the best passage span ``start_i + end_j`` (i ≤ j < i + max_answer) minus the
    null span at position 0 (the question's ``<s>``). Positive: the reader points at an answer."""
    out = []
    for row, ql in enumerate(q_lengths):
        s, e = start[row], end[row]
        n = s.shape[0]
        scores = s[ql:, None] + e[None, ql:]
        i = torch.arange(n - ql)
        valid = (i[None, :] >= i[:, None]) & (i[None, :] < i[:, None] + max_answer)
        best = scores.masked_fill(~valid, float("-inf")).max()
        out.append(best - (s[0] + e[0]))
    return torch.stack(out)
