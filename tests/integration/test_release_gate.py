"""`eval --run … --gate …` on the lab set: another engine's run (here the workbench's own BM25 run, written by
a first `eval --out` as a TREC file, as any engine would write it) passes the gate against the same
configuration; a planted regression (that run with each held-out question's first parent removed) fails it with
exit code 1, a FAIL line, and a JUnit report and per-question CSV a CI job reads."""

from __future__ import annotations

from xml.etree import ElementTree

from helpers.paths import ROOT

from helpers.cli import run

LAB = ROOT / "data" / "lab"


def test_the_gate_passes_the_same_ranking_and_fails_a_planted_regression(lab_bench, chroma_dir, tmp_path) -> None:
    env = {"RETRIEVAL_CHROMA_PATH": str(chroma_dir)}
    common = ["eval", "--corpus", str(LAB / "corpus.jsonl"), "--questions", str(LAB / "questions.jsonl"),
              "--configs", "bm25", "--split", "heldout", "--k", "1,5,10"]
    first = run(*common, "--out", str(tmp_path / "first"), env_extra=env)
    assert first.returncode == 0, first.stderr[-2000:]
    own = (tmp_path / "first" / "bm25.run").read_text(encoding="utf-8").splitlines()
    assert own
    planted, dropped = [], set()
    for line in own:
        qid, _, doc, rank, *_ = line.split()
        if rank == "1":
            dropped.add(qid)
            continue
        planted.append(line)
    (tmp_path / "planted.trec").write_text("\n".join(planted) + "\n", encoding="utf-8")

    same = run(*common, "--run", f"same={tmp_path / 'first' / 'bm25.run'}", "--gate", "ndcg@10,drop=0.01,lost=0",
               "--out", str(tmp_path / "same"), env_extra=env)
    assert same.returncode == 0, same.stdout[-3000:] + same.stderr[-2000:]
    assert "PASS same: 0 questions lost a relevant document" in same.stdout

    worse = run(*common, "--run", f"planted={tmp_path / 'planted.trec'}", "--gate", "ndcg@10,drop=0.01,lost=0",
                "--out", str(tmp_path / "worse"), env_extra=env)
    assert worse.returncode == 1, worse.stdout[-3000:] + worse.stderr[-2000:]
    fail = [line for line in worse.stdout.splitlines() if line.startswith("FAIL planted: ")]
    assert fail and "lost a relevant document the baseline had in its top 10" in fail[0]
    xml = ElementTree.parse(tmp_path / "worse" / "gate.xml").getroot()
    assert int(xml.get("failures")) >= 1 and xml.find("testcase/failure") is not None
    rows = (tmp_path / "worse" / "gate_per_query.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "question,candidate,baseline_ndcg@10,ndcg@10,delta,lost_relevant" and len(rows) > len(dropped)
