"""The judge as pipeline stages: the learned rerank (kind ``ltr``), the support gate, the evidence answer.

Each stage reads the request's own lists and vectors through one :class:`JudgeInput` (built once per
request by :func:`judge_input`), computes the window's features once (:class:`JudgeRun`), and writes its
explanation into the trace:

* reranked items carry ``feature_contributions`` (raw LambdaMART units; with ``bias`` they sum to the score);
* the gate's ``support`` entry holds P(support) of the selected context, its question-level features, the
  threshold, the decision's top contributions (log-odds) and a reason in plain words;
* each answer sentence says why it was chosen (its evidence score and top contributions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..backends.reads import guarded, read_vectors
from ..core.reasons import Reason, declare, error, put
from ..core.loadonce import LoadOnce
from ..core.text import tokenize
from ..core.types import FinalItem, RankedList, ScoredItem
from ..learned.judge.features import (
    GATE_NAMES,
    CandidateRows,
    JudgeInput,
    TextView,
    candidate_features,
    focus_missing_words,
    focus_of,
    gate_features,
    sentence_features,
    tenant_stats,
)
from ..learned.judge.models import JudgeModels
from .answer import EXTRACTIVE, EXTRACTIVE_NOTES, NO_CHUNK_PASSED, Answer, abstention

_views: LoadOnce[str, TextView] = LoadOnce(limit=8)

#: Where the judge's reader comes from: ``() -> (reader or None, reason)``, a Workbench's
#: (:meth:`~retrieval.learned.reader.loader.ReaderStore.reader`).
ReaderSource = Callable[[], tuple[Any, Reason]]

JUDGE_VECTORS = declare("judge.vectors_unavailable", en="the judge's stored vectors unavailable: {error}",
                        pt="vetores armazenados do juiz indisponíveis: {error}")
READER_UNAVAILABLE = declare("judge.reader_unavailable",
                             en="the judge reads the reader's scores, which are unavailable: {why}",
                             pt="o juiz lê as notas do leitor, que estão indisponíveis: {why}")
READER_FAILED = declare("judge.reader_failed", en="the reader failed ({error})", pt="o leitor falhou ({error})")
SUPPORT_PASSES = declare("support.passes", en="support {p:.{digits}f} ≥ {threshold:.{digits}f}",
                         pt="suporte {p:.{digits}f} ≥ {threshold:.{digits}f}")
SUPPORT_FAILS = declare("support.fails", en="support {p:.{digits}f} < {threshold:.{digits}f}",
                        pt="suporte {p:.{digits}f} < {threshold:.{digits}f}")
NOTHING_NAMED = declare("support.nothing_named",
                        en="the question names nothing to look for (no content word the index can match); {then}",
                        pt="a pergunta não nomeia nada a procurar (nenhuma palavra de conteúdo que o índice "
                           "reconheça); {then}")
NOT_MENTIONED = declare("support.not_mentioned", en="no selected chunk mentions {words}; {then}",
                        pt="nenhum trecho selecionado menciona {words}; {then}")
WORDS = declare("support.words", en="{shown!w}", pt="{shown!w}")
WORDS_MORE = declare("support.words_more", en="{shown!w} and {more} more", pt="{shown!w} e mais {more}")
NO_CANDIDATE = declare("support.no_candidate", en="no candidate to answer from",
                       pt="nenhum candidato de onde responder")
NOT_APPLIED = declare("support.not_applied", en="not applied: {why}", pt="não aplicado: {why}")
NO_QUERY_VECTOR = declare("support.no_query_vector",
                          en="this tier has no query vector (lexical_only): the gate's cosine features would be "
                             "unknown",
                          pt="este nível não tem vetor da pergunta (lexical_only): as características de cosseno do "
                             "portão seriam desconhecidas")
NO_SENTENCE = declare("answer.no_sentence", en="the context holds no sentence", pt="o contexto não tem frase")


def text_view(state: Any) -> TextView:
    """The token views of a loaded corpus (one per index id, built on first use, a few kept): a built view is
    read without a lock, and a corpus' first build holds up only requests on that corpus."""
    return _views.get(state.index_id, lambda: TextView.build(state.chunks, state.documents))








