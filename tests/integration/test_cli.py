"""The command line as a user runs it: exit codes, one-line errors, clean --json stdout."""

from __future__ import annotations

import json

import pytest
from helpers.cli import run
from helpers.paths import ROOT

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("question", ["", "   ", "?!... —", "x" * 2001])
def test_bad_questions_exit_2_with_one_line(question):
    result = run("ask", question, "--filter", "tenant=lumen")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")


def test_missing_tenant_and_unreadable_corpus_exit_2(lab_bench, chroma_dir, tmp_path):
    env = {"RETRIEVAL_CHROMA_PATH": str(chroma_dir)}
    result = run("ask", "Qual o prazo de reembolso?", env_extra=env)
    assert result.returncode == 2 and "multi-tenant" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = run("ask", "Qual o prazo?", "--corpus", str(tmp_path / "nope.jsonl"), env_extra=env)
    assert result.returncode == 2 and "no such file" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', encoding="utf-8")
    result = run("index", "--corpus", str(bad), env_extra=env)
    assert result.returncode == 2 and "bad.jsonl:2: duplicate id 'a'" in result.stderr


def test_ask_json_stdout_is_only_the_trace(lab_bench, chroma_dir):
    result = run("ask", "Quanto tempo leva a ativação do PX-17?", "--filter", "tenant=lumen", "--json",
                 "--top-k", "3", env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)})
    assert result.returncode == 0, result.stderr
    trace = json.loads(result.stdout)
    assert trace["tier"] == "full" and len(trace["final"]) <= 3  # the learned ranker is the default
    assert trace["final"][0]["parent_id"] == "lumen-px17-ativacao"
    assert trace["settings"]["top_k"] == 3


def test_dense_only_flag_and_set(lab_bench, chroma_dir):
    result = run("ask", "PX-7", "--filter", "tenant=lumen", "--dense-only", "--json", "--set", "rrf_k=30",
                 env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)})
    trace = json.loads(result.stdout)
    assert trace["tier"] == "dense_only" and trace["settings"]["rrf_k"] == 30
    result = run("ask", "PX-7", "--filter", "tenant=lumen", "--set", "rrf_k=zero")
    assert result.returncode == 2 and "rrf_k" in result.stderr


def test_index_status(lab_bench, chroma_dir):
    result = run("index", "--status", env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)})
    assert result.returncode == 0
    assert f"{len(lab_bench.state.chunks)} chunks" in result.stdout


