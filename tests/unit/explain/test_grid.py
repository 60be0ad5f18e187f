"""The analyst's views (retrieval/grid.py) over a hand-built trace (a real Trace written out, tests/helpers/traces.py):
the rank grid's union and fates, the RRF terms 1/(k + r), one chunk's provenance, and the signal that decided why one
chunk ranks above another."""

from __future__ import annotations

import copy

import pytest
from helpers.traces import K, item
from helpers.traces import grid_trace as trace

from retrieval.backends.store import NO_STORE
from retrieval.explain import card, grid, why
from retrieval.pipeline.view import TraceView
from retrieval.stages.select import MMR_NOT_APPLIED

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict


def test_grid_module_does_not_import_streamlit() -> None:
    source = open(grid.__file__, encoding="utf-8").read()
    assert "import streamlit" not in source and "from streamlit" not in source


def test_grid_has_one_row_per_chunk_of_any_list_with_its_rank_in_each() -> None:
    rows = grid.grid_rows(view(trace()))
    assert [r["chunk_id"] for r in rows] == ["a#1", "a#0", "b#0", "d#0", "c#0", "e#0"]  # final, then fused rank
    by = {r["chunk_id"]: r for r in rows}
    ranks = {cid: (r["bm25_rank"], r["dense_rank"], r["fused_rank"], r["rerank_rank"]) for cid, r in by.items()}
    assert ranks == {"a#1": (None, 1, 3, 1), "a#0": (1, 3, 1, 3), "b#0": (2, 2, 2, 2), "d#0": (3, None, 4, 4),
                     "c#0": (None, 4, 5, None), "e#0": (4, None, None, None)}
    assert by["a#0"]["bm25"] == 5.0 and by["b#0"]["cosine"] == 0.79 and by["a#1"]["rerank"] == 1.0
    assert [by[c]["move"] for c in ("a#1", "a#0", "b#0", "d#0", "c#0")] == [2, -2, 0, 0, None]
    assert by["a#0"]["shares"] == pytest.approx({"bm25": (1 / 61) / (1 / 61 + 1 / 63),
                                                 "dense": (1 / 63) / (1 / 61 + 1 / 63)})
    assert by["a#1"]["shares"] == {"dense": 1.0} and by["e#0"]["shares"] == {}


def test_grid_rows_carry_each_chunks_place_from_its_trace_items() -> None:
    t = trace()
    for name in ("dense", "fused", "reranked"):  # a#1's items carry its place; the others none (a JSONL corpus)
        t[name]["items"] = [{**i, "page": 4, "page_end": 5, "section": "Capítulo I › Seção II"}
                            if i["chunk_id"] == "a#1" else i for i in t[name]["items"]]
    by = {r["chunk_id"]: r for r in grid.grid_rows(view(t))}
    assert by["a#1"]["where"] == {"section": "Capítulo I › Seção II", "page": 4, "page_end": 5}
    assert all(by[c]["where"] == {} for c in ("a#0", "b#0", "c#0", "d#0", "e#0"))
    assert card.provenance(view(t), "a#1")["row"]["where"]["page"] == 4


def test_grid_final_position_and_why_each_other_chunk_was_cut() -> None:
    by = {r["chunk_id"]: r for r in grid.grid_rows(view(trace()))}
    assert (by["a#1"]["final"], by["a#1"]["fate"]) == (1, "final")
    assert (by["a#0"]["fate"], by["a#0"]["fate_detail"]) == ("dedup", {"kept": "a#1"})
    assert (by["b#0"]["fate"], by["b#0"]["fate_detail"]) == ("gate", {"kind": "cosine", "value": 0.79,
                                                                       "threshold": 0.8})
    assert (by["d#0"]["fate"], by["d#0"]["fate_detail"]) == ("top_k", {"top_k": 2})
    assert (by["c#0"]["fate"], by["c#0"]["fate_detail"]) == ("window", {"max_input": 4})
    assert by["e#0"]["fate"] == "not_fused"
    assert all(by[c]["final"] is None for c in ("a#0", "b#0", "d#0", "c#0", "e#0"))


def test_a_refused_request_gives_every_read_chunk_the_gate_reason() -> None:
    t = trace()
    t["final"] = []
    t["gate"]["reason"] = "the question names PX-9, which no final chunk contains (code identity gate)"
    by = {r["chunk_id"]: r for r in grid.grid_rows(view(t))}
    for cid in ("a#1", "b#0"):
        assert by[cid]["fate"] == "gate" and "PX-9" in by[cid]["fate_detail"]["reason"]
    assert by["d#0"]["fate"] == "top_k"