def judge_input(state: Any, question: str, tenant: Any, lexical: RankedList, dense: RankedList,
                fused: RankedList, q_vec: np.ndarray | None, window: int,
                reader: ReaderSource) -> tuple[JudgeInput | None, Reason | None]:
    """Everything the judge reads for one request: stored vectors are read only for the window's
    candidates that the dense list lacks (lexical-only finds), through the guarded read.

    The scores of the window's candidates by ``reader`` (:func:`reader_scores`) come with them.

    Returns:
        ``(input, None)``, or ``(None, reason)`` when those vectors cannot be read or the reader cannot run:
        their features would be unknown, so the learned stages drop (with this reason) instead of scoring a 0.
    """
    dense_ids = {i.chunk_id for i in dense.items}
    wanted = [i.chunk_id for i in fused.items[:window] if i.chunk_id not in dense_ids]
    vectors: Mapping[str, np.ndarray] = {}
    if q_vec is not None and state.store is not None and wanted:
        read = read_vectors(state.store, wanted, JUDGE_VECTORS)
        if read.value is None:
            return None, read.reason
        vectors = read.value
    view = text_view(state)
    scores, why = reader_scores(question, [i.chunk_id for i in fused.items[:window]], view, reader)
    if scores is None:
        return None, why
    return JudgeInput(question, lexical, dense, fused, q_vec, vectors, view, tenant_stats(state.lexical, tenant),
                      scores.chunks, scores.sentences), None


@dataclass(frozen=True)
class ReaderScores:
    """The reader's scores by chunk id: each chunk's, and each of its whole sentences' (in their order)."""

    chunks: Mapping[str, float]
    sentences: Mapping[str, tuple[float, ...]]


def reader_scores(question: str, chunk_ids: Sequence[str], view: TextView, reader: ReaderSource,
                  known: ReaderScores | None = None) -> tuple[ReaderScores | None, Reason | None]:
    """The scores by ``reader`` of each chunk (its text) and of its sentences, added to ``known``; or
    ``(None, reason)`` when the reader cannot load or fails (the judge's reader features would be unknown)."""

    chunks = dict(known.chunks) if known else {}
    sentences = dict(known.sentences) if known else {}
    todo = [cid for cid in dict.fromkeys(chunk_ids) if cid not in chunks]
    if not todo:
        return ReaderScores(chunks, sentences), None
    loaded, why = reader()
    if loaded is None:
        return None, READER_UNAVAILABLE(why=why)
    try:
        readings = loaded.read(question, [view.chunks[cid] for cid in todo])   # each read inside its passage
    except (RuntimeError, ValueError, MemoryError) as exc:
        return None, READER_FAILED(error=error(exc, 160))
    for cid, reading in zip(todo, readings):
        chunks[cid] = float(reading.score)
        sentences[cid] = reading.sentences
    return ReaderScores(chunks, sentences), None


@dataclass
class JudgeRun:
    """The judge's work on one request: its input and the window's feature rows (computed once)."""

    inp: JudgeInput
    rows: CandidateRows
    reader: ReaderSource   # what scores the candidates a widened run adds
    index: dict[str, int] = field(default_factory=dict)
    window: int | None = None
    fetch: Callable[[list[str]], Mapping[str, np.ndarray]] | None = None  # stored vectors by chunk id

    @classmethod
    def of(cls, inp: JudgeInput, window: int, reader: ReaderSource,
           fetch: Callable[[list[str]], Mapping[str, np.ndarray]] | None = None) -> "JudgeRun":
        rows = candidate_features(inp, window)
        return cls(inp, rows, reader, {cid: j for j, cid in enumerate(rows.chunk_ids)}, window, fetch)

    def widen(self, chunk_ids: Sequence[str]) -> Reason | None:
        """Rows for the whole fused list, when a selected chunk lies beyond the window (MMR, a top_k above the
        window): the stored vectors of those chunks are read first (guarded), so their cosine is known, not 0.

        Returns:
            ``None``, or why the stored vectors could not be read or the reader could not score the list (the
            rows are then left as they were).
        """
        wanted = [c for c in chunk_ids if c not in self.inp.vectors]
        vectors = dict(self.inp.vectors)
        if wanted and self.fetch is not None and self.inp.q_vec is not None:
            fetch = self.fetch
            read = guarded(lambda: fetch(wanted), JUDGE_VECTORS)
            if read.value is None:
                return read.reason
            vectors.update(read.value)
        every = [i.chunk_id for i in self.inp.fused.items]   # the rows below cover the whole fused list
        known = ReaderScores(self.inp.reader or {}, self.inp.reader_sentences or {})   # copied by reader_scores
        scores, why = reader_scores(self.inp.question, every, self.inp.view, self.reader, known)
        if scores is None:
            return why
        self.inp = replace(self.inp, vectors=vectors, reader=scores.chunks, reader_sentences=scores.sentences)
        self.rows = candidate_features(self.inp, len(self.inp.fused.items))
        self.index = {cid: j for j, cid in enumerate(self.rows.chunk_ids)}
        return None




