"""How the evaluation reads its lists and its labels: each parent once at its best rank (with ``dedup=chunk``
a repeated parent kept its LAST rank: ``mrr@3`` 1/3 instead of 1 for a relevant parent at ranks 1 and 4), the
same in the metrics, the significance tests and the exports; and the questions whose labels no retrieval can
satisfy counted and listed instead of silently scoring 0."""

from __future__ import annotations

import json

import pytest

from retrieval.core.types import Document, Question
from retrieval.offline.evaluation import Config, compare, evaluate_configs
from retrieval.offline.evaluation import scores as _scores
from retrieval.offline.evaluation.metrics import best_positions, parent_ranking, parent_run
from retrieval.offline import summaries
from retrieval.offline.report import decision_record, trec_run
from retrieval.settings import Settings

from helpers.runner import DOCS, FakeBench, Q


# -- one parent ranking --------------------------------------------------------------------------------------
def test_each_parent_is_read_once_at_its_best_rank():
    assert best_positions(["a", "b", "a", "c", "b"]) == [0, 1, 3]
    assert parent_ranking(["a", "b", "a", "c", "b"]) == ["a", "b", "c"]
    assert parent_run([Q("q", ["a"]), Q("u", [])], {"q": ["a", "b", "a"], "u": ["a"]}) == {"q": {"a": 2.0, "b": 1.0}}
    assert parent_run([Q("q", ["a"])], {}) == {"q": {"__none__": 0.0}}


def test_dedup_chunk_metrics_by_hand():
    """The final chunks a#0, b#0, c#0, a#1 (dedup=chunk): the parents a, b, c, a; a is relevant."""
    got = _scores([Q("q", ["a"])], {"q": ["a", "b", "c", "a"]}, ["mrr@3", "recall@3", "precision@3", "ndcg@3",
                                                                 "hit_rate@1"], "run")["q"]
    assert got["mrr@3"] == 1.0  # 1/1: a at rank 1 (its second chunk, rank 4, overwrote it: 1/3)
    assert got["recall@3"] == 1.0 and got["hit_rate@1"] == 1.0 and got["ndcg@3"] == 1.0
    assert got["precision@3"] == pytest.approx(1 / 3)  # a, b, c: one relevant of three parents


def test_the_significance_test_reads_the_same_parent_ranking():
    qs = [Q(f"q{i}", [f"d{i}"]) for i in range(6)]
    names = ["mrr@3"]
    chunky = {q.id: [q.relevant[0], "x", "y", q.relevant[0]] for q in qs}  # dedup=chunk: the parent repeats
    plain = {q.id: [q.relevant[0], "x", "y"] for q in qs}
    per_q = {"chunk": _scores(qs, chunky, names, "chunk"), "parent": _scores(qs, plain, names, "parent")}
    assert all(v["mrr@3"] == 1.0 for v in per_q["chunk"].values())
    rows = compare(qs, [Config("chunk", {}), Config("parent", {})], {"chunk": chunky, "parent": plain}, per_q, names)
    assert (rows[0]["delta"], rows[0]["p_value"], rows[0]["improved"], rows[0]["worsened"]) == (0, 1.0, [], [])
    assert rows[0]["lost_relevant"] == []


def _report(questions, docs=DOCS, tenants=None):
    bench = FakeBench(docs)
    return evaluate_configs(lambda s: bench, Settings(_env_file=None), questions,
                            [Config("base", {"dedup": "chunk"}), Config("other", {"dedup": "chunk", "top_k": 3})],
                            ks=(1, 3), share_lists=False, tenants=tenants)


def test_the_runner_metrics_rows_and_trec_run_read_each_parent_once():
    report = _report([Q("q1", ["a1"], {"tenant": "lumen"}), Q("q2", ["a2"], {"tenant": "lumen"})])
    base = report["configs"]["base"]
    row = base["questions"][0]
    assert row["ranked"] == ["a1", "a2"] and row["scores"] == [0.9, 0.8]  # a1's second chunk (0.7) dropped
    assert row["metrics"]["mrr@3"] == 1.0 and base["questions"][1]["metrics"]["mrr@3"] == 0.5
    assert base["overall"]["mrr@3"] == pytest.approx(0.75)
    assert trec_run(report, "base").splitlines()[:2] == ["q1 Q0 a1 1 0.900000 base", "q1 Q0 a2 2 0.800000 base"]
    assert len(trec_run(report, "base").splitlines()) == 4
    assert report["question_problems"] == {"questions": 0, "tenant_not_in_corpus": [],
                                           "relevant_not_in_corpus": [], "relevant_in_other_tenant": []}


