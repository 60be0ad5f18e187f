"""The analyst's tab under AppTest (real corpus, models and store): the rank grid has one row per chunk of
any list of the request's trace, a chunk picked opens its provenance card, and "Why A above B" names the
signal that decided; in both interface languages."""

from __future__ import annotations

from helpers.apptest import assert_ok, page
from streamlit.testing.v1 import AppTest

from ui.escape import code

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def the_trace(at: AppTest) -> dict:
    """The page's own request (the Compare tab's runs carry a tag, the last field of their key)."""
    import json

    traces = [trace for sig, trace in at.session_state["traces"].items() if json.loads(sig)[-1] == ""]
    assert len(traces) == 1
    return traces[0]


def the_grid(at: AppTest):
    grids = [d.value for d in at.dataframe if {"chunk_id", "fate"} <= set(d.value.columns)]
    assert len(grids) == 1, [list(d.value.columns) for d in at.dataframe]
    return grids[0]


def test_grid_has_one_row_per_candidate_and_a_picked_chunk_opens_its_card() -> None:
    at = page(q=PX7, tenant="lumen")
    assert_ok(at)
    trace = the_trace(at)
    union = {i["chunk_id"] for name in ("lexical", "dense", "fused", "reranked") for i in trace[name]["items"]}
    frame = the_grid(at)
    assert set(frame["chunk_id"]) == union and len(frame) == len(union) >= 20
    final = [f["chunk_id"] for f in trace["final"]]
    assert list(frame["chunk_id"][: len(final)]) == final  # sorted by final position first
    assert list(frame["final"][: len(final)]) == list(range(1, len(final) + 1))
    assert {"bm25", "cosine", "rrf", "share", "rerank", "move"} <= set(frame.columns)  # the learned ranker ran
    assert "Rank grid" in [s.value for s in at.subheader] and "Provenance card" in [s.value for s in at.subheader]
    assert any(m.value.startswith(code(final[0])) for m in at.markdown)  # the card opens on final #1

    # Pick a chunk that was cut: its card says why, with its RRF terms 1/(rrf_k + r).
    cut = next(r for r in frame.to_dict("records") if r["fate"])
    fused = next(i for i in trace["fused"]["items"] if i["chunk_id"] == cut["chunk_id"])
    at.selectbox(key="card_pick").set_value(cut["chunk_id"]).run()
    assert_ok(at)
    head = next(m.value for m in at.markdown if m.value.startswith(code(cut["chunk_id"])))
    assert "parent" in head
    formula = next(m.value for m in at.markdown if m.value.startswith(f"Fused #{fused['rank']} (RRF):"))
    for ranker, rank in fused["ranks"].items():
        assert f"1/(60 + {rank})" in formula
    assert any("raw LambdaMART score" in c.value for c in at.caption)

    # Why A above B defaults to final #1 and #2 and names the deciding feature of the learned ranker.
    assert (at.selectbox(key="why_a").value, at.selectbox(key="why_b").value) == (final[0], final[1])
    assert any("ranks above" in m.value and "Decided by" in m.value for m in at.markdown)


def test_the_analyst_tab_in_portuguese() -> None:
    at = page(q=PX7, tenant="lumen", lang="pt")
    assert_ok(at)
    heads = [s.value for s in at.subheader]
    assert "Grade de posições" in heads and "Cartão de proveniência" in heads and "Por que A acima de B" in heads
    assert any("fica acima de" in m.value for m in at.markdown)
