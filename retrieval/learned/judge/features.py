"""The judge's feature set: one registry of named, documented features of (question, candidate) and of
(question, context sentence), computed from a frozen :class:`JudgeInput` that holds only what the request
already has (the generators' lists, the query vector, the stored chunk vectors, the tokenizer and the
tenant's BM25 statistics). No feature re-runs a search or an embedding.

The features describe the *match* (how much of the question a passage covers, what it misses, whether codes,
negations and conditions line up, how the rankers placed it), never a corpus' vocabulary, so a model trained
on one corpus can carry over to another. Models record :func:`feature_set_version` and the feature names;
a model whose list differs is refused at load (see :mod:`retrieval.learned.judge.models`).

Conventions: "content tokens" are :func:`retrieval.core.text.tokenize` tokens of the question (stopwords removed,
negation and condition words kept), unique, in order. IDF is Lucene's BM25 IDF over the tenant's subchunks,
``ln(1 + (N − n + 0.5) / (n + 0.5))``; a token absent from the index gets ``n = 0`` (the largest IDF).
"IDF-weighted coverage" of a token set S by a passage P is ``Σ_{t∈S∩P} idf(t) / Σ_{t∈S} idf(t)`` in [0, 1].
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ...ingest.corpus import document_text
from ...backends.lexical import Lexical, lucene_idf
from ...core.codes import CONDITIONS, NEGATIONS, codes
from ...core.kinds import Text
from ...core.text import KEPT_WORDS, fold, tokenize, whole_sentences
from ...core.types import Chunk, Document, RankedList
from .fingerprint import fingerprint


@dataclass(frozen=True)
class Feature:
    """One feature, declared once: its name, range/default, what it measures (the text shown in
    explanations), the side it may push a model's output and the function that computes it.

    Everything else derives from the declarations: a table's rows (:func:`_table` calls ``value`` for each
    feature in declaration order), the models' column order (``*_NAMES``), the gate's fitting bounds
    (:data:`GATE_SIGNS`) and :func:`feature_set_version`. No row is written as a positional tuple.

    Attributes:
        value: ``value(table, row) -> float``; ``table`` is the group's per-request context
            (:class:`_Window`, :class:`_SentenceTable` or :class:`_GateContext`), ``row`` the row index.
        sign: +1 the feature may only raise the model's output, −1 only lower it, 0 either (enforced where
            the model is fitted with bounds: the support gate).
    """

    name: str
    range: str
    doc: str
    value: Callable[[Any, int], float] = field(repr=False, compare=False)
    sign: int = 0
    #: The feature in plain words on a page (its id where it has none).
    label: Text | None = field(default=None, compare=False)


def _f(name: str, range_: str, doc: str, value: Callable[[Any, int], float], sign: int = 0,
       label: Text | None = None) -> Feature:
    return Feature(name, range_, doc, value, sign, label)


def _table(features: Sequence[Feature], context: Any, rows: int) -> np.ndarray:
    """The ``(rows, len(features))`` matrix of ``features`` over ``context``, columns in declaration order."""
    return np.asarray([[f.value(context, n) for f in features] for n in range(rows)],
                      dtype=np.float64).reshape(rows, len(features))


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

#: Question-level features of the selected context (the final chunks the gate reads), for the support gate.
#: "Focus tokens" are the content tokens minus question, auxiliary and English function words (``qual``,
#: ``posso``, ``how``, ``the``): what the question is about. A focus token is "held" by a chunk when the
#: chunk has the token, its Snowball stem when that stem has four letters or more (``ativada`` / ``ativação``;
#: shorter stems such as ``tax`` for taxa / taxi are ambiguous), or its first seven letters (words of seven
#: letters or more). A question with no focus token names nothing a passage could support.
GATE_FEATURES: tuple[Feature, ...] = (
    _f("g_cov_best", "[0, 1]", "Best cov_chunk over the selected chunks.",
       lambda g, _: g.best('cov_chunk'), sign=1, label=Text('question covered by the best chunk', 'pergunta coberta pelo melhor trecho')),
    _f("g_cov_union", "[0, 1]", "IDF-weighted coverage of the question's content tokens by all selected chunks "
       "together.",
       lambda g, _: _coverage(g.q, g.token_union), sign=1, label=Text('question covered by all chunks', 'pergunta coberta por todos os trechos')),
    _f("g_parent_cov_best", "[0, 1]", "Best cov_parent over the selected chunks.",
       lambda g, _: g.best('cov_parent'), sign=1, label=Text('question covered by the best document', 'pergunta coberta pelo melhor documento')),
    _f("g_focus_cov_best", "[0, 1]; 0 when the question has no focus token", "Best IDF-weighted share of the "
       "focus tokens that one selected chunk holds (stem-aware).",
       lambda g, _: max((_focus_cov(g.focus, s) for s in g.stems), default=0.0), sign=1, label=Text('focus words in the best chunk', 'palavras-foco no melhor trecho')),
    _f("g_focus_cov_top", "[0, 1]; 0 when the question has no focus token", "The same share for the first "
       "selected chunk (the one the answer leans on).",
       lambda g, _: _focus_cov(g.focus, g.stems[0]) if g.stems else 0.0, sign=1, label=Text('focus words in the first chunk', 'palavras-foco no primeiro trecho')),
    _f("g_focus_missing", "[0, 1]; 1 when the question has no focus token", "IDF-weighted share of the focus "
       "tokens that no selected chunk holds, even by stem: what the context does not talk about.",
       lambda g, _: sum(g.missing) / g.focus.total if g.focus.total > 0 else 1.0, sign=-1, label=Text('focus words in no chunk', 'palavras-foco em nenhum trecho')),
    _f("g_focus_missing_n", "≥ 0", "Number of focus tokens that no selected chunk holds.",
       lambda g, _: float(len(g.missing)), sign=-1, label=Text('how many focus words are in no chunk', 'quantas palavras-foco não estão em trecho algum')),
    _f("g_sentence_cov", "[0, 1]", "Best IDF-weighted coverage of the question by one sentence, or two adjacent "
       "sentences of one chunk, of the selected chunks.",
       lambda g, _: _sentence_cov(g.q, g.view, g.ids), sign=1, label=Text('question covered by one or two sentences', 'pergunta coberta por uma ou duas frases')),
    _f("g_bigram_best", "[0, 1]", "Best bigram_cov over the selected chunks.",
       lambda g, _: g.best('bigram_cov'), sign=1, label=Text('question word pairs kept together', 'pares de palavras da pergunta juntos')),
    _f("g_proximity_best", "[0, 1]", "Best proximity over the selected chunks.",
       lambda g, _: g.best('proximity'), sign=1, label=Text('question words close together', 'palavras da pergunta próximas')),
    _f("g_cos_best", "[-1, 1]; 0 when unknown", "Best dense cosine over the selected chunks.",
       lambda g, _: g.best_cos, sign=1, label=Text('best dense cosine', 'melhor cosseno denso')),
    _f("g_cos_peak", "[-2, 2]; 0 when unknown", "g_cos_best minus the median nonzero cosine of the rerank window: "
       "how much the best match stands out from the on-topic crowd (negative when the selected chunks' best cosine "
       "is below that median).",
       lambda g, _: g.best_cos - g.median if g.sel and g.any_known else 0.0, sign=1, label=Text("best cosine's lead over the window", 'vantagem do melhor cosseno sobre a janela')),
    _f("g_unseen_index", "[0, 1]", "q_unseen_index: IDF-weighted share of question tokens that occur nowhere in "
       "the tenant's index.",
       lambda g, _: g.unseen, sign=-1, label=Text('question words unseen in the index', 'palavras da pergunta ausentes do índice')),
    _f("g_code_match", "[0, 1]; 0 when the question names no code", "Best code_match over the selected chunks.",
       lambda g, _: g.best('code_match'), sign=1, label=Text("question's codes found", 'códigos da pergunta encontrados')),
    _f("g_code_conflict", "{0, 1}", "1 when no selected chunk holds all the question's codes and one names "
       "another code of the same prefix (PX-17 for PX-7).",
       lambda g, _: g.code_conflict, sign=-1, label=Text('another code of the same prefix', 'outro código do mesmo prefixo')),
    _f("g_reader_best", "[-1, 1]; 0 when the reader did not run", "Best reader_maxsim over the selected chunks.",
       lambda g, _: g.best("reader_maxsim"), sign=1, label=Text('best reader score', 'melhor nota do leitor')),
    _f("g_reader_peak", "[-2, 2]; 0 when the reader did not run", "g_reader_best minus the median reader_maxsim "
       "of the rerank window: how much the best reading stands out from the on-topic crowd.",
       lambda g, _: g.best("reader_maxsim") - g.reader_median if g.sel else 0.0, sign=1, label=Text("best reader score's lead over the window", 'vantagem da melhor nota do leitor sobre a janela')),
    _f("g_reader_sentence", "[-1, 1]; 0 when the reader did not run", "Best s_reader over the sentences of the "
       "selected chunks: the one sentence that reads most like an answer.",
       lambda g, _: g.best_sentence_reading(), sign=1, label=Text('best reader score of one sentence', 'melhor nota do leitor para uma frase')),
)

CANDIDATE_NAMES: tuple[str, ...] = tuple(f.name for f in CANDIDATE_FEATURES)
SENTENCE_NAMES: tuple[str, ...] = tuple(f.name for f in SENTENCE_FEATURES)
GATE_NAMES: tuple[str, ...] = tuple(f.name for f in GATE_FEATURES)
#: The direction each gate feature may move P(support): +1 never lowers it, −1 never raises it (the fit is
#: bounded accordingly, so an explanation never credits a missing word with support).
GATE_SIGNS: tuple[int, ...] = tuple(f.sign for f in GATE_FEATURES)


def _feature_set_version() -> str:
    """A digest of every declaration (group, order, name, range, text, sign) **and of the code that computes
    each feature** (its function, the group's context class, every project function they reach:
    :mod:`.fingerprint`): adding, removing, reordering, re-describing or recomputing a feature changes it, so a
    model trained on another set is refused at load."""
    return "judge-features-" + fingerprint("_f", (
        ("candidate", CANDIDATE_FEATURES, _Window), ("sentence", SENTENCE_FEATURES, _SentenceTable),
        ("gate", GATE_FEATURES, _GateContext)))


@lru_cache(maxsize=1)
def feature_set_version() -> str:
    """The feature set's version (:func:`_feature_set_version`), recorded by every model and checked at load;
    computed once per process, on first use."""
    return _feature_set_version()


FEATURE_DOCS: dict[str, Feature] = {f.name: f for f in (*CANDIDATE_FEATURES, *SENTENCE_FEATURES, *GATE_FEATURES)}
#: The model's baseline term of an explanation (what every contribution is measured from).
BIAS_LABEL = Text("model baseline (bias)", "base do modelo (viés)")
BIAS_DOC = "the log-odds with every feature at its training average"


def feature_label(name: str, lang: str = "en") -> str:
    """A feature (or the ``bias``) in plain words in ``lang``; its id where it has no label."""
    if name == "bias":
        return BIAS_LABEL(lang)
    feature = FEATURE_DOCS.get(name)
    return feature.label(lang) if feature is not None and feature.label is not None else name

_NEG_WORDS = frozenset(fold(w) for w in NEGATIONS)
_COND_WORDS = frozenset(fold(w) for w in CONDITIONS if " " not in w)
_COND_PHRASES = tuple(fold(w) for w in CONDITIONS if " " in w)
_WH_NUMBER_RE = re.compile(r"\b(quant[oa]s?|quando|how many|how much|when)\b")
_DIGIT_RE = re.compile(r"\d")


# -- tenant statistics -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TenantStats:
    """A tenant's BM25 statistics: number of subchunks and document frequency per token."""

    n_docs: int
    doc_freq: Callable[[str], int]

    def idf(self, token: str) -> float:
        """Lucene BM25 IDF of ``token`` (the largest value when the token is not in the index)."""
        return lucene_idf(max(self.n_docs, 1), min(self.doc_freq(token), max(self.n_docs, 1)))

    @property
    def max_idf(self) -> float:
        """IDF of a token absent from the index: the normalizer of ``focus_missing``."""
        return lucene_idf(max(self.n_docs, 1), 0)