def test_questions_whose_labels_cannot_be_met_are_counted_and_listed():
    questions = [Q("ok", ["a1"], {"tenant": "lumen"}),
                 Q("typo", ["a1"], {"tenant": "lumem"}),  # no such tenant
                 Q("gone", ["a1", "zz"], {"tenant": "lumen"}),  # zz is no document
                 Q("elsewhere", ["b1"], {"tenant": "lumen"}),  # b1 is ventura's
                 Q("abstain", [], {"tenant": "lumen"})]
    report = _report(questions)
    problems = report["question_problems"]
    assert problems["questions"] == 3
    assert problems["tenant_not_in_corpus"] == [{"id": "typo", "tenant": "lumem"}]
    assert problems["relevant_not_in_corpus"] == [{"id": "gone", "relevant": ["zz"]}]
    assert problems["relevant_in_other_tenant"] == [
        {"id": "typo", "tenant": "lumem", "relevant": {"a1": "lumen"}},
        {"id": "elsewhere", "tenant": "lumen", "relevant": {"b1": "ventura"}}]
    # Their scoring is left as labeled: b1 is never found, so 0; the typo's a1 is found by this fake bench.
    rows = {r["id"]: r for r in report["configs"]["base"]["questions"]}
    assert rows["elsewhere"]["metrics"]["mrr@3"] == 0.0 and rows["gone"]["metrics"]["recall@3"] == 0.5
    out = summaries.evaluation(report, "all").splitlines()
    at = out.index("questions with problems: 3 (scored as labeled; no configuration can find their relevant "
                   "documents, so each counts 0 there)")
    assert out[at + 1:at + 4] == ["  tenant not in the corpus: 1: typo ('lumem')",
                                  "  relevant id not in the corpus: 1: gone (zz)",
                                  "  relevant document in another tenant: 2: typo (a1 in 'lumen'); elsewhere "
                                  "(b1 in 'ventura')"]
    assert "Questions with problems: 3" in decision_record(report)


def test_under_a_policy_another_tenants_document_reads_as_an_id_not_in_the_corpus():
    """A Lumen user's questions that list Ventura's b1 (with a span of its text): the label checks see Lumen's
    documents only, so the report is the one of a corpus without Ventura: b1 is "not in the corpus", its span
    is in no relevant parent, and no line names Ventura. Without a policy (the CLI) the owner is still named."""
    questions = [Question("elsewhere", "?", "g", ("b1",), {"tenant": "lumen"}, answers=("ativado em 48 horas",)),
                 Q("gone", ["zz"], {"tenant": "lumen"}), Q("ok", ["a1"], {"tenant": "lumen"})]
    lumen_only = [d for d in DOCS if d.metadata["tenant"] == "lumen"]
    scoped = _report(questions, tenants=frozenset({"lumen"}))
    alone = _report(questions, docs=lumen_only, tenants=frozenset({"lumen"}))
    for key in ("question_problems", "evidence_check"):
        assert scoped[key] == alone[key] == _report(questions, docs=lumen_only)[key]
    assert [r["evidence_cut"] for r in scoped["configs"]["base"]["questions"]] == \
        [r["evidence_cut"] for r in alone["configs"]["base"]["questions"]]
    problems = scoped["question_problems"]
    assert problems["relevant_in_other_tenant"] == [] and problems["tenant_not_in_corpus"] == []
    assert problems["relevant_not_in_corpus"] == [{"id": "elsewhere", "relevant": ["b1"]},
                                                  {"id": "gone", "relevant": ["zz"]}]
    assert scoped["evidence_check"]["not_in_parent"] == [{"id": "elsewhere", "parents": ["b1"],
                                                          "span": "ativado em 48 horas"}]
    from retrieval.offline.report_html import evaluation_report

    for text in (json.dumps(scoped, ensure_ascii=False), decision_record(scoped), evaluation_report(scoped, "en")):
        assert "ventura" not in text.lower() and "VX-2" not in text
    # Single-user mode (no tenants given): today's report, which names the owner and finds the span.
    whole = _report(questions)
    assert whole["question_problems"]["relevant_in_other_tenant"] == [
        {"id": "elsewhere", "tenant": "lumen", "relevant": {"b1": "ventura"}}]
    assert whole["evidence_check"]["whole"] == 1 and whole["evidence_check"]["not_in_parent"] == []


def test_a_corpus_without_tenants_is_read_whole_under_a_policy():
    docs = [Document(d.id, d.title, d.text, {}) for d in DOCS]
    questions = [Q("q", ["b1"])]
    assert _report(questions, docs=docs, tenants=frozenset({"lumen"}))["question_problems"] == \
        _report(questions, docs=docs)["question_problems"]
