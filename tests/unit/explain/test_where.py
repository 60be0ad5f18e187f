"""Where is my document: every reason of :func:`retrieval.explain.where.explain` on a small hand-built index."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from retrieval.core.types import Chunk, RankedList, ScoredItem
from retrieval.explain import where as explain
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict


def chunk(cid: str, text: str, tenant: str, **place) -> Chunk:
    return Chunk(cid, cid.split("#")[0], 0, "", text, {"tenant": tenant, **place}, "h")


CHUNKS = [chunk("a#0", "ativar o PX-7 em 24 horas", "lumen"), chunk("b#0", "senha do portal", "lumen"),
          chunk("c#0", "ativar a maquininha", "lumen", page=4, page_end=5, section="Capítulo I › Seção II"),
          chunk("d#0", "ativar PX-7 na Ventura", "ventura")]
VECTORS = {"a#0": np.array([1.0, 0.0]), "b#0": np.array([0.6, 0.8]), "c#0": np.array([0.8, 0.6]),
           "d#0": np.array([1.0, 0.0])}


class Lexical:
    def search(self, text, flt, window):  # the full ranking of the filtered corpus: a, c (b shares no token)
        return RankedList("lexical", "bm25", (ScoredItem("a#0", "a", 1, 2.0), ScoredItem("c#0", "c", 2, 0.5)))


class Store:
    """Stored vectors, and an exact nearest search standing in for the store's deeper HNSW window."""

    def __init__(self) -> None:
        self.reads: list[list[str]] = []

    def vectors(self, ids):
        self.reads.append(list(ids))
        return {i: VECTORS[i].astype(np.float32) for i in ids if i in VECTORS}

    def query(self, vector, flt, window):
        kept = sorted(((float(VECTORS[c.chunk_id] @ vector), c.chunk_id) for c in CHUNKS if flt.matches(c.metadata)),
                      key=lambda x: (-x[0], x[1]))[:window]
        return RankedList("dense", "cosine", tuple(ScoredItem(cid, cid.split("#")[0], r, s)
                                                   for r, (s, cid) in enumerate(kept, start=1)))


STATE = SimpleNamespace(chunks=CHUNKS, chunk_by_id={c.chunk_id: c for c in CHUNKS}, lexical=Lexical(), store=Store(),
                        documents=[SimpleNamespace(id=p, title=f"Doc {p}") for p in "abcd"])
# window = top_k × overfetch = 1; the "HNSW" dense list returned c#0 but missed a#0 (exact cosine 1.0, rank 1).
TRACE = {"question": "Como ativar o PX-7?", "filters": {"tenant": "lumen"},
         "settings": {"top_k": 1, "overfetch": 1, "rrf_k": 60, "min_similarity": 0.8, "require_codes": True},
         "lexical": {"items": [{"chunk_id": "a#0", "parent_id": "a", "rank": 1, "score": 2.0}]},
         "dense": {"items": [{"chunk_id": "c#0", "parent_id": "c", "rank": 1, "score": 0.8}]},
         "fused": {"items": [{"chunk_id": "a#0", "parent_id": "a", "rank": 1, "score": 1 / 61, "ranks": {"bm25": 1}},
                             {"chunk_id": "c#0", "parent_id": "c", "rank": 2, "score": 1 / 61, "ranks": {"dense": 1}}]},
         "reranked": {"items": []}, "final": []}
Q = np.array([1.0, 0.0], dtype=np.float32)


def test_filtered_by_tenant_names_the_field_and_values() -> None:
    out = explain.explain(STATE, view(TRACE), "d#0", query_vector=Q)
    assert out["lists"]["lexical"] == {"status": "filtered", "field": "tenant", "value": "ventura", "allowed": ["lumen"]}
    assert out["lists"]["dense"]["status"] == "filtered" and out["fusion"] == {"status": "filtered"}
    assert explain.describe(out["lists"]["lexical"], "lexical").text() == (
        "removed by the filter tenant: the chunk has 'ventura', the request allows 'lumen'")


def test_hnsw_miss_and_what_rrf_would_give() -> None:
    out = explain.explain(STATE, view(TRACE), "a#0", query_vector=Q)
    assert out["where"] == {}  # a chunk without page or section
    assert explain.explain(STATE, view(TRACE), "c#0", query_vector=Q)["where"] == {
        "section": "Capítulo I › Seção II", "page": 4, "page_end": 5}
    assert out["lists"]["lexical"] == {"status": "in_list", "rank": 1, "score": 2.0}
    assert out["lists"]["dense"] == {"status": "hnsw_miss", "exact_rank": 1, "cosine": pytest.approx(1.0)}
    fusion = out["fusion"]
    assert fusion["ranks"] == {"bm25": 1, "dense": 1}
    assert fusion["score"] == pytest.approx(2 / 61, abs=1e-6) and fusion["would_rank"] == 1
    assert out["gate"]["passes_similarity"] is True and out["gate"]["missing_codes"] == []


