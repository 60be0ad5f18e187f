"""Runs of another engine: read from TREC or JSONL, scored beside the configs to values computed by hand, their
unknown ids named; the release gate on a planted regression and without it, and its JUnit report."""

from __future__ import annotations

import math
from xml.etree import ElementTree

import pytest

from retrieval.core.errors import CorpusError
from retrieval.offline.evaluation import Config, evaluate_configs
from retrieval.offline.release import ReleaseRule, check, junit_xml, per_query_csv
from retrieval.offline.runs import load_run
from retrieval.settings import Settings

from helpers.runner import DOCS, FakeBench, Q

QUESTIONS = [Q("q1", ["a1"], {"tenant": "lumen"}), Q("q2", ["a2"], {"tenant": "lumen"}),
             Q("q3", ["b1"], {"tenant": "lumen"})]


def evaluate(*runs):
    bench = FakeBench(DOCS)  # ranks a1, a2 for every question
    return evaluate_configs(lambda s: bench, Settings(_env_file=None), QUESTIONS, [Config("base", {"dedup": "chunk"})],
                            ks=(1, 3, 10), share_lists=False, imported=list(runs))


def test_a_trec_run_is_ordered_by_score_and_a_jsonl_run_by_its_list(tmp_path) -> None:
    trec = tmp_path / "engine.trec"
    trec.write_text("q1 Q0 a2 1 3.0 es\nq1 Q0 a1 2 9.5 es\nq2 Q0 a1#1 1 2 es\n", encoding="utf-8")
    run = load_run(trec)
    assert run.name == "engine" and run.format == "trec"
    assert run.rankings == {"q1": ("a1", "a2"), "q2": ("a1#1",)}
    jsonl = tmp_path / "other.jsonl"
    jsonl.write_text('{"id": "q1", "ranking": ["a2", "a1"]}\n', encoding="utf-8")
    assert load_run(jsonl, "vendor").rankings == {"q1": ("a2", "a1")}
    for text, message in [("q1 Q0 a1 1\n", "six fields"), ("q1 Q0 a1 x 1.0 t\n", "numbers"),
                          ("q1 Q0 a1 1 nan t\n", "finite"), ('{"id": "q1"}\n', "ranking"),
                          ('{"id": "q1", "ranking": []}\n{"id": "q1", "ranking": []}\n', "twice"), ("\n", "empty")]:
        with pytest.raises(CorpusError, match=message):
            load_run(tmp_path / "bad.run", text=text)


def test_an_imported_run_is_scored_to_the_values_computed_by_hand(tmp_path) -> None:
    path = tmp_path / "bm25-elsewhere.trec"
    # q1: a1 (relevant) first; q2: the relevant a2 third, after an id no document has; q3: b1 (relevant) absent.
    path.write_text("q1 Q0 a1#0 1 10 x\nq1 Q0 a2 2 9 x\n"
                    "q2 Q0 a1 1 10 x\nq2 Q0 nowhere-7 2 9 x\nq2 Q0 a2#1 3 8 x\n", encoding="utf-8")
    report = evaluate(load_run(path))
    entry = report["configs"]["bm25-elsewhere"]
    rows = {r["id"]: r for r in entry["questions"]}
    assert rows["q1"]["ranked"] == ["a1", "a2"] and rows["q2"]["ranked"] == ["a1", "nowhere-7", "a2"]
    assert rows["q1"]["metrics"]["ndcg@10"] == 1.0
    assert rows["q2"]["metrics"]["ndcg@10"] == pytest.approx(1 / math.log2(4))
    assert rows["q2"]["metrics"]["mrr@10"] == pytest.approx(1 / 3) and rows["q3"]["metrics"]["ndcg@10"] == 0.0
    assert entry["overall"]["mrr@10"] == pytest.approx((1 + 1 / 3 + 0) / 3, abs=1e-4)
    assert entry["imported"]["not_in_corpus"] == {"q2": ["nowhere-7"]} and entry["imported"]["unanswered"] == ["q3"]
    assert [rows[q]["layer"] for q in ("q1", "q2", "q3")] == ["ok", "ok", "coverage"]
    assert rows["q2"]["judged"]["unjudged"] == ["a1", "nowhere-7"]
    # Compared with the baseline like any configuration (the fake bench ranks a1, a2 everywhere).
    (row,) = [c for c in report["comparisons"] if c["metric"] == "ndcg@10"]
    assert row["candidate"] == "bm25-elsewhere" and row["baseline"] == "base"
    assert row["delta"] == pytest.approx(round(entry["overall"]["ndcg@10"] - report["configs"]["base"]["overall"]
                                               ["ndcg@10"], 4))


def test_the_release_gate_fails_on_a_planted_regression_and_passes_without_it(tmp_path) -> None:
    same = tmp_path / "same.trec"
    same.write_text("".join(f"{q} Q0 a1 1 2 s\n{q} Q0 a2 2 1 s\n" for q in ("q1", "q2", "q3")), encoding="utf-8")
    worse = tmp_path / "worse.trec"  # a1 gone from q1's list: a relevant document the baseline had is lost
    worse.write_text("q1 Q0 a2 1 2 w\nq2 Q0 a1 1 2 w\nq2 Q0 a2 2 1 w\nq3 Q0 a1 1 2 w\n", encoding="utf-8")
    rule = ReleaseRule.parse("ndcg@10,drop=0.01,lost=0")
    passed = check(evaluate(load_run(same)), rule)
    assert [(c.candidate, c.condition, c.passed) for c in passed] == [("same", "drop", True), ("same", "lost", True)]
    report = evaluate(load_run(worse))
    failed = check(report, rule)
    assert [(c.condition, c.passed) for c in failed] == [("drop", True), ("lost", False)]  # 3 questions: p ≥ 0.05
    assert failed[1].reason.text() == ("worse: 1 questions lost a relevant document the baseline had in its top 10 "
                                       "(q1); at most 0 allowed")
    xml = ElementTree.fromstring(junit_xml(failed, rule))
    assert xml.get("tests") == "2" and xml.get("failures") == "1"
    assert [c.get("name") for c in xml.iter("testcase")] == ["drop", "lost"]
    assert per_query_csv(report, rule).splitlines()[1] == "q1,worse,1.0,0.0,-1.0,a1"
    with pytest.raises(ValueError, match="unknown part"):
        ReleaseRule.parse("ndcg@10,drops=1")
    with pytest.raises(ValueError, match="computed no 'ndcg@20'"):
        check(report, ReleaseRule.parse("ndcg@20"))
