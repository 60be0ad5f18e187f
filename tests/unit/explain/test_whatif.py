"""What-if re-fusion (drop / inject) and manual rankings, against the RRF formula (ranks from 1, k = 60)."""

from __future__ import annotations

import pytest

from retrieval.explain.whatif import FIXTURE_LABEL, Edit, manual_fusion, parse_mapping, parse_ranking, what_if

LISTS = {"bm25": ["d1", "d3", "d2"], "dense": ["d2", "d1", "d4"]}


def test_drop_d1_from_one_ranker():
    out = what_if(LISTS, [Edit("drop", "bm25", "d1")])
    before = {i.chunk_id: i.score for i in out["before"].items}
    after = {i.chunk_id: i.score for i in out["after"].items}
    assert before["d1"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 2))
    assert after["d1"] == pytest.approx(1 / (60 + 2))              # only dense's contribution is left
    assert after["d3"] == pytest.approx(1 / (60 + 1))              # d3 moved up to rank 1 in bm25
    assert after["d2"] == pytest.approx(1 / (60 + 2) + 1 / (60 + 1))
    assert out["after"].chunk_ids() == ["d2", "d3", "d1", "d4"]   # d3 (1/61) now above d1 (1/62)
    row = next(r for r in out["rows"] if r["id"] == "d1")
    assert (row["rank_before"], row["rank_after"], row["movement"]) == (1, 3, -2)
    assert LISTS["bm25"] == ["d1", "d3", "d2"]                     # inputs untouched


def test_inject_a_document_missing_from_both():
    out = what_if(LISTS, [Edit("inject", "dense", "d9", 1)])
    after = {i.chunk_id: i.score for i in out["after"].items}
    assert after["d9"] == pytest.approx(1 / (60 + 1))
    assert after["d2"] == pytest.approx(1 / (60 + 3) + 1 / (60 + 2))   # pushed from rank 1 to 2 in dense
    assert after["d1"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 3))
    row = next(r for r in out["rows"] if r["id"] == "d9")
    assert row["rank_before"] is None and row["score_before"] is None
    assert "d9" not in out["before"].chunk_ids()                         # fusion never invents a document


def test_edit_errors():
    with pytest.raises(ValueError, match="unknown ranker"):
        what_if(LISTS, [Edit("drop", "nope", "d1")])
    with pytest.raises(ValueError, match="already"):
        what_if(LISTS, [Edit("inject", "bm25", "d1", 2)])
    with pytest.raises(ValueError, match="twice"):
        parse_ranking("d1, d2 d1")


def test_manual_fusion_with_tenant_filter_inside_each_list():
    tenants = parse_mapping("d1=A, d2=A, d3=B, d4=A")
    out = manual_fusion({"lexical": ["d1", "d3", "d4"], "semantic": ["d2", "d3", "d1"]}, k=60, top_k=2,
                        doc_values=tenants, allowed="A")
    assert out["label"] == FIXTURE_LABEL
    assert out["removed"] == {"lexical": ["d3"], "semantic": ["d3"]}
    assert [r["id"] for r in out["rows"]] == ["d1", "d2"]
    d1 = out["rows"][0]
    assert d1["score"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 2))  # d1 moved to rank 2 in semantic
    assert d1["lexical contribution"] == pytest.approx(1 / 61) and d1["semantic rank"] == 2


def test_manual_weighted_fusion():
    out = manual_fusion({"lexical": ["d1", "d3", "d2"], "semantic": ["d2", "d1", "d4"]}, k=60,
                        weights={"lexical": 1.0, "semantic": 0.5})
    scores = {r["id"]: r["score"] for r in out["rows"]}
    assert scores["d1"] == pytest.approx(1.0 / 61 + 0.5 / 62)
    assert scores["d2"] == pytest.approx(1.0 / 63 + 0.5 / 61)
