"""The tenant-isolated dense layout (retrieval/store.py, DenseLayout): one Chroma collection per tenant, the
same ranked lists as the one-collection layout, re-indexes that write only what changed, and the migration of a
store built in the one-collection layout (its stored vectors moved, nothing re-embedded)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.fakes import HashEmbedder

from retrieval.backends.store import DenseLayout, VectorStore, collection_name, open_client
from retrieval.core.errors import InvalidFilter
from retrieval.core.filters import Filters, build_filters, field_types
from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents

pytestmark = pytest.mark.integration

WRITES = ("upsert", "add", "update", "delete", "modify")


class Recording:
    """A Chroma client whose collections record every write (``upsert``, ``delete``, ``modify``…) and whose
    collection creations and deletions are recorded too: ``log`` holds ``(operation, collection name)``."""

    def __init__(self, inner) -> None:
        self._inner, self.log = inner, []

    def _wrap(self, col):
        log = self.log

        class Col:
            def __getattr__(self, name):
                attr = getattr(col, name)
                if name in WRITES:
                    def write(*args, **kwargs):
                        log.append((name, col.name))
                        return attr(*args, **kwargs)
                    return write
                return attr

        return Col()

    def get_or_create_collection(self, name, **kwargs):
        self.log.append(("create", name))
        return self._wrap(self._inner.get_or_create_collection(name, **kwargs))

    def get_collection(self, name, **kwargs):
        return self._wrap(self._inner.get_collection(name, **kwargs))

    def delete_collection(self, name):
        self.log.append(("drop", name))
        return self._inner.delete_collection(name)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class DenseHashEmbedder(HashEmbedder):
    """Each token a fixed pseudo-random dense vector (seeded by its hash), summed and normalized: cosines are
    continuous, so two chunks tie only when their token bags do (the bag-of-tokens HashEmbedder gives many chunks
    a cosine of exactly 0, and which of the tied chunks fills the last places of a window is the store's
    choice). Not a model."""

    name = "test-dense-hash-64"

    def _one(self, text: str) -> np.ndarray:
        import hashlib

        from retrieval.core.text import tokenize

        vector = np.zeros(self.dim, dtype=np.float64)
        for token in tokenize(text) or [""]:
            seed = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
            vector += np.random.default_rng(seed).standard_normal(self.dim)
        return (vector / np.linalg.norm(vector)).astype(np.float32)


def _chunks(tenants):
    docs = [Document(f"{t}-{i}", f"Artigo {i}", f"O cliente {t} pergunta sobre garantia {i} e frete {i * 7}.",
                     {"tenant": t, "year": 2020 + i % 3}) for t in tenants for i in range(5)]
    return chunk_documents(docs, 50, 5)


def _names(client, base):
    return sorted(c.name for c in client.list_collections() if c.name.startswith(base))


def test_lab_lists_are_the_same_in_the_one_collection_and_the_per_tenant_layouts(lab_questions, tmp_path):
    """Every lab question's dense list (ids and cosines, bit for bit) and final list are identical between the
    layout before (one collection, tenant filtered), today's (one collection per tenant, no tenant filter) and
    two tenant buckets. The default tier (the learned judge) runs on every list."""
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    settings = Settings(chroma_path=tmp_path / "chroma", _env_file=None)
    benches = {}
    for buckets, kind in [(1, "one collection, tenant filtered"), (0, "one collection per tenant"),
                          (2, "2 tenant buckets")]:
        bench = Workbench(settings.with_overrides(chroma_path=tmp_path / str(buckets), tenant_buckets=buckets),
                          embedder=DenseHashEmbedder(), progress=False)
        state = bench.load_corpus()
        assert state.sync.layout == kind and state.sync.added == len(state.chunks)
        benches[buckets] = bench
    assert list(benches[1].state.store.collections) == [benches[1].state.store.name]  # the previous version's name
    assert len(benches[0].state.store.collections) == len(benches[0].state.tenants) == 2
    for q in lab_questions:
        traces = {b: bench.ask(q.question, q.filters) for b, bench in benches.items()}
        old = traces[1]
        for new in (traces[0], traces[2]):
            assert [(i.chunk_id, i.score) for i in new.dense.items] == [(i.chunk_id, i.score) for i in old.dense.items], q.id
            assert [(i.chunk_id, i.score) for i in new.final] == [(i.chunk_id, i.score) for i in old.final], q.id
            assert (new.tier, new.answer.text) == (old.tier, old.answer.text), q.id


def test_tenant_filtered_queries_are_the_same_in_every_layout(tmp_path):
    """Per tenant, per bucket and in one collection: the same lists for tenant and tenant + year filters, and
    for the unfiltered query (every collection searched, merged by distance)."""
    chunks = _chunks(["A", "B", "C", "D"])
    embedder = HashEmbedder()
    stores = {}
    for buckets in (0, 1, 2):
        store = VectorStore(open_client(tmp_path / str(buckets)), "k", embedder.name, tenant_field="tenant",
                            tenant_buckets=buckets)
        report = store.sync(chunks, embedder.embed_passages, progress=False)
        assert report.added == len(chunks) and report.collections == {0: 4, 1: 1, 2: len(store.collections)}[buckets]
        stores[buckets] = store
    vector = embedder.embed_queries(["garantia e frete do cliente"])[0]
    types = field_types(chunks)
    for raw in [{"tenant": "B"}, {"tenant": "C", "year": 2021}, {"tenant": "Z"}, {}]:
        flt = build_filters(raw, types, "tenant" if raw else "no-tenant-field")
        lists = {b: [(i.chunk_id, round(i.score, 6)) for i in s.query(vector, flt, 8).items] for b, s in stores.items()}
        assert lists[0] == lists[1] == lists[2], raw
        if raw.get("tenant") == "Z":
            assert lists[0] == []  # a tenant with no chunk has no collection: nothing, no error
    only_b = stores[0].query(vector, build_filters({"tenant": "B"}, types, "tenant"), 20).items
    assert len(only_b) == 5 and all(i.chunk_id.startswith("B-") for i in only_b)


def test_per_tenant_collections_keep_equal_values_of_other_types_apart(tmp_path):
    """Tenants 1, True, 1.0, "1", 0 and False: six collections (the digest reads type and value), each query
    finds its own tenant's document only."""
    tenants = [1, True, 1.0, "1", 0, False]
    docs = [Document(f"d{n}", "", f"A senha do cofre é segredo{n}.", {"tenant": t}) for n, t in enumerate(tenants)]
    chunks = chunk_documents(docs, 50, 5)
    embedder = HashEmbedder()
    store = VectorStore(open_client(tmp_path), "mixed", embedder.name, tenant_field="tenant")
    assert store.sync(chunks, embedder.embed_passages, progress=False).collections == 6
    vector = embedder.embed_queries(["Qual a senha do cofre?"])[0]
    for n, tenant in enumerate(tenants):
        flt = Filters((("tenant", (tenant,)),))
        assert [i.parent_id for i in store.query(vector, flt, 10).items] == [f"d{n}"], tenant
        assert list(store.vectors([f"d{n}#0", "nope#0"])) == [f"d{n}#0"]


