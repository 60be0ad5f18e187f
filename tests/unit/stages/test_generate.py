"""Each stage of a request on hand-built inputs, with no real model: the generators (a fake encoder and
store), the tier plan, the fusion of variants, multi-hop, selection, the gate and the timer."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from retrieval.backends.base import OK as STORE_OK
from retrieval.core.errors import InvalidSetting
from retrieval.core.filters import Filters, build_filters
from retrieval.core.listcache import ListCache
from retrieval.core.reasons import raw
from retrieval.core.timing import StageTimer
from retrieval.core.types import Query, RankedList, RankerKey, ScoredItem
from retrieval.pipeline.expand import Expansion, fuse_expanded, multi_hop
from retrieval.pipeline.index import build_index
from retrieval.pipeline.tiers import plan_tier
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings
from retrieval.stages.gate import Cosines, decide, question_cosines
from retrieval.stages.generate import QueryEncoder, generate
from retrieval.stages.rerank import RerankerSpec
from retrieval.stages.select import dedup, lost_by_reranker, select
from retrieval.stages.tiers import DENSE_ONLY, RRF_ONLY

DOCS = [
    {"id": "a", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas após o pagamento.", "metadata": {"tenant": "t1"}},
    {"id": "b", "title": "Reembolso", "text": "O reembolso leva 7 dias. Veja também o PX-9.", "metadata": {"tenant": "t1"}},
    {"id": "c", "title": "PX-9", "text": "O PX-9 tem garantia de um ano.", "metadata": {"tenant": "t1"}},
    {"id": "d", "title": "Outro", "text": "Prazo de entrega do cofre.", "metadata": {"tenant": "t2"}},
]


def items(*ids: str) -> tuple[ScoredItem, ...]:
    return tuple(ScoredItem(f"{p}#0", p, r, 1.0 / r) for r, p in enumerate(ids, start=1))


class FakeEmbedder:
    name = "fake"

    def __init__(self) -> None:
        self.calls = 0

    def embed_queries(self, texts):
        self.calls += 1
        return np.array([[1.0, 0.0]] * len(texts))

    embed_passages = embed_queries


class FakeStore:
    """Dense results fixed in advance (cosines), filtered by tenant like the real store."""

    def __init__(self, chunks, cosines: dict[str, float], fail: bool = False) -> None:
        self.chunks = {c.chunk_id: c for c in chunks}
        self.cosines, self.fail, self.reads = cosines, fail, []

    def query(self, vector, flt: Filters, window: int) -> RankedList:
        if self.fail:
            raise ConnectionError("store gone")
        tenants = flt.get("tenant")
        kept = [(cid, s) for cid, s in sorted(self.cosines.items(), key=lambda x: -x[1])
                if not tenants or self.chunks[cid].metadata.get("tenant") in tenants][:window]
        return RankedList("dense", "cosine", tuple(ScoredItem(cid, self.chunks[cid].parent_id, r, s)
                                                   for r, (cid, s) in enumerate(kept, start=1)))

    def vectors(self, ids):
        self.reads.append(list(ids))
        return {cid: np.array([0.5, 0.5]) for cid in ids}


@pytest.fixture()
def corpus(tmp_path):
    import json

    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS), encoding="utf-8")
    return path


@pytest.fixture()
def state(corpus):
    settings = Settings(_env_file=None)
    st = build_index(settings, corpus, None, "no embedder in this test", lambda: (None, "unused"), threading.RLock())
    return st


def with_store(state, store):
    import dataclasses

    return dataclasses.replace(state, store=store, store_reason=STORE_OK())


def test_ranker_keys_print_as_the_trace_names():
    assert [str(k) for k in (RankerKey("bm25"), RankerKey("dense", "hyde"), RankerKey("bm25", "multi_query", 2),
                             RankerKey("dense", "multi_hop", hop=1, code="PX-9"))] == \
        ["bm25", "dense:hyde", "bm25:multi_query#2", "dense:hop1:PX-9"]


def test_list_status_is_a_field_printed_as_the_old_note():
    skipped = RankedList("lexical", "bm25", (), skipped="hybrid switched off")
    unfused = RankedList("lexical", "bm25", items("a"), unfused="decomposed")
    assert (skipped.fusable, unfused.fusable, RankedList("x", "y").fusable) == (False, False, True)
    assert skipped.to_dict()["note"] == "skipped: hybrid switched off"
    assert unfused.to_dict()["note"] == "searched but not fused: decomposed"


def test_reranker_spec_is_parsed_once():
    assert [(p.kind, p.name) for p in map(RerankerSpec.parse, ["none", " OFF ", "", "bi-encoder:use-m3",
                                                                 "BAAI/bge-reranker-base"])] == \
        [("none", ""), ("none", ""), ("none", ""), ("bi-encoder", "use-m3"), ("cross-encoder", "BAAI/bge-reranker-base")]


def test_generate_filters_both_sides_and_reports_the_vector_cache(state):
    st = with_store(state, FakeStore(state.chunks, {"a#0": 0.9, "d#0": 0.95, "b#0": 0.5}))
    encoder = QueryEncoder(FakeEmbedder())
    flt = build_filters({"tenant": "t1"}, st.field_types, "tenant")
    first = generate(st, encoder, "PX-7 ativado", flt, 10, RRF_ONLY, raw(""), lists=ListCache())
    again = generate(st, encoder, "PX-7 ativado", flt, 10, RRF_ONLY, raw(""))
    assert [i.parent_id for i in first.dense.items] == ["a", "b"]  # d belongs to t2
    assert first.lexical.items[0].parent_id == "a" and first.lexical.items[0].terms
    assert (first.vector_cached, again.vector_cached, encoder.embedder.calls) == (False, True, 1)


def test_generate_skips_by_tier_and_records_a_failed_dense_search(state):
    encoder = QueryEncoder(FakeEmbedder())
    flt = build_filters({"tenant": "t1"}, state.field_types, "tenant")
    dense_only = generate(with_store(state, FakeStore(state.chunks, {"a#0": 0.9})), encoder, "PX-7", flt, 5,
                          DENSE_ONLY, raw("hybrid off"))
    failed = generate(with_store(state, FakeStore(state.chunks, {}, fail=True)), encoder, "PX-7", flt, 5,
                      RRF_ONLY, raw(""))
    assert dense_only.lexical.skipped.text() == "hybrid off" and dense_only.lexical.items == ()
    assert [i.parent_id for i in dense_only.dense.items] == ["a"]
    assert failed.dense_error.text().startswith("dense search failed: ConnectionError") and failed.vector is None
    assert failed.lexical.items and failed.dense.skipped == failed.dense_error


def test_plan_tier_reasons(state):
    s = Settings(_env_file=None)
    flt = build_filters({"tenant": "t1"}, state.field_types, "tenant")
    none = lambda spec: (None, raw("no reranker configured"))  # noqa: E731
    st = with_store(state, FakeStore(state.chunks, {}))
    def plan(*args):
        tier, reason = plan_tier(*args)
        return tier.name, reason.text()

    assert plan(state, flt, s, True, raw("ok"), none) == ("lexical_only", "no embedder: no embedder in this test")
    assert plan(st, flt, s, False, raw("model missing"), none) == ("lexical_only", "model missing")
    assert plan(st, flt, s, True, raw("ok"), none) == ("rrf_only", "no reranker configured")
    assert plan(st, flt, s.with_overrides(hybrid_enabled=False), True, raw("ok"), none)[0] == "dense_only"
    assert plan(st, flt, s.with_overrides(dense_enabled=False), True, raw("ok"), none)[0] == "lexical_only"


def test_decomposed_parts_fuse_round_robin_and_the_original_lists_say_so():
    s = Settings(_env_file=None)
    q1, q2 = Query("parte um", "decompose"), Query("parte dois", "decompose")
    lists = {RankerKey("bm25", "decompose", 1): (q1, RankedList("lexical", "bm25", items("a", "b"))),
             RankerKey("bm25", "decompose", 2): (q2, RankedList("lexical", "bm25", items("c", "b")))}
    lexical, dense, fused = fuse_expanded(RankedList("lexical", "bm25", items("d")),
                                          RankedList("dense", "cosine", items("d")), Expansion((q1, q2), lists), s)
    assert [i.parent_id for i in fused.items] == ["a", "c", "b"]  # each part's first, then the next
    assert lexical.unfused and dense.unfused and "d" not in {i.parent_id for i in fused.items}


def test_multi_hop_inserts_the_code_it_followed(state):
    s = Settings(_env_file=None).with_overrides(top_k=2)
    fused = RankedList("fused", "rrf", items("b", "a"))

    def search(text, hyde):
        from retrieval.stages.generate import Generated

        found = items("c", "b") if text == "PX-9" else ()
        return Generated(RankedList("lexical", "bm25", found), RankedList("dense", "cosine", ()), None, None)

    # The top two (b, a) mention PX-9 and PX-7; only PX-9's hop finds a chunk outside the top that holds it.
    hops = multi_hop("Quanto leva o reembolso?", s, state, fused, search)
    assert [i.parent_id for i in hops.fused.items] == ["b", "c", "a"]
    assert [q.text for q in hops.queries] == ["PX-9", "PX-7"] and hops.cost["retrieval_calls"] == 4


def test_select_dedup_topk_mmr_and_lost_by_reranker():
    fused = RankedList("fused", "rrf", (ScoredItem("a#0", "a", 1, 0.9), ScoredItem("a#1", "a", 2, 0.8),
                                        ScoredItem("b#0", "b", 3, 0.7), ScoredItem("c#0", "c", 4, 0.1)))
    assert [i.chunk_id for i in dedup(fused.items, "parent")] == ["a#0", "b#0", "c#0"]
    plain = select(fused, "chunk", 2, 4, None, None)
    assert [i.chunk_id for i in plain.items] == ["a#0", "a#1"] and plain.note is None
    same = {"a#0": np.array([1.0, 0.0]), "a#1": np.array([1.0, 0.0]), "b#0": np.array([0.0, 1.0]),
            "c#0": np.array([0.0, 1.0])}

    class Stored:
        def vectors(self, ids):
            return {i: same[i] for i in ids}

    # λ = 0.5: after a#0, its twin a#1 is fully redundant, so b#0 comes next.
    diverse = select(fused, "chunk", 2, 4, 0.5, Stored())
    assert [i.chunk_id for i in diverse.items] == ["a#0", "b#0"] and diverse.note is None
    reranked = RankedList("reranked", "x", (ScoredItem("c#0", "c", 1, 1.0, fused_rank=4),
                                            ScoredItem("a#0", "a", 2, 0.5, fused_rank=1)))
    assert lost_by_reranker(fused, reranked, "parent", 2) == [
        {"chunk_id": "b#0", "parent_id": "b", "fused_rank": 3, "reranked_rank": None, "reader": None}]
    assert lost_by_reranker(fused, RankedList("reranked", "none"), "parent", 2) == []
    # What the judge's reader read comes with the lost entry; when the reranker is the reader, its own score.
    assert lost_by_reranker(fused, reranked, "parent", 2, {"b#0": 0.71234, "a#0": 0.9})[0]["reader"] == 0.7123
    by_reader = RankedList("reranked", "reader (MaxSim over e5 token states)",
                           (ScoredItem("c#0", "c", 1, 0.8, fused_rank=4), ScoredItem("a#0", "a", 2, 0.7, fused_rank=1),
                            ScoredItem("b#0", "b", 3, 0.6, fused_rank=3)))
    assert lost_by_reranker(fused, by_reader, "parent", 2) == [
        {"chunk_id": "b#0", "parent_id": "b", "fused_rank": 3, "reranked_rank": 3, "reader": 0.6}]


def test_gate_reads_the_store_only_for_lexical_finds_and_decides_purely(state):
    selected = (ScoredItem("a#0", "a", 1, 0.5), ScoredItem("b#0", "b", 2, 0.4))
    store = FakeStore(state.chunks, {})
    cos = question_cosines(selected, RankedList("dense", "cosine", (ScoredItem("a#0", "a", 1, 0.91),)),
                           np.array([1.0, 0.0]), store)
    assert store.reads == [["b#0"]] and cos.values == {"a#0": 0.91, "b#0": 0.5}
    lexical = RankedList("lexical", "bm25", (ScoredItem("a#0", "a", 1, 3.0),))
    gate = decide(selected, cos, lexical, state.chunk_by_id, "Quando o PX-7 ativa?", 0.8, 2.0, True)
    assert [f.chunk_id for f in gate.final] == ["a#0"] and gate.rejected == 1 and gate.to_dict()["reason"] == "ok"
    coded = decide(selected, cos, lexical, state.chunk_by_id, "Quando o PX-70 ativa?", 0.8, 2.0, True)
    assert coded.final == () and coded.missing_codes == ("PX-70",) and "code identity" in coded.reason.text()
    bm25 = decide(selected, Cosines({}, False), lexical, state.chunk_by_id, "PX-7", 0.8, 2.0, True)
    assert bm25.kind == "bm25" and [f.chunk_id for f in bm25.final] == ["a#0"]


def test_gate_uses_the_vectors_the_request_has_read_and_reads_only_the_rest(state):
    selected = (ScoredItem("a#0", "a", 1, 0.5), ScoredItem("b#0", "b", 2, 0.4), ScoredItem("c#0", "c", 3, 0.3))
    store = FakeStore(state.chunks, {})
    cos = question_cosines(selected, RankedList("dense", "cosine", (ScoredItem("a#0", "a", 1, 0.91),)),
                           np.array([1.0, 0.0]), store, read_before={"b#0": np.array([0.6, 0.8])})
    assert store.reads == [["c#0"]] and cos.values["b#0"] == 0.6 and cos.values["a#0"] == 0.91


def test_timer_accounts_for_the_whole_request():
    timer = StageTimer()
    with timer.stage("lexical"):
        pass
    timer.skip("rerank")
    t = timer.finish()
    assert t["rerank"] is None and t["total"] >= t["lexical"] + t["other"] - 1e-6


def test_a_request_cannot_change_an_index_level_setting(state):
    bench = Workbench(Settings(_env_file=None), embedder=None, progress=False)
    bench.state = state
    with pytest.raises(InvalidSetting, match="chunk_tokens, contextual"):
        bench.ask("Quando o PX-7 ativa?", {"tenant": "t1"},
                  settings=bench.settings.with_overrides(contextual=True, chunk_tokens=200))
    trace = bench.ask("Quando o PX-7 ativa?", {"tenant": "t1"}, settings=bench.settings.with_overrides(top_k=1, min_bm25=0.0))
    assert trace.tier == "lexical_only" and [i.parent_id for i in trace.selected] == ["a"]


def test_index_key_names_every_index_setting():
    base = Settings(_env_file=None)
    keys = {base.with_overrides(**{name: value}).index_key() for name, value in
            [("contextual", True), ("hnsw_ef_search", 400), ("chunk_tokens", 200), ("top_k", 9)]}
    assert base.index_key() in keys and len(keys | {base.index_key()}) == 4  # top_k is per request


def test_every_millisecond_of_a_request_is_in_a_named_stage(state, tmp_path):
    from retrieval.core.timing import TOP_LEVEL_STAGES

    bench = Workbench(Settings(_env_file=None), embedder=None, progress=False)
    bench.state = state
    s = bench.settings.with_overrides(reranker_model=str(tmp_path / "no-such-cross-encoder"), min_bm25=0.0)
    first = bench.ask("Quando o PX-7 ativa?", {"tenant": "t1"}, settings=s).timings_ms
    second = bench.ask("Quando o PX-7 ativa?", {"tenant": "t1"}, settings=s).timings_ms
    assert first["load_reranker"] is not None and "load_reranker" not in second  # loaded once, by the first
    named = sum(v for k, v in first.items() if k in TOP_LEVEL_STAGES and v is not None)
    assert abs(named + first["other"] - first["total"]) < 0.01


def test_passage_templates_and_their_own_collections():
    from retrieval.backends.store import index_variant
    from retrieval.core.types import Chunk

    chunk = Chunk("p#0", "p", 0, "Prazo de entrega", "Chega em 5 dias.", {}, "h", context="Contexto.")
    assert [chunk.passage(t) for t in ("title-newline", "title-period", "text")] == [
        "Prazo de entrega\nContexto.\nChega em 5 dias.", "Prazo de entrega. Contexto. Chega em 5 dias.",
        "Contexto. Chega em 5 dias."]
    assert Chunk("q#0", "q", 0, "Como?", "Assim.", {}, "h").passage("title-period") == "Como? Assim."
    with pytest.raises(ValueError, match="unknown passage template"):
        chunk.passage("html")
    assert index_variant(120, 30) == index_variant(120, 30, False, "title-newline") == "chunks-120-30"
    assert index_variant(120, 30, True, "text") == "chunks-120-30+context+text"


# -- the code gate knows the codes of the request's tenant ---------------------------------------------------------
def _bench_of(tmp_path, docs, name):
    import json

    path = tmp_path / name
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")
    bench = Workbench(Settings(_env_file=None, reranker_model="none", support_gate=False, evidence_model=False),
                      embedder=None, progress=False)
    bench.state = build_index(bench.settings, path, None, "no embedder in this test", lambda: (None, "unused"),
                              threading.RLock())
    return bench


def test_a_code_only_another_tenant_writes_does_not_change_a_tenants_verdict(tmp_path):
    """``Q-Lite`` is a code only because Ventura's corpus writes it so (a capital and a hyphen are no evidence by
    themselves): a Lumen question naming it is answered as on a corpus without Ventura, not refused for a code
    Lumen never wrote. And a code Lumen writes stays Lumen's when Ventura writes it in lower case."""
    lumen = [{"id": "a1", "title": "Travamento", "metadata": {"tenant": "lumen"},
              "text": "O aparelho trava ao ligar; segure o botão por dez segundos para reiniciar."},
             {"id": "a2", "title": "Garantia", "text": "A garantia do X-Pro cobre um ano.", "metadata": {"tenant": "lumen"}}]
    ventura = [{"id": "b1", "title": "Q-Lite", "text": "O Q-Lite trava ao ligar; troque a bateria.",
                "metadata": {"tenant": "ventura"}},
               {"id": "b2", "title": "Loja", "text": "Compre o x-pro na loja.", "metadata": {"tenant": "ventura"}}]
    both, alone = _bench_of(tmp_path, lumen + ventura, "both.jsonl"), _bench_of(tmp_path, lumen, "alone.jsonl")

    def verdict(bench):
        s = bench.settings.with_overrides(min_bm25=0.0)
        trace = bench.ask("O Q-Lite trava ao ligar, o que faço?", {"tenant": "lumen"}, settings=s)
        return (trace.tier, trace.tier_reason, [f.chunk_id for f in trace.final], trace.answer.abstained,
                trace.gate["missing_codes"], trace.gate["reason"], trace.gate["rejected"])

    assert verdict(both) == verdict(alone)
    assert verdict(both)[2] == ["a1#0"] and verdict(both)[4] == []
    assert both.state.codes_of(["lumen"]) == alone.state.codes_of(["lumen"]) == alone.state.known_codes == {"x-pro"}
    assert both.state.codes_of(["ventura"]) == {"q-lite"} and both.state.codes_of(None) == both.state.known_codes
