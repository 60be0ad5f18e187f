"""Exports of an evaluation report: TREC run format, CSV, decision record (built from a constructed report)."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timezone

from helpers.reports import evaluation_report

from retrieval.offline import report as rep


def test_trec_run_format():
    text = rep.trec_run(evaluation_report(), "hybrid")
    lines = text.splitlines()
    assert lines == ["q1 Q0 d2 1 0.900000 hybrid", "q1 Q0 d5 2 0.100000 hybrid",
                     "q2 Q0 d3 1 0.800000 hybrid", "q2 Q0 d4 2 0.700000 hybrid"]
    assert all(re.fullmatch(r"\S+ Q0 \S+ \d+ -?\d+\.\d{6} \S+", line) for line in lines)
    assert text.endswith("\n")
    assert rep.trec_run({**evaluation_report(), "configs": {"a b": evaluation_report()["configs"]["dense"]}}, "a b").split()[5] == "a_b"


def test_comparison_csv_rows():
    rows = list(csv.DictReader(io.StringIO(rep.comparison_csv(evaluation_report()))))
    hybrid = next(r for r in rows if r["config"] == "hybrid" and r["metric"] == "ndcg@2")
    assert (hybrid["value"], hybrid["delta"], hybrid["p_value"], hybrid["lost_relevant"]) == ("0.7234", "0.1234", "0.0312", "1")
    assert hybrid["wins_on_mean_but_lost_relevant"] == "True"
    assert next(r for r in rows if r["config"] == "dense" and r["metric"] == "ndcg@2")["delta"] == ""


def test_question_rows_carry_the_lab_table():
    rows = rep.question_rows(evaluation_report(), "hybrid")
    assert rows[0]["relevant"] == "d1" and rows[0]["bm25 ranks"] == "d1@3" and rows[0]["dense ranks"] == "—"
    assert rows[0]["result"] == "ordering (reranker)" and rows[0]["evidence sent"] == "d2#0"


def test_decision_record_contains_the_figures():
    md = rep.decision_record(evaluation_report(), now=datetime(2026, 1, 2, tzinfo=timezone.utc))
    for needle in ("## Baseline", "`dense`", "ndcg@2 0.6000", "hybrid finds the codes dense misses", "## Intervention",
                   "0.7234 (+0.1234, p=0.0312*)", "## New failures", "`q1` lost `d1`",
                   "wins on the mean but loses evidence", "ordering:reranker 1", "1 are cut by the chunking",
                   "| `hybrid` | 2.5 | 3.0 | 12.5 / 40.0 |", "Provisional choice: **`hybrid`**",
                   "## Next hypothesis (not tested in this run)", "2026-01-02"):
        assert needle in md, needle
    assert "reranker" in md.split("## Next hypothesis")[1]  # hybrid's failures sit at the reranker


def test_decision_keeps_baseline_without_significance():
    r = evaluation_report()
    r["comparisons"][0]["p_value"] = 0.2
    assert rep.choose(r)["choice"] == "dense"


def test_write_outputs(tmp_path):
    paths = rep.write_outputs(evaluation_report(), tmp_path / "out")
    assert sorted(p.name for p in paths) == sorted(["report.json", "comparison.csv", "questions-dense.csv",
                                                    "questions-hybrid.csv", "dense.run", "hybrid.run", "decision.md"])


EVIL_IMG = "![x](http://evil/a.png)"
EVIL_SCRIPT = "<script>alert(1)</script>"
EVIL_LINK = "[y](http://evil/) a|b `c` **d**"


def test_decision_record_escapes_every_text_the_run_did_not_write() -> None:
    """Configuration names, question and document ids, groups, the corpus path, the hypothesis, settings, tenants
    and gold spans as attacker text: the downloaded decision.md renders them as text (no image, link, HTML or
    extra table cell), as the page does (retrieval.core.markdown)."""
    from markdown_it import MarkdownIt

    r = evaluation_report()
    base_cfg, cand_cfg = r["configs"]["dense"], r["configs"]["hybrid"]
    base, cand = f"dense {EVIL_IMG}", f"{EVIL_SCRIPT} {EVIL_LINK}"
    cand_cfg["settings"] = {"reranker_model": EVIL_IMG, "top_k": 2}
    for cfg in (base_cfg, cand_cfg):
        cfg["groups"] = {EVIL_SCRIPT: cfg["overall"]}
    r["configs"] = {base: base_cfg, cand: cand_cfg}
    comparison = r["comparisons"][0]
    comparison.update(baseline=base, candidate=cand, worsened=[EVIL_IMG, EVIL_SCRIPT],
                      lost_relevant=[{"id": EVIL_SCRIPT, "group": EVIL_SCRIPT, "lost": [EVIL_IMG, EVIL_LINK]}],
                      by_group={EVIL_SCRIPT: {"questions": 2, "delta": 0.1, "improved": [], "worsened": [EVIL_IMG]}})
    r["corpus"] = f"/data/{EVIL_IMG}/corpus.jsonl"
    r["split"] = EVIL_SCRIPT
    r["hypothesis"] = f"{EVIL_IMG}\n\n{EVIL_SCRIPT}"
    r["observed"] = [f"{cand} vs {base}: ndcg@2 +0.1234"]
    r["evidence_check"]["cut"] = [{"id": EVIL_IMG, "parent": EVIL_SCRIPT, "span": EVIL_LINK}]
    r["question_problems"] = {"questions": 2, "tenant_not_in_corpus": [{"id": EVIL_IMG, "tenant": EVIL_SCRIPT}],
                              "relevant_in_other_tenant": [{"id": EVIL_SCRIPT, "relevant": {EVIL_IMG: EVIL_LINK}}]}
    record = rep.decision_record(r, now=datetime(2026, 1, 2, tzinfo=timezone.utc))
    assert "Provisional choice: **`" in record and "## New failures" in record  # the candidate won, as before
    html = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(record)
    assert "<img" not in html and "<a " not in html and "<script" not in html and "<strong>d" not in html
    import html as html_lib

    text = html_lib.unescape(html)
    for attack in (EVIL_IMG, EVIL_SCRIPT):  # shown as written, not dropped
        assert attack in text
    tables = re.findall(r"<table>(.*?)</table>", html, re.S)
    assert len(tables) == 4
    for table in tables:  # a pipe in a name adds no cell
        head, *rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
        assert rows and all(row.count("<td") == head.count("<th") for row in rows), table
    titled = rep.decision_record(r, title=EVIL_IMG)
    assert titled.startswith("# ") and "<img" not in MarkdownIt("commonmark").render(titled.splitlines()[0])
    assert rep.choose(r)["why"].endswith(f"over {base} (p=0.0312)")  # the page's sentence is unchanged