def test_several_tenants_are_refused_before_and_inside_the_store(tmp_path):
    chunks = _chunks(["A", "B"])
    with pytest.raises(InvalidFilter, match="exactly one tenant"):
        build_filters({"tenant": ["A", "B"]}, field_types(chunks), "tenant")
    embedder = HashEmbedder()
    store = VectorStore(open_client(tmp_path), "k", embedder.name, tenant_field="tenant")
    store.sync(chunks, embedder.embed_passages, progress=False)
    with pytest.raises(ValueError, match="one tenant"):
        store.query(embedder.embed_queries(["garantia"])[0], Filters((("tenant", ("A", "B")),)), 5)


def test_a_single_tenant_corpus_uses_its_one_collection(tmp_path):
    docs = [Document(f"p{i}", "", f"Pergunta frequente número {i} sobre entrega.", {"year": 2024}) for i in range(6)]
    chunks = chunk_documents(docs, 50, 5)
    embedder = HashEmbedder()
    client = open_client(tmp_path)
    store = VectorStore(client, "faq", embedder.name, tenant_field="tenant")
    report = store.sync(chunks, embedder.embed_passages, progress=False)
    assert report.layout == "one collection (single-tenant corpus)" and report.created == (store.name,)
    assert _names(client, "chunks-") == [store.name] == [collection_name("faq", embedder.name)]
    got = store.query(embedder.embed_queries(["entrega"])[0], Filters(), 3)
    assert len(got.items) == 3


