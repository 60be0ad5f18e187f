"""The gate features: one row per request, of the selected context (the final chunks), for the support gate;
and the focus words that context lacks (the gate's reason in plain words)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...core.kinds import Text
from .candidate import CANDIDATE_NAMES, CandidateRows
from .declaration import Feature, _f, _table
from .terms import Focus, QuestionTerms, _coverage, focus_of
from .view import JudgeInput, TextView
from .words import holds


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

GATE_NAMES: tuple[str, ...] = tuple(f.name for f in GATE_FEATURES)
#: The direction each gate feature may move P(support): +1 never lowers it, −1 never raises it (the fit is
#: bounded accordingly, so an explanation never credits a missing word with support).
GATE_SIGNS: tuple[int, ...] = tuple(f.sign for f in GATE_FEATURES)


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
