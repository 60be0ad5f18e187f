"""The pipeline on the Milvus backend (Milvus Lite in a temporary file, and a Milvus Lite server process)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.milvus import EMBEDDER, HOSTILE, assert_same_as_local, embed, ids, open_store, small_docs, write_corpus

from retrieval.backends.milvus import MilvusLexical, MilvusUnavailable, open_client
from retrieval.core.filters import build_filters, field_types
from retrieval.pipeline.workbench import Workbench
from retrieval.stages.fusion import rrf

pytestmark = pytest.mark.integration




@pytest.fixture(scope="module")
def milvus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("milvus")


@pytest.fixture(scope="module")
def milvus_bench(settings, lab_bench, milvus_dir):
    s = settings.with_overrides(backend="milvus", milvus_uri=str(milvus_dir / "lab.db"))
    bench = Workbench(s, embedder=lab_bench.embedder, progress=False)
    bench.encoder = lab_bench.encoder  # the same model: both backends search the same query vectors
    bench.load_corpus()
    return bench


def test_same_lists_and_final_chunks_as_local_on_every_lab_question(lab_bench, milvus_bench, lab_questions):
    assert milvus_bench.state.store_reason.code == "store.ok" and milvus_bench.state.store.count() == len(lab_bench.state.chunks)
    for q in lab_questions:
        assert_same_as_local(lab_bench, milvus_bench, q.question, q.filters, q.id)


def test_tenant_isolation_over_every_lab_question(milvus_bench, lab_questions):
    state = milvus_bench.state
    tenant_of = {c.chunk_id: c.metadata["tenant"] for c in state.chunks}
    checked = 0
    for q in lab_questions:
        for tenant in ("lumen", "ventura"):
            trace = milvus_bench.ask(q.question, {**q.filters, "tenant": tenant})
            data = trace.to_dict()
            ids = [i["chunk_id"] for name in ("lexical", "dense", "fused") for i in data[name]["items"]]
            ids += [f["chunk_id"] for f in data["final"]]
            assert {tenant_of[i] for i in ids} <= {tenant}, (q.id, tenant)
            checked += bool(ids)
    assert checked >= len(lab_questions)  # the lists were not simply empty


def test_hostile_filter_value_matches_only_itself(tmp_path):
    client, chunks, stats, store = open_store(tmp_path, small_docs())
    store.sync(chunks, embed, 8, False, stats=stats)
    lexical = MilvusLexical(store, chunks, "tenant", stats)
    types = field_types(chunks)
    vec = embed(["ativado"])[0]

    def both(raw):
        flt = build_filters(raw, types, "tenant")
        return ({i.parent_id for i in store.query(vec, flt, 10).items},
                {i.parent_id for i in lexical.search("ativado horas PX-7 VX-2", flt, 10).items})

    assert both({"tenant": "lumen", "doc_type": HOSTILE}) == ({"a1"}, {"a1"})
    assert both({"tenant": "ventura", "doc_type": HOSTILE}) == (set(), set())
    for value in ('manual" or 1==1 or doc_type == "', "manual' or 1==1 or doc_type == '", "x\\", '" or ""=="',
                  "manual) or (1==1"):
        assert both({"tenant": "lumen", "doc_type": value}) == (set(), set()), value
    assert both({"tenant": "lumen", "doc_type": "manual"}) == ({"a2"}, {"a2"})


def test_reindex_writes_nothing_then_updates_and_removes(tmp_path):
    client, chunks, stats, store = open_store(tmp_path, small_docs("faq"))
    first = store.sync(chunks, embed, 8, False, stats=stats)
    assert (first.added, first.updated, first.removed, first.unchanged, first.reweighted) == (4, 0, 0, 0, 0)
    calls: list[int] = []

    def counting(texts):
        calls.append(len(texts))
        return embed(texts)

    writes: list[str] = []

    class Recording:  # the client, recording every call that could write
        def __getattr__(self, name):
            if name in {"insert", "upsert", "delete", "flush", "drop_collection", "create_collection"}:
                writes.append(name)
            return getattr(client, name)

    store.client = Recording()
    again = store.sync(chunks, counting, 8, False, stats=stats)
    assert (again.added, again.updated, again.removed, again.unchanged, again.reweighted) == (0, 0, 0, 4, 0)
    assert calls == [] and writes == [] and store.count() == 4
    store.client = client
    # One lumen document changed, one ventura document gone: the other lumen row is only reweighted
    # (its tenant's average length moved), the ventura survivor too (its tenant lost a chunk).
    docs = small_docs("faq")
    docs[1]["text"] = "A garantia do PX-7 é de dois anos, com troca imediata."
    docs = docs[:3]
    client, chunks2, stats2, store2 = open_store(tmp_path, docs, client, "c2.jsonl")
    third = store2.sync(chunks2, counting, 8, False, stats=stats2)
    assert (third.added, third.updated, third.removed, third.unchanged, third.reweighted) == (0, 1, 1, 2, 2)
    assert calls == [1] and store2.count() == 3
    local_terms = MilvusLexical(store2, chunks2, "tenant", stats2).search(
        "garantia anos", build_filters({"tenant": "lumen"}, field_types(chunks2), "tenant"), 5)
    assert [i.parent_id for i in local_terms.items] == ["a2"]


def test_failed_ingest_leaves_the_previous_collection_usable(tmp_path):
    client, chunks, stats, store = open_store(tmp_path, small_docs("faq"))
    store.sync(chunks, embed, 8, False, stats=stats)
    docs = small_docs("faq")
    docs[0]["text"] = "O PX-7 agora é ativado na hora."

    def broken(texts):
        raise MemoryError("out of memory while embedding")

    client, chunks2, stats2, store2 = open_store(tmp_path, docs, client, "c2.jsonl")
    with pytest.raises(MemoryError):
        store2.sync(chunks2, broken, 8, False, stats=stats2)
    store.attach(chunks, stats)
    flt = build_filters({"tenant": "lumen"}, field_types(chunks), "tenant")
    assert store.count() == 4
    assert [i.parent_id for i in MilvusLexical(store, chunks, "tenant", stats).search("24 horas", flt, 5).items] == ["a1"]


def test_server_side_rrf_gives_our_fused_order(milvus_bench, lab_questions, settings):
    state = milvus_bench.state
    store, lexical = state.store, state.lexical
    window, k = settings.window, settings.rrf_k
    compared = 0
    for q in lab_questions:
        flt = build_filters(q.filters, state.field_types, "tenant")
        (tenant,) = flt.get("tenant")
        from retrieval.core.text import tokenize

        qs = lexical.query_vector(list(dict.fromkeys(tokenize(q.question))), tenant)
        vec = milvus_bench.encoder.query(q.question)[0]
        sparse = [cid for cid, _ in store.sparse_search(qs, flt, tenant, window)] if qs else []
        dense = ids(store.query(vec, flt, window))
        ours = rrf({"bm25": sparse, "dense": dense}, k)
        theirs = store.server_rrf(qs or {0: 0.0}, vec, flt, tenant, window, k) if qs else None
        if theirs is None:
            continue
        # Same scores 1/(k + rank) summed; Milvus breaks ties by arrival order, we by best rank then id,
        # so compare the order with ties put in our order.
        assert [s for _, s in theirs] == pytest.approx([i.score for i in ours.items], rel=1e-6), q.id
        score = {i.chunk_id: i.score for i in ours.items}
        retied = sorted((cid for cid, _ in theirs), key=lambda c: (-round(score[c], 9),
                                                                    [i.chunk_id for i in ours.items].index(c)))
        assert retied == [i.chunk_id for i in ours.items], q.id
        compared += 1
    assert compared >= 40


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(data_dir: Path, port: int) -> subprocess.Popen:
    """A Milvus Lite server process (``python -m milvus_lite server``), once it accepts connections."""
    server = subprocess.Popen([sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(data_dir),
                               "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the Milvus Lite server did not start")


def test_unreachable_server_gives_lexical_only_with_its_reason(settings, tmp_path):
    port = _free_port()
    corpus = write_corpus(tmp_path / "small.jsonl", small_docs("faq"))
    # The judge is pinned off: this tests the store (a fake 8-dim embedder on a toy corpus), not the learned gate.
    s = settings.with_overrides(backend="milvus", milvus_uri=f"http://127.0.0.1:{port}", milvus_timeout=5.0,
                                min_similarity=-1.0, min_bm25=0.5, reranker_model="none", support_gate=False,
                                evidence_model=False)
    bench = Workbench(s, embedder=EMBEDDER, progress=False)
    question = "Em quanto tempo o PX-7 é ativado?"
    server = _server(tmp_path / "srv", port)
    try:
        bench.load_corpus(corpus)
        up = bench.ask(question, {"tenant": "lumen"})
        assert up.tier == "rrf_only" and up.lexical.note is None
        assert [i.parent_id for i in up.lexical.items] == ["a1", "a2"]
    finally:
        server.kill()
        server.wait()
    down = bench.ask(question, {"tenant": "lumen"})
    assert down.tier == "lexical_only"
    assert down.tier_reason.startswith("dense search failed: MilvusException")
    assert "in-process BM25" in down.lexical.note.text()
    # a declared reason: the trace records it in both forms (a plain text here once made to_dict fail)
    assert down.to_dict()["lexical"]["note_code"]["code"] == "milvus.lexical_fallback"
    assert ids(down.lexical) == ids(up.lexical)
    assert [i.score for i in down.lexical.items] == pytest.approx([i.score for i in up.lexical.items], rel=1e-6)
    assert [f.parent_id for f in down.final][:1] == ["a1"] and down.gate["kind"] == "bm25"
    # Loading while the server is down: the in-process BM25 and the reason, never an exception.
    state = bench.load_corpus(corpus)
    # The server's version is asked first (retrieval.backends.milvus.server_features): a server that is down says so.
    why = state.store_reason.text()
    assert state.store is None and why.startswith("vector store unavailable: Milvus at http://"), why
    assert "unavailable: MilvusException" in why and "Fail connecting to server" in why
    again = bench.ask(question, {"tenant": "lumen"})
    assert again.tier == "lexical_only" and [f.parent_id for f in again.final][:1] == ["a1"]
    # The server back (a new process over the same data): the collection is loaded again, nothing is written.
    server = _server(tmp_path / "srv", port)
    try:
        client = open_client(s.milvus_uri, None, 2.0)
        for _ in range(60):  # gRPC reconnects with a backoff of a second or two
            try:
                client.list_collections(timeout=2.0)
                break
            except Exception:  # noqa: BLE001
                time.sleep(0.5)
        state = bench.load_corpus(corpus)
        assert state.store_reason.code == "store.ok"
        assert (state.sync.added, state.sync.updated, state.sync.removed, state.sync.unchanged) == (0, 0, 0, 4)
        back = bench.ask(question, {"tenant": "lumen"})
        assert back.tier == "rrf_only" and ids(back.lexical) == ids(up.lexical) and ids(back.dense) == ids(up.dense)
    finally:
        server.kill()
        server.wait()


def test_cli_index_status_on_milvus_and_unreachable_server_exits_2(tmp_path):
    from helpers.paths import ROOT

    def run(uri):
        env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("RETRIEVAL_") or k == "RETRIEVAL_READER_STATES_AT_INDEX"}
        env.update(RETRIEVAL_BACKEND="milvus", RETRIEVAL_MILVUS_URI=uri)
        return subprocess.run([sys.executable, "-m", "retrieval", "index", "--status"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)

    fresh = run(str(tmp_path / "empty.db"))
    assert fresh.returncode == 0 and "not indexed (collection rw_" in fresh.stdout
    down = run(f"http://127.0.0.1:{_free_port()}")
    assert down.returncode == 2 and down.stdout == ""
    lines = down.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Milvus at http://127.0.0.1:") and "Traceback" not in down.stderr


def test_non_ascii_filter_values_match_on_milvus(tmp_path):
    """Milvus reads no \\uXXXX escape in an expression: accented and other non-ASCII values are written as is."""
    docs = [{"id": "j1", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas.",
             "metadata": {"tenant": "josé", "doc_type": "ação"}},
            {"id": "j2", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas.",
             "metadata": {"tenant": "🚀", "doc_type": "ação"}}]
    client, chunks, stats, store = open_store(tmp_path, docs)
    store.sync(chunks, embed, 8, False, stats=stats)
    lexical = MilvusLexical(store, chunks, "tenant", stats)
    types = field_types(chunks)
    for tenant, parent in (("josé", "j1"), ("🚀", "j2")):
        flt = build_filters({"tenant": tenant, "doc_type": "ação"}, types, "tenant")
        assert [i.parent_id for i in store.query(embed(["ativado"])[0], flt, 10).items] == [parent]
        assert [i.parent_id for i in lexical.search("ativado PX-7", flt, 10).items] == [parent]


def test_a_milvus_file_path_under_a_file_is_one_reason(tmp_path):
    blocker = tmp_path / "plain-file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(MilvusUnavailable, match="unavailable: (FileExistsError|NotADirectoryError)"):
        open_client(blocker / "m.db")


#: Values whose JSON escapes Milvus's parser rejected (a control character) or that quote and escape.
ODD_VALUES = ["t\x01ab", 'quo"te', "back\\slash", "line\nfeed", "josé 🚀", "tab\tcr\r", "\x00nul", "sep\u2028x",
              "\\u0041", "\x7f\x85"]


def test_control_characters_quotes_and_backslashes_in_tenants_and_filters_match_on_milvus(tmp_path):
    """A control character in a tenant or filter value built an expression Milvus rejected: every request of
    that tenant fell to lexical_only while the local backend worked. Each value now finds its own document, in
    the tenant (partition key), a typed field and a JSON-path field alike, without a fallback."""
    docs = [{"id": f"d{i}", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas.",
             "metadata": {"tenant": value, "doc_type": value, "weird key": value}} for i, value in enumerate(ODD_VALUES)]
    client, chunks, stats, store = open_store(tmp_path, docs)
    assert set(store.schema.scalars) == {"doc_type"}  # "weird key" is read through meta["weird key"]
    store.sync(chunks, embed, 8, False, stats=stats)
    lexical = MilvusLexical(store, chunks, "tenant", stats)
    types = field_types(chunks)
    for i, value in enumerate(ODD_VALUES):
        flt = build_filters({"tenant": value, "doc_type": value, "weird key": value}, types, "tenant")
        assert [x.parent_id for x in store.query(embed(["ativado"])[0], flt, 10).items] == [f"d{i}"], repr(value)
        found = lexical.search("ativado PX-7", flt, 10)
        assert [x.parent_id for x in found.items] == [f"d{i}"] and found.note is None, repr(value)


def test_a_milvus_lite_file_open_in_another_process_is_one_reason(tmp_path, capfd):
    """Milvus Lite serves one process per file: a second one got two tracebacks on stderr and a reason saying
    only 'Open local milvus failed'. The lock is held here on its own descriptor, as another process holds it."""
    import fcntl
    import os

    db = tmp_path / "held.db"
    db.mkdir()
    fd = os.open(db / "LOCK", os.O_CREAT | os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        with pytest.raises(MilvusUnavailable) as err:
            open_client(db)
    finally:
        os.close(fd)
    assert str(err.value) == (f"Milvus Lite file {db.resolve()} is open in another process (Milvus Lite serves one "
                              "process at a time: stop the other one, or use a Milvus server)")
    out, errors = capfd.readouterr()
    assert "Traceback" not in out + errors
