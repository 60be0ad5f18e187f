"""Metrics (through ranx) on tiny cases computed by hand, the split, and the comparison bookkeeping."""

from __future__ import annotations

import math

import pytest

from retrieval.evaluate import Config, _scores, compare, split_of
from retrieval.types import Question


def Q(qid, relevant, graded=None, group="g"):
    return Question(qid, "?", group, tuple(relevant), {}, graded)


def test_binary_metrics_by_hand():
    names = ["recall@1", "recall@3", "precision@3", "mrr@3", "ndcg@3", "hit_rate@1", "hit_rate@3"]
    got = _scores([Q("q", ["d1", "d2"])], {"q": ["d3", "d1", "d2"]}, names, "run")["q"]
    assert got["recall@1"] == 0
    assert got["recall@3"] == 1
    assert got["precision@3"] == pytest.approx(2 / 3)
    assert got["mrr@3"] == pytest.approx(1 / 2)
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert got["ndcg@3"] == pytest.approx(dcg / idcg)
    assert (got["hit_rate@1"], got["hit_rate@3"]) == (0, 1)


def test_graded_ndcg_uses_grades_as_gains():
    got = _scores([Q("q", ["a", "b"], {"a": 3, "b": 1})], {"q": ["b", "a"]}, ["ndcg@2"], "run")["q"]
    dcg = 1 / math.log2(2) + 3 / math.log2(3)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert got["ndcg@2"] == pytest.approx(dcg / idcg)


def test_unanswerable_kept_out_and_empty_run_scores_zero():
    scores = _scores([Q("u", []), Q("q", ["d1"])], {"u": ["d1"], "q": []}, ["recall@5", "mrr@5"], "run")
    assert set(scores) == {"q"}
    assert scores["q"] == {"recall@5": 0.0, "mrr@5": 0.0}


def test_split_is_fixed_and_about_seventy_thirty():
    ids = [f"q{i}" for i in range(2000)]
    dev = sum(split_of(i) == "dev" for i in ids)
    assert 0.66 < dev / len(ids) < 0.74
    assert split_of("lab-001") == split_of("lab-001")


def test_identical_runs_compare_as_no_difference_and_gains_listed():
    qs = [Q(f"q{i}", [f"d{i}"]) for i in range(6)]
    names = ["recall@1"]
    base = {q.id: [q.relevant[0], "x"] if i % 2 else ["x", q.relevant[0]] for i, q in enumerate(qs)}
    same = dict(base)
    better = {q.id: [q.relevant[0]] for q in qs}
    better["q1"] = ["x"]  # q1 was right in the baseline and is lost here
    finals = {"base": base, "same": same, "better": better}
    per_q = {n: _scores(qs, f, names, n) for n, f in finals.items()}
    rows = compare(qs, [Config("base", {}), Config("same", {}), Config("better", {})], finals, per_q, names)
    same_row = next(r for r in rows if r["candidate"] == "same")
    assert (same_row["delta"], same_row["improved"], same_row["worsened"]) == (0, [], [])
    assert same_row["p_value"] == 1.0
    better_row = next(r for r in rows if r["candidate"] == "better")
    assert better_row["improved"] == ["q0", "q2", "q4"] and better_row["worsened"] == ["q1"]
    assert better_row["delta"] == pytest.approx(round(5 / 6 - 3 / 6, 4))
