"""Metrics (through ranx) on tiny cases computed by hand, the split, and the comparison bookkeeping."""

from __future__ import annotations

import math

import pytest

from retrieval.core.split import split_of
from retrieval.core.types import Question
from retrieval.offline.evaluation import Config, compare
from retrieval.offline.evaluation import scores as _scores


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


def test_rankings_of_any_source_are_scored_by_the_same_code():
    """The judge's training report reads its orders through ranking_scores: the same ranx values as an
    evaluation's, keyed by the caller (two corpora may share a question id), each parent at its best rank."""
    from retrieval.offline.evaluation.metrics import ranking_scores

    grades = {"0": {"a": 3, "b": 1}, "1": {"c": 1}}
    got = ranking_scores(grades, {"0": ["b", "b", "a", "z"], "1": []}, ["ndcg@10", "recall@10", "mrr@10"], "rrf")
    dcg = 1 / math.log2(2) + 3 / math.log2(3)  # b at rank 1, a at rank 2 (the second b read at its best rank)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert got["0"]["ndcg@10"] == pytest.approx(dcg / idcg)
    assert (got["0"]["recall@10"], got["0"]["mrr@10"]) == (1.0, 1.0)
    assert got["1"] == {"ndcg@10": 0.0, "recall@10": 0.0, "mrr@10": 0.0}  # nothing ranked
    same = _scores([Q("q", ["a", "b"], {"a": 3, "b": 1})], {"q": ["b", "b", "a", "z"]}, ["ndcg@10"], "run")["q"]
    assert same["ndcg@10"] == got["0"]["ndcg@10"]


def test_the_declared_metrics_and_the_lists_they_make():
    from retrieval.offline.evaluation import metrics

    assert metrics.METRICS.names() == ("ndcg", "recall", "precision", "mrr", "hit_rate")
    assert metrics.metric_names([1, 10])[:5] == ["ndcg@1", "recall@1", "precision@1", "mrr@1", "hit_rate@1"]
    assert metrics.headline(10) == ["ndcg@10", "recall@10", "mrr@10", "hit_rate@10", "precision@10"]
    assert metrics.brief(5) == ["ndcg@5", "recall@5", "mrr@5"]
    assert metrics.warm_metrics()[:5] == ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "recall@1"]
    assert len(metrics.warm_metrics()) == 20
    assert metrics.label("hit_rate@10", "pt") == "taxa de acerto@10" and metrics.label("mrr@3") == "MRR@3"
    assert metrics.label("judged@10") == "judged@10"  # not a declared metric: as it is
    assert metrics.describe("recall@10") == "the share of the relevant parents found in the top k"
    assert metrics.describe("abstention_accuracy") == ""


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


def test_hit_rate_precision_and_mrr_cut_at_k():
    names = ["hit_rate@1", "hit_rate@2", "precision@5", "mrr@2", "mrr@5", "recall@2"]
    got = _scores([Q("q", ["d4", "d9"])], {"q": ["d1", "d2", "d3", "d4"]}, names, "run")["q"]
    assert (got["hit_rate@1"], got["hit_rate@2"]) == (0, 0)
    assert got["precision@5"] == pytest.approx(1 / 5)  # one relevant in the top 5, divided by k (not by 4 items)
    assert got["mrr@2"] == 0 and got["mrr@5"] == pytest.approx(1 / 4)
    assert got["recall@2"] == 0


def test_abstention_accuracy_counts_both_sides():
    from retrieval.offline.evaluation import aggregate as _aggregate

    rows = [{"id": "u1", "relevant": [], "abstained": True}, {"id": "u2", "relevant": [], "abstained": False},
            {"id": "a1", "relevant": ["d"], "abstained": False}, {"id": "a2", "relevant": ["d"], "abstained": True}]
    per_q = {"a1": {"recall@1": 1.0}, "a2": {"recall@1": 0.0}}
    out = _aggregate(rows, per_q, ["recall@1"])
    assert out["abstention_accuracy"] == pytest.approx((1 + 0 + 1 + 0) / 4)
    assert out["recall@1"] == pytest.approx((1.0 + 0.0) / 2) and out["answerable"] == 2


def test_gains_losses_by_group_and_lost_relevant_on_a_constructed_pair():
    qs = [Q("a", ["d1", "d2"], group="code"), Q("b", ["d3"], group="code"), Q("c", ["d5"], group="para"),
          Q("u", [], group="none")]
    base = {"a": ["d1", "x", "y"], "b": ["x", "d3", "y"], "c": ["x", "y", "z"], "u": ["x"]}
    cand = {"a": ["d2", "x", "y"], "b": ["d3", "x", "y"], "c": ["d5", "x", "y"], "u": ["x"]}
    names = ["recall@3", "mrr@3"]
    per_q = {"base": _scores(qs, base, names, "base"), "cand": _scores(qs, cand, names, "cand")}
    rows = compare(qs, [Config("base", {}), Config("cand", {})], {"base": base, "cand": cand}, per_q, names)
    mrr = next(r for r in rows if r["metric"] == "mrr@3")
    # a: 1 → 1 (d2 replaces d1 at rank 1); b: 1/2 → 1; c: 0 → 1.
    assert mrr["delta"] == pytest.approx(round((1 + 1 + 1) / 3 - (1 + 1 / 2 + 0) / 3, 4))
    assert mrr["improved"] == ["b", "c"] and mrr["worsened"] == []
    assert mrr["by_group"]["code"]["improved"] == ["b"] and mrr["by_group"]["para"]["improved"] == ["c"]
    assert mrr["by_group"]["code"]["delta"] == pytest.approx(round(((1 - 1) + (1 - 1 / 2)) / 2, 4))
    # The candidate wins on the mean but drops d1, which the baseline had in its top 3.
    assert mrr["lost_relevant"] == [{"id": "a", "group": "code", "lost": ["d1"]}]
    assert mrr["wins_on_mean_but_lost_relevant"] is True
    recall = next(r for r in rows if r["metric"] == "recall@3")
    assert recall["worsened"] == [] and recall["improved"] == ["c"]  # a: 1/2 → 1/2, no change in recall


def test_a_config_file_entry_whose_settings_are_not_an_object_is_refused():
    import pytest

    from retrieval.offline.evaluation import resolve_configs
    from retrieval.settings import Settings

    for bad in ("x", [1, 2], 3):
        with pytest.raises(ValueError, match="'settings' must be an object"):
            resolve_configs([], Settings(_env_file=None), [{"name": "c", "settings": bad}])
