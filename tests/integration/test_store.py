"""The persistent Chroma collection: reuse, refresh without stale chunks, model change."""

from __future__ import annotations

import json

import pytest

from retrieval.ingest.corpus import chunk_documents, load_corpus
from retrieval.pipeline.workbench import Workbench

pytestmark = pytest.mark.integration


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
