"""Training the judge from real traces (``python -m retrieval train``).

1. **Traces.** Every labeled question runs through :meth:`Workbench.ask` with no reranker and the gate
   disabled (``min_similarity=-1``, ``require_codes`` off) and a wide generator window (``wide``); the
   lists are then cut to the request window (``window``, the default 4 × 5 = 20) and fused again by RRF, so
   each case holds exactly what a default request would hand the judge.
2. **Cases.** An answerable question gives one ranking/support case; unanswerable questions (empty
   ``relevant``) give support negatives; and each answerable question also gives a
   **leave-the-evidence-out** case: the same question with its relevant parents removed from both
   generators' lists before the cut (what a request that filtered those parents out would have seen), an
   unanswerable case by construction.
3. **Split by parent.** A question is held out when the evaluation's fixed split (``split_of``) says so;
   it is trained on only when it is in the dev split *and* none of its relevant parents is relevant to a
   held-out question. So ``eval --split heldout`` measures questions whose parents the models never saw.
   Inside the training part a calibration part (20 % of its parents) chooses boosting rounds, the support
   model's kind and the threshold; the final models are refit on the whole training part.
4. **Labels.** Ranking: the parent's grade (``graded``, else 1) plus 1 for a chunk holding a gold answer
   span. Support: a chunk of a relevant parent that holds a gold span (every chunk of the parent when no
   span is given or none is found). Evidence: a context sentence that holds a gold span (or lies inside one).

Seeded and deterministic (``deterministic=True``, fixed seeds): the same inputs give the same model files.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import numpy as np

from ..core.defaults import MIN_SIMILARITY
from ..ingest.corpus import load_questions
from ..core.split import split_of
from ..core.text import fold
from ..core.types import FinalItem, Question, RankedList, ScoredItem
from ..learned.judge.features import (
    CANDIDATE_NAMES,
    feature_set_version,
    GATE_NAMES,
    GATE_SIGNS,
    SENTENCE_NAMES,
    CandidateRows,
    JudgeInput,
    SentenceRows,
    TextView,
    candidate_features,
    gate_features,
    sentence_features,
    stats_without,
    tenant_stats,
)
from ..learned.judge.models import (FAQUAD_ATTRIBUTION, RERANKER_LABEL, BoosterModel, Explained, JudgeModels,
                                    LogisticModel, rerank_rows)
from ..pipeline.workbench import Workbench
from ..stages.answer import ExtractiveAnswerer
from ..stages.fusion import fuse
from ..stages.judge import reader_scores
from .evaluation.metrics import brief, label, ranking_scores, relevant_grades

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


# -- fitting -------------------------------------------------------------------------------------------
RANK_PARAMS = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "learning_rate": 0.05,
               "num_leaves": 7, "max_depth": 4, "min_data_in_leaf": 30, "min_sum_hessian_in_leaf": 1.0,
               "lambda_l2": 10.0, "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1,
               "lambdarank_truncation_level": 20, "verbose": -1, "deterministic": True, "force_col_wise": True,
               "num_threads": 2}
BINARY_PARAMS = {"objective": "binary", "metric": "binary_logloss", "learning_rate": 0.05, "num_leaves": 7,
                 "max_depth": 4, "min_data_in_leaf": 40, "lambda_l2": 10.0, "feature_fraction": 0.8,
                 "bagging_fraction": 0.8, "bagging_freq": 1, "verbose": -1, "deterministic": True,
                 "force_col_wise": True, "num_threads": 2}


def _seeded(params: Mapping[str, Any], seed: int) -> dict[str, Any]:
    return {**params, "seed": seed, "bagging_seed": seed, "feature_fraction_seed": seed, "data_random_seed": seed}


def _rank_data(cases: Sequence[Case], attr: str = "rows") -> tuple[np.ndarray, np.ndarray, list[int]]:
    X, y, groups = [], [], []
    for c in cases:
        if attr == "rows":
            if not c.answerable or c.rank_labels.max(initial=0) <= 0:
                continue
            X.append(c.rows.X)
            y.append(c.rank_labels)
            groups.append(len(c.rank_labels))
        else:
            labels = c.sentence_labels
            if c.sentences is None or labels is None or labels.max(initial=0) <= 0 or len(labels) < 2:
                continue
            X.append(c.sentences.X)
            y.append(labels)
            groups.append(len(labels))
    width = len(CANDIDATE_NAMES) if attr == "rows" else len(SENTENCE_NAMES)
    return (np.vstack(X) if X else np.zeros((0, width)), np.concatenate(y) if y else np.zeros(0), groups)


def _fit_ranker(train: Sequence[Case], valid: Sequence[Case] | None, attr: str, rounds: int, seed: int,
                start: Any = None):
    """LambdaMART on ``train``: ``(booster, rounds)``. With ``valid``, early stopping on it chooses the rounds (at
    least 10); with ``start`` (a booster), the new trees grow on top of its trees (LightGBM's ``init_model``) and
    the rounds are those added (0 when ``start`` is best as it is)."""
    import lightgbm as lgb

    X, y, g = _rank_data(train, attr)
    dtrain = lgb.Dataset(X, y, group=g, free_raw_data=False)
    params = _seeded(RANK_PARAMS, seed)
    if valid is not None:
        Xv, yv, gv = _rank_data(valid, attr)
        dvalid = lgb.Dataset(Xv, yv, group=gv, reference=dtrain)
        booster = lgb.train(params, dtrain, rounds, valid_sets=[dvalid], init_model=start,
                            callbacks=[lgb.early_stopping(30, verbose=False)])
        if start is not None:
            return booster, max(booster.best_iteration - start.current_iteration(), 0)
        return booster, max(booster.best_iteration, 10)
    return lgb.train(params, dtrain, rounds, init_model=start), rounds


def gate_row(case: Case, final: Sequence[int]) -> np.ndarray:
    """The gate's feature row of ``case`` for the chunks ``final`` (row indexes of the window)."""
    return gate_features(case.inp, case.rows, final)


class Orders(Protocol):
    """What orders a case's candidates: the judge's models, or a reranker fitted alone (:class:`RankerOnly`)."""

    def rerank(self, X: np.ndarray) -> Explained: ...


@dataclass(frozen=True)
class RankerOnly:
    """A reranker fitted alone, to order candidates: the support gate is fitted on its order."""

    reranker: BoosterModel

    def rerank(self, X: np.ndarray) -> Explained:
        return rerank_rows(self.reranker, X)


def _support_data(models: Orders, cases: Sequence[Case]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gate rows of ``cases`` (their final chunks in ``models``' learned order), labels and weights.

    Label 1: an answerable case whose final chunks hold a support chunk; 0: an unanswerable case or a clean
    leave-the-evidence-out case. Left out: answerable cases whose final chunks miss the evidence (the gate
    cannot be right to answer them from that context) and leave-out cases with the evidence left. Weights
    give each corpus the same total, so a large set does not define alone what support looks like.
    """
    X, y, corpus = [], [], []
    for c in cases:
        final = final_indexes(c, ltr_order(models, c))
        if not final:
            continue
        if c.answerable:
            if not any(c.support_labels[j] > 0 for j in final):
                continue
            label = 1.0
        elif c.clean:
            label = 0.0
        else:
            continue
        X.append(gate_row(c, final)[0])
        y.append(label)
        corpus.append(c.corpus)
    if not X:
        return np.zeros((0, len(GATE_NAMES))), np.zeros(0), np.zeros(0)
    names = np.asarray(corpus)
    w = np.asarray([1.0 / np.sum(names == n) for n in corpus])
    return np.vstack(X), np.asarray(y), w * len(w) / w.sum()


def _logloss(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.average(y * np.log(p) + (1 - y) * np.log(1 - p), weights=w))


def _fit_support(data: tuple[np.ndarray, np.ndarray, np.ndarray], kind: str, seed: int, rounds: int = 200):
    X, y, w = data
    if kind == "logistic":
        return LogisticModel.fit(X, y, l2=1.0, weights=w, signs=GATE_SIGNS)
    import lightgbm as lgb

    params = {**_seeded(BINARY_PARAMS, seed), "monotone_constraints": list(GATE_SIGNS)}
    return BoosterModel(lgb.train(params, lgb.Dataset(X, y, weight=w), rounds))


def _fit_evidence_logistic(train: Sequence[Case]) -> LogisticModel:
    X, y, _ = _rank_data(train, "sentences")
    return LogisticModel.fit(X, y, l2=1.0)


# -- measuring -----------------------------------------------------------------------------------------
def ltr_order(models: Orders, case: Case) -> list[int]:
    """Candidate indexes in learned order (ties by fused rank)."""
    raw = models.rerank(case.rows.X).raw if len(case.rows.X) else np.zeros(0)
    return sorted(range(len(raw)), key=lambda j: (-raw[j], case.rows.fused_ranks[j]))


def final_indexes(case: Case, order: Sequence[int], k: int = TOP_K) -> list[int]:
    ids = [case.rows.chunk_ids[j] for j in order]
    parents = [case.rows.parent_ids[j] for j in order]
    return [order[j] for j in dedup_parents(ids, parents, k)]


def support_of(models: JudgeModels, case: Case, final: Sequence[int]) -> float:
    """The gate's P(support) for the chunks ``final`` of ``case`` (0 when there is none)."""
    if not final:
        return 0.0
    p, _ = models.support_proba(gate_row(case, final))
    return float(p[0])


def choose_evidence(models: JudgeModels, sent: SentenceRows, question: str = "", n: int = 2) -> list[int]:
    """Indexes of the ``n`` sentences the evidence model scores highest."""
    if len(sent.texts) == 0:
        return []
    raw = models.evidence_scores(sent.X).raw
    return sorted(range(len(raw)), key=lambda j: (-raw[j], j))[:n]


def _extractive_cited(case: Case, ctx_ids: Sequence[str]) -> list[str]:

    view = case.inp.view
    final = [FinalItem(cid, view.chunks[cid].parent_id, r, 0.0, None, view.chunks[cid].text)
             for r, cid in enumerate(ctx_ids, start=1)]
    return [s["text"] for s in ExtractiveAnswerer().answer(case.question.question, final).sentences]


def _span_hit(sentences: Sequence[str], answers: Sequence[str]) -> bool:
    return contains_span(" ".join(sentences), answers) or any(contains_span(s, answers) for s in sentences)


def cosine_gate_abstains(case: Case, final: Sequence[int], min_similarity: float = MIN_SIMILARITY,
                         require_codes: bool = True) -> bool:
    """The current default gate: no final chunk with cosine ≥ ``min_similarity``, or a question code that no
    final chunk holds."""
    cos = case.rows.column("dense_cos")
    if not final or max(cos[j] for j in final) < min_similarity:
        return True
    if require_codes and case.rows.terms.codes:
        cm = case.rows.column("code_match")
        return all(cm[j] < 1.0 for j in final) if final else True
    return False


#: The kinds of case the gate figures count (a clean leave-out case counts as ``leave_out`` too).
GATE_KINDS = ("answerable", "unanswerable", "leave_out", "leave_out_clean")


def gate_kinds(case: Case) -> list[str]:
    """The :data:`GATE_KINDS` ``case`` counts under."""
    return [case.kind] + (["leave_out_clean"] if case.kind == "leave_out" and case.clean else [])


def gate_shares(abstained: Mapping[str, Sequence[bool]]) -> dict[str, float | None]:
    """Answered share of answerable cases, abstained share of each kind of unanswerable case."""
    def mean(v: Sequence[bool]) -> float | None:
        return round(float(np.mean(v)), 4) if len(v) else None

    return {"answered_answerable": mean([not a for a in abstained["answerable"]]),
            "abstained_unanswerable": mean(abstained["unanswerable"]),
            "abstained_leave_out": mean(abstained["leave_out"]),
            "abstained_leave_out_clean": mean(abstained["leave_out_clean"])}


#: The thresholds of the model card's operating-point table (``RETRIEVAL_SUPPORT_THRESHOLD`` picks one).
OPERATING_THRESHOLDS = (0.05, 0.10, 0.15, 0.20, 0.30, 0.50)


def operating_points(models: JudgeModels, cases: Sequence[Case],
                     thresholds: Sequence[float] = OPERATING_THRESHOLDS) -> list[dict[str, Any]]:
    """The learned gate alone at each threshold: answered share of answerable cases, abstained share of
    unanswerable, leave-out and clean leave-out cases."""
    scored = []
    for c in cases:
        final = final_indexes(c, ltr_order(models, c)) if len(c.rows.chunk_ids) else []
        scored.append((c, support_of(models, c, final)))
    out = []
    for t in thresholds:
        abst: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
        for c, p in scored:
            for k in gate_kinds(c):
                abst[k].append(p < t)
        out.append({"threshold": t, **gate_shares(abst)})
    return out


def measure(models: JudgeModels, cases: Sequence[Case], threshold: float | None = None) -> dict[str, Any]:
    """Figures of the learned judge against RRF and the cosine gate on ``cases``.

    Returns ``{"n", "ndcg@10": {"rrf", "ltr"}, "recall@10", "mrr@10", "lost_relevant", "abstention": {...},
    "evidence": {...}}`` (``None`` where a part has no case). The ranking figures are the brief metrics at 10
    (:func:`~retrieval.offline.evaluation.metrics.brief`), computed by the evaluation's own metric code on each
    answerable case's top 10 parents, in the fused (``rrf``) and the learned (``ltr``) order.
    """
    t = models.threshold if threshold is None else threshold
    lost = 0
    lost_ids = []
    grades_of: dict[str, dict[str, int]] = {}
    orders: dict[str, dict[str, list[str]]] = {"rrf": {}, "ltr": {}}
    abst: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
    abst_cos: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
    abst_codes: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
    groups: dict[str, list[str]] = {}
    ev_before, ev_after, ev_after_ltr = [], [], []
    for c in cases:
        n = len(c.rows.chunk_ids)
        fused_order = list(range(n))
        order = ltr_order(models, c) if n else []
        final_l = final_indexes(c, order)
        final_r = final_indexes(c, fused_order)
        p = support_of(models, c, final_l)
        for k in gate_kinds(c):
            abst[k].append(p < t)
            abst_cos[k].append(cosine_gate_abstains(c, final_r))
            abst_codes[k].append(p < t or cosine_gate_abstains(c, final_l))
        if c.answerable:
            key = str(len(grades_of))  # one key per case: two corpora may share a question id
            grades_of[key] = relevant_grades(c.question)
            pr = [c.rows.parent_ids[j] for j in final_indexes(c, fused_order, 10)]
            pl = [c.rows.parent_ids[j] for j in final_indexes(c, order, 10)]
            orders["rrf"][key], orders["ltr"][key] = pr, pl
            groups.setdefault(c.question.group, []).append(key)
            rel = set(grades_of[key])
            if (set(pr) & rel) - set(pl):
                lost += 1
                lost_ids.append(c.question.id)
            if c.question.answers and c.sentences is not None:
                ctx = [c.rows.chunk_ids[j] for j in final_r]
                ev_before.append(_span_hit(_extractive_cited(c, ctx), c.question.answers))
                chosen = choose_evidence(models, c.sentences, c.question.question)
                ev_after.append(_span_hit([c.sentences.texts[j] for j in chosen], c.question.answers))
                ctx_l = [c.rows.chunk_ids[j] for j in final_l]
                sl = sentence_features(c.question.question, ctx_l, c.inp.view, c.inp.stats, c.rows.terms,
                                       c.inp.reader, c.inp.reader_sentences)
                chosen_l = choose_evidence(models, sl, c.question.question)
                ev_after_ltr.append(_span_hit([sl.texts[j] for j in chosen_l], c.question.answers))

    def mean(v: list) -> float | None:
        return round(float(np.mean(v)), 4) if v else None

    names = brief(10)
    per = {side: ranking_scores(grades_of, orders[side], names, side) for side in orders}

    def figure(name: str, keys: Sequence[str]) -> dict[str, float | None]:
        return {side: mean([per[side][k][name] for k in keys]) for side in orders}

    return {
        "n_answerable": len(grades_of), "n_unanswerable": len(abst["unanswerable"]),
        "n_leave_out": len(abst["leave_out"]), "n_leave_out_clean": len(abst["leave_out_clean"]),
        **{name: figure(name, list(grades_of)) for name in names},
        "lost_relevant": lost, "lost_relevant_ids": lost_ids,
        "support_gate": {"threshold": t, **gate_shares(abst)},
        "support_and_cosine_gate": gate_shares(abst_codes),
        "ndcg@10_by_group": {g: {"n": len(keys), **figure("ndcg@10", keys)} for g, keys in sorted(groups.items())},
        "cosine_gate": {"threshold": MIN_SIMILARITY, **gate_shares(abst_cos)},
        "evidence_span_share": {"n": len(ev_before), "extractive_rrf_context": mean(ev_before),
                                "model_rrf_context": mean(ev_after), "model_ltr_context": mean(ev_after_ltr)},
    }


#: The support threshold keeps at least this share of the calibration part's answerable cases answered (the
#: adoption rule allows 2 % of FaQuAD's answerable questions refused).
MIN_ANSWERED = 0.99


def _choose_threshold(models: JudgeModels, cases: Sequence[Case], min_answered: float = MIN_ANSWERED) -> float:
    """The largest threshold that keeps ≥ ``min_answered`` of answerable calibration cases answered."""
    pos: list[float] = []
    neg: list[float] = []
    for c in cases:
        final = final_indexes(c, ltr_order(models, c))
        (pos if c.answerable else neg).append(support_of(models, c, final))
    if not pos:
        return 0.5
    ordered = np.sort(np.asarray(pos))
    cut_at = int(math.floor((1 - min_answered) * len(ordered)))
    return float(max(1e-3, ordered[cut_at] - 1e-6))


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class TrainResult:
    models: JudgeModels
    metrics: dict[str, Any]
    seconds: float
    cases: list[Case] = field(default_factory=list)


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


def fit(cases: Sequence[Case], seed: int = SEED, log: Callable[[str], None] | None = None) -> tuple[JudgeModels, dict]:
    """Fit the three models on the ``train`` cases (calibration part inside) and return them with the
    choices made (rounds, support kind, threshold, calibration figures)."""
    say = log or (lambda m: None)
    train = [c for c in cases if c.split == "train"]
    answerable = [c for c in train if c.kind == "answerable" and np.any(c.rank_labels > 0)]
    if len(answerable) < MIN_TRAIN_QUESTIONS or not any(c.kind != "answerable" for c in train):
        raise ValueError(f"too little to train on: {len(answerable)} answerable training questions with a relevant "
                         f"candidate (at least {MIN_TRAIN_QUESTIONS} are needed, plus unanswerable or "
                         "leave-the-evidence-out cases); check that 'relevant' names parent ids of the corpus")
    fit_part = [c for c in train if c.fold == "fit"]
    calib = [c for c in train if c.fold == "calib"]
    if not fit_part or not calib:
        fit_part, calib = train, train
    say(f"reranker: {len(fit_part)} fit cases, {len(calib)} calibration cases")
    _, rank_rounds = _fit_ranker(fit_part, calib, "rows", 600, seed)
    _, ev_rounds = _fit_ranker(fit_part, calib, "sentences", 600, seed)
    rank_fit, _ = _fit_ranker(fit_part, None, "rows", rank_rounds, seed)
    ev_fit, _ = _fit_ranker(fit_part, None, "sentences", ev_rounds, seed)
    # Support gate: one row per question (the final chunks in the learned order of the reranker fitted on
    # the fit part, so the calibration part's contexts are out of sample); logistic vs LightGBM by weighted
    # log-loss on the calibration part. The gate is not refit: its threshold belongs to this fit.
    order_fit = RankerOnly(BoosterModel(rank_fit))
    fit_data, (Xc, yc, wc) = _support_data(order_fit, fit_part), _support_data(order_fit, calib)
    if len(set(fit_data[1])) < 2:
        raise ValueError("too little to train the support gate on: the training part needs answerable questions "
                         "whose evidence is retrieved and unanswerable (or leave-the-evidence-out) ones")
    choice, candidates = {}, {}
    for kind in ("logistic", "lightgbm"):
        m = _fit_support(fit_data, kind, seed)
        p = 1 / (1 + np.exp(-m.raw(Xc))) if len(Xc) else np.zeros(0)
        choice[kind] = _logloss(p, yc, wc) if len(Xc) else 0.0
        candidates[kind] = m
    support_kind = min(choice, key=lambda k: (round(choice[k], 3), k != "logistic"))
    # Evidence: LambdaMART vs logistic, judged by the span share of the top-2 sentences on calibration.
    ev_lr = _fit_evidence_logistic(fit_part)
    ev_choice = {}
    for kind, model in (("lightgbm", BoosterModel(ev_fit)), ("logistic", ev_lr)):
        probe = JudgeModels(BoosterModel(rank_fit), candidates[support_kind], model, 0.5)
        hits = [_span_hit([c.sentences.texts[j] for j in choose_evidence(probe, c.sentences, "")],
                          c.question.answers) for c in calib if c.sentences is not None and len(c.sentences.texts)]
        ev_choice[kind] = float(np.mean(hits)) if hits else 0.0
    evidence_kind = max(ev_choice, key=lambda k: (round(ev_choice[k], 3), k == "logistic"))
    probe = JudgeModels(BoosterModel(rank_fit), candidates[support_kind],
                        BoosterModel(ev_fit) if evidence_kind == "lightgbm" else ev_lr, 0.5)
    # The threshold is one number chosen on every dev question the models were not fitted on: the calibration
    # part and the dev questions that share a parent with a held-out question (never the held-out split).
    threshold = _choose_threshold(probe, calib + [c for c in cases if c.split == "dev_other"])
    calib_metrics = measure(probe, calib, threshold)
    say(f"rounds: reranker {rank_rounds}, evidence {ev_rounds}; support {support_kind} "
        f"(log-loss {choice}); evidence {evidence_kind} ({ev_choice}); threshold {threshold:.3f}")
    # Refit the reranker and the evidence model on the whole training part with the chosen settings.
    rank_all, _ = _fit_ranker(train, None, "rows", rank_rounds, seed)
    evidence_all = (BoosterModel(_fit_ranker(train, None, "sentences", ev_rounds, seed)[0])
                    if evidence_kind == "lightgbm" else _fit_evidence_logistic(train))
    models = JudgeModels(BoosterModel(rank_all), candidates[support_kind], evidence_all, threshold)
    info = {"reranker_rounds": rank_rounds, "evidence_rounds": ev_rounds, "support_kind": support_kind,
            "support_logloss_calibration": choice, "evidence_kind": evidence_kind,
            "evidence_share_calibration": ev_choice, "threshold_rule": f"largest threshold keeping ≥ "
            f"{MIN_ANSWERED:.1%} of the answerable dev cases not fitted on (calibration part and dev_other) answered", "calibration": calib_metrics,
            "support_training": {"rows": int(len(fit_data[1])), "positives": int(fit_data[1].sum()),
                                 "corpus_balanced_weights": True},
            "seed": seed, "params": {"reranker": RANK_PARAMS, "support_lightgbm": BINARY_PARAMS}}
    return models, info


def strongest_features(models: JudgeModels, cases: Sequence[Case], n: int = 5) -> list[tuple[str, float]]:
    """Features by mean |contribution| to the reranker's score over ``cases`` (raw LambdaMART units)."""
    X = np.vstack([c.rows.X for c in cases if len(c.rows.X)])
    C = models.reranker.contributions(X)[:, :-1]
    mean = np.abs(C).mean(axis=0)
    order = np.argsort(-mean)
    return [(CANDIDATE_NAMES[i], round(float(mean[i]), 4)) for i in order[:n]]


def model_card(manifest: Mapping[str, Any]) -> str:
    m = manifest
    lines = [
        "# Judge models: learned reranker, support gate, evidence sentences", "",
        f"Reranker kind `ltr`: {RERANKER_LABEL}. Support: P(the selected context supports an answer), "
        f"{m['training']['support_kind']} over {len(GATE_NAMES)} question-level features of the final chunks; "
        f"the gate passes when P ≥ {m['support_threshold']:.3f}. "
        f"Evidence: {m['training']['evidence_kind']} over context sentences.", "",
        f"Feature set `{feature_set_version()}` ({len(CANDIDATE_NAMES)} candidate features, "
        f"{len(SENTENCE_NAMES)} sentence features, {len(GATE_NAMES)} gate features; see "
        "`retrieval/learned/judge/features.py`). Contributions are in "
        "raw LambdaMART score units (reranker) and log-odds (support), not probabilities.", "",
        "## Training data", "",
    ]
    for t in m["training_sets"]:
        lines.append(f"- `{t['corpus_name']}`: corpus sha256 `{t['corpus_sha256'][:16]}…`, questions sha256 "
                     f"`{t['questions_sha256'][:16]}…`; {t['questions']} questions, "
                     f"{t['train_questions']} trained on, {t['heldout_questions']} held out")
    lines += ["", "Split by parent: held-out questions are the evaluation's fixed held-out split; a dev question is "
              "trained on only when none of its relevant parents is relevant to a held-out question. Unanswerable "
              "cases: the set's unanswerable questions plus leave-the-evidence-out cases (an answerable question "
              "with its relevant parents removed from every list); a leave-out case whose remaining candidates "
              "still hold a gold answer span (another parent repeats the answer) is not trained on.", "",
              f"Seed {m['training']['seed']}; training took {m['training_seconds']:.0f} s on 2 cores "
              f"(tracing {m.get('tracing_seconds', 0):.0f} s of it).", "",
              "## Metrics by part", "",
              "`train` was trained on (in-sample, shown for the fit); `dev_other` (dev questions whose parents are "
              "also held-out parents) and `heldout` (the evaluation's held-out split) were never trained on. "
              f"Gates: *learned* = P(support) ≥ threshold alone; *learned+cos* = learned and the cosine ({MIN_SIMILARITY:.2f}) "
              "and code checks together (what the pipeline runs); *cosine* = the cosine and code checks alone. "
              "Each cell: answered share of answerable / abstained share of unanswerable (n) / abstained share of "
              "leave-the-evidence-out cases (n) / the same for clean leave-out cases, those whose remaining "
              "candidates hold no gold answer span (n).", ""]
    lines += _metrics_table(m["metrics"])
    lines += _operating_table(m["metrics"], m["support_threshold"])
    lines += ["", "## Strongest reranker features (mean |contribution| over held-out candidates, raw LambdaMART units)", ""]
    lines += [f"- `{name}`: {value}" for name, value in m.get("strongest_features", [])]
    lines += ["", "## Attribution", "",
              f"Trained in part on {FAQUAD_ATTRIBUTION}. The FaQuAD texts are not redistributed in this folder; "
              "these model files are derived from them under the same licence's attribution terms.", ""]
    return "\n".join(lines)


def _operating_table(metrics: Mapping[str, Mapping[str, Any]], chosen: float) -> list[str]:
    parts = [(part, r["operating_points"]) for part, r in metrics.items() if r.get("operating_points")]
    if not parts:
        return []
    rows = ["", f"## Support gate operating points (learned gate alone; the shipped threshold is {chosen:.3f}; "
            "`RETRIEVAL_SUPPORT_THRESHOLD` picks another)", "",
            "Each cell: answered share of answerable / abstained share of unanswerable / of leave-out / of clean "
            "leave-out cases.", "", "| part | " + " | ".join(f"{p['threshold']:.2f}" for p in parts[0][1]) + " |",
            "|" + " --- |" * (len(parts[0][1]) + 1)]
    for part, points in parts:
        rows.append(f"| {part} | " + " | ".join(
            f"{p['answered_answerable']} / {p['abstained_unanswerable']} / {p['abstained_leave_out']} / "
            f"{p['abstained_leave_out_clean']}" for p in points) + " |")
    return rows


def _metrics_table(metrics: Mapping[str, Mapping[str, Any]]) -> list[str]:
    names = brief(10)
    rows = ["| part | answerable | " + "".join(f"{label(n)} rrf → ltr | " for n in names) + "lost | "
            "gate learned | gate learned+cos | gate cosine | evidence span share: extractive → model "
            "(rrf context) / model (ltr context) |", "|" + " --- |" * (7 + len(names))]

    def gate(g: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (f"{g['answered_answerable']} / {g['abstained_unanswerable']} ({r['n_unanswerable']}) / "
                f"{g['abstained_leave_out']} ({r['n_leave_out']}) / {g.get('abstained_leave_out_clean')} "
                f"({r.get('n_leave_out_clean')})")

    for part, r in metrics.items():
        ev = r["evidence_span_share"]
        both = r.get("support_and_cosine_gate") or r["support_gate"]
        figures = "".join(f"{(r.get(n) or {}).get('rrf')} → {(r.get(n) or {}).get('ltr')} | " for n in names)
        rows.append(f"| {part} | {r['n_answerable']} | {figures}"
                    f"{r['lost_relevant']} | {gate(r['support_gate'], r)} | {gate(both, r)} | "
                    f"{gate(r['cosine_gate'], r)} | {ev['extractive_rrf_context']} → {ev['model_rrf_context']} / "
                    f"{ev['model_ltr_context']} (n={ev['n']}) |")
    groups = [(part, g, v) for part, r in metrics.items() for g, v in (r.get("ndcg@10_by_group") or {}).items()]
    if groups:
        rows += ["", "nDCG@10 by group, rrf → ltr:", "", "| part | group | n | rrf | ltr |", "| --- | --- | --- | --- | --- |"]
        rows += [f"| {part} | {g} | {v['n']} | {v['rrf']} | {v['ltr']} |" for part, g, v in groups]
    return rows


def train(pairs: Sequence[tuple[Path, Path]], out: Path | None, settings: Any, seed: int = SEED,
          progress: bool = True, log: Callable[[str], None] | None = None) -> TrainResult:
    """Collect traces for each (corpus, questions) pair, fit, measure on the held-out parts and write the
    model folder to ``out`` (when given)."""
    from tqdm import tqdm


    say = log or (lambda m: print(m, file=sys.stderr))
    started = time.perf_counter()
    loaded = [(c, load_questions(q), q) for c, q in pairs]
    total = sum(len(qs) for _, qs, _ in loaded)
    cases: list[Case] = []
    sets = []
    with tqdm(total=total, desc="tracing questions", unit="q", file=sys.stderr, disable=not progress) as bar:
        for corpus, questions, qpath in loaded:
            bench = Workbench(settings, progress=progress)
            bench.load_corpus(corpus)
            splits = assign_splits(questions)
            name = Path(corpus).parent.name or Path(corpus).stem
            cases += collect(bench, questions, name, splits, progress=bar.update)
            sets.append({"corpus_name": name, "corpus_sha256": _hash_file(Path(corpus)),
                         "questions_sha256": _hash_file(Path(qpath)), "questions": len(questions),
                         "train_questions": sum(v == "train" for v in splits.values()),
                         "heldout_questions": sum(v == "heldout" for v in splits.values())})
    traced = time.perf_counter() - started
    say(f"traced {len(cases)} cases in {traced:.0f} s; fitting")
    return fit_and_write(cases, sets, out, seed, started, traced, say)


def fit_and_write(cases: Sequence[Case], sets: Sequence[Mapping[str, Any]], out: Path | None, seed: int,
                  started: float, traced: float, say: Callable[[str], None]) -> TrainResult:
    """Fit on traced cases, measure every part, and write the model folder with its card."""
    models, info = fit(cases, seed, say)
    metrics = {}
    for corpus in dict.fromkeys(c.corpus for c in cases):
        for part in ("train", "dev_other", "heldout"):
            part_cases = [c for c in cases if c.corpus == corpus and c.split == part]
            if part_cases:
                metrics[f"{corpus}/{part}"] = measure(models, part_cases)
                if part != "train":
                    metrics[f"{corpus}/{part}"]["operating_points"] = operating_points(models, part_cases)
    held = [c for c in cases if c.split == "heldout"]
    seconds = time.perf_counter() - started
    models.manifest = {"training": info, "training_sets": list(sets), "metrics": metrics,
                       "strongest_features": strongest_features(models, held or cases),
                       "training_seconds": round(seconds, 1), "tracing_seconds": round(traced, 1),
                       "window": WINDOW, "rerank_window": RERANK_WINDOW, "top_k": TOP_K,
                       "attribution": FAQUAD_ATTRIBUTION}
    if out is not None:
        manifest = {**models.manifest, "feature_set_version": feature_set_version(),
                    "support_threshold": models.threshold}
        models.save(out, model_card(manifest))
    return TrainResult(models, metrics, seconds, list(cases))
