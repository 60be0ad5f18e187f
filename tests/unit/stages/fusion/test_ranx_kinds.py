"""The ranx fusion kinds (CombMNZ, ISR, the weighted sums over min-max, z-score and sum normalization) against
``ranx.fuse`` on the same tiny two-list run, ids and scores to 1e-9, and against their formulas written out."""

from __future__ import annotations

import pytest

from retrieval.core.errors import InvalidSetting
from retrieval.core.types import RankedList, ScoredItem
from retrieval.explain import card
from retrieval.offline.evaluation import named_configs
from retrieval.pipeline.view import TraceView
from retrieval.settings import Settings
from retrieval.stages.fusion import METHODS, fuse

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict

ranx = pytest.importorskip("ranx")

BM25 = {"d1": 12.0, "d3": 7.5, "d2": 3.0, "d5": 1.0}
DENSE = {"d2": 0.91, "d1": 0.84, "d4": 0.62}


def ranked(stage: str, scores: dict[str, float]) -> RankedList:
    order = sorted(scores, key=lambda d: -scores[d])
    return RankedList(stage, "score", tuple(ScoredItem(d, d, r, scores[d]) for r, d in enumerate(order, start=1)))


LISTS = {"bm25": ranked("lexical", BM25), "dense": ranked("dense", DENSE)}

#: Our kind → the ``ranx.fuse`` call on the same run (weights 1, then bm25=2, dense=0.5 where it takes them).
CASES = [
    ("combmnz", {}, dict(norm="min-max", method="mnz")),
    ("isr", {}, dict(norm=None, method="isr")),
    ("combmax", {}, dict(norm="min-max", method="max")),
    ("borda", {}, dict(method="bordafuse")),
    ("wsum_minmax", {}, dict(norm="min-max", method="wsum", params={"weights": [1.0, 1.0]})),
    ("wsum_minmax", {"bm25": 2.0, "dense": 0.5}, dict(norm="min-max", method="wsum", params={"weights": [2.0, 0.5]})),
    ("wsum_zmuv", {}, dict(norm="zmuv", method="wsum", params={"weights": [1.0, 1.0]})),
    ("wsum_zmuv", {"bm25": 2.0, "dense": 0.5}, dict(norm="zmuv", method="wsum", params={"weights": [2.0, 0.5]})),
    ("wsum_sum", {}, dict(norm="sum", method="wsum", params={"weights": [1.0, 1.0]})),
    ("wsum_sum", {"bm25": 2.0, "dense": 0.5}, dict(norm="sum", method="wsum", params={"weights": [2.0, 0.5]})),
]


@pytest.mark.parametrize(("name", "weights", "call"), CASES, ids=[f"{c[0]}-{c[1] or 'w1'}" for c in CASES])
def test_each_kind_equals_ranx_fuse(name, weights, call) -> None:
    runs = [ranx.Run({"q": dict(BM25)}, name="bm25"), ranx.Run({"q": dict(DENSE)}, name="dense")]
    expected = ranx.fuse(runs, **call).to_dict()["q"]
    fused = fuse(LISTS, name, 60, weights)
    assert {i.chunk_id for i in fused.items} == set(expected)
    assert {i.chunk_id: i.score for i in fused.items} == pytest.approx(expected, abs=1e-9)
    ours = [expected[d] for d in fused.chunk_ids()]  # ranx's order, up to ties (ours: best rank, then id)
    assert all(a >= b - 1e-12 for a, b in zip(ours, ours[1:]))
    assert all(i.score == pytest.approx(sum(i.contributions.values()), abs=1e-12) for i in fused.items)


def test_the_formulas_by_hand() -> None:
    mnz = {i.chunk_id: i.score for i in fuse(LISTS, "combmnz").items}
    assert mnz["d1"] == pytest.approx(2 * (1.0 + (0.84 - 0.62) / (0.91 - 0.62)))
    assert mnz["d4"] == pytest.approx(1 * 0.0)
    isr = {i.chunk_id: i.score for i in fuse(LISTS, "isr").items}
    assert isr["d2"] == pytest.approx(2 * (1 / 3 ** 2 + 1 / 1 ** 2))
    assert isr["d5"] == pytest.approx(1 * (1 / 4 ** 2))
    total = sum(BM25.values()) - 1.0 * 4
    sums = {i.chunk_id: i.score for i in fuse(LISTS, "wsum_sum").items}
    assert sums["d3"] == pytest.approx((7.5 - 1.0) / total)
    top = {i.chunk_id: i for i in fuse(LISTS, "combmax").items}
    assert top["d3"].score == pytest.approx((7.5 - 1.0) / (12.0 - 1.0)) and top["d3"].contributions.keys() == {"bm25"}
    assert top["d2"].contributions == {"dense": 1.0} and top["d2"].ranks == {"bm25": 3, "dense": 1}
    # Borda: 5 candidates; d3 is 2nd in BM25 (5 − 2 + 1 = 4) and not in the dense list of 3 ((5 − 3 + 1) / 2).
    points = {i.chunk_id: i for i in fuse(LISTS, "borda").items}
    assert points["d3"].contributions == {"bm25": 4.0, "dense": 1.5}
    assert [i.chunk_id for i in fuse(LISTS, "borda").items] == ["d1", "d2", "d3", "d4", "d5"]