def test_reindex_of_an_unchanged_corpus_writes_nothing(tmp_path):
    chunks = _chunks(["A", "B", "C"])
    embedder = HashEmbedder()
    client = open_client(tmp_path)
    VectorStore(client, "k", embedder.name, tenant_field="tenant", ef_search=50).sync(
        chunks, embedder.embed_passages, progress=False)
    recording = Recording(client)
    report = VectorStore(recording, "k", embedder.name, tenant_field="tenant", ef_search=50).sync(
        chunks, lambda texts: pytest.fail("re-embedded"), progress=False)
    assert (report.added, report.updated, report.removed, report.unchanged, report.migrated) == (0, 0, 0, len(chunks), 0)
    assert (report.created, report.dropped, report.collections) == ((), (), 3)
    assert recording.log == []


def test_a_tenant_added_or_removed_creates_or_drops_only_its_collection(tmp_path):
    embedder = HashEmbedder()
    client = open_client(tmp_path)
    first = VectorStore(client, "k", embedder.name, tenant_field="tenant")
    first.sync(_chunks(["A", "B"]), embedder.embed_passages, progress=False)
    layout = first.layout
    name = {t: layout.name_for(t) for t in "ABC"}
    before = {t: first.collections[name[t]].get(include=["embeddings"]) for t in "AB"}

    recording = Recording(client)
    store = VectorStore(recording, "k", embedder.name, tenant_field="tenant")
    added = store.sync(_chunks(["A", "B", "C"]), embedder.embed_passages, progress=False)
    assert (added.added, added.unchanged, added.removed, added.created, added.dropped) == (5, 10, 0, (name["C"],), ())
    assert {n for _, n in recording.log} == {name["C"]}  # A's and B's collections are not written
    for t in "AB":
        after = store.collections[name[t]].get(include=["embeddings"])
        assert after["ids"] == before[t]["ids"] and np.array_equal(after["embeddings"], before[t]["embeddings"])

    recording.log.clear()
    removed = store.sync(_chunks(["A", "C"]), embedder.embed_passages, progress=False)
    assert (removed.added, removed.unchanged, removed.removed, removed.created, removed.dropped) == (
        0, 10, 5, (), (name["B"],))
    assert recording.log == [("drop", name["B"])]
    assert _names(client, store.name) == sorted([name["A"], name["C"]])


