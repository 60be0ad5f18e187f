"""What a second round of trying to break the workbench found (each failed before its fix): a code spelled
with another dash or in full-width letters slipped past the code identity gate; YAML front matter merged two
tenants (``007`` and ``7``); settings and configurations that did nothing or crashed."""

from __future__ import annotations

import json

import pytest
from .test_reliability_cli import one_error_line, run

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("question", ["Como ativar o PX\u201170?", "Como ativar o PX\u201370?",
                                      "Como ativar o \uff30\uff38-\uff17\uff10?"])
def test_a_code_spelled_with_another_dash_or_full_width_is_the_same_code(lab_bench, question):
    trace = lab_bench.ask(question, {"tenant": "lumen"})
    assert trace.question == "Como ativar o PX-70?"
    assert trace.tier == "refusal" and trace.gate["missing_codes"] == ["PX-70"]


def test_front_matter_numbers_yaml_would_rewrite_stay_distinct_tenants(tmp_path):
    from retrieval.ingest.corpus import load_corpus
    from retrieval.core.errors import CorpusError

    for name, tenant in (("t007.md", "007"), ("t7.md", "7")):
        (tmp_path / name).write_text(f"---\ntitle: {name}\ntenant: {tenant}\n---\nsenha do cofre\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="tenant field 'tenant' is a integer here but a string"):
        load_corpus(tmp_path, "tenant")  # two tenants of two types: refused, never merged into one
    (tmp_path / "t7.md").write_text("---\ntitle: sete\ntenant: '7'\n---\nsenha\n", encoding="utf-8")
    assert sorted(d.metadata["tenant"] for d in load_corpus(tmp_path, "tenant")) == ["007", "7"]


def test_settings_and_configurations_that_did_nothing_are_refused(tmp_path):
    lab = ["--corpus", "data/lab/corpus.jsonl", "--questions", "data/lab/questions.jsonl"]
    one_error_line(run("ask", "Qual o prazo?", "--set", f"glossary_path={tmp_path / 'none.json'}"),
                   "glossary_path", "existing glossary file")
    one_error_line(run("eval", *lab, "--configs", "hybrid,hybrid"), "config 'hybrid' is given twice")
    config = tmp_path / "configs.json"
    config.write_text(json.dumps([{"name": "a", "settings": {"top_k": 1}}]), encoding="utf-8")
    one_error_line(run("eval", *lab, "--configs", "", "--config-file", str(config)), "top_k is set by the evaluation")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    one_error_line(run("calibrate", "--questions", str(empty)), "answerable and unanswerable")


def test_a_bi_encoder_spec_without_a_model_says_so(lab_bench):
    trace = lab_bench.ask("O PX-7 ativa?", {"tenant": "lumen"},
                          settings=lab_bench.settings.with_overrides(reranker_model="bi-encoder:"))
    assert trace.tier == "rrf_only" and "names no embedding model" in trace.tier_reason
