"""The Workbench's request (retrieval/pipeline/workbench.py) on a tiny index with no embedder: an index-level
setting refused per request, and every millisecond of a request in a named stage."""

from __future__ import annotations

import pytest
from helpers.tiny_index import tiny_state

from retrieval.core.errors import InvalidSetting
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings


@pytest.fixture()
def state(tmp_path):
    return tiny_state(tmp_path)


def test_a_request_cannot_change_an_index_level_setting(state):
    bench = Workbench(Settings(_env_file=None), embedder=None, progress=False)
    bench.state = state
    with pytest.raises(InvalidSetting, match="chunk_tokens, contextual"):
        bench.ask("Quando o PX-7 ativa?", {"tenant": "t1"},
                  settings=bench.settings.with_overrides(contextual=True, chunk_tokens=200))
    trace = bench.ask("Quando o PX-7 ativa?", {"tenant": "t1"}, settings=bench.settings.with_overrides(top_k=1, min_bm25=0.0))
    assert trace.tier == "lexical_only" and [i.parent_id for i in trace.selected] == ["a"]


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