def tenant_stats(lexical: Lexical, tenant: Any = None) -> TenantStats:
    """The BM25 statistics of ``tenant``'s index (``None``: the index of a corpus without tenants), from the
    lexical backend's own :meth:`~retrieval.backends.lexical.Lexical.document_frequencies`."""
    n_docs, doc_freq = lexical.document_frequencies(tenant)
    return TenantStats(n_docs, doc_freq)


def stats_without(stats: TenantStats, chunks: Sequence[Chunk]) -> TenantStats:
    """``stats`` of the same index with ``chunks`` taken out (what the tenant's index would hold without
    them): used by leave-the-evidence-out cases, so a token found only in the removed evidence is unseen."""
    removed = Counter(t for c in chunks for t in set(tokenize(c.indexed_text)))
    return TenantStats(max(stats.n_docs - len(chunks), 0), _MinusDF(stats.doc_freq, removed))


class _MinusDF:
    """Document frequency of a base index minus the chunks taken out."""

    def __init__(self, base: Callable[[str], int], removed: Mapping[str, int]) -> None:
        self.base, self.removed = base, removed

    def __call__(self, token: str) -> int:
        return max(self.base(token) - int(self.removed.get(token, 0)), 0)


# -- text views (cached per corpus) ----------------------------------------------------------------------
@dataclass
class TextView:
    """Token views of a corpus' chunks and parents, computed once per chunk and kept (the same candidates
    come back request after request)."""

    chunks: Mapping[str, Chunk]
    documents: Mapping[str, Document]
    _chunk_tokens: dict[str, list[str]] = field(default_factory=dict)
    _chunk_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _parent_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _title_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _codes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _folded: dict[str, str] = field(default_factory=dict)
    _sentences: dict[str, tuple[tuple[str, list[str], str], ...]] = field(default_factory=dict)
    _stems: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, chunks: Iterable[Chunk], documents: Iterable[Document]) -> "TextView":
        return cls({c.chunk_id: c for c in chunks}, {d.id: d for d in documents})

    def tokens(self, chunk_id: str) -> list[str]:
        found = self._chunk_tokens.get(chunk_id)
        if found is None:
            found = self._chunk_tokens[chunk_id] = tokenize(self.chunks[chunk_id].indexed_text)
        return found

    def token_set(self, chunk_id: str) -> frozenset[str]:
        found = self._chunk_sets.get(chunk_id)
        if found is None:
            found = self._chunk_sets[chunk_id] = frozenset(self.tokens(chunk_id))
        return found

    def parent_set(self, parent_id: str) -> frozenset[str]:
        found = self._parent_sets.get(parent_id)
        if found is None:
            doc = self.documents.get(parent_id)
            text = f"{doc.title}\n{document_text(doc)}" if doc else ""  # a Markdown parent as plain text
            found = self._parent_sets[parent_id] = frozenset(tokenize(text))
        return found

    def title_set(self, parent_id: str) -> frozenset[str]:
        found = self._title_sets.get(parent_id)
        if found is None:
            doc = self.documents.get(parent_id)
            found = self._title_sets[parent_id] = frozenset(tokenize(doc.title if doc else ""))
        return found

    def folded(self, chunk_id: str) -> str:
        found = self._folded.get(chunk_id)
        if found is None:
            found = self._folded[chunk_id] = fold(self.chunks[chunk_id].indexed_text)
        return found

    def codes(self, chunk_id: str) -> tuple[str, ...]:
        found = self._codes.get(chunk_id)
        if found is None:
            found = self._codes[chunk_id] = tuple(c.casefold() for c in codes(self.chunks[chunk_id].indexed_text))
        return found

    def stem_set(self, chunk_id: str) -> frozenset[str]:
        """The chunk's folded tokens, their Snowball stems and seven-letter prefixes (see :func:`holds`)."""
        found = self._stems.get(chunk_id)
        if found is None:
            found = self._stems[chunk_id] = word_forms(self.chunks[chunk_id].indexed_text)
        return found

    def sentences(self, chunk_id: str) -> tuple[tuple[str, list[str], str], ...]:
        """The chunk's text sentences as ``(sentence, tokens, folded sentence)``."""
        found = self._sentences.get(chunk_id)
        if found is None:
            found = self._sentences[chunk_id] = tuple(
                (s, tokenize(s), fold(s)) for s in whole_sentences(self.chunks[chunk_id].text))
        return found


