"""The command line's refusals, as a user meets them: every failure is one line on stderr and exit code 2 (never a
traceback), before anything loads where it can be; one tenant per request; the transforms that used to raise now
answer."""

from __future__ import annotations

import json
import os

import pytest
from helpers.cli import one_error_line, run

pytestmark = pytest.mark.integration

UNREACHABLE = "127.0.0.1:9"  # the discard port: nothing listens there
LAB = ["--corpus", "data/lab/corpus.jsonl", "--questions", "data/lab/questions.jsonl"]


@pytest.mark.parametrize("action", ["--status", "--drop"])
def test_index_status_and_drop_on_an_unusable_store_is_one_line(tmp_path, action):
    """Regression: index --status and --drop on a store they could not open did not fail in one line."""
    a_file = tmp_path / "store-is-a-file"
    a_file.write_text("not a folder", encoding="utf-8")
    one_error_line(run("index", action, env_extra={"RETRIEVAL_CHROMA_PATH": str(a_file)}),
                   "vector store unavailable", str(a_file))
    one_error_line(run("index", action, env_extra={"RETRIEVAL_CHROMA_HOST": UNREACHABLE}),
                   "vector store unavailable", UNREACHABLE)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_index_status_on_a_read_only_folder_is_one_line(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        one_error_line(run("index", "--status", env_extra={"RETRIEVAL_CHROMA_PATH": str(folder / "chroma")}),
                       "vector store unavailable")
    finally:
        folder.chmod(0o700)


def test_an_index_that_builds_no_vectors_exits_2(tmp_path):
    """Regression: an index that built no vectors (its store unreachable) exited 0."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "O PX-7 ativa em 24 horas."}) + "\n", encoding="utf-8")
    result = run("index", "--corpus", str(corpus), env_extra={"RETRIEVAL_CHROMA_HOST": UNREACHABLE})
    one_error_line(result, "the index has no vectors", "Could not connect")
    assert "no vectors" in result.stdout  # the summary still says what was built


def test_setting_errors_are_one_line_before_anything_loads(tmp_path):
    one_error_line(run("ask", "PX-7", "--filter", "tenant=lumen", "--set", "chunk_overlap=200"),
                   "chunk_overlap=200", "chunk_tokens")
    one_error_line(run("ask", "PX-7", "--filter", "tenant=lumen", "--set", "fusion=weighted_rrf",
                       "--set", "fusion_weights=bm2=0"), "unknown ranker 'bm2'")
    one_error_line(run("ask", "PX-7", "--filter", "tenant=lumen", env_extra={"RETRIEVAL_TOP_K": "0"}),
                   "top_k", "greater than or equal to 1")
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps([{"name": "w", "settings": {"fusion": "weighted_rrf",
                                                               "fusion_weights": "bm25=1,dense=x"}}]), encoding="utf-8")
    one_error_line(run("eval", *LAB, "--configs", "", "--config-file", str(configs)), "config 'w'",
                   "'dense' is not a number")
    configs.write_text(json.dumps([{"name": "o", "settings": {"chunk_overlap": 500}}]), encoding="utf-8")
    one_error_line(run("eval", *LAB, "--configs", "", "--config-file", str(configs)), "chunk_overlap=500")


def test_settings_and_configurations_that_did_nothing_are_refused(tmp_path):
    """Regression: a missing glossary, a config given twice or setting top_k, an empty calibration set were taken."""
    one_error_line(run("ask", "Qual o prazo?", "--set", f"glossary_path={tmp_path / 'none.json'}"),
                   "glossary_path", "existing glossary file")
    one_error_line(run("eval", *LAB, "--configs", "hybrid,hybrid"), "config 'hybrid' is given twice")
    config = tmp_path / "configs.json"
    config.write_text(json.dumps([{"name": "a", "settings": {"top_k": 1}}]), encoding="utf-8")
    one_error_line(run("eval", *LAB, "--configs", "", "--config-file", str(config)), "top_k is set by the evaluation")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    one_error_line(run("calibrate", "--questions", str(empty)), "answerable and unanswerable")


@pytest.mark.parametrize("command", ["index", "ask"])
def test_malformed_squad_is_one_line(tmp_path, command, chroma_dir):
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"data": ["x"]}), encoding="utf-8")
    args = ["ask", "Qual o prazo?"] if command == "ask" else ["index"]
    one_error_line(run(*args, "--corpus", str(squad), env_extra={"RETRIEVAL_CHROMA_PATH": str(chroma_dir)}),
                   "squad.json", "data[0]")


def test_corpus_refusals_name_file_and_line(tmp_path, chroma_dir):
    corpus = tmp_path / "c.jsonl"
    rows = [{"id": "a", "text": "A senha do cofre é 1.", "metadata": {"tenant": 1}},
            {"id": "b", "text": "A senha do cofre é 2.", "metadata": {"tenant": True}}]
    corpus.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    env = {"RETRIEVAL_CHROMA_PATH": str(chroma_dir)}
    one_error_line(run("ask", "Qual a senha do cofre?", "--corpus", str(corpus), "--filter", "tenant=1", env_extra=env),
                   "c.jsonl:2:", "tenant")
    for key in ("", "$and"):
        rows = [{"id": "a", "text": "ok", "metadata": {key: "v"}}]
        corpus.write_text(json.dumps(rows[0]), encoding="utf-8")
        one_error_line(run("index", "--corpus", str(corpus), env_extra=env), "c.jsonl:1:", "metadata key")


def test_invalid_glossary_with_rewrite_is_one_line(tmp_path, chroma_dir):
    folder = tmp_path / "kb"
    folder.mkdir()
    corpus = folder / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "O pagamento do PX-7 ativa em 24 horas."}), encoding="utf-8")
    env = {"RETRIEVAL_CHROMA_PATH": str(chroma_dir)}
    for content in ('["pgto"]', '{"abbreviations": {', '{"synonyms": {"pagamento": "pgto"}}'):
        (folder / "glossary.json").write_text(content, encoding="utf-8")
        one_error_line(run("ask", "pgto do PX-7", "--corpus", str(corpus), "--transform", "rewrite", env_extra=env),
                       "glossary.json")


def test_two_tenants_refused_and_multi_hop_answers(lab_bench, chroma_dir):
    env = {"RETRIEVAL_CHROMA_PATH": str(chroma_dir)}
    one_error_line(run("ask", "Qual o prazo de reembolso?", "--filter", "tenant=lumen", "--filter", "tenant=ventura",
                       env_extra=env), "exactly one tenant")
    result = run("ask", "Posso usar o cartão virtual em uma compra presencial?", "--filter", "tenant=ventura",
                 "--transform", "multi_hop", "--json", env_extra=env)
    assert result.returncode == 0, result.stderr
    trace = json.loads(result.stdout)
    assert all(i["chunk_id"].startswith("ventura-") for i in trace["fused"]["items"])
    assert [q["text"] for q in trace["queries"] if q["kind"] == "multi_hop"] == ["E-19", "VT-3"]


@pytest.mark.parametrize("args, fragment", [
    (["ask"], "Missing argument 'question'"),
    (["ask", "PX-7", "--top-k", "abc"], "Invalid value for '--top-k'"),
    (["nope"], "No such command 'nope'"),
    (["index", "--bogus"], "No such option"),
])
def test_usage_errors_are_one_line_too(args, fragment):
    one_error_line(run(*args), fragment, "--help")