def test_eval_json_schema(lab_bench, chroma_dir, tmp_path):
    result = run("eval", "--corpus", str(ROOT / "data/lab/corpus.jsonl"), "--questions",
                 str(ROOT / "data/lab/questions.jsonl"), "--configs", "bm25,hybrid", "--split", "heldout",
                 "--k", "1,5", "--json", "--hypothesis", "hybrid beats bm25 on paraphrases",
                 "--out", str(tmp_path / "out"), env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)})
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert set(report) >= {"schema_version", "corpus", "questions", "split", "k", "configs", "comparisons"}
    assert report["split"] == "heldout" and report["k"] == [1, 5]
    assert set(report["configs"]) == {"bm25", "hybrid"}
    bm25 = report["configs"]["bm25"]
    assert bm25["tier"] == "lexical_only" and report["configs"]["hybrid"]["tier"] == "rrf_only"
    keys = {"ndcg@5", "recall@1", "recall@5", "precision@5", "mrr@5", "hit_rate@5", "abstention_accuracy"}
    assert keys <= set(bm25["overall"])
    for group in bm25["groups"].values():
        assert keys <= set(group)
    assert bm25["groups"]["unanswerable"]["ndcg@5"] is None  # unanswerable kept out of ranking metrics
    row = bm25["questions"][0]
    assert set(row) >= {"id", "group", "relevant", "final", "first_relevant_rank", "abstained", "layer", "stage"}
    assert all(r["layer"] in {"ok", "coverage", "ordering", "generation"} for r in bm25["questions"])
    cmp = report["comparisons"]
    assert {c["metric"] for c in cmp} >= {"ndcg@5", "recall@1"}
    assert all(set(c) == {"baseline", "candidate", "metric", "delta", "p_value", "p_holm", "improved", "worsened",
                          "by_group", "lost_relevant", "wins_on_mean_but_lost_relevant"} for c in cmp)
    assert all(c["p_holm"] == c["p_value"] for c in cmp)  # one candidate: Holm changes nothing
    assert report["labels"] == {"chunk_ids": [], "spans": 0, "bad_spans": []}
    # New keys: evidence check, per-question table fields, layer counts, cost, shared generator lists.
    assert set(report["evidence_check"]) >= {"checked", "cut", "not_in_parent"}
    assert set(row) >= {"context", "citations", "candidates", "relevant_ranks", "scores", "evidence_cut"}
    hybrid = report["configs"]["hybrid"]
    assert sum(hybrid["diagnosis"]["overall"].values()) == report["questions"]
    assert hybrid["shared_lists"]["hits"] >= report["questions"]  # hybrid reused bm25's lexical windows
    assert hybrid["cost"]["llm_calls"] == 0 and hybrid["timings_ms"]["wall_total"] > 0
    assert report["hypothesis"] == "hybrid beats bm25 on paraphrases" and report["observed"]
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"report.json", "comparison.csv", "decision.md", "bm25.run", "hybrid.run"} <= written
    assert "hybrid beats bm25 on paraphrases" in (tmp_path / "out" / "decision.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("sizes", ["0", "-10", "0,10", "", " ", "10,,20", "abc", "5"])
def test_bench_rejects_bad_sizes_before_running(sizes):
    result = run("bench", "--no-langchain", "--sizes", sizes, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: --sizes") and len(result.stderr.strip().splitlines()) == 1
    assert "benchmarking" not in result.stderr


def test_bench_rejects_an_unwritable_json_out_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    result = run("bench", "--quick", "--json-out", str(blocker / "sub" / "out.json"), timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: --json-out: cannot write")
    assert "benchmarking" not in result.stderr


def test_ask_prints_the_traces_notes_mmr_that_cannot_run(lab_bench, chroma_dir):
    env = {"RETRIEVAL_CHROMA_PATH": str(chroma_dir), "RETRIEVAL_DENSE_ENABLED": "false"}
    result = run("ask", "Qual o prazo de garantia do PX-7?", "--filter", "tenant=lumen", "--mmr", "0.5",
                 env_extra=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("tier: lexical_only")
    assert lines[1].startswith("note (") and "MMR" in lines[1]


def test_serve_refuses_what_it_cannot_run_before_starting_anything(tmp_path):
    result = run("serve", "--workers", "40")
    assert result.returncode == 2
    assert result.stderr.strip() == "error: --workers 40: must be between 1 and 32"
    # Milvus Lite's file opens in one process: several workers would fail one by one at their first request
    result = run("serve", "--workers", "2", "--no-index",
                 env_extra={"RETRIEVAL_BACKEND": "milvus", "RETRIEVAL_MILVUS_URI": str(tmp_path / "m.db")})
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "is a Milvus Lite file, which one process at a time may open: use --workers 1" in result.stderr
    assert not (tmp_path / "m.db").exists()
    import socket

    with socket.socket() as taken:  # a port in use: said before the index or any worker is started
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("serve", "--workers", "1", "--port", str(port),
                     env_extra={"RETRIEVAL_CHROMA_PATH": str(tmp_path / "chroma")})
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: cannot listen on 127.0.0.1:{port}: Address already in use; choose "
                                     "another --port or --address")
    assert not (tmp_path / "chroma").exists()


def test_tune_learn_ranker_refuses_too_few_labels_in_one_line_and_writes_nothing(lab_bench, chroma_dir, tmp_path):
    small = tmp_path / "small.jsonl"
    lines = (ROOT / "data" / "lab" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    small.write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")
    tuned_dir = chroma_dir.parent / "tuned"
    before = sorted(tuned_dir.rglob("*")) if tuned_dir.exists() else []
    result = run("tune", "--learn-ranker", "--questions", str(small), "--adopt",
                 env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)})
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: too few labels to learn a ranker from: ") and "at least 8 are needed" in line
    assert (sorted(tuned_dir.rglob("*")) if tuned_dir.exists() else []) == before  # nothing trained, nothing adopted
    result = run("tune", "--learn-ranker", "--labels", str(tmp_path / "nope.jsonl"),
                 env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)})
    assert result.returncode == 2 and result.stderr.strip() == f"error: --labels: {tmp_path / 'nope.jsonl'}: no such file"
    result = run("tune", "--learn-ranker", "--questions", str(tmp_path / "none.jsonl"),
                 env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)})
    assert result.returncode == 2 and "--questions: " in result.stderr and "no such file" in result.stderr