# -- the frozen input --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeInput:
    """What one request hands the judge (nothing in it is recomputed by the judge).

    Attributes:
        question: the validated question.
        lexical, dense, fused: the generators' windows and their fusion, as the pipeline built them.
        q_vec: the query vector (unit norm), or ``None`` in ``lexical_only``.
        vectors: stored unit vectors of (at least) the candidates that the dense list lacks.
        view: token views of the corpus' chunks and parents.
        stats: the tenant's BM25 statistics.
        reader: the reader's score (MaxSim, :mod:`retrieval.learned.reader.interaction`) of (at least) the window's
            candidates, by chunk id; ``None`` where it did not run (its features are then 0; the judge's
            stages never run without it, see :func:`retrieval.stages.judge.judge_input`).
        reader_sentences: the reader's score of each whole sentence of those chunks, in sentence order
            (:meth:`~retrieval.learned.reader.interaction.MaxSimReader.read`), by chunk id.
    """

    question: str
    lexical: RankedList
    dense: RankedList
    fused: RankedList
    q_vec: np.ndarray | None
    vectors: Mapping[str, np.ndarray]
    view: TextView
    stats: TenantStats
    reader: Mapping[str, float] | None = None
    reader_sentences: Mapping[str, tuple[float, ...]] | None = None


