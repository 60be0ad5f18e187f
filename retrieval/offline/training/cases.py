"""The training data of the judge: each labeled question traced (:func:`collect`) and turned into cases
(:class:`Case`: candidate rows, sentence rows, ranking/support/evidence labels), the split by parent
(:func:`assign_splits`) and what a question set offers the trainer (:func:`training_readiness`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ...core.split import split_of
from ...core.text import fold
from ...core.types import Question, RankedList, ScoredItem
from ...learned.judge.features import (CandidateRows, JudgeInput, SentenceRows, TextView, candidate_features,
                                       sentence_features, stats_without, tenant_stats)
from ...stages.fusion import fuse
from ...stages.judge import reader_scores

SEED = 20261201
WINDOW = 20          # generator window of a default request (overfetch 4 × top_k 5)
WIDE = 40            # generator window of the training traces (room for leave-the-evidence-out)
RERANK_WINDOW = 30   # fused candidates the reranker reads (RETRIEVAL_RERANKER_MAX_INPUT default)
TOP_K = 5


def _heldout_split(question_id: str) -> str:

    return split_of(question_id)


def _norm(text: str) -> str:
    return " ".join(fold(text).split())


def contains_span(text: str, answers: Sequence[str]) -> bool:
    """``text`` holds one of the gold spans (accent- and case-folded, whitespace normalized)."""
    t = _norm(text)
    return any(a and _norm(a) in t for a in answers)


def sentence_label(sentence: str, answers: Sequence[str]) -> int:
    """1 when the sentence holds a gold span, or lies inside one (a span across sentences)."""
    s = _norm(sentence)
    for a in answers:
        na = _norm(a)
        if na and (na in s or (len(s.split()) >= 4 and s in na)):
            return 1
    return 0


def leave_evidence_out(lists: Mapping[str, RankedList], removed: Iterable[str], window: int) -> dict[str, RankedList]:
    """The generators' lists with every chunk of the ``removed`` parents taken out, re-ranked from 1 and
    cut to ``window`` (lexical items keep their BM25 terms; scores are unchanged, as in a filtered search
    of the same tenant index)."""
    gone = set(removed)
    out = {}
    for name, lst in lists.items():
        kept = [i for i in lst.items if i.parent_id not in gone][:window]
        out[name] = replace(lst, items=tuple(ScoredItem(i.chunk_id, i.parent_id, r, i.score, terms=i.terms)
                                             for r, i in enumerate(kept, start=1)))
    return out


def cut(lst: RankedList, window: int) -> RankedList:
    return replace(lst, items=lst.items[:window])


@dataclass
class Case:
    """One (question, request) of the training data and its labels."""

    question: Question
    kind: str                 # "answerable" | "unanswerable" | "leave_out"
    split: str                # "train" | "dev_other" | "heldout"
    corpus: str
    inp: JudgeInput
    rows: CandidateRows
    rank_labels: np.ndarray
    support_labels: np.ndarray
    sentences: SentenceRows | None = None
    sentence_labels: np.ndarray | None = None
    fold: str = ""            # "fit" | "calib" inside the training part
    evidence_left: bool = False  # leave_out only: a window candidate still holds a gold span

    @property
    def clean(self) -> bool:
        """Not a leave-the-evidence-out case whose remaining candidates still hold the answer (another
        parent repeats it): such a case is not unanswerable by construction, so it is neither trained on nor
        counted in the clean figures."""
        return not self.evidence_left

    @property
    def answerable(self) -> bool:
        return self.kind == "answerable"


def assign_splits(questions: Sequence[Question]) -> dict[str, str]:
    """Question id → ``train`` | ``dev_other`` | ``heldout`` (see the module docstring)."""
    held = {p for q in questions if _heldout_split(q.id) == "heldout" for p in q.relevant}
    out = {}
    for q in questions:
        if _heldout_split(q.id) == "heldout":
            out[q.id] = "heldout"
        else:
            out[q.id] = "dev_other" if set(q.relevant) & held else "train"
    return out


def _bucket(key: str) -> int:
    return int(hashlib.sha1(f"{SEED}:{key}".encode()).hexdigest(), 16) % 100


def _labels(q: Question, rows: CandidateRows, view: TextView, kind: str) -> tuple[np.ndarray, np.ndarray]:
    n = len(rows.chunk_ids)
    rank, support = np.zeros(n), np.zeros(n)
    if kind != "answerable":
        return rank, support
    relevant = set(q.relevant)
    grades = dict(q.graded or {})
    spans = list(q.answers)
    parent_has_span: dict[str, bool] = {}
    if spans:
        for cid, c in view.chunks.items():
            if c.parent_id in relevant and contains_span(c.text, spans):
                parent_has_span[c.parent_id] = True
    for j, (cid, pid) in enumerate(zip(rows.chunk_ids, rows.parent_ids)):
        if pid not in relevant:
            continue
        g = float(grades.get(pid, 1) or 0)
        has = bool(spans) and contains_span(view.chunks[cid].text, spans)
        rank[j] = g + (1.0 if has else 0.0)
        support[j] = 1.0 if (has or not parent_has_span.get(pid, False)) and g > 0 else 0.0
    return rank, support


def dedup_parents(chunk_ids: Sequence[str], parents: Sequence[str], k: int) -> list[int]:
    """Indexes of the best-ranked chunk of each parent, first ``k`` parents."""
    seen, out = set(), []
    for j, p in enumerate(parents):
        if p not in seen:
            seen.add(p)
            out.append(j)
            if len(out) == k:
                break
    return out


def collect(bench: Any, questions: Sequence[Question], corpus_name: str, splits: Mapping[str, str],
            progress: Callable[[int], None] | None = None, window: int = WINDOW, wide: int = WIDE,
            rerank_window: int = RERANK_WINDOW, leave_out: bool = True) -> list[Case]:
    """Run each question through ``bench.ask`` (no reranker, gate off, window ``wide``) and build its cases."""
    state = bench.state
    s = bench.settings.with_overrides(reranker_model="none", min_similarity=-1.0, require_codes=False,
                                      top_k=TOP_K, overfetch=max(1, wide // TOP_K), transforms=(),
                                      mmr_lambda=None)
    view = getattr(state, "_judge_view", None)
    if view is None:
        view = TextView.build(state.chunks, state.documents)
        object.__setattr__(state, "_judge_view", view)
    cases: list[Case] = []
    for q in questions:
        trace = bench.ask(q.question, dict(q.filters), settings=s)
        q_vec = bench.encoder.query(trace.question)[0] if trace.tier != "lexical_only" and bench.encoder else None
        tenant = q.filters.get(s.tenant_field) if q.filters else None
        stats = tenant_stats(state.lexical, tenant)
        base = {"bm25": trace.lexical, "dense": trace.dense}
        variants = [("answerable" if q.relevant else "unanswerable", {k: cut(v, window) for k, v in base.items()})]
        if leave_out and q.relevant:
            variants.append(("leave_out", leave_evidence_out(base, q.relevant, window)))
        for kind, lists in variants:
            fused = fuse(lists, s.fusion, s.rrf_k, s.fusion_weight_map)
            dense_ids = {i.chunk_id for i in lists["dense"].items}
            wanted = [i.chunk_id for i in fused.items[:rerank_window] if i.chunk_id not in dense_ids]
            vectors = state.store.vectors(wanted) if (q_vec is not None and state.store and wanted) else {}
            case_stats = stats
            if kind == "leave_out":  # the tenant's statistics without the evidence, as if it had never existed
                removed = [c for c in state.chunks if c.parent_id in set(q.relevant)
                           and c.metadata.get(s.tenant_field) == tenant]
                case_stats = stats_without(stats, removed)
            scores, why = reader_scores(trace.question, [i.chunk_id for i in fused.items[:rerank_window]], view,
                                        bench.reader_store.reader)
            if scores is None:
                raise ValueError(f"cannot train the judge: {why}")
            inp = JudgeInput(trace.question, lists["bm25"], lists["dense"], fused, q_vec, vectors, view, case_stats,
                             scores.chunks, scores.sentences)
            cases.append(build_case(q, kind, splits[q.id], corpus_name, inp, rerank_window))
        if progress:
            progress(1)
    return cases


def build_case(q: Question, kind: str, split: str, corpus_name: str, inp: JudgeInput,
               rerank_window: int = RERANK_WINDOW) -> Case:
    """Features and labels of one case (candidate rows, and sentence rows of the RRF context)."""
    view = inp.view
    rows = candidate_features(inp, rerank_window)
    rank, support = _labels(q, rows, view, kind)
    case = Case(q, kind, split, corpus_name, inp, rows, rank, support)
    if kind == "answerable" and q.answers:
        ctx = [rows.chunk_ids[j] for j in dedup_parents(rows.chunk_ids, rows.parent_ids, TOP_K)]
        sent = sentence_features(inp.question, ctx, view, inp.stats, rows.terms, inp.reader, inp.reader_sentences)
        case.sentences = sent
        case.sentence_labels = np.asarray([sentence_label(t, q.answers) for t in sent.texts], dtype=float)
    if kind == "leave_out" and q.answers:
        case.evidence_left = any(contains_span(view.chunks[cid].text, q.answers) for cid in rows.chunk_ids)
    pivot = q.relevant[0] if q.relevant else q.id
    case.fold = "calib" if _bucket(pivot) < 20 else "fit"
    return case



#: Fewer answerable training questions than this (after the split by parent) cannot train three models.
MIN_TRAIN_QUESTIONS = 8


def training_readiness(questions: Sequence[Question]) -> dict[str, Any]:
    """What a question set offers the trainer, known before any request: its answerable questions in the
    training part (:func:`assign_splits`) against :data:`MIN_TRAIN_QUESTIONS`.

    ``enough`` is necessary, not sufficient: :func:`fit` also needs a relevant parent among each such
    question's candidates, which only the retrieval tells.

    Returns:
        ``{"answerable_train", "answerable", "questions", "needed", "enough"}``.
    """
    splits = assign_splits(questions)
    answerable = [q for q in questions if q.relevant]
    in_train = sum(1 for q in answerable if splits.get(q.id) == "train")
    return {"answerable_train": in_train, "answerable": len(answerable), "questions": len(questions),
            "needed": MIN_TRAIN_QUESTIONS, "enough": in_train >= MIN_TRAIN_QUESTIONS}

