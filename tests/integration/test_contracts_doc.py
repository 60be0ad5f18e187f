"""docs/contracts.md names every key a trace and an evaluation report carry (read from a real lab request and a
real evaluation), so the page the code's docstrings point to cannot fall behind the code."""

from __future__ import annotations

from pathlib import Path

from retrieval.core.paths import LAB_QUESTIONS
from retrieval.ingest.corpus import load_questions
from retrieval.offline.evaluation import Config, evaluate_configs

PAGE = Path(__file__).resolve().parents[2] / "docs" / "contracts.md"


def _missing(keys, text: str) -> list[str]:
    return sorted(k for k in keys if f"`{k}`" not in text)


def test_every_key_of_a_trace_is_on_the_contracts_page(lab_bench) -> None:
    text = PAGE.read_text(encoding="utf-8")
    s = lab_bench.settings.with_overrides(context_siblings=1)
    trace = lab_bench.ask("Qual o prazo de ativação do PX-17?", {"tenant": "lumen"}, settings=s).to_dict()
    keys = set(trace)
    for name in ("lexical", "dense", "fused", "reranked"):
        keys |= set(trace[name]) | {k for item in trace[name]["items"] for k in item}
    keys |= {k for item in trace["final"] + trace["selected"] for k in item}
    keys |= set(trace["answer"]) | set(trace["gate"]) | set(trace["costs"]) | set(trace["cache"])
    keys |= {k for q in trace["queries"] for k in q} | {k for n in trace["notes"] for k in n}
    assert "sibling_of" in keys and "feature_contributions" in keys  # the request exercised them
    assert _missing(keys, text) == []


def test_every_key_of_an_evaluation_report_is_on_the_contracts_page(lab_bench) -> None:
    text = PAGE.read_text(encoding="utf-8")
    questions = load_questions(LAB_QUESTIONS)[:6]
    report = evaluate_configs(lambda s: lab_bench, lab_bench.settings, questions,
                              [Config("hybrid", {"reranker_model": "none"}), Config("default", {})], (10,))
    keys = set(report) | {k for entry in report["configs"].values() for k in entry}
    keys |= {k for row in report["comparisons"] for k in row}
    assert _missing(keys, text) == []
