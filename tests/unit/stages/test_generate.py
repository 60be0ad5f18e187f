"""The generators of a request's lists (retrieval/stages/generate.py) on a tiny index with a fake encoder and a store
whose cosines are fixed: both sides filtered by tenant, the query vector cached, a list skipped by its tier or
failed with its reason."""

from __future__ import annotations

import pytest
from helpers.fakes import HashEmbedder
from helpers.tiny_index import FakeStore, tiny_state, with_store

from retrieval.core.filters import build_filters
from retrieval.core.listcache import ListCache
from retrieval.core.reasons import raw
from retrieval.stages.generate import QueryEncoder, generate
from retrieval.stages.tiers import DENSE_ONLY, RRF_ONLY


@pytest.fixture()
def state(tmp_path):
    return tiny_state(tmp_path)


def test_generate_filters_both_sides_and_reports_the_vector_cache(state):
    st = with_store(state, FakeStore(state.chunks, {"a#0": 0.9, "d#0": 0.95, "b#0": 0.5}))
    encoder = QueryEncoder(HashEmbedder())
    flt = build_filters({"tenant": "t1"}, st.field_types, "tenant")
    first = generate(st, encoder, "PX-7 ativado", flt, 10, RRF_ONLY, raw(""), lists=ListCache())
    again = generate(st, encoder, "PX-7 ativado", flt, 10, RRF_ONLY, raw(""))
    assert [i.parent_id for i in first.dense.items] == ["a", "b"]  # d belongs to t2
    assert first.lexical.items[0].parent_id == "a" and first.lexical.items[0].terms
    assert (first.vector_cached, again.vector_cached, encoder.embedder.calls) == (False, True, 1)


def test_generate_skips_by_tier_and_records_a_failed_dense_search(state):
    encoder = QueryEncoder(HashEmbedder())
    flt = build_filters({"tenant": "t1"}, state.field_types, "tenant")
    dense_only = generate(with_store(state, FakeStore(state.chunks, {"a#0": 0.9})), encoder, "PX-7", flt, 5,
                          DENSE_ONLY, raw("hybrid off"))
    failed = generate(with_store(state, FakeStore(state.chunks, {}, fail=True)), encoder, "PX-7", flt, 5,
                      RRF_ONLY, raw(""))
    assert dense_only.lexical.skipped.text() == "hybrid off" and dense_only.lexical.items == ()
    assert [i.parent_id for i in dense_only.dense.items] == ["a"]
    assert failed.dense_error.text().startswith("dense search failed: ConnectionError") and failed.vector is None
    assert failed.lexical.items and failed.dense.skipped == failed.dense_error
