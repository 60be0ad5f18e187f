"""The movement chart's statuses on the lab demo question agree with the final list the answer used."""

from __future__ import annotations

import pytest

from retrieval.explain import tables
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict

pytestmark = pytest.mark.integration

DEMO_Q = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def test_demo_movement_agrees_with_the_final_list(lab_bench):
    trace = lab_bench.ask(DEMO_Q, {"tenant": "lumen"}).to_dict()
    final = [f["chunk_id"] for f in trace["final"]]
    status = {r["chunk_id"]: r["status"] for r in tables.movement_rows(view(trace))}
    assert status and set(final) <= set(status)
    assert {c for c, s in status.items() if s in ("stayed in", "moved in")} == set(final)
    kept_parents = {f["parent_id"] for f in trace["final"]}
    siblings = [i["chunk_id"] for i in trace["reranked"]["items"]
                if i["parent_id"] in kept_parents and i["chunk_id"] not in final]
    assert siblings  # the demo exercises the dedup: a kept parent's other chunk (lumen-px7-ativacao#1 in the report)
    assert all(status[c] in ("fell out", "stayed out") for c in siblings)
    top_k = trace["settings"]["top_k"]
    beyond = [i["chunk_id"] for i in trace["reranked"]["items"] if i["chunk_id"] in final and i["rank"] > top_k]
    assert beyond  # final chunks whose raw reranked rank is past top_k (lumen-manual-px17#3 in the report)
    assert all(status[c] in ("stayed in", "moved in") for c in beyond)
