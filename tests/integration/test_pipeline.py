"""The whole pipeline on the lab corpus with the real embedding model and a real Chroma store on disk."""

from __future__ import annotations

import dataclasses
import json
import unicodedata

import pytest

from retrieval.backends.lexical import LexicalIndex
from retrieval.core.errors import CorpusError, InvalidQuestion, TenantRequired
from retrieval.pipeline.workbench import Workbench
from retrieval.stages.select import dedup

pytestmark = pytest.mark.integration

NEGATION_Q = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def _all_chunk_ids(trace) -> list[str]:
    data = trace.to_dict()
    ids = [i["chunk_id"] for name in ("lexical", "dense", "fused", "reranked") for i in data[name]["items"]]
    ids += [f["chunk_id"] for f in data["final"]] + data["answer"]["citations"]
    ids += [s for sent in data["answer"]["sentences"] for s in sent["citations"]]
    return ids


def test_default_request_is_full_with_the_learned_ranker_and_all_lists(lab_bench):
    trace = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"})
    assert trace.tier == "full" and trace.models["reranker_kind"] == "ltr"
    assert "LambdaMART" in trace.tier_reason and trace.reranked.items
    assert trace.lexical.items and trace.dense.items and trace.fused.items
    assert trace.final[0].parent_id == "lumen-px7-nao-ativado"
    assert len(trace.lexical.items) <= lab_bench.settings.window
    assert trace.answer.citations and set(trace.answer.citations) <= set(trace.context_chunk_ids)
    assert not trace.answer.abstained and trace.answer.adapter == "local-extractive (learned evidence)"
    plain = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}, settings=lab_bench.settings.with_overrides(
        reranker_model="none", support_gate=False, evidence_model=False))
    assert plain.tier == "rrf_only" and "no reranker configured" in plain.tier_reason
    assert plain.answer.adapter == "local-extractive"


def test_no_chunk_of_other_tenant_anywhere(lab_bench, lab_questions):
    for q in lab_questions:
        tenant = q.filters["tenant"]
        other = "ventura-" if tenant == "lumen" else "lumen-"
        trace = lab_bench.ask(q.question, q.filters)
        leaked = [c for c in _all_chunk_ids(trace) if c.startswith(other)]
        assert leaked == [], (q.id, leaked)
        assert all(lab_bench.state.chunk_by_id[c].metadata["tenant"] == tenant for c in _all_chunk_ids(trace))


def test_request_without_tenant_refused(lab_bench):
    with pytest.raises(TenantRequired):
        lab_bench.ask("Qual o prazo de reembolso?")
    with pytest.raises(TenantRequired):
        lab_bench.ask("Qual o prazo de reembolso?", {"year": 2024})


def test_a_misspelled_tenant_is_named_in_the_refusal(lab_bench):
    trace = lab_bench.ask("Em quanto tempo o PX-7 é ativado?", {"tenant": "Lumen"})
    assert trace.tier == "refusal" and trace.final == []
    assert trace.tier_reason == ("no candidate to answer from: tenant 'Lumen' is not in this corpus (values are "
                                 "matched exactly: case and type count)")
    assert "ventura" not in trace.tier_reason  # another tenant's name is never disclosed
    known = lab_bench.ask("Em quanto tempo o PX-7 é ativado?", {"tenant": "lumen"})
    assert known.tier == "full"


def test_hybrid_candidates_superset_of_dense(lab_bench, lab_questions):
    for q in lab_questions:
        trace = lab_bench.ask(q.question, q.filters)
        assert set(trace.dense.chunk_ids()) <= set(trace.fused.chunk_ids()), q.id
        assert set(trace.lexical.chunk_ids()) <= set(trace.fused.chunk_ids()), q.id


def test_px7_vs_px17(lab_bench):
    px7 = lab_bench.ask("Em quanto tempo o PX-7 é ativado?", {"tenant": "lumen"})
    px17 = lab_bench.ask("Em quanto tempo o PX-17 é ativado?", {"tenant": "lumen"})
    assert px7.final[0].parent_id == "lumen-px7-ativacao"
    assert px17.final[0].parent_id == "lumen-px17-ativacao"
    lex = [i.parent_id for i in px7.lexical.items]
    assert lex.index("lumen-px7-ativacao") < lex.index("lumen-px17-ativacao")


