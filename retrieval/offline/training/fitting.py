"""The fits of the judge's three models on the training cases: LambdaMART (LightGBM) for the reranker and
the evidence sentences, logistic or LightGBM for the support gate, and the gate's threshold (:func:`fit`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...learned.judge.features import CANDIDATE_NAMES, GATE_NAMES, GATE_SIGNS, SENTENCE_NAMES
from ...learned.judge.models import BoosterModel, Explained, JudgeModels, LogisticModel, rerank_rows
from .cases import MIN_TRAIN_QUESTIONS, SEED, Case
from .measuring import Orders, _span_hit, choose_evidence, final_indexes, gate_row, ltr_order, measure, support_of

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