def test_without_a_rerank_the_fused_list_is_deduplicated_and_mmr_is_named() -> None:
    t = trace()
    t["reranked"] = {"score_kind": "none", "items": []}
    t["settings"]["mmr_lambda"] = 0.5
    t["selected"] = [item("a#0", 1, 0.0), item("d#0", 4, 0.0)]
    t["final"] = [{**item("a#0", 1, 0.0), "similarity": 0.78}, {**item("d#0", 2, 0.0), "similarity": 0.81}]
    by = {r["chunk_id"]: r for r in grid.grid_rows(view(t))}
    assert (by["a#0"]["final"], by["d#0"]["final"]) == (1, 2)
    assert by["a#1"]["fate_detail"] == {"kept": "a#0"}  # a#0 is fused #1: a#1 (#3) is the repeat now
    assert by["b#0"]["fate"] == "mmr" and by["c#0"]["fate"] == "mmr"  # never "window" without a rerank
    assert by["d#0"]["cosine"] == pytest.approx(0.81) and by["d#0"]["cosine_from"] == "gate"
    not_applied = MMR_NOT_APPLIED(why=NO_STORE(), top_k=2)
    t["notes"] = [{"stage": "select", "note": not_applied.text(), "note_code": not_applied.to_dict()}]
    assert {r["chunk_id"]: r["fate"] for r in grid.grid_rows(view(t))}["b#0"] == "top_k"


def test_rrf_terms_are_one_over_k_plus_rank_with_the_requests_k() -> None:
    terms = card.rrf_terms(view(trace()), "a#0")
    assert [(t["ranker"], t["rank"], t["k"]) for t in terms] == [("bm25", 1, 60), ("dense", 3, 60)]
    assert [t["value"] for t in terms] == pytest.approx([1 / (60 + 1), 1 / (60 + 3)])
    assert all(t["value"] == pytest.approx(t["recorded"]) for t in terms)
    t = trace()
    t["settings"]["rrf_k"] = 10
    for entry in t["fused"]["items"]:
        entry["contributions"] = {r: 1 / (10 + rank) for r, rank in entry["ranks"].items()}
    assert [x["value"] for x in card.rrf_terms(view(t), "b#0")] == pytest.approx([1 / (10 + 2), 1 / (10 + 2)])
    assert card.rrf_terms(view(t), "e#0") == []  # not fused


def test_weighted_rrf_reads_the_weight_back_and_combsum_has_no_rank_formula() -> None:
    t = trace()
    t["settings"]["fusion"] = "weighted_rrf"
    t["fused"]["items"][0]["contributions"] = {"bm25": 2 / (K + 1), "dense": 0.5 / (K + 3)}
    terms = card.rrf_terms(view(t), "a#0")
    assert [x["weight"] for x in terms] == [2.0, 0.5]
    assert [x["value"] for x in terms] == pytest.approx([2 / (K + 1), 0.5 / (K + 3)])
    t["settings"]["fusion"] = "combsum"
    assert [x["value"] for x in card.rrf_terms(view(t), "a#0")] == [None, None]


def test_provenance_holds_every_signal_of_one_chunk() -> None:
    shown = card.provenance(view(trace()), "a#1")
    assert shown["bm25"] is None and shown["dense"] == {"rank": 1, "cosine": 0.93, "cosine_from": "dense"}
    assert shown["fusion"]["rank"] == 3 and shown["fusion"]["k"] == 60
    assert shown["fusion"]["terms"][0]["value"] == pytest.approx(1 / 61)
    assert shown["rerank"]["features"] == [("cov_chunk", 0.9), ("dense_cos", 0.3), ("bm25_norm", -0.1)]
    assert shown["rerank"]["bias"] == -0.1 and shown["rerank"]["move"] == 2
    assert sum(v for _, v in shown["rerank"]["features"]) + shown["rerank"]["bias"] == pytest.approx(1.0)
    assert shown["gate"]["decision"] == "passed" and shown["gate"]["value"] == 0.93
    b = card.provenance(view(trace()), "b#0")
    assert b["bm25"]["terms"] == [("ativado", 3.0)]
    assert (b["gate"]["decision"], b["gate"]["value"], b["gate"]["threshold"]) == ("refused", 0.79, 0.8)
    assert card.provenance(view(trace()), "a#0")["gate"]["decision"] == "not_read"
    with pytest.raises(KeyError):
        card.provenance(view(trace()), "zzz#0")