_EDGE_PUNCT = re.compile(r"^\W+|\W+$")
#: At most this many words are named in a reason; the rest are counted.
MAX_NAMED_WORDS = 5


def _words_for(question: str, tokens: Sequence[str]) -> list[str]:
    """The question's own words behind folded tokens (``biometrico`` → ``biométrico``), without the
    punctuation around them; a part of a hyphenated word is shown as that part. One pass over the question."""
    own: dict[str, str] = {}
    for raw in question.split():
        word = _EDGE_PUNCT.sub("", raw)
        for piece in [word, *word.split("-")] if "-" in word else [word]:
            toks = tokenize(piece)
            if len(toks) == 1:
                own.setdefault(toks[0], piece)
            for tok in toks:
                own.setdefault(tok, word)
    return list(dict.fromkeys(own.get(t, t) for t in tokens))


def named(words: Sequence[str]) -> Reason:
    """The first :data:`MAX_NAMED_WORDS` words, quoted, and how many more there are."""
    more = len(words) - MAX_NAMED_WORDS
    shown = list(words[:MAX_NAMED_WORDS])
    return WORDS_MORE(shown=shown, more=more) if more > 0 else WORDS(shown=shown)


def readable_digits(p: float, threshold: float) -> int:
    """As many decimals (2 to 4) as it takes for P and the threshold to read different (a comparison that
    reads true)."""
    for digits in (2, 3, 4):
        if f"{p:.{digits}f}" != f"{threshold:.{digits}f}":
            return digits
    return 4


def support_decision(models: JudgeModels, run: JudgeRun, selected: Sequence[ScoredItem],
                     question: str, threshold: float | None = None) -> dict[str, Any]:
    """The learned gate's decision (``passes``) on the selected chunks: P(support) of the context from its
    question-level features, the features themselves, the top contributions (log-odds) and a reason in
    plain words. ``threshold`` overrides the model's (``RETRIEVAL_SUPPORT_THRESHOLD``)."""
    missing_rows = [i.chunk_id for i in selected if i.chunk_id not in run.index]
    threshold = models.threshold if threshold is None else float(threshold)
    kind = f"learned support ({models.support.kind})"
    if missing_rows:  # a selected chunk beyond the window (MMR, top_k above it): rows for the whole fused list
        why = run.widen(missing_rows)
        if why is not None:  # their features would be unknown: no decision, and the gate says why
            return put({"kind": kind, "threshold": threshold, "best": None, "passes": None}, "note",
                       NOT_APPLIED(why=why))
    idx = [run.index[i.chunk_id] for i in selected if i.chunk_id in run.index]
    if not idx:
        return put({"kind": kind, "threshold": threshold, "best": None, "features": {}, "passes": False,
                    "top_contributions": [], "missing_tokens": []}, "reason", NO_CANDIDATE())
    focus = focus_of(run.inp.question, run.rows.terms)  # once: the features and the reason both read it
    x = gate_features(run.inp, run.rows, idx, run.window, focus)
    p, ex = models.support_proba(x)
    p_support = float(p[0])
    passes = bool(p_support >= threshold)
    top = [{"feature": k, "contribution": round(v, 4)} for k, v in ex.top(0, 3)]
    missing = _words_for(question, focus_missing_words(run.inp, run.rows, idx, focus))
    digits = readable_digits(p_support, threshold)
    if passes:
        reason = SUPPORT_PASSES(p=p_support, threshold=threshold, digits=digits)
    else:
        reason = SUPPORT_FAILS(p=p_support, threshold=threshold, digits=digits)
        if not focus.tokens:
            reason = NOTHING_NAMED(then=reason)
        elif missing:
            reason = NOT_MENTIONED(words=named(missing), then=reason)
    return put({"kind": kind, "threshold": threshold, "best": round(p_support, 4),
                "chunks": [run.rows.chunk_ids[j] for j in idx],
                "features": {n: round(float(v), 4) for n, v in zip(GATE_NAMES, x[0])},
                "contributions": {k: round(float(v), 4) for k, v in ex.contributions[0].items()},
                "passes": passes, "top_contributions": top, "missing_tokens": missing}, "reason", reason)


