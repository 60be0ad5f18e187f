"""Reliability classes through ``Workbench.ask`` on the lab corpus with the real embedder: multi-hop on a
question whose hop used to raise, decompose next to the transforms it cannot fuse, weight-0 rankers, codes
that need evidence."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

CARD = "Posso usar o cartão virtual em uma compra presencial?"
TWO_PARTS = "Qual o prazo do PX-7 e qual o prazo do reembolso?"


def test_multi_hop_on_the_card_question_answers_in_its_tenant(lab_bench):
    s = lab_bench.settings.with_overrides(transforms=("multi_hop",))
    trace = lab_bench.ask(CARD, {"tenant": "ventura"}, settings=s)
    data = trace.to_dict()
    assert data["tier"] in ("full", "rrf_only", "refusal")  # full: the learned ranker is the default
    assert all(i["chunk_id"].startswith("ventura-") for i in data["fused"]["items"])
    hops = [q for q in data["queries"] if q["kind"] == "multi_hop"]
    assert hops, "the question's top chunks name codes that the hops follow"
    fused_ids = [i["chunk_id"] for i in data["fused"]["items"]]
    assert len(fused_ids) == len(set(fused_ids))  # an insertion never duplicates nor loses an item


@pytest.mark.parametrize("other", ["hyde", "multi_query", "rewrite"])
def test_decompose_skips_the_transforms_it_cannot_fuse_and_says_so(lab_bench, other):
    s = lab_bench.settings.with_overrides(transforms=(other, "decompose"))
    trace = lab_bench.ask(TWO_PARTS, {"tenant": "lumen"}, settings=s)
    kinds = [(q.kind, q.flags) for q in trace.queries]
    assert [k for k, _ in kinds].count("decompose") == 2
    assert (other, ("skipped:decomposed",)) in kinds
    assert all(":decompose" in name for v in trace.to_dict()["variants"] for name in v["rankers"])  # nothing unfused
    assert trace.costs["techniques"][other]["retrieval_calls"] == 0
    assert "decomposed" in trace.costs["techniques"][other]["skipped"]
    # A question that does not split keeps the other transform.
    single = lab_bench.ask("Como ativar o PX-7?", {"tenant": "lumen"}, settings=s)
    assert other in {q.kind for q in single.queries} and not any(q.flags == ("skipped:decomposed",) for q in single.queries)


def test_a_weight_zero_dense_ranker_neither_lists_nor_orders(lab_bench):
    s = lab_bench.settings.with_overrides(fusion="weighted_rrf", fusion_weights="bm25=1,dense=0")
    trace = lab_bench.ask("O PX-7 não foi ativado apesar do pagamento, o que faço?", {"tenant": "lumen"}, settings=s)
    assert trace.fused.chunk_ids() == trace.lexical.chunk_ids()
    assert trace.dense.items  # it was searched (the gate reads its cosines) but not fused
    assert trace.fused.note.text() == "dropped from the fusion (weight 0): dense"
    assert [i.score for i in trace.fused.items] == pytest.approx([1 / (60 + r) for r in range(1, len(trace.fused.items) + 1)])


def test_capitalised_e_mail_is_not_a_code_for_the_gate(lab_bench):
    lower = lab_bench.ask("e-mail de confirmação não chegou", {"tenant": "lumen"})
    upper = lab_bench.ask("E-mail de confirmação não chegou", {"tenant": "lumen"})
    assert upper.gate["missing_codes"] == [] and lower.gate["missing_codes"] == []
    assert upper.tier == lower.tier
    # BM25 reads folded tokens (identical lists); the embedder is cased, so the dense cosines differ a little
    # and the learned order may too: the two answers about an e-mail that did not come (the NF-e's, the licence
    # key's) lead both, in either order.
    assert [i.chunk_id for i in upper.lexical.items] == [i.chunk_id for i in lower.lexical.items]
    assert {i.chunk_id for i in upper.final[:2]} == {i.chunk_id for i in lower.final[:2]} \
        == {"lumen-nfe#0", "lumen-px7-nao-ativado#0"}


def test_chroma_where_keeps_tenants_of_equal_value_and_other_type_apart(tmp_path):
    """Below the loader (which refuses such a corpus): chunks of tenants 1, True, 1.0 and "1" in one collection;
    a dense query for each returns only its own, in Chroma's ``where`` and in the re-check after it."""
    import sys

    from _paths import ROOT

    sys.path.insert(0, str(ROOT / "tests"))
    from _fuzz import HashEmbedder

    from retrieval.ingest.corpus import chunk_documents
    from retrieval.backends.store import VectorStore, open_client
    from retrieval.core.filters import Filters
    from retrieval.core.types import Document

    tenants = [1, True, 1.0, "1", 0, False]
    docs = [Document(f"d{n}", "", f"A senha do cofre é segredo{n}.", {"tenant": t}) for n, t in enumerate(tenants)]
    chunks = chunk_documents(docs, 50, 5)
    embedder = HashEmbedder()
    store = VectorStore(open_client(tmp_path / "chroma"), "mixed", embedder.name)
    store.sync(chunks, embedder.embed_passages, progress=False)
    vector = embedder.embed_queries(["Qual a senha do cofre?"])[0]
    for n, tenant in enumerate(tenants):
        flt = Filters((("tenant", (tenant,)),))
        assert [i.parent_id for i in store.query(vector, flt, 10).items] == [f"d{n}"], tenant
        assert [i.parent_id for i in store.query(vector, flt, 1).items] == [f"d{n}"], tenant  # a window of 1 stays full
    # Why the re-check is needed: Chroma's own where compares numbers across int and float.
    raw = store.collection.query(query_embeddings=[vector.tolist()], n_results=10,
                                 where=Filters((("tenant", (1,)),)).chroma_where(), include=["metadatas"])
    assert sorted(map(repr, (m["tenant"] for m in raw["metadatas"][0]))) == ["1", "1.0"]