@dataclass(frozen=True)
class QuestionTerms:
    """The question's content tokens with their IDF, codes and negation/condition flags."""

    tokens: tuple[str, ...]
    idf: tuple[float, ...]
    max_idf: float
    codes: tuple[str, ...]
    has_neg: bool
    has_cond: bool
    wh_number: bool

    @property
    def total(self) -> float:
        return sum(self.idf)


def question_terms(question: str, stats: TenantStats) -> QuestionTerms:
    tokens = tuple(dict.fromkeys(tokenize(question)))
    folded = fold(question)
    words = set(re.findall(r"[0-9a-z]+", folded))
    return QuestionTerms(tokens, tuple(stats.idf(t) for t in tokens), stats.max_idf,
                         tuple(c.casefold() for c in codes(question)),
                         bool(words & _NEG_WORDS), bool(words & _COND_WORDS) or any(p in folded for p in _COND_PHRASES),
                         bool(_WH_NUMBER_RE.search(folded)))


def _coverage(q: QuestionTerms, present: frozenset[str] | set[str]) -> float:
    total = q.total
    return sum(w for t, w in zip(q.tokens, q.idf) if t in present) / total if total > 0 else 0.0


def _count_cov(q: QuestionTerms, present: frozenset[str] | set[str]) -> float:
    return sum(1 for t in q.tokens if t in present) / len(q.tokens) if q.tokens else 0.0


