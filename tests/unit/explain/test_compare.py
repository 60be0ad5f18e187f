"""Two-configuration comparison (Jaccard@k, RBO by hand) and hand judgments written to the project's files."""

from __future__ import annotations

import json

import pytest

from retrieval.ingest.corpus import load_questions
from retrieval.explain import compare
from retrieval.offline import judgments
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict


def test_rbo_by_hand_equal_lengths() -> None:
    # X_1 = 1, X_2 = 1, X_3 = 3: (1-p)/p · (1·0.9 + 1/2·0.81 + 3/3·0.729) + 3/3 · 0.729
    expected = (0.1 / 0.9) * (0.9 + 0.405 + 0.729) + 0.729
    assert compare.rbo(["a", "b", "c"], ["a", "c", "b"], p=0.9) == pytest.approx(expected)
    assert expected == pytest.approx(0.955, abs=1e-3)
    assert compare.rbo(["a", "b", "c"], ["a", "b", "c"]) == pytest.approx(1.0)
    assert compare.rbo(["a", "b"], ["c", "d"]) == pytest.approx(0.0)


def test_rbo_uneven_lengths_eq_32() -> None:
    # S = [a], L = [b, a], p = 0.5: s = 1, l = 2, X_1 = 0, X_2 = 1, X_s = 0.
    # (1-p)/p · (0/1·0.5 + 1/2·0.25 + 0) + ((1 - 0)/2 + 0/1) · 0.25 = 0.125 + 0.125 = 0.25
    assert compare.rbo(["a"], ["b", "a"], p=0.5) == pytest.approx(0.25)
    # S = [a], L = [a, b], p = 0.5: X_1 = 1, X_2 = 1, X_s = 1.
    # 1 · (1·0.5 + 1/2·0.25 + 1·1/2·0.25) + ((1-1)/2 + 1) · 0.25 = 0.75 + 0.25 = 1.0 (the short list agrees)
    assert compare.rbo(["a"], ["a", "b"], p=0.5) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        compare.rbo(["a", "a"], ["a"])


def test_jaccard_and_movement() -> None:
    assert compare.jaccard_at_k(["a", "b", "c"], ["b", "d", "a"], 2) == pytest.approx(1 / 3)
    assert compare.jaccard_at_k([], [], 3) == 1.0
    rows = compare.rank_movement(["a", "b"], ["b", "c"])
    assert rows == [{"id": "a", "rank_a": 1, "rank_b": None, "move": None},
                    {"id": "b", "rank_a": 2, "rank_b": 1, "move": 1},
                    {"id": "c", "rank_a": None, "rank_b": 2, "move": None}]


def test_compare_report_configs_per_question_deltas() -> None:
    report = {"configs": {
        "dense": {"questions": [{"id": "q1", "group": "g", "metrics": {"ndcg@5": 0.5}, "layer": "ok"},
                                {"id": "q2", "group": "g", "metrics": {"ndcg@5": 1.0}, "layer": "ok"}]},
        "hybrid": {"questions": [{"id": "q1", "group": "g", "metrics": {"ndcg@5": 1.0}, "layer": "ok"},
                                 {"id": "q2", "group": "g", "metrics": {"ndcg@5": 0.25}, "layer": "ordering"}]}}}
    out = compare.compare_report_configs(report, "dense", "hybrid", "ndcg@5")
    assert [(r["id"], r["delta"]) for r in out["rows"]] == [("q2", -0.75), ("q1", 0.5)]
    assert out["improved"] == 1 and out["worsened"] == 1 and out["tied"] == 0
    assert out["mean_delta"] == pytest.approx(-0.125)


TRACE = {
    "lexical": {"items": [{"chunk_id": "p1#0", "parent_id": "p1", "rank": 1, "score": 3.0},
                          {"chunk_id": "p2#1", "parent_id": "p2", "rank": 2, "score": 2.0}]},
    "dense": {"items": [{"chunk_id": "p3#0", "parent_id": "p3", "rank": 1, "score": 0.9},
                        {"chunk_id": "p2#0", "parent_id": "p2", "rank": 2, "score": 0.8}]},
    "fused": {"items": []}, "reranked": {"items": []},
    "final": [{"chunk_id": "p1#0", "parent_id": "p1", "rank": 1, "score": 0.03}],
}