def test_a_store_in_the_one_collection_layout_is_moved_without_re_embedding(tmp_path):
    """A store built as the previous version built it (one collection named by collection_name, the tenant a
    metadata field) is rebuilt per tenant at the next sync from its stored vectors; the old collection is dropped
    only after; a second sync writes nothing; the lists are the same."""
    chunks = _chunks(["A", "B", "C"])
    embedder = HashEmbedder()
    client = open_client(tmp_path)
    old = VectorStore(client, "k", embedder.name, tenant_field="tenant", tenant_buckets=1)
    old.sync(chunks, embedder.embed_passages, progress=False)
    assert _names(client, "chunks-") == [collection_name("k", embedder.name)]
    stored = old.collection.get(include=["embeddings"])
    stored = dict(zip(stored["ids"], stored["embeddings"]))
    vector = embedder.embed_queries(["garantia do cliente"])[0]
    flt = Filters((("tenant", ("B",)),))
    before = [(i.chunk_id, i.score) for i in old.query(vector, flt, 6).items]

    # one chunk changed since: the only one embedded; the rest moved
    changed = [c if c.chunk_id != "A-1#0" else chunk_documents(
        [Document("A-1", "Artigo 1", "Texto novo.", {"tenant": "A", "year": 2021})], 50, 5)[0] for c in chunks]
    embedded = []

    def counting(texts):
        embedded.extend(texts)
        return embedder.embed_passages(texts)

    new = VectorStore(client, "k", embedder.name, tenant_field="tenant")
    report = new.sync(changed, counting, progress=False)
    assert (report.added, report.updated, report.migrated, report.unchanged) == (0, 1, len(chunks) - 1, 0)
    assert report.dropped == (old.name,) and len(report.created) == 3 and embedded == ["Artigo 1\nTexto novo."]
    assert _names(client, "chunks-") == sorted(new.collections)
    moved = new.vectors(list(stored))
    assert all(np.allclose(moved[cid], stored[cid]) for cid in stored if cid != "A-1#0")
    after = new.query(vector, flt, 6).items
    # Chroma stores a cosine collection's vectors normalized, and normalizes the moved copies again: the same
    # order, scores equal to float32 precision (a fresh build gives them bit for bit: the lab test above).
    assert [i.chunk_id for i in after] == [cid for cid, _ in before]
    assert [i.score for i in after] == pytest.approx([score for _, score in before], abs=1e-6)
    again = VectorStore(Recording(client), "k", embedder.name, tenant_field="tenant")
    report = again.sync(changed, lambda texts: pytest.fail("re-embedded"), progress=False)
    assert (report.migrated, report.unchanged, report.created, report.dropped) == (0, len(chunks), (), ())
    assert again.client.log == []


def test_a_layout_change_through_the_workbench_and_the_cli_status(tmp_path):
    """RETRIEVAL_TENANT_BUCKETS moves the vectors at the next load (nothing re-embedded); `index --status`
    counts the chunks over every collection of the layout, and `--drop` drops them all."""
    from typer.testing import CliRunner

    from retrieval import cli
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    corpus = tmp_path / "c.jsonl"
    chunks_docs = [{"id": f"{t}{i}", "title": "", "text": f"Garantia {i} do cliente {t}.", "metadata": {"tenant": t}}
                   for t in "XYZ" for i in range(3)]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in chunks_docs), encoding="utf-8")
    settings = Settings(chroma_path=tmp_path / "chroma", _env_file=None)
    first = Workbench(settings.with_overrides(tenant_buckets=1), embedder=HashEmbedder(), progress=False)
    assert first.load_corpus(corpus).sync.collections == 1
    second = Workbench(settings.with_overrides(tenant_buckets=2), embedder=HashEmbedder(), progress=False)
    report = second.load_corpus(corpus).sync
    assert (report.migrated, report.added, report.layout) == (9, 0, "2 tenant buckets")
    trace = second.ask("garantia do cliente", {"tenant": "Y"})
    assert {i.parent_id[0] for i in trace.dense.items} == {"Y"}
    assert isinstance(second.state.store.layout, DenseLayout) and not second.state.store.layout.isolated

    runner = CliRunner()
    env = {"RETRIEVAL_CHROMA_PATH": str(tmp_path / "chroma"), "RETRIEVAL_EMBEDDING_MODEL": HashEmbedder.name}
    status = runner.invoke(cli.app, ["index", "--corpus", str(corpus), "--status"], env=env)
    assert status.exit_code == 0 and "9 chunks in " in status.stdout and "2 tenant buckets" in status.stdout
    dropped = runner.invoke(cli.app, ["index", "--corpus", str(corpus), "--drop"], env=env)
    assert dropped.exit_code == 0 and "dropped chunks-" in dropped.stdout
    assert _names(open_client(tmp_path / "chroma"), "chunks-") == []
