"""The shipped judge model (models/judge) on the lab corpus with the real embedding model and store."""

from __future__ import annotations

import json

import pytest

import lightgbm  # noqa: E402,F401 - pinned: a missing package fails here, it never skips

from helpers.paths import ROOT  # noqa: E402

pytestmark = pytest.mark.integration


def test_shipped_folder_loads_with_its_card():
    from retrieval.learned.judge.features import feature_set_version
    from retrieval.learned.judge.models import load_judge

    models, why = load_judge(ROOT / "models" / "judge")
    assert models is not None, why
    manifest = json.loads((ROOT / "models" / "judge" / "manifest.json").read_text())
    assert manifest["feature_set_version"] == feature_set_version()
    assert {t["corpus_name"] for t in manifest["training_sets"]} == {"lab", "faquad"}
    card = (ROOT / "models" / "judge" / "model_card.md").read_text()
    assert "CC BY 4.0" in card and "liafacom/faquad" in card and "faquad/heldout" in card


def test_lab_unanswerable_abstains_and_answerable_answers(lab_bench):
    # lab-041 (a dev question, trained on): no lab document mentions free shipping; the learned gate says so.
    refused = lab_bench.ask("Qual o valor mínimo de compra para ter frete grátis na Ventura?", {"tenant": "ventura"})
    assert refused.tier == "refusal" and refused.answer.abstained and refused.final == []
    support = refused.gate["support"]
    assert support["passes"] is False and support["best"] < support["threshold"]
    reason = refused.gate["reason"]
    assert reason.startswith("no selected chunk mentions ") and "'frete', 'grátis'; support " in reason
    assert set(support["features"]) >= {"g_focus_missing", "g_cos_best"}
    # A question nobody here wrote or trained on, about something the tenant's documents never mention.
    off = lab_bench.ask("Qual o horário da biblioteca aos sábados?", {"tenant": "lumen"})
    assert off.tier == "refusal" and off.answer.abstained
    assert "'biblioteca'" in off.gate["reason"]
    # lab-001: answered in the full tier, from its relevant parent, by the evidence model.
    answered = lab_bench.ask("Em quanto tempo o PX-7 é ativado depois do pagamento?", {"tenant": "lumen"})
    assert answered.tier == "full" and answered.models["reranker_kind"] == "ltr"
    assert not answered.answer.abstained and answered.final[0].parent_id == "lumen-px7-ativacao"
    assert answered.gate["support"]["passes"] is True
    assert "24 horas" in answered.answer.text
    item = answered.reranked.items[0]
    assert sum(item.feature_contributions.values()) == pytest.approx(item.score, abs=1e-4)


def test_the_learned_gate_reads_the_chunks_that_passed_the_cosine_check(lab_bench):
    # lab-008 at min_similarity 0.87: five chunks selected, the cosine check keeps two; the learned gate reads
    # exactly those two (the context the answer uses), not the three it dropped.
    s = lab_bench.settings.with_overrides(min_similarity=0.87)
    trace = lab_bench.ask("O que significa o código E-42 na API da Ventura?", {"tenant": "ventura"}, settings=s)
    assert len(trace.selected) == 5 and len(trace.final) == 2
    assert trace.gate["support"]["chunks"] == [f.chunk_id for f in trace.final]


def test_a_question_that_names_nothing_abstains_and_says_so(lab_bench):
    for question in ("qual?", "Como faço?"):
        trace = lab_bench.ask(question, {"tenant": "lumen"})
        assert trace.tier == "refusal" and trace.answer.abstained, question
        assert trace.gate["reason"].startswith("the question names nothing to look for"), question
    # Cyrillic words are tokens: the question names them, and the gate says that no chunk mentions them
    trace = lab_bench.ask("Какой срок гарантии?", {"tenant": "lumen"})
    assert trace.tier == "refusal" and trace.answer.abstained
    assert trace.gate["reason"].startswith("no selected chunk mentions 'Какой', 'срок', 'гарантии'")


def test_dense_only_keeps_the_learned_gate(lab_bench):
    # The dense-only A/B toggle used to skip the learned gate (and answered this question); its BM25 features
    # are absent there, the gate's features are not.
    s = lab_bench.settings.with_overrides(hybrid_enabled=False)
    refused = lab_bench.ask("Qual o horário da biblioteca aos sábados?", {"tenant": "lumen"}, settings=s)
    assert refused.tier == "refusal" and refused.answer.abstained
    assert refused.gate["support"]["passes"] is False and "'biblioteca'" in refused.gate["reason"]
    answered = lab_bench.ask("Em quanto tempo o PX-7 é ativado depois do pagamento?", {"tenant": "lumen"}, settings=s)
    assert answered.tier == "dense_only" and answered.gate["support"]["passes"] is True
    assert answered.answer.adapter == "local-extractive (learned evidence)"
