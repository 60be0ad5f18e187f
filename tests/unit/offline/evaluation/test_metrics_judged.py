"""judged@k (retrieval.offline.evaluation.metrics.judged_share) on a case computed by hand, and its place in the report."""

from __future__ import annotations

import pytest

from retrieval.offline.evaluation.metrics import aggregate, judged_share
from retrieval.offline.report import question_rows


def test_judged_share_by_hand():
    # Parent ranking a, b, c, d (the second "a" is read at its best rank and dropped); judged: a (relevant),
    # c (graded 0: judged not relevant). Top 3 = a, b, c → 2 of 3 judged, b unjudged.
    share, unjudged = judged_share(["a", "b", "a", "c", "d"], {"a", "c"}, 3)
    assert share == pytest.approx(2 / 3)
    assert unjudged == ["b"]
    # A list shorter than k is read over its own length: a, b → 1 of 2.
    assert judged_share(["a", "b"], {"a"}, 10) == (pytest.approx(1 / 2), ["b"])
    assert judged_share([], {"a"}, 10) == (None, [])
    with pytest.raises(ValueError):
        judged_share(["a"], {"a"}, 0)


def test_judged_is_averaged_in_the_aggregate_and_listed_per_question():
    rows = [{"id": "q1", "relevant": ["a"], "abstained": False, "judged": {"k": 10, "share": 1.0, "unjudged": []}},
            {"id": "q2", "relevant": ["a"], "abstained": False,
             "judged": {"k": 10, "share": 0.5, "unjudged": ["x", "y"]}},
            {"id": "q3", "relevant": [], "abstained": True, "judged": {"k": 10, "share": None, "unjudged": []}}]
    out = aggregate(rows, {}, [])
    assert out["judged@10"] == pytest.approx((1.0 + 0.5) / 2)
    report = {"k": [10], "configs": {"c": {"questions": [
        {**rows[1], "group": "g", "question": "?", "ranked": ["a", "x", "y"], "first_relevant_rank": 1,
         "layer": "ok", "stage": None}]}}}
    assert question_rows(report, "c")[0]["unjudged"] == "x y"