def test_a_misspelled_tenant_is_named_in_the_refusal(lab_bench):
    trace = lab_bench.ask("Em quanto tempo o PX-7 é ativado?", {"tenant": "Lumen"})
    assert trace.tier == "refusal" and trace.final == []
    assert trace.tier_reason == ("no candidate to answer from: tenant 'Lumen' is not in this corpus (values are "
                                 "matched exactly: case and type count)")
    assert "ventura" not in trace.tier_reason  # another tenant's name is never disclosed
    known = lab_bench.ask("Em quanto tempo o PX-7 é ativado?", {"tenant": "lumen"})
    assert known.tier == "full"


def test_a_chroma_that_answers_query_but_fails_get_never_raises_out_of_ask(tmp_path):
    """The real store with its ``get`` failing (as Chroma's SQLite does past its variable limit): the dense
    window still comes back, every stage that reads stored vectors drops with its reason, the request answers,
    and "Where is my document?" says why instead of raising."""
    import sqlite3
    import sys

    from _paths import ROOT

    sys.path.insert(0, str(ROOT / "tests"))
    from _fuzz import HashEmbedder

    from retrieval.explain import where as explain
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    class GetFails:
        def __init__(self, inner) -> None:
            self._inner = inner

        def get(self, *args, **kwargs):
            raise sqlite3.OperationalError("too many SQL variables")

        def __getattr__(self, name):
            return getattr(self._inner, name)

    settings = Settings(chroma_path=tmp_path / "chroma", mmr_lambda=0.5, min_similarity=-1.0, _env_file=None)
    bench = Workbench(settings, embedder=HashEmbedder(), progress=False)
    state = bench.load_corpus(None)
    state.store.collections = {name: GetFails(col) for name, col in state.store.collections.items()}
    trace = bench.ask(TWO_PARTS, {"tenant": "lumen"})
    assert trace.dense.items and trace.final and trace.answer.text  # answered, from the window it got
    stages = {n.stage: n.reason.text() for n in trace.notes}
    assert "OperationalError: too many SQL variables" in stages["select"]  # MMR not applied, and why
    # the learned judge could not read the stored vectors either: it dropped, saying why
    assert trace.tier_reason == f"learned ranker: {stages['judge_features']}"
    picked = explain.explain_many(state, trace.to_dict(), explain.targets(state, trace.final[0].parent_id),
                                  query_vector=bench.encoder.query(TWO_PARTS)[0])
    assert all(e["lists"]["dense"]["status"] in {"in_list", "unknown"} for e in picked)
    assert any("OperationalError" in getattr(e["lists"]["dense"].get("note"), "text", str)() for e in picked)
