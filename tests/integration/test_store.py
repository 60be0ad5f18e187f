"""The persistent Chroma collection: reuse, refresh without stale chunks, model change, exact tenants, and a store
that fails its reads under a request."""

from __future__ import annotations

import json

import pytest
from helpers.fakes import HashEmbedder

from retrieval.backends.store import VectorStore, open_client
from retrieval.core.filters import Filters
from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents, load_corpus
from retrieval.pipeline.view import TraceView
from retrieval.pipeline.workbench import Workbench

pytestmark = pytest.mark.integration

TWO_PARTS = "Qual o prazo do PX-7 e qual o prazo do reembolso?"


def _write(path, docs):
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs), encoding="utf-8")


def test_refresh_adds_updates_removes_and_reuses(lab_bench, tmp_path):
    corpus = tmp_path / "mini.jsonl"
    docs = [{"id": f"d{i}", "title": "", "text": f"Documento número {i} sobre garantia e frete.",
             "metadata": {"tenant": "A"}} for i in range(4)]
    _write(corpus, docs)
    bench = Workbench(lab_bench.settings, embedder=lab_bench.embedder, progress=False)
    first = bench.load_corpus(corpus).sync
    assert (first.added, first.updated, first.removed, first.unchanged) == (4, 0, 0, 0)
    again = bench.load_corpus(corpus).sync
    assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 4)
    docs[1]["text"] = "Texto novo do documento um."
    docs = docs[:3] + [{"id": "d9", "title": "", "text": "Um documento novo.", "metadata": {"tenant": "A"}}]
    del docs[2]
    _write(corpus, docs)
    state = bench.load_corpus(corpus)
    assert (state.sync.added, state.sync.updated, state.sync.removed, state.sync.unchanged) == (1, 1, 2, 1)
    stored = set(state.store.collection.get()["ids"])
    assert stored == {c.chunk_id for c in state.chunks} == {"d0#0", "d1#0", "d9#0"}


def test_collection_metadata_names_model_and_cosine(lab_bench):
    collections = lab_bench.state.store.collections
    assert len(collections) == 2  # one per tenant (tests/integration/test_tenant_layout.py)
    for col in collections.values():
        assert col.metadata["embedding_model"] == "e5-small@reader-fp32"   # the model, read in the one pass
        assert col.metadata["hnsw:space"] == "cosine" and col.metadata["layout"] == "one collection per tenant"
    chunks = chunk_documents(load_corpus(lab_bench.state.corpus_path), lab_bench.settings.chunk_tokens,
                             lab_bench.settings.chunk_overlap)
    assert lab_bench.state.store.count() == len(chunks)


def test_store_failure_mid_request_drops_to_lexical_only(lab_bench, tmp_path):
    corpus = tmp_path / "mini.jsonl"
    _write(corpus, [{"id": f"d{i}", "title": "", "text": f"Garantia do produto {i} e frete grátis.",
                     "metadata": {}} for i in range(3)])
    bench = Workbench(lab_bench.settings.with_overrides(min_bm25=0.0), embedder=lab_bench.embedder, progress=False)
    bench.load_corpus(corpus)
    bench.state.store.drop()  # the collection disappears under a running workbench
    trace = bench.ask("garantia do produto")
    assert trace.tier == "lexical_only" and "dense search failed" in trace.tier_reason
    assert trace.final and trace.final[0].parent_id.startswith("d")


def test_two_chunkings_keep_separate_collections(lab_bench):
    other = Workbench(lab_bench.settings.with_overrides(chunk_tokens=200, chunk_overlap=40),
                      embedder=lab_bench.embedder, progress=False)
    state = other.load_corpus()
    assert state.store.name != lab_bench.state.store.name
    trace = lab_bench.ask("Em quanto tempo o PX-7 é ativado?", {"tenant": "lumen"})
    assert all(i.chunk_id in lab_bench.state.chunk_by_id for i in trace.dense.items)
    assert lab_bench.state.store.count() == len(lab_bench.state.chunks)


