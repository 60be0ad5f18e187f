"""RRF against its formula (Cormack et al., 2009), on the lab seed's two fixtures and constructed ties."""

from __future__ import annotations

import copy

import pytest

from retrieval.core.filters import Filters
from retrieval.core.types import RankedList, ScoredItem
from retrieval.stages.fusion import fuse, rrf, weighted_rrf


def test_plain_fixture_matches_formula():
    # The seed's first fixture: lexical d1, d3, d2 and semantic d2, d1, d4 with k = 60, ranks from 1.
    fused = rrf({"bm25": ["d1", "d3", "d2"], "dense": ["d2", "d1", "d4"]}, k=60)
    scores = {i.chunk_id: i.score for i in fused.items}
    assert scores["d1"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 2))
    assert scores["d2"] == pytest.approx(1 / (60 + 3) + 1 / (60 + 1))
    assert scores["d3"] == pytest.approx(1 / (60 + 2))
    assert scores["d4"] == pytest.approx(1 / (60 + 3))
    assert fused.chunk_ids() == ["d1", "d2", "d3", "d4"]
    d1 = fused.items[0]
    assert d1.contributions == {"bm25": pytest.approx(1 / 61), "dense": pytest.approx(1 / 62)}
    assert d1.ranks == {"bm25": 1, "dense": 2}
    assert [i.rank for i in fused.items] == [1, 2, 3, 4]