def test_nfc_and_nfd_questions_give_identical_lists(lab_bench):
    q = "Quando a renovação do Lumen Care não é automática?"
    a = lab_bench.ask(unicodedata.normalize("NFC", q), {"tenant": "lumen"}).to_dict()
    b = lab_bench.ask(unicodedata.normalize("NFD", q), {"tenant": "lumen"}).to_dict()
    for name in ("lexical", "fused", "final"):
        ids = lambda d: [i["chunk_id"] for i in (d[name]["items"] if name != "final" else d[name])]  # noqa: E731
        assert ids(a) == ids(b)
    assert [i["chunk_id"] for i in a["dense"]["items"]] == [i["chunk_id"] for i in b["dense"]["items"]]


def test_hybrid_off_gives_dense_only(lab_bench):
    s = lab_bench.settings.with_overrides(hybrid_enabled=False)
    trace = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}, settings=s)
    assert trace.tier == "dense_only" and "hybrid switched off" in trace.tier_reason
    assert trace.lexical.items == () and trace.dense.items
    assert [i.chunk_id for i in trace.fused.items] == trace.dense.chunk_ids()


def test_empty_bm25_index_gives_dense_only(lab_bench):
    bench = Workbench(lab_bench.settings, embedder=lab_bench.embedder, progress=False)
    bench.state = dataclasses.replace(lab_bench.state, lexical=LexicalIndex([], "tenant"))
    trace = bench.ask(NEGATION_Q, {"tenant": "lumen"})
    assert trace.tier == "dense_only" and "BM25 index is empty" in trace.tier_reason
    assert trace.lexical.items == () and trace.final[0].parent_id == "lumen-px7-nao-ativado"


def test_embedder_failure_gives_lexical_only(lab_bench, tmp_path):
    s = lab_bench.settings.with_overrides(embedding_model=str(tmp_path / "no-such-model"))
    bench = Workbench(s, progress=False)
    assert bench.embedder is None and "could not load" in bench.embedder_reason.text()
    bench.load_corpus()
    trace = bench.ask(NEGATION_Q, {"tenant": "lumen"})
    assert trace.tier == "lexical_only" and "could not load" in trace.tier_reason
    assert trace.dense.items == () and trace.final[0].parent_id == "lumen-px7-nao-ativado"
    assert trace.final[0].similarity is None and trace.timings_ms["dense"] is None


def test_nothing_passes_gate_gives_refusal(lab_bench):
    s = lab_bench.settings.with_overrides(min_similarity=0.999)
    trace = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}, settings=s)
    assert trace.tier == "refusal" and "no chunk passed the gate" in trace.tier_reason
    assert trace.final == [] and trace.answer.abstained and trace.answer.citations == []
    assert trace.fused.items  # the lists stay visible for diagnosis


def test_reranker_that_cannot_load_gives_rrf_only(lab_bench, tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    s = lab_bench.settings.with_overrides(reranker_model=str(broken))
    trace = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}, settings=s)
    assert trace.tier == "rrf_only" and "could not load" in trace.tier_reason
    assert trace.reranked.items == () and trace.models["reranker_kind"] is None


def test_hub_name_with_downloads_off_fails_fast():
    from retrieval.stages.rerank import LoadContext, load_reranker

    # Refused from the disk check alone (no model library, no network): the reason says what to do.
    reranker, why = load_reranker("BAAI/bge-reranker-v2-m3", LoadContext(allow_downloads=False))
    reason = why.text()
    assert reranker is None and reason.startswith("reranker 'BAAI/bge-reranker-v2-m3' is not on disk")
    assert "models pull BAAI/bge-reranker-v2-m3" in reason and "RETRIEVAL_ALLOW_DOWNLOADS=true" in reason


def test_bi_encoder_reranker_is_labelled_bi_encoder(lab_bench):
    s = lab_bench.settings.with_overrides(reranker_model="bi-encoder:use-m3", reranker_max_input=8)
    trace = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}, settings=s)
    assert trace.tier == "full"
    assert trace.models["reranker_kind"] == "bi-encoder"
    assert trace.reranked.score_kind == "cosine (bi-encoder rescoring)"
    assert len(trace.reranked.items) == min(8, len(trace.fused.items))
    assert {i.fused_rank for i in trace.reranked.items} == set(range(1, len(trace.reranked.items) + 1))
    fused_top = [i.parent_id for i in dedup(trace.fused.items, "parent")[:5]]
    final = {f.parent_id for f in trace.final}
    assert [x["parent_id"] for x in trace.lost_by_reranker] == [p for p in fused_top if p not in final]