def test_why_above_names_the_feature_that_decided_the_rerank() -> None:
    # a#1 (reranked #1) over b#0 (#2): cov_chunk +0.7, dense_cos +0.2, bm25_norm −0.5: coverage decided.
    for a, b in (("a#1", "b#0"), ("b#0", "a#1")):  # the order of the question does not matter
        result = why.why_above(view(trace()), a, b)
        assert (result["upper"], result["lower"], result["stage"]) == ("a#1", "b#0", "reranked")
        assert result["deciding"] == {"kind": "feature", "stage": "reranked", "signal": "cov_chunk",
                                      "diff": pytest.approx(0.7)}
    rows = why.why_above(view(trace()), "a#1", "b#0")["rows"]
    feats = [(r["signal"], round(r["diff"], 6)) for r in rows if r["group"] == "rerank"]
    assert feats == [("score", 0.4), ("cov_chunk", 0.7), ("bm25_norm", -0.5), ("dense_cos", 0.2)]
    term = next(r for r in rows if r["group"] == "bm25" and r["signal"] == "ativado")
    assert (term["upper"], term["lower"], term["diff"], term["only"]) == (None, 3.0, -3.0, "lower")
    cosine = next(r for r in rows if r["group"] == "dense")
    assert cosine["diff"] == pytest.approx(0.93 - 0.79)
    share = {r["signal"]: (r["upper"], r["lower"]) for r in rows if r["group"] == "share"}
    assert share == {"dense": (1.0, pytest.approx(0.5)), "bm25": (None, pytest.approx(0.5))}


def test_why_above_without_a_rerank_names_the_rrf_term() -> None:
    t = trace()
    t["reranked"] = {"score_kind": "none", "items": []}
    # a#0 (fused #1: bm25 #1, dense #3) over b#0 (#2: bm25 #2, dense #2): the BM25 term 1/61 − 1/62 outweighs
    # the dense term's 1/63 − 1/62 < 0.
    result = why.why_above(view(t), "b#0", "a#0")
    assert (result["upper"], result["stage"]) == ("a#0", "fused")
    assert result["deciding"]["kind"] == "rrf" and result["deciding"]["signal"] == "bm25"
    assert result["deciding"]["diff"] == pytest.approx(1 / (60 + 1) - 1 / (60 + 2))
    rrf = {r["signal"]: r["diff"] for r in result["rows"] if r["group"] == "rrf"}
    assert rrf["dense"] == pytest.approx(1 / (60 + 3) - 1 / (60 + 2))


def test_why_above_other_cases_tie_absent_score() -> None:
    t = trace()
    result = why.why_above(view(t), "c#0", "a#0")  # c#0 was never reranked
    assert result["upper"] == "a#0" and result["deciding"] == {"kind": "absent", "stage": "reranked",
                                                                "signal": "window", "diff": None}
    tied = copy.deepcopy(t)
    tied["reranked"]["items"][1]["score"] = 1.0
    assert why.why_above(view(tied), "a#1", "b#0")["deciding"]["kind"] == "tie"
    cross = copy.deepcopy(t)
    for entry in cross["reranked"]["items"]:
        entry.pop("feature_contributions")
    assert why.why_above(view(cross), "a#1", "b#0")["deciding"] == {"kind": "score", "stage": "reranked",
                                                               "signal": "score", "diff": pytest.approx(0.4)}
    with pytest.raises(ValueError):
        why.why_above(view(t), "a#1", "a#1")


def test_long_ids_are_labelled_by_what_tells_them_apart() -> None:
    labels = grid.distinct_labels(["reference__react__useLayoutEffect#0", "reference__react__useLayoutEffect#10",
                                   "lumen-px7-nao-ativado#1"])
    assert labels == {"reference__react__useLayoutEffect#0": "…eact__useLayoutEffect#0",
                      "reference__react__useLayoutEffect#10": "…act__useLayoutEffect#10",
                      "lumen-px7-nao-ativado#1": "lumen-px7-nao-ativado#1"}
    assert all(len(v) <= grid.LABEL_WIDTH for v in labels.values())
    # Two ids that end alike would read the same: the whole ids stay.
    twins = ["a-very-long-prefix-one-and-the-very-same-end#0", "b-very-long-prefix-two-and-the-very-same-end#0"]
    assert grid.distinct_labels(twins) == {t: t for t in twins}
