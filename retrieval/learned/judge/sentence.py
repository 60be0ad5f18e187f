"""The sentence features: one row per sentence of the context chunks, for the evidence model."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .declaration import Feature, _f, _table
from .terms import (
    _COND_PHRASES,
    _COND_WORDS,
    _NEG_WORDS,
    QuestionTerms,
    _align,
    _bigram_cov,
    _code_features,
    _count_cov,
    _coverage,
    _focus_missing,
    _proximity,
    question_terms,
)
from .view import TenantStats, TextView

_DIGIT_RE = re.compile(r"\d")


#: Context-sentence features for the evidence model, in column order.
SENTENCE_FEATURES: tuple[Feature, ...] = (
    _f("s_cov", "[0, 1]", "IDF-weighted coverage of the question's content tokens by the sentence.",
       lambda c, n: c.covs[n]),
    _f("s_cov_count", "[0, 1]", "Share of the question's content tokens in the sentence (unweighted).",
       lambda c, n: _count_cov(c.q, c.sets[n])),
    _f("s_cov_rel", "[0, 1]", "s_cov divided by the best s_cov in the context (0 when all are 0).",
       lambda c, n: c.covs[n] / c.best if c.best > 0 else 0.0),
    _f("s_bigram", "[0, 1]", "bigram_cov computed on the sentence.",
       lambda c, n: _bigram_cov(c.q, c.toks[n])),
    _f("s_proximity", "[0, 1]", "proximity computed on the sentence.",
       lambda c, n: _proximity(c.q, c.toks[n])),
    _f("s_focus_missing", "[0, 1]", "focus_missing computed on the sentence.",
       lambda c, n: _focus_missing(c.q, c.sets[n])),
    _f("s_prev_cov", "[0, 1]; 0 for a first sentence", "s_cov of the previous sentence of the same chunk.",
       lambda c, n: c.covs[n - 1] if c.same_prev(n) else 0.0),
    _f("s_next_cov", "[0, 1]; 0 for a last sentence", "s_cov of the next sentence of the same chunk.",
       lambda c, n: c.covs[n + 1] if c.same_next(n) else 0.0),
    _f("s_new_cov", "[0, 1]", "IDF-weighted share of the question's tokens that the sentence covers and the "
       "previous sentence does not.",
       lambda c, n: c.new_cov(n)),
    _f("s_position", "[0, 1]", "Position of the sentence in its chunk, 0 = first, 1 = last.",
       lambda c, n: c.positions[n] / max(len(c.view.sentences(c.chunk_ids[n])) - 1, 1)),
    _f("s_len_log", "≥ 0", "ln(1 + content tokens of the sentence).",
       lambda c, n: math.log1p(len(c.toks[n]))),
    _f("s_has_number", "{0, 1}", "The sentence holds a digit.",
       lambda c, n: float(c.has_number(n))),
    _f("s_wh_number", "{0, 1}", "The question asks for a quantity or a time (quanto/quantos/quantas/quando/"
       "how many/how much/when) and the sentence holds a digit.",
       lambda c, n: float(c.has_number(n) and c.q.wh_number)),
    _f("s_code_match", "[0, 1]; 0 when the question names no code", "code_match computed on the sentence.",
       lambda c, n: _code_features(c.q, (), c.folded[n])[0]),
    _f("s_neg_align", "{-1, 0, 1}", "neg_align computed on the sentence.",
       lambda c, n: _align(c.q.has_neg, c.sets[n], _NEG_WORDS)),
    _f("s_cond_align", "{-1, 0, 1}", "cond_align computed on the sentence.",
       lambda c, n: _align(c.q.has_cond, c.sets[n], _COND_WORDS, c.folded[n], _COND_PHRASES)),
    _f("s_reader", "[-1, 1]; 0 when the reader did not run", "The reader's score of the sentence: MaxSim of the "
       "question's tokens over the sentence's tokens, read in its chunk (the chunk's reader_maxsim for a sentence "
       "beyond the tokens the reader reads).",
       lambda c, n: c.reader[n], sign=1),
    _f("s_reader_gap", "[0, 2]; 0 when the reader did not run", "Best s_reader among the context's sentences "
       "minus this sentence's.",
       lambda c, n: c.best_reader - c.reader[n], sign=-1),
    _f("s_chunk_rank_recip", "(0, 1]", "1 / rank of the sentence's chunk in the context.",
       lambda c, n: 1.0 / c.ranks[n]),
    _f("s_chunk_cov", "[0, 1]", "cov_chunk of the sentence's chunk.",
       lambda c, n: c.chunk_covs[n]),
)

SENTENCE_NAMES: tuple[str, ...] = tuple(f.name for f in SENTENCE_FEATURES)


@dataclass(frozen=True)
class SentenceRows:
    """Feature rows of the context's sentences: ``X`` of shape ``(n_sentences, len(SENTENCE_NAMES))``."""

    chunk_ids: tuple[str, ...]
    positions: tuple[int, ...]
    texts: tuple[str, ...]
    X: np.ndarray