def test_a_weight_of_zero_drops_the_list_and_the_rankless_kinds_refuse_weights() -> None:
    only = fuse(LISTS, "wsum_zmuv", 60, {"dense": 0.0})
    assert set(only.chunk_ids()) == set(BM25) and "dense" in (only.note.text("en") if hasattr(only.note, "text")
                                                              else str(only.note))
    for name in ("combmnz", "isr", "combmax", "borda"):
        with pytest.raises(InvalidSetting, match=f"{name} ignores them"):
            METHODS.get(name).check_weights({"bm25": 2.0})
    with pytest.raises(ValueError, match="ignores them"):
        Settings(fusion="combmnz", fusion_weights="bm25=2", _env_file=None)
    assert Settings(fusion="wsum_zmuv", fusion_weights="bm25=2,dense=0.5", _env_file=None).fusion == "wsum_zmuv"


def _trace(name: str, weights: str = "") -> dict:
    fused = fuse(LISTS, name, 60, __import__("retrieval.stages.fusion", fromlist=["parse_weights"]).parse_weights(weights))
    items = [{"chunk_id": i.chunk_id, "parent_id": i.parent_id, "rank": i.rank, "score": i.score,
              "contributions": dict(i.contributions), "ranks": dict(i.ranks)} for i in fused.items]
    return {"settings": {"fusion": name, "fusion_weights": weights, "rrf_k": 60},
            "fused": {"stage": "fused", "score_kind": fused.score_kind, "items": items}}


def _written(name: str, chunk: str, weights: str = "") -> str:
    t = _trace(name, weights)
    return " + ".join(f"{x['ranker']} {card.term_formula(view(t), x)}" for x in card.rrf_terms(view(t), chunk))


def test_the_card_writes_the_terms_out_with_the_requests_numbers() -> None:
    # d1: bm25 #1 (min-max 1.0), dense #2 (min-max (0.84 − 0.62)/(0.91 − 0.62) = 0.7586); found by both lists.
    assert _written("combmnz", "d1") == "bm25 2·1.0000 + dense 2·0.7586"
    assert _written("isr", "d1") == "bm25 2·1/1² + dense 2·1/2²"
    assert _written("isr", "d5") == "bm25 1·1/4²"
    assert _written("wsum_minmax", "d1", "bm25=2,dense=0.5") == "bm25 2·1.0000 + dense 0.5·0.7586"
    z_bm25 = (12.0 - 5.875) / (sum((s - 5.875) ** 2 for s in BM25.values()) / 4) ** 0.5
    z_dense = (0.84 - 0.79) / (((0.91 - 0.79) ** 2 + (0.84 - 0.79) ** 2 + (0.62 - 0.79) ** 2) / 3) ** 0.5
    assert _written("wsum_zmuv", "d1") == f"bm25 {z_bm25:.4f} + dense {z_dense:.4f}" == "bm25 1.4418 + dense 0.4047"
    assert _written("wsum_sum", "d1", "bm25=2") == f"bm25 2·{11 / 19.5:.4f} + dense {0.22 / (2.37 - 3 * 0.62):.4f}"
    assert _written("combmax", "d3") == "bm25 max 0.5909"
    assert _written("borda", "d3") == "bm25 5 − 2 + 1 + dense 1.5 (not listed)"
    assert card.rrf_terms(view(_trace("combmnz")), "d1")[0]["value"] is None  # not a rank-based sum


def test_the_picker_and_the_evaluation_offer_them() -> None:
    names = list(METHODS.names())
    for name, config in [("combmnz", "combmnz"), ("isr", "isr"), ("wsum_minmax", "wsum-minmax"),
                         ("wsum_zmuv", "wsum-zmuv"), ("wsum_sum", "wsum-sum"), ("combmax", "combmax"),
                         ("borda", "borda")]:
        assert name in names
        assert named_configs()[config] == {"reranker_model": "none", "fusion": name}
    assert Settings(_env_file=None).fusion == "rrf"  # the default is unchanged
