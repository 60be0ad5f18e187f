"""The gate (retrieval/stages/gate.py): the cosines it reads (from the request's lists where it can, the store
otherwise), its decision, and the codes of the request's tenant it checks the question against."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.tiny_index import FakeStore, index_of, tiny_state, write_docs

from retrieval.core.types import RankedList, ScoredItem
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings
from retrieval.stages.gate import Cosines, decide, question_cosines


@pytest.fixture()
def state(tmp_path):
    return tiny_state(tmp_path)


def test_gate_reads_the_store_only_for_lexical_finds_and_decides_purely(state):
    selected = (ScoredItem("a#0", "a", 1, 0.5), ScoredItem("b#0", "b", 2, 0.4))
    store = FakeStore(state.chunks, {})
    cos = question_cosines(selected, RankedList("dense", "cosine", (ScoredItem("a#0", "a", 1, 0.91),)),
                           np.array([1.0, 0.0]), store)
    assert store.reads == [["b#0"]] and cos.values == {"a#0": 0.91, "b#0": 0.5}
    lexical = RankedList("lexical", "bm25", (ScoredItem("a#0", "a", 1, 3.0),))
    gate = decide(selected, cos, lexical, state.chunk_by_id, "Quando o PX-7 ativa?", 0.8, 2.0, True)
    assert [f.chunk_id for f in gate.final] == ["a#0"] and gate.rejected == 1 and gate.to_dict()["reason"] == "ok"
    coded = decide(selected, cos, lexical, state.chunk_by_id, "Quando o PX-70 ativa?", 0.8, 2.0, True)
    assert coded.final == () and coded.missing_codes == ("PX-70",) and "code identity" in coded.reason.text()
    bm25 = decide(selected, Cosines({}, False), lexical, state.chunk_by_id, "PX-7", 0.8, 2.0, True)
    assert bm25.kind == "bm25" and [f.chunk_id for f in bm25.final] == ["a#0"]


def test_gate_uses_the_vectors_the_request_has_read_and_reads_only_the_rest(state):
    selected = (ScoredItem("a#0", "a", 1, 0.5), ScoredItem("b#0", "b", 2, 0.4), ScoredItem("c#0", "c", 3, 0.3))
    store = FakeStore(state.chunks, {})
    cos = question_cosines(selected, RankedList("dense", "cosine", (ScoredItem("a#0", "a", 1, 0.91),)),
                           np.array([1.0, 0.0]), store, read_before={"b#0": np.array([0.6, 0.8])})
    assert store.reads == [["c#0"]] and cos.values["b#0"] == 0.6 and cos.values["a#0"] == 0.91


# -- the code gate knows the codes of the request's tenant ---------------------------------------------------------
def _bench_of(tmp_path, docs, name):
    bench = Workbench(Settings(_env_file=None, reranker_model="none", support_gate=False, evidence_model=False),
                      embedder=None, progress=False)
    bench.state = index_of(write_docs(tmp_path / name, docs), bench.settings)
    return bench


def test_a_code_only_another_tenant_writes_does_not_change_a_tenants_verdict(tmp_path):
    """``Q-Lite`` is a code only because Ventura's corpus writes it so (a capital and a hyphen are no evidence by
    themselves): a Lumen question naming it is answered as on a corpus without Ventura, not refused for a code
    Lumen never wrote. And a code Lumen writes stays Lumen's when Ventura writes it in lower case."""
    lumen = [{"id": "a1", "title": "Travamento", "metadata": {"tenant": "lumen"},
              "text": "O aparelho trava ao ligar; segure o botão por dez segundos para reiniciar."},
             {"id": "a2", "title": "Garantia", "text": "A garantia do X-Pro cobre um ano.", "metadata": {"tenant": "lumen"}}]
    ventura = [{"id": "b1", "title": "Q-Lite", "text": "O Q-Lite trava ao ligar; troque a bateria.",
                "metadata": {"tenant": "ventura"}},
               {"id": "b2", "title": "Loja", "text": "Compre o x-pro na loja.", "metadata": {"tenant": "ventura"}}]
    both, alone = _bench_of(tmp_path, lumen + ventura, "both.jsonl"), _bench_of(tmp_path, lumen, "alone.jsonl")

    def verdict(bench):
        s = bench.settings.with_overrides(min_bm25=0.0)
        trace = bench.ask("O Q-Lite trava ao ligar, o que faço?", {"tenant": "lumen"}, settings=s)
        return (trace.tier, trace.tier_reason, [f.chunk_id for f in trace.final], trace.answer.abstained,
                trace.gate["missing_codes"], trace.gate["reason"], trace.gate["rejected"])

    assert verdict(both) == verdict(alone)
    assert verdict(both)[2] == ["a1#0"] and verdict(both)[4] == []
    assert both.state.codes_of(["lumen"]) == alone.state.codes_of(["lumen"]) == alone.state.known_codes == {"x-pro"}
    assert both.state.codes_of(["ventura"]) == {"q-lite"} and both.state.codes_of(None) == both.state.known_codes