def test_sync_reads_the_stored_hashes_page_by_page(tmp_path):
    """A re-index compares content hashes read in pages (one unbounded get fails on large collections)."""
    import numpy as np

    from retrieval.backends.store import VectorStore, open_client
    from retrieval.core.types import Document

    chunks = chunk_documents([Document(f"p{i}", "", f"Texto {i}.", {}) for i in range(23)], 50, 0)
    rng = np.random.default_rng(0)

    def embed(texts):
        v = rng.standard_normal((len(texts), 8)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    store = VectorStore(open_client(tmp_path), "paged", "random-8")
    first = store.sync(chunks, embed, progress=False, page=5)
    again = store.sync(chunks[:-2], embed, progress=False, page=5)
    assert (first.added, again.added, again.updated, again.removed, again.unchanged) == (23, 0, 0, 2, 21)


def test_query_reads_parents_from_the_catalog_like_chroma_metadata(lab_bench):
    """After sync, a query asks Chroma for distances only; the list equals the one built from Chroma's metadata."""
    from retrieval.core.filters import Filters

    store = lab_bench.state.store
    vector = lab_bench.encoder.query("Como devolver um produto com defeito?")[0]
    tenant = Filters((("tenant", ("lumen",)),))
    catalog = store.catalog
    assert catalog is not None and len(catalog) == len(lab_bench.state.chunks)
    from_catalog = store.query(vector, tenant, 20)
    try:
        store.catalog = None
        from_chroma = store.query(vector, tenant, 20)
    finally:
        store.catalog = catalog
    assert [(i.chunk_id, i.parent_id) for i in from_catalog.items] == [
        (i.chunk_id, i.parent_id) for i in from_chroma.items]
    assert len(from_catalog.items) == 20
    assert {catalog[i.chunk_id].metadata["tenant"] for i in from_catalog.items} == {"lumen"}


def test_hnsw_ef_search_setting_is_stored_with_the_collection(lab_bench, tmp_path):
    import chromadb
    import numpy as np

    from retrieval.backends.store import VectorStore
    from retrieval.core.types import Document

    chunks = chunk_documents([Document(f"p{i}", "", f"Texto {i}.", {"tenant": i % 2}) for i in range(4)], 50, 0)

    def embed(texts):
        return np.ones((len(texts), 4), dtype=np.float32) / 2

    def ef(ef_search):
        store = VectorStore(client, "corpus-a", "e5-small", ef_search=ef_search, tenant_field="tenant")
        store.sync(chunks, embed, progress=False)
        return {col.configuration["hnsw"]["ef_search"] for col in store.collections.values()}

    client = chromadb.PersistentClient(str(tmp_path / "ef"))
    assert ef(37) == {37}  # on every tenant's collection
    assert ef(None) == {37}
    assert ef(100) == {100}


def test_a_sync_stopped_half_way_keeps_each_written_batch_and_the_next_embeds_only_the_rest(tmp_path):
    """Vectors are written batch by batch as they are embedded: an index killed after two batches of 4 keeps 8
    chunks, and the next sync embeds the other 15 only (resumable), leaving every chunk stored once."""
    import numpy as np

    from retrieval.backends.store import VectorStore, open_client
    from retrieval.core.types import Document

    chunks = chunk_documents([Document(f"p{i}", "", f"Texto {i}.", {}) for i in range(23)], 50, 0)
    embedded: list[str] = []

    def embed(texts):
        if len(embedded) >= 8:
            raise KeyboardInterrupt   # the user's Ctrl-C between two batches
        embedded.extend(texts)
        return np.tile(np.eye(8, dtype=np.float32)[0], (len(texts), 1))

    store = VectorStore(open_client(tmp_path), "resumed", "unit-8")
    with pytest.raises(KeyboardInterrupt):
        store.sync(chunks, embed, batch=4, progress=False)
    kept = VectorStore(open_client(tmp_path), "resumed", "unit-8").owned()
    assert sum(col.count() for col in kept.values()) == 8

    embedded.clear()
    again = VectorStore(open_client(tmp_path), "resumed", "unit-8")

    def rest(texts):
        embedded.extend(texts)
        return np.tile(np.eye(8, dtype=np.float32)[1], (len(texts), 1))

    report = again.sync(chunks, rest, batch=4, progress=False)
    assert (report.added, report.unchanged, len(embedded)) == (15, 8, 15)
    assert again.count() == 23
    assert set(again.collection.get()["ids"]) == {c.chunk_id for c in chunks}


def test_chroma_where_keeps_tenants_of_equal_value_and_other_type_apart(tmp_path):
    """Regression: Chroma's ``$eq 1`` matches a stored 1.0 too; the exact re-check after it left the window short.

    Below the loader (which refuses such a corpus): chunks of tenants 1, True, 1.0 and "1" in one collection;
    a dense query for each returns only its own, in Chroma's ``where`` and in the re-check after it."""
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


def test_a_chroma_that_answers_query_but_fails_get_never_raises_out_of_ask(tmp_path):
    """Regression: a store that answered query but failed get (SQLite's variable limit) raised out of ask.

    The real store with its ``get`` failing: the dense window still comes back, every stage that reads stored
    vectors drops with its reason, the request answers, and "Where is my document?" says why instead of raising."""
    import sqlite3

    from retrieval.explain import where as explain
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
    picked = explain.explain_many(state, TraceView.from_dict(trace.to_dict()),
                                  explain.targets(state, trace.final[0].parent_id),
                                  query_vector=bench.encoder.query(TWO_PARTS)[0])
    assert all(e["lists"]["dense"]["status"] in {"in_list", "unknown"} for e in picked)
    assert any("OperationalError" in getattr(e["lists"]["dense"].get("note"), "text", str)() for e in picked)