def _focus_missing(q: QuestionTerms, present: frozenset[str] | set[str]) -> float:
    missing = [w for t, w in zip(q.tokens, q.idf) if t not in present]
    return max(missing) / q.max_idf if missing and q.max_idf > 0 else 0.0


def _bigram_cov(q: QuestionTerms, seq: Sequence[str]) -> float:
    pairs = list(zip(q.tokens, q.tokens[1:]))
    if not pairs:
        return 0.0
    where: dict[str, list[int]] = {}
    for i, t in enumerate(seq):
        where.setdefault(t, []).append(i)
    hit = 0
    for a, b in pairs:
        pa, pb = where.get(a), where.get(b)
        if pa and pb and any(abs(i - j) <= 2 for i in pa for j in pb):
            hit += 1
    return hit / len(pairs)


def _proximity(q: QuestionTerms, seq: Sequence[str]) -> float:
    """Covered distinct tokens / shortest span holding them all (minimum window over the sequence)."""
    wanted = set(q.tokens)
    positions = [(i, t) for i, t in enumerate(seq) if t in wanted]
    need = len({t for _, t in positions})
    if need < 2:
        return 0.0
    counts: dict[str, int] = {}
    have, best, left = 0, len(seq) + 1, 0
    for right in range(len(positions)):
        t = positions[right][1]
        counts[t] = counts.get(t, 0) + 1
        if counts[t] == 1:
            have += 1
        while have == need:
            span = positions[right][0] - positions[left][0] + 1
            best = min(best, span)
            lt = positions[left][1]
            counts[lt] -= 1
            if counts[lt] == 0:
                have -= 1
            left += 1
    return need / best


def _align(question_has: bool, words: frozenset[str] | set[str], vocab: frozenset[str],
           folded: str = "", phrases: tuple[str, ...] = ()) -> float:
    if not question_has:
        return 0.0
    return 1.0 if (words & vocab or any(p in folded for p in phrases)) else -1.0


