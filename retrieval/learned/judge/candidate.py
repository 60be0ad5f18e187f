"""The candidate features: one row per candidate of the rerank window, for the learned reranker."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ...core.kinds import Text
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
from .view import JudgeInput


#: Candidate features, in column order (the order the models were trained on).
CANDIDATE_FEATURES: tuple[Feature, ...] = (
    _f("bm25_norm", "[0, 1]; 0 when absent", "BM25 score divided by the best BM25 score of the lexical list.",
       lambda w, n: w.lex[n].score / w.best_bm25 if w.lex[n] and w.best_bm25 > 0 else 0.0, label=Text('BM25 score vs the best', 'nota BM25 relativa à melhor')),
    _f("bm25_rank_recip", "(0, 1]; 0 when absent", "1 / rank in the lexical list.",
       lambda w, n: 1.0 / w.lex[n].rank if w.lex[n] else 0.0, label=Text('BM25 rank (1/rank)', 'posição no BM25 (1/posição)')),
    _f("dense_cos", "[-1, 1]; 0 when unknown", "Cosine between the query vector and the chunk's stored vector "
       "(for lexical-only finds too).",
       lambda w, n: w.cos[n] if w.known[n] else 0.0, label=Text('cosine to the question', 'cosseno com a pergunta')),
    _f("dense_gap", "[0, 2]; 0 when unknown", "Best cosine among the window's candidates minus this one's.",
       lambda w, n: w.best_cos - w.cos[n] if w.known[n] else 0.0, label=Text('cosine gap to the best candidate', 'distância do cosseno ao melhor candidato')),
    _f("dense_rank_recip", "(0, 1]; 0 when absent", "1 / rank in the dense list.",
       lambda w, n: 1.0 / w.den[n].rank if w.den[n] else 0.0, label=Text('dense rank (1/rank)', 'posição no denso (1/posição)')),
    _f("cos_rank_norm", "[0, 1]", "Rank of this cosine among the window's candidates, 0 = best, 1 = worst.",
       lambda w, n: w.cos_rank_norm[n] if w.known[n] else 1.0, label=Text("cosine's place in the window", 'lugar do cosseno na janela')),
    _f("rrf_norm", "(0, 1]", "RRF score divided by the best RRF score of the fused list.",
       lambda w, n: w.items[n].score / w.best_rrf if w.best_rrf > 0 else 0.0, label=Text('RRF score vs the best', 'nota RRF relativa à melhor')),
    _f("fused_rank_recip", "(0, 1]", "1 / rank in the fused list.",
       lambda w, n: 1.0 / w.items[n].rank, label=Text('fused rank (1/rank)', 'posição na fusão (1/posição)')),
    _f("in_both", "{0, 1}", "1 when both the lexical and the dense list hold the chunk.",
       lambda w, n: 1.0 if w.lex[n] and w.den[n] else 0.0, label=Text('found by both BM25 and dense', 'encontrado pelo BM25 e pelo denso')),
    _f("cov_chunk", "[0, 1]", "IDF-weighted coverage of the question's content tokens by the chunk (title, "
       "context line and text).",
       lambda w, n: w.covs[n], label=Text('question covered by the chunk', 'pergunta coberta pelo trecho')),
    _f("cov_chunk_count", "[0, 1]", "Share of the question's content tokens that occur in the chunk (unweighted).",
       lambda w, n: _count_cov(w.q, w.sets[n]), label=Text('share of question words in the chunk', 'fração das palavras da pergunta no trecho')),
    _f("cov_parent", "[0, 1]", "IDF-weighted coverage of the question's content tokens by the whole parent "
       "document (title and text).",
       lambda w, n: _coverage(w.q, w.view.parent_set(w.items[n].parent_id)), label=Text('question covered by the whole document', 'pergunta coberta pelo documento inteiro')),
    _f("cov_title", "[0, 1]", "IDF-weighted coverage of the question's content tokens by the parent's title.",
       lambda w, n: _coverage(w.q, w.view.title_set(w.items[n].parent_id)), label=Text('question covered by the title', 'pergunta coberta pelo título')),
    _f("focus_missing", "[0, 1]", "Largest normalized IDF (idf / idf of an unseen token) of a question token "
       "the chunk lacks; 0 when the chunk has them all. The question's focus, when missing, is usually rare.",
       lambda w, n: _focus_missing(w.q, w.sets[n]), label=Text('rarest question word the chunk lacks', 'palavra mais rara da pergunta ausente do trecho')),
    _f("bigram_cov", "[0, 1]; 0 for a one-token question", "Share of the question's consecutive content-token "
       "pairs that occur within two positions of each other in the chunk.",
       lambda w, n: _bigram_cov(w.q, w.view.tokens(w.ids[n])), label=Text('question word pairs kept together', 'pares de palavras da pergunta juntos')),
    _f("proximity", "[0, 1]; 0 with fewer than two tokens covered", "Covered distinct question tokens divided "
       "by the length of the shortest chunk span that holds all of them.",
       lambda w, n: _proximity(w.q, w.view.tokens(w.ids[n])), label=Text('question words close together', 'palavras da pergunta próximas')),
    _f("chunk_len_log", "≥ 0", "ln(1 + content tokens of the chunk).",
       lambda w, n: math.log1p(len(w.view.tokens(w.ids[n]))), label=Text('chunk length', 'tamanho do trecho')),
    _f("parent_share", "(0, 1]", "Share of the window's candidates that come from this chunk's parent.",
       lambda w, n: w.parent_count[w.items[n].parent_id] / len(w.items), label=Text("window's share from the same document", 'fração da janela do mesmo documento')),
    _f("code_match", "[0, 1]; 0 when the question names no code", "Share of the question's codes (PX-7, E-42) "
       "that the chunk contains as whole tokens.",
       lambda w, n: w.codes(n)[0], label=Text("question's codes found", 'códigos da pergunta encontrados')),
    _f("code_conflict", "{0, 1}", "1 when the question names a code that the chunk lacks while the chunk "
       "names another code with the same prefix (PX-17 for PX-7).",
       lambda w, n: w.codes(n)[1], label=Text('another code of the same prefix', 'outro código do mesmo prefixo')),
    _f("neg_align", "{-1, 0, 1}", "Question has a negation word: +1 if the chunk has one too, −1 if not; 0 "
       "when the question has none.",
       lambda w, n: _align(w.q.has_neg, w.sets[n], _NEG_WORDS), label=Text('negation lines up', 'negação alinhada')),
    _f("cond_align", "{-1, 0, 1}", "Same as neg_align for condition words (exceto, salvo, caso, quando, …).",
       lambda w, n: _align(w.q.has_cond, w.sets[n], _COND_WORDS, w.view.folded(w.ids[n]), _COND_PHRASES), label=Text('condition lines up', 'condição alinhada')),
    _f("q_has_code", "{0, 1}", "The question names a code (question level).",
       lambda w, n: 1.0 if w.q.codes else 0.0, label=Text('question names a code', 'a pergunta cita um código')),
    _f("q_len", "≥ 0", "Number of distinct content tokens of the question (question level).",
       lambda w, n: float(len(w.q.tokens)), label=Text('question length', 'tamanho da pergunta')),
    _f("q_unseen_index", "[0, 1]", "IDF-weighted share of the question's content tokens that occur nowhere "
       "in the tenant's index (question level).",
       lambda w, n: w.unseen_w, label=Text('question words unseen in the index', 'palavras da pergunta ausentes do índice')),
    _f("q_missing_window", "[0, 1]", "IDF-weighted share of the question's content tokens that occur in no "
       "candidate of the window (question level).",
       lambda w, n: w.miss_w, label=Text('question words in no candidate', 'palavras da pergunta em nenhum candidato')),
    _f("q_missing_window_max", "[0, 1]", "Largest normalized IDF of a question token found in no candidate "
       "of the window (question level); 0 when every token is found somewhere.",
       lambda w, n: w.miss_max, label=Text('rarest question word in no candidate', 'palavra mais rara da pergunta em nenhum candidato')),
    _f("best_cov_window", "[0, 1]", "Best cov_chunk over the window's candidates (question level).",
       lambda w, n: w.best_cov, label=Text('best coverage in the window', 'melhor cobertura na janela')),
    _f("cov_gap", "[0, 1]", "best_cov_window minus this chunk's cov_chunk.",
       lambda w, n: w.best_cov - w.covs[n], label=Text('coverage gap to the best candidate', 'distância de cobertura ao melhor candidato')),
    _f("reader_maxsim", "[-1, 1]; 0 when the reader did not run", "The reader's score: the mean over the "
       "question's tokens of each one's best cosine with the chunk's tokens (e5's token states, MaxSim).",
       lambda w, n: w.reader[n], label=Text('reader: question tokens matched in context', 'leitor: tokens da pergunta casados no contexto')),
    _f("reader_gap", "[0, 2]; 0 when the reader did not run", "Best reader_maxsim among the window's candidates "
       "minus this one's.",
       lambda w, n: w.best_reader - w.reader[n], label=Text('reader gap to the best candidate', 'distância do leitor ao melhor candidato')),
)

CANDIDATE_NAMES: tuple[str, ...] = tuple(f.name for f in CANDIDATE_FEATURES)


@dataclass(frozen=True)
class CandidateRows:
    """Feature rows of the rerank window: ``X`` of shape ``(len(chunk_ids), len(CANDIDATE_NAMES))``."""

    chunk_ids: tuple[str, ...]
    parent_ids: tuple[str, ...]
    fused_ranks: tuple[int, ...]
    X: np.ndarray
    terms: QuestionTerms
    missing_tokens: tuple[str, ...]   # question tokens found in no candidate of the window
    unseen_tokens: tuple[str, ...]    # question tokens found nowhere in the tenant's index

    def column(self, name: str) -> np.ndarray:
        return self.X[:, CANDIDATE_NAMES.index(name)]


class _Window:
    """The rerank window of one request, as the candidate features read it (shared values computed once)."""

    def __init__(self, inp: JudgeInput, window: int) -> None:
        self.items = items = inp.fused.items[:window]
        self.ids = [i.chunk_id for i in items]
        self.q = q = question_terms(inp.question, inp.stats)
        self.view = view = inp.view
        lex = {i.chunk_id: i for i in inp.lexical.items}
        den = {i.chunk_id: i for i in inp.dense.items}
        self.lex = [lex.get(cid) for cid in self.ids]
        self.den = [den.get(cid) for cid in self.ids]
        self.best_bm25 = max((i.score for i in inp.lexical.items), default=0.0)
        self.best_rrf = max((i.score for i in items), default=0.0)
        cos = np.zeros(len(items))
        known = np.zeros(len(items), dtype=bool)
        for n, cid in enumerate(self.ids):
            if self.den[n] is not None:
                cos[n], known[n] = self.den[n].score, True  # type: ignore[union-attr]  # not None: checked above
            elif inp.q_vec is not None and cid in inp.vectors:
                cos[n], known[n] = float(np.dot(inp.vectors[cid], inp.q_vec)), True
        self.cos, self.known = cos, known
        self.best_cos = cos[known].max() if known.any() else 0.0
        order = np.argsort(-np.where(known, cos, -np.inf), kind="stable")
        cos_rank = np.empty(len(items))
        cos_rank[order] = np.arange(len(items))
        self.cos_rank_norm = cos_rank / max(len(items) - 1, 1)
        self.sets = [view.token_set(cid) for cid in self.ids]
        union = frozenset().union(*self.sets) if self.sets else frozenset()
        self.missing = tuple(t for t in q.tokens if t not in union)
        self.unseen = tuple(t for t in q.tokens if inp.stats.doc_freq(t) == 0)
        total = q.total
        self.miss_w = sum(w for t, w in zip(q.tokens, q.idf) if t not in union) / total if total > 0 else 0.0
        self.unseen_w = sum(w for t, w in zip(q.tokens, q.idf) if t in self.unseen) / total if total > 0 else 0.0
        self.miss_max = max((w for t, w in zip(q.tokens, q.idf) if t not in union), default=0.0) / q.max_idf \
            if q.max_idf > 0 else 0.0
        self.parent_count = Counter(i.parent_id for i in items)
        self.covs = [_coverage(q, s) for s in self.sets]
        self.best_cov = max(self.covs, default=0.0)
        scores = inp.reader or {}
        self.reader = [float(scores.get(cid, 0.0)) for cid in self.ids]
        self.best_reader = max(self.reader, default=0.0)
        self._codes: dict[int, tuple[float, float]] = {}

    def codes(self, n: int) -> tuple[float, float]:
        """(code_match, code_conflict) of candidate ``n``."""
        found = self._codes.get(n)
        if found is None:
            cid = self.ids[n]
            found = self._codes[n] = _code_features(self.q, self.view.codes(cid), self.view.folded(cid))
        return found


def candidate_features(inp: JudgeInput, window: int) -> CandidateRows:
    """Feature rows for the first ``window`` items of the fused list (the rerank window).

    Returns:
        :class:`CandidateRows`; columns in :data:`CANDIDATE_NAMES` order.
    """
    w = _Window(inp, window)
    X = _table(CANDIDATE_FEATURES, w, len(w.items))
    return CandidateRows(tuple(w.ids), tuple(i.parent_id for i in w.items), tuple(i.rank for i in w.items), X,
                         w.q, w.missing, w.unseen)
