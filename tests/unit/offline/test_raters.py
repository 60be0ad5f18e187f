"""Judging for a team: ratings with their rater and note, kappa computed by hand, the disagreement queue, the
consensus, judgments imported from elsewhere kept beside the team's."""

from __future__ import annotations

import threading

import pytest

from retrieval.core.errors import CorpusError
from retrieval.offline import judgments
from retrieval.offline.raters import Rating, agreement, consensus, import_judgments, load_ratings, save_ratings

A = [("q1", "d1", 1), ("q1", "d2", 1), ("q2", "d1", 0), ("q2", "d3", 0)]
B = [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d1", 0), ("q2", "d3", 0)]


def ratings(rows, rater, note=""):
    return [Rating(q, f"pergunta {q}", p, g, rater, note) for q, p, g in rows]


def test_two_raters_give_the_kappa_computed_by_hand(tmp_path) -> None:
    path = tmp_path / "ratings.jsonl"
    save_ratings(path, ratings(A, "ana"))
    save_ratings(path, ratings(B, "bruno", "não responde"))
    found = agreement(load_ratings(path))
    # observed 3/4; by chance ana 1 = 1/2, bruno 1 = 1/4: 1/2·1/4 + 1/2·3/4 = 1/2; κ = (3/4 − 1/2) / (1 − 1/2)
    assert found["cohen"] == [{"a": "ana", "b": "bruno", "pairs": 4, "kappa": 0.5}]
    # Fleiss: P̄ = 3/4, P̄e = (5/8)² + (3/8)² = 34/64; κ = (3/4 − 34/64) / (1 − 34/64) = 0.4667
    assert found["fleiss"] == {"pairs": 4, "kappa": pytest.approx(0.4667, abs=1e-4)}
    assert found["disagreements"] == [{"qid": "q1", "parent": "d2", "grades": {"ana": 1, "bruno": 0},
                                       "notes": {"bruno": "não responde"}, "spread": 1}]
    assert consensus(load_ratings(path))["q1"]["graded"] == {"d1": 1, "d2": 0}  # median low of 1 and 0
    assert consensus(load_ratings(path))["q1"]["raters"]["d2"] == ["ana", "bruno"]


def test_a_raters_new_grade_replaces_their_old_one_and_two_savers_lose_nothing(tmp_path) -> None:
    path = tmp_path / "ratings.jsonl"
    save_ratings(path, ratings(A, "ana"))
    save_ratings(path, [Rating("q1", "pergunta q1", "d2", 3, "ana", "mudei de ideia")])
    mine = {r.pair: r for r in load_ratings(path) if r.rater == "ana"}
    assert len(mine) == 4 and mine[("q1", "d2")].grade == 3 and mine[("q1", "d2")].note == "mudei de ideia"
    threads = [threading.Thread(target=save_ratings, args=(path, ratings([(f"t{i}", "d", i % 4)], f"r{i}")))
               for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert {r.rater for r in load_ratings(path)} == {"ana", *(f"r{i}" for i in range(8))}
    with pytest.raises(ValueError, match="0-3"):
        save_ratings(path, [Rating("q", "", "d", 4, "ana")])
    with pytest.raises(ValueError, match="rater"):
        save_ratings(path, [Rating("q", "", "d", 1, " ")])


def test_imported_qrels_sit_beside_the_pages_grades_with_their_source(tmp_path) -> None:
    qrels = tmp_path / "vendor.qrels"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 0\n", encoding="utf-8")
    page = tmp_path / "judgments.jsonl"
    judgments.save(page, "pergunta q1", {"d1": 3, "d3": 1}, qid="q1")
    both = import_judgments(qrels) + import_judgments(page, rater="page")
    assert sorted((r.rater, r.parent, r.grade, r.source) for r in both) == [
        ("page", "d1", 3, str(page)), ("page", "d3", 1, str(page)),
        ("vendor", "d1", 2, str(qrels)), ("vendor", "d2", 0, str(qrels))]
    merged = consensus(both)["q1"]
    assert merged["graded"] == {"d1": 2, "d2": 0, "d3": 1} and merged["raters"]["d1"] == ["page", "vendor"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "q", "parent": "d", "grade": 9, "rater": "x"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match="bad.jsonl:1"):
        load_ratings(bad)