def test_pool_holds_every_list_not_only_the_final() -> None:
    pooled = judgments.pool(view(TRACE))
    assert [p["parent_id"] for p in pooled] == ["p1", "p3", "p2"]
    assert pooled[2]["chunk_ids"] == ["p2#1", "p2#0"] and pooled[2]["lists"] == {"lexical": 2, "dense": 2}
    assert judgments.counter(pooled, {"p3": 0}) == (1, 3)


def test_pool_names_the_place_of_the_chunk_a_judge_reads() -> None:
    dense = {"items": [{"chunk_id": "p3#0", "parent_id": "p3", "rank": 1, "score": 0.9, "page": 4, "page_end": 5,
                        "section": "Capítulo I › Seção II"},
                       {"chunk_id": "p2#0", "parent_id": "p2", "rank": 2, "score": 0.8, "page": 9}]}
    pooled = {p["parent_id"]: p for p in judgments.pool(view({**TRACE, "dense": dense}))}
    assert pooled["p3"]["where"] == {"section": "Capítulo I › Seção II", "page": 4, "page_end": 5}
    assert pooled["p2"]["chunk_ids"][0] == "p2#1" and pooled["p2"]["where"] == {}  # its first chunk's: none
    assert pooled["p1"]["where"] == {}


def test_save_jsonl_creates_the_question_and_keeps_the_others(tmp_path) -> None:
    path = tmp_path / "questions.jsonl"
    other = '{"id": "q-other", "question": "Outra?", "relevant": ["x"], "graded": {"x": 2}, "filters": {}}'
    path.write_text(other + "\n", encoding="utf-8")
    qid = judgments.save(path, "Como ativar o PX-7?", {"p1": 3, "p2": 0, "p3": 1}, {"tenant": "lumen"})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == other
    rec = json.loads(lines[1])
    assert rec["id"] == qid and rec["graded"] == {"p1": 3, "p2": 0, "p3": 1} and rec["relevant"] == ["p1", "p3"]
    assert rec["filters"] == {"tenant": "lumen"}
    # the file stays a valid question set the evaluation reads
    loaded = {q.id: q for q in load_questions(str(path))}
    assert loaded[qid].relevant == ("p1", "p3") and loaded["q-other"].graded == {"x": 2}
    # re-judging replaces this question's grades only (p3 un-judged), and finds it by text + filters
    assert judgments.save(path, "Como ativar o PX-7?", {"p1": 2}, {"tenant": "lumen"}) == qid
    assert judgments.load(path, "Como ativar o PX-7?", {"tenant": "lumen"}) == {"p1": 2}
    assert judgments.load(path, "Como ativar o PX-7?", {"tenant": "ventura"}) == {}
    assert path.read_text(encoding="utf-8").splitlines()[0] == other
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_save_qrels_replaces_one_topic(tmp_path) -> None:
    path = tmp_path / "judged.qrels"
    path.write_text("t1 0 d1 1\nt2 0 d9 3\n", encoding="utf-8")
    judgments.save(path, "ignored text", {"d2": 2, "d3": 0}, qid="t1")
    assert path.read_text().splitlines() == ["t2 0 d9 3", "t1 0 d2 2", "t1 0 d3 0"]
    assert judgments.load(path, "x", qid="t1") == {"d2": 2, "d3": 0}


def test_bad_grade_and_bad_file_write_nothing(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(ValueError):
        judgments.save(tmp_path / "x.jsonl", "q", {"p": 4})
    from retrieval.core.errors import CorpusError

    with pytest.raises(CorpusError):
        judgments.save(path, "q", {"p": 1})
    assert path.read_text() == "not json\n"