def judge_window(state: Any, question: str, filters: Any, tenant_field: str, lexical: RankedList,
                 dense: RankedList, fused: RankedList, vector: np.ndarray | None,
                 max_input: int, reader: ReaderSource) -> tuple[JudgeRun | None, Reason | None]:
    """The request's :class:`JudgeInput` (its tenant's statistics, the scores by the Workbench's ``reader``) and
    the rerank window's feature rows: ``(run, None)``, or ``(None, reason)`` when the store read they need fails
    (see :func:`judge_input`)."""
    tenants = filters.get(tenant_field)
    inp, why = judge_input(state, question, tenants[0] if tenants else None, lexical, dense, fused, vector,
                           max_input, reader)
    if inp is None:
        return None, why
    return JudgeRun.of(inp, max_input, reader, state.store.vectors if state.store is not None else None), None


def apply_support_gate(gate: Any, judged: tuple[JudgeModels, JudgeRun] | None, selected: Sequence[ScoredItem],
                       question: str, judge_reason: Reason | None, threshold: float | None = None,
                       ) -> tuple[Any, dict[str, Any]]:
    """The learned support gate after the cosine and code checks: nothing passes when the best P(support) of
    the selected chunks is below the model's threshold.

    Args:
        gate: the cosine / code decision (a frozen ``GateResult``).
        judged: ``(models, run)``, or ``None`` when no judge model loaded (``judge_reason`` says why; ``None``
            when it loaded: then this tier has no query vector).
        threshold: a threshold that replaces the model's (``None``: the model's).

    Returns:
        The gate (a new one when the learned gate refuses) and its trace entry, with ``support``: P per
        chunk, the threshold, the top contributions and the reason in plain words.
    """
    data = gate.to_dict()
    if judged is None:
        data["support"] = put({"kind": "learned support"}, "note", NOT_APPLIED(why=judge_reason or NO_QUERY_VECTOR()))
        return gate, data
    decision = support_decision(judged[0], judged[1], selected, question, threshold)
    if decision["passes"] is None:  # the decision could not be made (a store read failed): the gate drops
        return gate, {**data, "support": decision}
    if gate.final and not decision["passes"]:
        gate = replace(gate, final=(), rejected=gate.rejected + len(gate.final),
                       reason=Reason.from_dict(decision["reason_code"]), kind=f"{gate.kind} + {decision['kind']}")
        return gate, {**gate.to_dict(), "support": decision}
    if gate.final:
        data["kind"] = f"{gate.kind} + {decision['kind']}"
    return gate, {**data, "support": decision}


class LearnedEvidenceAnswerer:
    """Extractive answer whose sentences the evidence model chooses (``max_sentences`` best-scored context
    sentences, the best first: the sentence that answers leads); each sentence records why it was chosen."""

    name = "local-extractive (learned evidence)"

    def __init__(self, models: JudgeModels, run: JudgeRun, max_sentences: int = 2, language: str = "pt") -> None:
        self.models, self.run, self.max_sentences = models, run, max_sentences
        self.language = language if language in EXTRACTIVE_NOTES else "pt"

    def answer(self, question: str, context: Sequence[FinalItem]) -> Answer:
        if not context:
            return abstention(self.name, NO_CHUNK_PASSED(), self.language)
        ids = [f.chunk_id for f in context]
        sent = sentence_features(question, ids, self.run.inp.view, self.run.inp.stats, self.run.rows.terms,
                                 self.run.inp.reader, self.run.inp.reader_sentences)
        if not sent.texts:
            return abstention(self.name, NO_SENTENCE(), self.language)
        ex = self.models.evidence_scores(sent.X)
        chosen = sorted(range(len(ex.raw)), key=lambda j: (-ex.raw[j], j))[: self.max_sentences]
        number = {cid: n for n, cid in enumerate(ids, start=1)}
        sentences = []
        for j in chosen:
            why = ", ".join(f"{k} {v:+.2f}" for k, v in ex.top(j, 3))
            sentences.append({"text": sent.texts[j], "citations": [sent.chunk_ids[j]],
                              "why": f"evidence score {ex.raw[j]:.2f} (rank {sorted(ex.raw, reverse=True).index(ex.raw[j]) + 1} "
                                     f"of {len(ex.raw)} context sentences): {why}"})
        text = " ".join(f"{sent.texts[j]} [{number[sent.chunk_ids[j]]}]" for j in chosen)
        citations = list(dict.fromkeys(sent.chunk_ids[j] for j in chosen))
        return Answer(text, sentences, citations, False, self.name, note_reason=EXTRACTIVE(), language=self.language)
