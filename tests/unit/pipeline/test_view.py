"""The typed view of a trace dict (retrieval/pipeline/view.py): read from a real lab request's ``to_dict()``, every
field holds what the :class:`Trace` holds; read from an older or hand-written trace, a missing key is ``None``, empty
or ``False``, as the readers always took it."""

from __future__ import annotations

import pytest

from retrieval.core.reasons import raw
from retrieval.explain import grid, tables
from retrieval.pipeline.trace import SCHEMA_VERSION, Trace
from retrieval.pipeline.view import LIST_NAMES, Said, TraceView
from retrieval.stages.rerank.base import NONE_RAN

ANSWERED = "Em quanto tempo o PX-7 é ativado depois do pagamento?"   # lab-001: the learned ranker drops two
REFUSED = "O aparelho chegou quebrado. Posso pegar outro novo sem pagar nada?"   # lab-014: the support gate refuses


@pytest.fixture(scope="module")
def traces(lab_bench) -> list[Trace]:
    """lab-001 with two query transforms (variants, their costs) and lab-014 (refused by the learned gate)."""
    widened = lab_bench.settings.with_overrides(transforms=("multi_query", "rewrite"))
    return [lab_bench.ask(ANSWERED, {"tenant": "lumen"}, settings=widened),
            lab_bench.ask(REFUSED, {"tenant": "lumen"})]


def reason_dict(said: Said) -> dict | None:
    found = said.reason()
    return None if found is None else found.to_dict()


@pytest.mark.integration  # the lab corpus with its embedding model
def test_the_view_of_a_lab_trace_holds_what_the_trace_holds(traces: list[Trace]) -> None:
    answered, refused = traces
    assert answered.reranked.items and answered.lost_by_reranker and answered.variants  # what the test reads
    assert refused.answer.abstained and "support" in refused.gate
    for trace in traces:
        data = trace.to_dict()
        view = TraceView.from_dict(data)
        assert view.raw is data and view.schema_version == SCHEMA_VERSION
        assert (view.question, view.tier, view.index_id) == (trace.question, trace.tier, trace.index_id)
        assert view.tier_reason.text == trace.tier_reason
        assert reason_dict(view.tier_reason) == trace.tier_why.to_dict()
        assert view.settings.recorded == trace.settings
        assert (view.settings.top_k, view.settings.dedup, view.settings.rrf_k, view.settings.fusion,
                view.settings.reranker_max_input, view.settings.mmr_lambda) == tuple(
            trace.settings[k] for k in ("top_k", "dedup", "rrf_k", "fusion", "reranker_max_input", "mmr_lambda"))
        models = trace.models
        assert (view.models.embedder, view.models.reranker, view.models.reranker_kind, view.models.answer_adapter,
                view.models.bm25_engine, view.models.vector_store) == tuple(models.get(k) for k in (
                    "embedder", "reranker", "reranker_kind", "answer_adapter", "bm25_engine", "vector_store"))
        assert view.models.reranker_status.text == models.get("reranker_status")
        assert view.queries == tuple(trace.queries) and view.filters == trace.filters
        for name in LIST_NAMES:
            recorded, seen = getattr(trace, name), view.ranked(name)
            assert seen.score_kind == recorded.score_kind
            assert reason_dict(seen.note) == (recorded.status.to_dict() if recorded.status else None)
            assert [(i.chunk_id, i.parent_id, i.rank, i.score, dict(i.terms), dict(i.contributions), dict(i.ranks),
                     i.fused_rank, dict(i.feature_contributions), i.fused_tail) for i in seen.items] == [
                (i.chunk_id, i.parent_id, i.rank, i.score, dict(i.terms or {}), dict(i.contributions or {}),
                 dict(i.ranks or {}), i.fused_rank, dict(i.feature_contributions or {}), i.fused_tail)
                for i in recorded.items]
            assert all(i.where == trace.locations.get(i.chunk_id, {}) for i in seen.items)
        assert [(i.chunk_id, i.rank, i.score, i.fused_tail) for i in view.selected] == [
            (i.chunk_id, i.rank, i.score, i.fused_tail) for i in trace.selected]
        assert [(f.chunk_id, f.parent_id, f.rank, f.score, f.similarity, f.text, f.sibling_of) for f in view.final] == [
            (f.chunk_id, f.parent_id, f.rank, f.score, f.similarity, f.text, f.sibling_of) for f in trace.final]
        assert [f.chunk_id for f in view.gated] == [f.chunk_id for f in trace.gated]
        assert [(e.chunk_id, e.parent_id, e.fused_rank, e.reranked_rank, e.reader) for e in view.lost_by_reranker] == [
            (e["chunk_id"], e["parent_id"], e["fused_rank"], e["reranked_rank"], e["reader"])
            for e in trace.lost_by_reranker]
        assert [(v.query.to_dict(), v.rankers, [i.chunk_id for i in v.dense.items]) for v in view.variants] == [
            (v["query"], tuple(v["rankers"]), [i["chunk_id"] for i in v["dense"]["items"]]) for v in trace.variants]
        gate, support = trace.gate, trace.gate.get("support") or {}
        assert (view.gate.kind, view.gate.threshold, view.gate.rejected, list(view.gate.missing_codes)) == (
            gate["kind"], gate["threshold"], gate["rejected"], gate["missing_codes"])
        assert view.gate.reason.value == (gate.get("reason_code") or gate.get("reason"))
        assert (view.gate.support.best, view.gate.support.threshold, view.gate.support.passes,
                list(view.gate.support.chunks), dict(view.gate.support.contributions),
                list(view.gate.support.missing_tokens)) == (
            support.get("best"), support.get("threshold"), bool(support.get("passes")), support.get("chunks", []),
            support.get("contributions", {}), support.get("missing_tokens", []))
        answer = trace.answer
        assert (view.answer.text, view.answer.abstained, view.answer.adapter, view.answer.citations,
                view.answer.dropped_citations) == (answer.text, answer.abstained, answer.adapter,
                                                   tuple(answer.citations), tuple(answer.dropped_citations))
        assert view.timings_ms == trace.timings_ms
        assert {**view.costs, **({"techniques": view.techniques} if view.techniques else {})} == trace.costs
        assert view.query_vector_from == trace.cache["query_vector_from"]
        assert [(n.stage, reason_dict(n.note)) for n in view.notes] == [(n.stage, n.reason.to_dict())
                                                                        for n in trace.notes]
    assert set(TraceView.from_dict(answered.to_dict()).techniques) == {"multi_query", "rewrite"}
    assert TraceView.from_dict(refused.to_dict()).gate.reason.code is not None  # the refusal's code