def _code_features(q: QuestionTerms, text_codes: Sequence[str], folded: str) -> tuple[float, float]:
    if not q.codes:
        return 0.0, 0.0
    present = [c for c in q.codes if re.search(rf"(?<![\w-]){re.escape(fold(c))}(?![\w-])", folded)]
    conflict = 0.0
    prefixes = {c.split("-", 1)[0] for c in q.codes if c not in present}
    if prefixes and any(tc.split("-", 1)[0] in prefixes and tc not in q.codes for tc in text_codes):
        conflict = 1.0
    return len(present) / len(q.codes), conflict


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
                cos[n], known[n] = self.den[n].score, True
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


# -- the gate's question-level features -----------------------------------------------------------------
#: Question and auxiliary words (folded): part of how a question is asked, not of what it is about.
QUESTION_WORDS = frozenset(
    "qual quais quanto quanta quantos quantas como onde porque quem posso pode podem podemos consigo "
    "faco fazer faz quero queria preciso devo tenho ter ser sao existe existem ha vai vou significa leva levam "
    "demora demoram "
    "what which how where who whom why can could do does did get".split())

#: English function words (a short list: the stop-words package's English list holds 1,300 words, among
#: them "area", "face", "site", "zero" and "e", which are content words in a Portuguese question).
ENGLISH_FUNCTION_WORDS = frozenset(
    "a an the of to in on at by for from with about into over under and or but is are was were be been being "
    "am do does did done have has had having i me my mine we us our you your he him his she her it its they "
    "them their this that these those there here what which who whom whose how why where when whether can "
    "could would should will shall may might must any some all each every other than then so as also just "
    "very too not no yes if after before during since until while long much many take takes taken need "
    "needs want please tell know".split())

_WORD_FORM_RE = re.compile(r"\w+")
_PREFIX = 7
_MIN_STEM = 4


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("portuguese")


@lru_cache(maxsize=200_000)  # a pure function of the word: stemming the same words on every request cost ~70 ms
def _forms(word: str) -> tuple[str, str, str]:
    """(folded word, folded stem of the accented word, seven-letter prefix marker) of one lower-cased word;
    the stem is left out (``""``) when shorter than four letters, the prefix for words under seven."""
    folded = fold(word)
    stem = fold(_stemmer().stemWord(word))
    return (folded, ("~" + stem) if len(stem) >= _MIN_STEM else "",
            ("^" + folded[:_PREFIX]) if len(folded) >= _PREFIX else "")


def word_forms(text: str) -> frozenset[str]:
    """Every folded token of ``text`` (as :func:`tokenize` gives them), plus each word's stem (``~``) and
    seven-letter prefix (``^``)."""
    out = set(tokenize(text))
    for word in _WORD_FORM_RE.findall(text.casefold()):
        out.update(f for f in _forms(word) if f)
    return frozenset(out)


@dataclass(frozen=True)
class Focus:
    """The question's focus tokens (content tokens that are not question words), their IDF and forms."""

    tokens: tuple[str, ...]
    idf: tuple[float, ...]
    forms: tuple[tuple[str, ...], ...]

    @property
    def total(self) -> float:
        return sum(self.idf)


def focus_of(question: str, q: QuestionTerms) -> Focus:
    """The focus tokens of ``question`` (see :data:`GATE_FEATURES`)."""

    drop = QUESTION_WORDS | (ENGLISH_FUNCTION_WORDS - KEPT_WORDS)
    raw = {}
    for word in _WORD_FORM_RE.findall(question.casefold()):
        raw.setdefault(fold(word), word)
    toks, idf, forms = [], [], []
    for t, w in zip(q.tokens, q.idf):
        if t in drop or "-" in t and all(p in drop for p in t.split("-")):
            continue
        toks.append(t)
        idf.append(w)
        word = raw.get(t)
        forms.append(tuple(f for f in ((t,) + (_forms(word)[1:] if word else ())) if f))
    return Focus(tuple(toks), tuple(idf), tuple(forms))


def holds(forms: Sequence[str], present: frozenset[str]) -> bool:
    """A chunk's :func:`word_forms` hold a focus token when they share its token, stem or prefix."""
    return any(f in present for f in forms)


def _focus_cov(focus: Focus, present: frozenset[str]) -> float:
    if focus.total <= 0:  # nothing to hold: a question that names nothing is not supported by any passage
        return 0.0
    return sum(w for f, w in zip(focus.forms, focus.idf) if holds(f, present)) / focus.total