class _SentenceTable:
    """The context's sentences, in context order then sentence order, as the sentence features read them."""

    def __init__(self, q: QuestionTerms, context_ids: Sequence[str], view: TextView,
                 reader: Mapping[str, float] | None = None,
                 reader_sentences: Mapping[str, tuple[float, ...]] | None = None) -> None:
        self.q, self.view = q, view
        self.reader: list[float] = []
        self.chunk_ids: list[str] = []
        self.positions: list[int] = []
        self.texts: list[str] = []
        self.toks: list[list[str]] = []
        self.folded: list[str] = []
        self.ranks: list[int] = []
        self.chunk_covs: list[float] = []
        for rank, cid in enumerate(context_ids, start=1):
            chunk_cov = _coverage(q, view.token_set(cid))
            whole = float((reader or {}).get(cid, 0.0))
            per = (reader_sentences or {}).get(cid, ())
            for pos, (text, toks, folded) in enumerate(view.sentences(cid)):
                self.reader.append(float(per[pos]) if pos < len(per) else whole)
                self.chunk_ids.append(cid)
                self.positions.append(pos)
                self.texts.append(text)
                self.toks.append(toks)
                self.folded.append(folded)
                self.ranks.append(rank)
                self.chunk_covs.append(chunk_cov)
        self.sets = [set(t) for t in self.toks]
        self.covs = [_coverage(q, s) for s in self.sets]
        self.best = max(self.covs, default=0.0)
        self.best_reader = max(self.reader, default=0.0)

    def same_prev(self, n: int) -> bool:
        return n > 0 and self.chunk_ids[n - 1] == self.chunk_ids[n]

    def same_next(self, n: int) -> bool:
        return n + 1 < len(self.chunk_ids) and self.chunk_ids[n + 1] == self.chunk_ids[n]

    def has_number(self, n: int) -> bool:
        return bool(_DIGIT_RE.search(self.texts[n]))

    def new_cov(self, n: int) -> float:
        """IDF-weighted share of the question's tokens in sentence ``n`` and not in the previous one."""
        q = self.q
        prev = self.sets[n - 1] if self.same_prev(n) else set()
        s = self.sets[n]
        return sum(w for t, w in zip(q.tokens, q.idf) if t in s and t not in prev) / q.total if q.total > 0 else 0.0


def sentence_features(question: str, context_ids: Sequence[str], view: TextView, stats: TenantStats,
                      terms: QuestionTerms | None = None, reader: Mapping[str, float] | None = None,
                      reader_sentences: Mapping[str, tuple[float, ...]] | None = None) -> SentenceRows:
    """Feature rows for every sentence of the context chunks (in context order, then sentence order).
    ``reader`` / ``reader_sentences``: the reader's chunk and sentence scores (:class:`JudgeInput`'s)."""
    t = _SentenceTable(terms or question_terms(question, stats), context_ids, view, reader, reader_sentences)
    X = _table(SENTENCE_FEATURES, t, len(t.texts))
    return SentenceRows(tuple(t.chunk_ids), tuple(t.positions), tuple(t.texts), X)