def test_a_bi_encoder_spec_without_a_model_says_so(lab_bench):
    """Regression: ``reranker_model="bi-encoder:"`` (no model named) was taken without saying what is missing."""
    trace = lab_bench.ask("O PX-7 ativa?", {"tenant": "lumen"},
                          settings=lab_bench.settings.with_overrides(reranker_model="bi-encoder:"))
    assert trace.tier == "rrf_only" and "names no embedding model" in trace.tier_reason


def test_trace_json_contract(lab_bench):
    data = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}).to_dict()
    for key in ("schema_version", "question", "settings", "models", "index_id", "queries", "filters", "tier",
                "tier_reason", "lexical", "dense", "variants", "fused", "reranked", "final", "lost_by_reranker",
                "answer", "timings_ms", "costs"):
        assert key in data, key
    assert data["queries"] == [{"text": NEGATION_Q, "kind": "original", "hypothesis_only": False, "flags": []}]
    assert data["filters"] == {"tenant": "lumen"}
    assert set(data["models"]) >= {"embedder", "reranker", "reranker_kind"}
    item = data["lexical"]["items"][0]
    assert set(item) == {"chunk_id", "parent_id", "rank", "score", "terms"} and item["terms"]
    assert set(data["fused"]["items"][0]) == {"chunk_id", "parent_id", "rank", "score", "contributions", "ranks"}
    assert set(data["final"][0]) == {"chunk_id", "parent_id", "rank", "score", "similarity", "text"}
    assert set(data["answer"]) >= {"text", "sentences", "citations", "abstained", "adapter", "dropped_citations"}
    # The learned ranker ran by default: timed, and each reranked item carries its feature contributions.
    assert data["timings_ms"]["rerank"] > 0 and data["timings_ms"]["judge_features"] > 0
    assert data["timings_ms"]["total"] > 0
    assert set(data["reranked"]["items"][0]) == {"chunk_id", "parent_id", "rank", "score", "fused_rank",
                                                 "feature_contributions"}
    assert "llm_api_key" not in data["settings"]
    json.dumps(data)


def test_bad_questions_rejected_before_search(lab_bench):
    for bad in ("", "   \n\t", "?!... —", "a" * 2001):
        with pytest.raises(InvalidQuestion):
            lab_bench.ask(bad, {"tenant": "lumen"})
    trace = lab_bench.ask("PX-7\u200b ativação 🙂 \x00", {"tenant": "lumen"})
    assert trace.final[0].parent_id == "lumen-px7-ativacao"  # the odd characters dropped, the question answered


def test_failed_reload_keeps_previous_index(lab_bench, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "text": "ok"}\n{"id": "x", "text": "again"}\n', encoding="utf-8")
    before = lab_bench.state
    with pytest.raises(CorpusError, match="duplicate id 'x'"):
        lab_bench.load_corpus(bad)
    assert lab_bench.state is before
    assert lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}).final[0].parent_id == "lumen-px7-nao-ativado"


def test_spans_per_stage_carry_hybrid_path(lab_bench):
    from opentelemetry import trace as otel
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.set_tracer_provider(provider)
    lab_bench.ask(NEGATION_Q, {"tenant": "lumen"})
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert {"retrieval.lexical", "retrieval.dense", "retrieval.fusion", "retrieval.dedup", "retrieval.gate",
            "retrieval.answer", "retrieval.ask"} <= set(spans)
    assert spans["retrieval.ask"].attributes["agent.hybrid_path"] == "full"


def test_a_weight_zero_dense_ranker_neither_lists_nor_orders(lab_bench):
    """Regression: weighted fusion kept a ranker of weight 0 in its list and did not say so."""
    s = lab_bench.settings.with_overrides(fusion="weighted_rrf", fusion_weights="bm25=1,dense=0")
    trace = lab_bench.ask("O PX-7 não foi ativado apesar do pagamento, o que faço?", {"tenant": "lumen"}, settings=s)
    assert trace.fused.chunk_ids() == trace.lexical.chunk_ids()
    assert trace.dense.items  # it was searched (the gate reads its cosines) but not fused
    assert trace.fused.note.text() == "dropped from the fusion (weight 0): dense"
    assert [i.score for i in trace.fused.items] == pytest.approx([1 / (60 + r) for r in range(1, len(trace.fused.items) + 1)])