def _sentence_cov(q: QuestionTerms, view: TextView, chunk_ids: Sequence[str]) -> float:
    """Best coverage by one sentence or two adjacent sentences of one chunk."""
    best = 0.0
    for cid in chunk_ids:
        sets = [set(toks) for _, toks, _ in view.sentences(cid)]
        for i, one in enumerate(sets):
            best = max(best, _coverage(q, one))
            if i + 1 < len(sets):
                best = max(best, _coverage(q, one | sets[i + 1]))
    return best


class _GateContext:
    """The selected chunks of one request, as the gate features read them (the window's candidate rows are
    read, not recomputed)."""

    def __init__(self, inp: JudgeInput, rows: CandidateRows, selected: Sequence[int], window: int | None,
                 focus: Focus | None) -> None:
        self.view, self.q = view, q = inp.view, rows.terms
        self.col = {n: rows.X[:, i] for i, n in enumerate(CANDIDATE_NAMES)}
        self.sel = sel = list(selected)
        self.ids = ids = [rows.chunk_ids[j] for j in sel]
        self.focus = focus = focus or focus_of(inp.question, q)
        self.stems = [view.stem_set(cid) for cid in ids]
        union = frozenset().union(*self.stems) if self.stems else frozenset()
        self.missing = [w for f, w in zip(focus.forms, focus.idf) if not holds(f, union)]
        self.token_union = frozenset().union(*(view.token_set(cid) for cid in ids)) if ids else frozenset()
        cos = self.col["dense_cos"]
        in_window = cos[: window or len(cos)]
        known = in_window != 0.0
        self.any_known = bool(known.any())
        self.best_cos = float(cos[sel].max()) if sel else 0.0
        self.median = float(np.median(in_window[known])) if self.any_known else 0.0
        reader = self.col["reader_maxsim"][: window or len(cos)]
        self.reader_median = float(np.median(reader)) if len(reader) else 0.0
        self.reader_sentences = inp.reader_sentences or {}
        self.unseen = float(rows.X[0, CANDIDATE_NAMES.index("q_unseen_index")]) if len(rows.X) else 0.0
        matched = bool(q.codes) and any(self.col["code_match"][j] >= 1.0 for j in sel)
        self.code_conflict = 1.0 if q.codes and not matched and any(self.col["code_conflict"][j] for j in sel) \
            else 0.0

    def best_sentence_reading(self) -> float:
        """The best reader score of one sentence of the selected chunks (a chunk whose sentences were not read
        counts with its own score; 0 with none)."""
        whole = self.col["reader_maxsim"]
        return max((max(self.reader_sentences.get(cid) or (float(whole[j]),)) for j, cid in zip(self.sel, self.ids)),
                   default=0.0)

    def best(self, name: str) -> float:
        """The best value of candidate feature ``name`` over the selected chunks (0 with none)."""
        return float(self.col[name][self.sel].max()) if self.sel else 0.0


def gate_features(inp: JudgeInput, rows: CandidateRows, selected: Sequence[int],
                  window: int | None = None, focus: Focus | None = None) -> np.ndarray:
    """The gate's row (shape ``(1, len(GATE_NAMES))``) for the selected chunks, given as row indexes of
    ``rows`` (the window's candidate features, which it reads instead of recomputing). ``window``: how many
    first rows form the rerank window (for the median cosine; default all rows). ``focus``: the question's
    :func:`focus_of`, when the caller already has it."""
    return _table(GATE_FEATURES, _GateContext(inp, rows, selected, window, focus), 1)


def focus_missing_words(inp: JudgeInput, rows: CandidateRows, selected: Sequence[int],
                        focus: Focus | None = None) -> tuple[str, ...]:
    """The focus tokens that no selected chunk holds (for the gate's reason in plain words). A hyphenated
    word compound is named by its missing parts when the context holds one of its parts."""
    focus = focus or focus_of(inp.question, rows.terms)
    stems = [inp.view.stem_set(rows.chunk_ids[j]) for j in selected]
    union = frozenset().union(*stems) if stems else frozenset()
    missing = [t for t, f in zip(focus.tokens, focus.forms) if not holds(f, union)]
    # "garantia-holograma" with "garantia" held is reported as "holograma"; a code (PX-70) stays whole.
    held = set(focus.tokens) - set(missing)
    return tuple(t for t in missing
                 if not ("-" in t and not any(ch.isdigit() for ch in t) and any(p in held for p in t.split("-"))))