def test_tenant_filtered_fixture_recall():
    # The seed's second fixture: d3 belongs to tenant B; the filter acts inside each list, before fusion.
    tenant = {"d1": "A", "d2": "A", "d3": "B", "d4": "A"}
    flt = Filters((("tenant", ("A",)),))
    lexical = [d for d in ["d1", "d3", "d4"] if flt.matches({"tenant": tenant[d]})]
    semantic = [d for d in ["d2", "d3", "d1"] if flt.matches({"tenant": tenant[d]})]
    fused = rrf({"bm25": lexical, "dense": semantic}, k=60)
    assert fused.chunk_ids() == ["d1", "d2", "d4"]
    assert fused.items[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused.items[1].score == pytest.approx(1 / 61)
    relevant = {"d1", "d2"}
    recall = lambda k: len(relevant & set(fused.chunk_ids()[:k])) / len(relevant)  # noqa: E731
    assert recall(1) == 0.5
    assert recall(2) == 1.0
    assert all(tenant[d] == "A" for d in fused.chunk_ids())


def test_duplicate_candidate_counted_once_with_both_contributions():
    fused = rrf({"bm25": ["x", "y"], "dense": ["y"]}, k=10)
    assert fused.chunk_ids().count("y") == 1
    y = next(i for i in fused.items if i.chunk_id == "y")
    assert y.contributions == {"bm25": pytest.approx(1 / 12), "dense": pytest.approx(1 / 11)}
    assert y.score == pytest.approx(1 / 12 + 1 / 11)


def test_tie_broken_by_best_single_rank_then_id():
    # k = 1: "b" only at rank 1 → 1/2; "a" at rank 3 in both → 1/4 + 1/4 = 1/2 (exact in binary).
    fused = rrf({"bm25": ["b", "x", "a"], "dense": ["y", "z", "a"]}, k=1)
    assert fused.items[0].score == fused.items[1].score == 0.5
    # "b" and "y" tie at rank 1 each; "a" ties on score but its best rank is 3.
    assert fused.chunk_ids()[:3] == ["b", "y", "a"]
    same = rrf({"bm25": ["q", "p"], "dense": ["p", "q"]}, k=60)
    assert same.chunk_ids() == ["p", "q"]  # equal score, equal best rank: chunk id decides


def test_weights_and_inputs_untouched():
    lexical = RankedList("lexical", "bm25", (ScoredItem("c1", "p1", 1, 9.0), ScoredItem("c2", "p2", 2, 3.0)))
    before = copy.deepcopy(lexical)
    fused = rrf({"bm25": lexical, "dense": ["c2"]}, k=60, weights={"bm25": 2.0})
    assert lexical == before
    c2, c1 = fused.items
    assert (c2.chunk_id, c2.parent_id, c2.score) == ("c2", "p2", pytest.approx(2 / 62 + 1 / 61))
    assert (c1.chunk_id, c1.parent_id, c1.score) == ("c1", "p1", pytest.approx(2 / 61))
    with pytest.raises(ValueError):
        rrf({"bm25": ["a"]}, k=0)
    with pytest.raises(ValueError):
        rrf({"bm25": ["a", "a"]})


def scored(stage, kind, pairs):
    return RankedList(stage, kind, tuple(ScoredItem(c, c, r, s) for r, (c, s) in enumerate(pairs, start=1)))


def test_weighted_rrf_matches_formula_and_inherits_generator_weight():
    from retrieval.stages.fusion import weighted_rrf

    fused = weighted_rrf({"bm25": ["d1", "d3", "d2"], "dense": ["d2", "d1", "d4"], "bm25:rewrite": ["d3"]},
                         k=60, weights={"bm25": 1.0, "dense": 0.5})
    scores = {i.chunk_id: i.score for i in fused.items}
    assert scores["d1"] == pytest.approx(1.0 / (60 + 1) + 0.5 / (60 + 2))
    assert scores["d2"] == pytest.approx(1.0 / (60 + 3) + 0.5 / (60 + 1))
    assert scores["d3"] == pytest.approx(1.0 / (60 + 2) + 1.0 / (60 + 1))  # bm25:rewrite weighs as bm25
    assert fused.score_kind == "weighted rrf"


def test_combsum_over_min_max_normalized_scores():
    from retrieval.stages.fusion import combsum

    bm25 = scored("lexical", "bm25", [("a", 12.0), ("b", 7.0), ("c", 2.0)])
    dense = scored("dense", "cosine", [("b", 0.90), ("c", 0.85), ("d", 0.80)])
    fused = combsum({"bm25": bm25, "dense": dense}, weights={"dense": 2.0})
    scores = {i.chunk_id: i.score for i in fused.items}
    assert scores["a"] == pytest.approx(1.0 * (12 - 2) / (12 - 2))
    assert scores["b"] == pytest.approx((7 - 2) / (12 - 2) + 2.0 * (0.90 - 0.80) / (0.90 - 0.80))
    assert scores["c"] == pytest.approx(0.0 + 2.0 * (0.85 - 0.80) / (0.90 - 0.80))
    assert scores["d"] == pytest.approx(0.0)
    assert fused.chunk_ids() == ["b", "a", "c", "d"]
    assert "normalized" in fused.score_kind
    with pytest.raises(ValueError):
        combsum({"bm25": ["a", "b"]})


def test_convex_combination_against_a_hand_computation():
    from retrieval.stages.fusion import convex, fuse

    bm25 = scored("lexical", "bm25", [("a", 12.0), ("b", 7.0), ("c", 2.0)])
    dense = scored("dense", "cosine", [("b", 0.90), ("c", 0.85), ("d", 0.80)])
    fused = convex({"bm25": bm25, "dense": dense}, weights={"bm25": 0.3})
    scores = {i.chunk_id: i.score for i in fused.items}
    # w · (s − min) / (max − min) over BM25 + (1 − w) · the same over the cosines, w = 0.3
    assert scores["a"] == pytest.approx(0.3 * (12 - 2) / (12 - 2) + 0.7 * 0)
    assert scores["b"] == pytest.approx(0.3 * (7 - 2) / (12 - 2) + 0.7 * (0.90 - 0.80) / (0.90 - 0.80))  # 0.85
    assert scores["c"] == pytest.approx(0.3 * 0 + 0.7 * (0.85 - 0.80) / (0.90 - 0.80))  # 0.35
    assert scores["d"] == pytest.approx(0.0)
    assert fused.chunk_ids() == ["b", "c", "a", "d"]  # 0.85, 0.35, 0.30, 0
    assert fused.items[0].contributions == {"bm25": pytest.approx(0.15), "dense": pytest.approx(0.7)}
    assert fused.score_kind == "convex (min-max normalized, w=0.3)"
    # the default weight is 0.5, and fuse() dispatches to it
    even = {i.chunk_id: i.score for i in fuse({"bm25": bm25, "dense": dense}, "convex").items}
    assert even["a"] == pytest.approx(0.5) and even["b"] == pytest.approx(0.5 * 0.5 + 0.5)
    # w = 1 is BM25 alone: the dense side is dropped, and the note says so
    alone = convex({"bm25": bm25, "dense": dense}, weights={"bm25": 1.0})
    assert alone.chunk_ids() == ["a", "b", "c"] and "dense" in alone.note.text()


def test_convex_takes_one_weight_in_0_1():
    from retrieval.core.errors import InvalidSetting
    from retrieval.settings import Settings
    from retrieval.stages.fusion import convex_weight

    assert convex_weight({}) == 0.5 and convex_weight({"bm25": 0.8}) == 0.8
    for bad in ({"dense": 0.5}, {"bm25": 1.5}):
        with pytest.raises(InvalidSetting):
            convex_weight(bad)
    assert Settings(fusion="convex", fusion_weights="bm25=0.7").fusion == "convex"
    with pytest.raises(ValueError, match="bm25=w"):
        Settings().with_overrides(fusion="convex", fusion_weights="bm25=0.5,dense=0.5")


def test_fuse_dispatch_and_weight_parsing():
    from retrieval.stages.fusion import fuse, parse_weights

    assert parse_weights("bm25=1.0, dense=0.5") == {"bm25": 1.0, "dense": 0.5}
    for bad in ("bm25", "bm25=x", "dense=-1"):
        with pytest.raises(ValueError):
            parse_weights(bad)
    lists = {"bm25": scored("lexical", "bm25", [("a", 3.0)]), "dense": scored("dense", "cosine", [("a", 0.5)])}
    assert fuse(lists, "rrf", 60, {"bm25": 9.0}).items[0].score == pytest.approx(2 / 61)  # rrf ignores weights
    assert fuse(lists, "weighted_rrf", 60, {"bm25": 9.0}).items[0].score == pytest.approx(9 / 61 + 1 / 61)
    with pytest.raises(ValueError):
        fuse(lists, "condorcet")


def _lists():
    bm25 = RankedList("lexical", "bm25", (ScoredItem("a", "a", 1, 3.0), ScoredItem("b", "b", 2, 2.0)))
    dense = RankedList("dense", "cosine", (ScoredItem("c", "c", 1, 0.9), ScoredItem("a", "a", 2, 0.8)))
    return {"bm25": bm25, "dense": dense}


@pytest.mark.parametrize("method", ["weighted_rrf", "combsum"])
def test_weight_zero_ranker_is_dropped_from_the_fusion_and_said(method):
    """Regression: weighted fusion fused a ranker of weight 0 and did not say so."""
    fused = fuse(_lists(), method, 60, {"bm25": 1.0, "dense": 0.0})
    assert fused.chunk_ids() == ["a", "b"]  # c (dense only) is not listed, a is ordered by bm25 alone
    assert all(set(i.contributions) == {"bm25"} for i in fused.items)
    if method == "weighted_rrf":
        assert [i.score for i in fused.items] == pytest.approx([1 / 61, 1 / 62])
    assert "dropped from the fusion (weight 0): dense" in fused.note.text()


def test_weights_of_rankers_without_a_list_are_reported():
    fused = weighted_rrf({"bm25": ["a"]}, weights={"bm25": 1.0, "dense": 0.5, "bm25:rewrite": 2.0})
    assert fused.note.text() == "weights with no list in this request: dense, bm25:rewrite"
    assert weighted_rrf({"bm25": ["a"], "bm25:multi_query#2": ["b"]}, weights={"bm25:multi_query": 0.0}).chunk_ids() \
        == ["a"]  # a variant's weight covers its numbered lists