def test_no_shared_token_and_outside_the_window() -> None:
    out = explain.explain(STATE, view(TRACE), "b#0", query_vector=Q)
    lexical = out["lists"]["lexical"]
    assert lexical["status"] == "no_token"
    assert lexical["question_tokens"] == ["7", "ativar", "px", "px-7"] and "senha" in lexical["chunk_tokens"]
    # exact cosines inside lumen: a 1.0, c 0.8, b 0.6 → b is 3rd, outside the window of 1
    assert out["lists"]["dense"] == {"status": "outside_window", "rank": 3, "score": pytest.approx(0.6), "window": 1}
    assert out["gate"]["passes_similarity"] is False and out["gate"]["missing_codes"] == ["PX-7"]
    c = explain.explain(STATE, view(TRACE), "c#0", query_vector=Q)["lists"]["lexical"]
    assert c["status"] == "outside_window" and c["rank"] == 2 and c["shared_tokens"] == ["ativar"]


def test_targets_and_search() -> None:
    assert explain.targets(STATE, "a") == ["a#0"] and explain.targets(STATE, "b#0") == ["b#0"]
    assert explain.search_targets(STATE, "doc c") == [("c", "Doc c")]


def test_the_learned_gate_is_named_for_the_whole_request() -> None:
    refused = {**TRACE, "gate": {"support": {"best": 0.09, "threshold": 0.18, "passes": False, "chunks": ["a#0"]}}}
    out = explain.explain(STATE, view(refused), "a#0", Q)
    assert out["gate"]["learned"] == {"p_support": 0.09, "threshold": 0.18, "passes": False, "read_this_chunk": True}
    assert explain.explain(STATE, view(refused), "c#0", Q)["gate"]["learned"]["read_this_chunk"] is False
    assert explain.explain(STATE, view(TRACE), "a#0", Q)["gate"]["learned"] is None  # no learned gate ran


def test_the_dense_side_reads_only_the_picked_chunks_once_and_bounded() -> None:
    store = Store()
    state = SimpleNamespace(**{**vars(STATE), "store": store})
    out = explain.explain_many(state, view(TRACE), ["a#0", "b#0", "d#0"], query_vector=Q)
    assert store.reads == [["a#0", "b#0"]]  # one read, the pick's chunks that the filter allows; never the tenant
    assert [e["lists"]["dense"]["status"] for e in out] == ["hnsw_miss", "outside_window", "filtered"]
    many = [f"x#{n}" for n in range(explain.MAX_WHERE_CHUNKS + 10)]
    big = [chunk(cid, "texto", "lumen") for cid in many]
    wide = SimpleNamespace(**{**vars(state), "chunk_by_id": {**STATE.chunk_by_id, **{c.chunk_id: c for c in big}}})
    store.reads.clear()
    evidence = explain.dense_evidence(wide, view(TRACE), many, Q)
    assert store.reads == [many[: explain.MAX_WHERE_CHUNKS]]
    last = explain.explain(wide, view(TRACE), many[-1], Q, evidence=evidence)["lists"]["dense"]
    assert last["status"] == "unknown" and f"at most {explain.MAX_WHERE_CHUNKS} chunks" in last["note"].text()


def test_a_failing_store_leaves_the_dense_entry_unknown_with_its_reason() -> None:
    class Broken(Store):
        def vectors(self, ids):
            raise ConnectionError("too many SQL variables")

    state = SimpleNamespace(**{**vars(STATE), "store": Broken()})
    out = explain.explain(state, view(TRACE), "a#0", query_vector=Q)  # no exception
    dense = out["lists"]["dense"]
    assert dense["status"] == "unknown" and dense["note"].text() == (
        "its exact cosine rank is unknown: stored vectors unavailable: ConnectionError: too many SQL variables")
    assert out["lists"]["lexical"]["status"] == "in_list" and out["gate"]["cosine"] is None
    listed = explain.explain(state, view(TRACE), "c#0", query_vector=Q)["lists"]["dense"]  # in the dense list
    assert listed["status"] == "in_list" and listed["exact_rank"] is None
    assert explain.describe(listed, "dense").text() == ("rank 1, score 0.8000 (exact cosine rank unknown: stored vectors "
                                                 "unavailable: ConnectionError: too many SQL variables)")


def test_a_cosine_below_the_deepest_window_has_an_unknown_rank(monkeypatch) -> None:
    monkeypatch.setattr(explain, "DEEP_WINDOW", 2)  # the store's nearest two in lumen: a (1.0), c (0.8)
    entry = explain.explain(STATE, view(TRACE), "b#0", query_vector=Q)["lists"]["dense"]
    assert entry == {"status": "outside_window", "rank": None, "score": pytest.approx(0.6), "window": 1, "beyond": 2}
    assert explain.describe(entry, "dense").text() == ("ranked after the store's nearest 2, outside the window of 1 "
                                                "(cosine 0.6000)")


def test_the_reader_scores_the_chunk_unless_the_filters_exclude_it() -> None:
    from retrieval.learned.reader.loader import ReaderStore

    store = ReaderStore(None)   # a Workbench's reader: the process' weights, states in memory here
    filtered = explain.explain(STATE, view(TRACE), "d#0", query_vector=Q, reader=store.reader)["reader"]
    assert filtered == {"status": "filtered"}
    assert explain.explain(STATE, view(TRACE), "a#0", query_vector=Q)["reader"] == {"status": "not_run"}  # none in
    reader, why = store.reader()
    assert why.text() == "loaded"
    got = explain.explain(STATE, view(TRACE), "a#0", query_vector=Q, reader=store.reader)["reader"]
    chunk = STATE.chunk_by_id["a#0"]
    assert got == {"status": "computed",
                   "score": round(float(reader.score(TRACE["question"], [chunk.text])[0]), 4)}
    assert 0.0 < got["score"] <= 1.0
