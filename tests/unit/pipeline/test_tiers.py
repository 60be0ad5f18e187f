"""The tier plan (retrieval/pipeline/tiers.py): which tier a request runs on a tiny index, and why."""

from __future__ import annotations

import pytest
from helpers.tiny_index import FakeStore, tiny_state, with_store

from retrieval.core.filters import build_filters
from retrieval.core.reasons import raw
from retrieval.pipeline.tiers import plan_tier
from retrieval.settings import Settings


@pytest.fixture()
def state(tmp_path):
    return tiny_state(tmp_path)


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
