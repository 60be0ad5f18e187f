"""A fusion method and a reranker kind are each one declaration: declared here, in a test, and nowhere else,
they are validated by the settings, run in a trace, offered by the app's pickers, explained on the provenance
card and evaluated as a configuration; withdrawn, they are refused again.

Borda count (each list gives ``n − rank + 1`` points to an item at ``rank`` of its ``n``) and a reranker that
reverses the fused window are small enough to check by hand."""

from __future__ import annotations

import pytest
from _apptest import assert_ok, page

from retrieval.core.kinds import Text
from retrieval.core.types import RankedList
from retrieval.offline.evaluation import named_configs
from retrieval.settings import Settings
from retrieval.stages.fusion import METHODS
from retrieval.stages.fusion.base import FusionMethod, check_weight_names, fused_items, weight_of
from retrieval.stages.rerank import KINDS
from retrieval.stages.rerank.base import LOADED, PassageReranker, RerankerKind, prefixed

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def borda(lists, k, weights) -> RankedList:
    contributions, ranks, parents = {}, {}, {}
    for ranker, ranked in lists.items():
        n = len(ranked.items)
        for item in ranked.items:
            contributions.setdefault(item.chunk_id, {})[ranker] = weight_of(ranker, weights) * (n - item.rank + 1)
            ranks.setdefault(item.chunk_id, {})[ranker] = item.rank
            parents.setdefault(item.chunk_id, item.parent_id)
    return RankedList("fused", "borda_count", fused_items(contributions, ranks, parents))


class Reverse(PassageReranker):
    kind = "reverse"
    score_kind = "reversed fused rank"

    def __init__(self, name: str) -> None:
        self.name = name

    def score(self, question, passages):
        return [float(i) for i in range(len(passages))]  # the last candidate first


BORDA = FusionMethod(name="borda_count", fuse=borda, label=Text("Borda count", "Contagem de Borda"), rank_based=False,
                     check_weights=check_weight_names, term_weight=lambda term: weight_of(term.ranker, term.weights),
                     formula=lambda term, lang: f"{term.recorded:g} points",
                     evaluation=("borda_count", {"reranker_model": "none", "fusion": "borda_count"}))
REVERSE = RerankerKind(name="reverse", label=Text("Reverse (a test's kind)", "Ao contrário (tipo de teste)"),
                       described=Text("{name} (reversed)", "{name} (ao contrário)"), parse=prefixed("reverse"),
                       load=lambda spec, context: (Reverse(spec.text), LOADED(name=spec.text, kind="reverse")),
                       offer="reverse", evaluation=("hybrid+reverse", {"reranker_model": "reverse"}))


@pytest.fixture
def declared():
    with pytest.raises(ValueError, match="unknown fusion method .borda_count."):
        Settings(fusion="borda_count", _env_file=None)
    METHODS.declare(BORDA)
    KINDS.declare(REVERSE)
    try:
        yield
    finally:
        METHODS.withdraw("borda_count")
        KINDS.withdraw("reverse")
    with pytest.raises(ValueError, match="unknown fusion method .borda_count."):
        Settings(fusion="borda_count", _env_file=None)


def test_the_settings_take_them_and_a_trace_runs_them(declared, lab_bench) -> None:
    s = lab_bench.settings.with_overrides(fusion="borda_count", reranker_model="reverse", reranker_max_input=6)
    assert s.fusion == "borda_count" and s.reranker_model == "reverse"
    trace = lab_bench.ask(PX7, {"tenant": "lumen"}, settings=s)
    assert trace.fused.score_kind == "borda_count" and trace.tier == "full"
    assert trace.models["reranker_kind"] == "reverse"
    # Borda by hand from the trace's own windows.
    points: dict[str, int] = {}
    for ranked in (trace.lexical, trace.dense):
        for item in ranked.items:
            points[item.chunk_id] = points.get(item.chunk_id, 0) + len(ranked.items) - item.rank + 1
    assert [i.score for i in trace.fused.items] == sorted(points.values(), reverse=True)
    assert {i.chunk_id: i.score for i in trace.fused.items} == points
    # The reranker read the first six fused candidates and reversed them.
    assert [i.chunk_id for i in trace.reranked.items] == [i.chunk_id for i in trace.fused.items[:6]][::-1]
    assert [i.fused_rank for i in trace.reranked.items] == [6, 5, 4, 3, 2, 1]
    assert "borda_count" in named_configs() and "hybrid+reverse" in named_configs()


def test_the_app_offers_and_explains_them(declared) -> None:
    at = page(q=PX7, tenant="lumen", fusion="borda_count", reranker="reverse")
    assert_ok(at)
    assert "Borda count" in at.selectbox(key="fusion").options
    assert at.selectbox(key="fusion").value == "borda_count"
    assert at.radio(key="rerank_mode").value == "reverse"
    assert "Reverse (a test's kind)" in at.radio(key="rerank_mode").options
    cards = [m.value for m in at.markdown if m.value.startswith("Fused #") and "(Borda count): " in m.value]
    assert len(cards) == 1 and "points" in cards[0], cards
    assert any(m.value.startswith("Reranker (reverse) #") for m in at.markdown)