def test_an_old_trace_reads_as_the_readers_always_read_it() -> None:
    """A trace of another time: no schema version, no codes (reasons as text only), no settings or models, a list
    without items, a final list whose items hold their id and rank only."""
    old = {"question": "Qual o prazo do PX-7?", "tier": "rrf_only", "tier_reason": "no reranker configured",
           "lexical": {"score_kind": "bm25", "items": [], "note": "skipped: hybrid switched off"},
           "final": [{"chunk_id": "px7#0", "rank": 1}], "answer": {"text": "24 horas [1]", "citations": ["px7#0"]}}
    view = TraceView.from_dict(old)
    assert view.raw is old and view.schema_version is None and view.index_id is None
    assert view.tier_reason == Said("no reranker configured", None)
    assert view.tier_reason.value == "no reranker configured"
    assert view.tier_reason.reason() == raw("no reranker configured")  # its text, as recorded
    assert view.lexical.note.reason() == raw("skipped: hybrid switched off") and not view.lexical.skipped
    assert view.dense.items == () and view.dense.note == Said() and view.dense.note.reason() is None
    assert view.settings.top_k is None and view.settings.recorded == {} and view.models.reranker is None
    assert view.models.reranker_status.value is None
    final = view.final[0]
    assert (final.chunk_id, final.rank, final.parent_id, final.score, final.similarity, final.text,
            final.sibling_of, dict(final.where)) == ("px7#0", 1, "", None, None, "", None, {})
    assert [f.chunk_id for f in view.gated] == ["px7#0"]
    assert (view.answer.text, view.answer.citations, view.answer.abstained, view.answer.adapter) == (
        "24 horas [1]", ("px7#0",), False, None)
    assert view.gate.kind is None and view.gate.support.best is None and view.gate.support.chunks == ()
    assert (view.selected, view.lost_by_reranker, view.variants, view.queries, view.notes) == ((), (), (), (), ())
    assert (view.timings_ms, view.costs, view.techniques, view.query_vector_from) == ({}, {}, {}, None)
    # The readers answer as they did on the dict: no reranker configured, nothing in the grid, the note as written.
    assert tables.empty_reason(view, "reranked").to_dict() == NONE_RAN(why=tables.OFF_IN_APP()).to_dict()
    assert tables.empty_reason(view, "lexical").text() == "skipped: hybrid switched off"
    assert grid.grid_rows(view) == [] and tables.timing_rows(view) == [] and tables.cost_rows(view) == []


def test_a_code_this_process_does_not_know_keeps_the_recorded_text() -> None:
    """A reason whose code is not declared here (a newer trace): its text is the reason; the page still gets the
    recorded code to render (it renders unknown codes as their text)."""
    unknown = {"code": "from.a.newer.version", "params": {}}
    view = TraceView.from_dict({"tier": "full", "tier_reason": "newer words", "tier_reason_code": unknown})
    assert view.tier_reason.reason() == raw("newer words") and view.tier_reason.value == unknown


def test_a_list_item_without_its_rank_is_refused() -> None:
    with pytest.raises(KeyError):
        TraceView.from_dict({"fused": {"score_kind": "rrf", "items": [{"chunk_id": "a#0", "parent_id": "a"}]}})
    with pytest.raises(KeyError):
        TraceView.ranked(TraceView(), "final")  # not a ranked list: final is read as view.final
