"""A broken vector store heals (the attacker's case): garbage written into a real Chroma store's
``chroma.sqlite3``, or the file truncated, never raises out of a request, the index, ``index --status`` or a second
open in the same process; the request runs ``lexical_only`` with the declared reason ``store.damaged`` naming
``index --rebuild``; a rebuild moves the damaged store aside (never deleted) and builds it again, and the process'
Workbenches read the new store. A native library's panic (pyo3's ``PanicException``, a ``BaseException``) is caught
at each boundary; interrupts are not. Real Chroma on a temporary folder, a fake two-dimension embedder: no model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.fakes import HashEmbedder
from helpers.paths import ROOT

from retrieval.backends.base import DAMAGED, OK, OpenRequest, StoreDamaged, StoreStatusError, rebuild_command
from retrieval.backends.local import chroma_client, open_local, status
from retrieval.backends.store import (VECTORS_UNAVAILABLE, client_generation, guarded, move_aside, native_failure,
                                      open_client, probe_damage)
from retrieval.pipeline.index import rebuild_store
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings

ROWS = [
    {"id": "a", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas após o pagamento."},
    {"id": "b", "title": "Reembolso", "text": "O reembolso do PX-7 leva 7 dias úteis."},
    {"id": "c", "title": "Garantia", "text": "O PX-7 tem garantia de um ano após a ativação."},
]
QUESTION = "Quando o PX-7 é ativado após o pagamento?"
PAGE = 4096


class PanicException(BaseException):
    """Named as pyo3's: what chromadb's Rust bindings raise when they panic (not an ``Exception``)."""


def corpus(folder: Path, rows=ROWS, name: str = "c.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def settings_for(store: Path) -> Settings:
    return Settings(_env_file=None, chroma_path=store, reranker_model="off", reader_states_at_index=False)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real store holding the three-chunk corpus, built once in a separate process; each test copies it."""
    folder = tmp_path_factory.mktemp("template")
    _build(folder / "chroma", corpus(folder))
    return folder


@pytest.fixture
def built(template: Path, tmp_path: Path) -> tuple[Settings, Path, Path]:
    """A copy of the template store, and its corpus, in this test's folder (this process has no Chroma system on
    it yet, as a fresh ``ask`` or app would not)."""
    shutil.copytree(template / "chroma", tmp_path / "chroma")
    path = corpus(tmp_path)
    assert path.read_bytes() == (template / "c.jsonl").read_bytes()
    return settings_for(tmp_path / "chroma"), tmp_path / "chroma", path


def _build(store: Path, path: Path) -> None:
    """Index ``path`` into ``store`` in a separate process (a copy of the template holds the template's collection,
    named by the template corpus' path: a real Chroma file to damage; a test's own corpus gets its own collection
    at its first load)."""
    code = ("import sys\nsys.path[:0] = [sys.argv[3], sys.argv[4]]\n"
            "from helpers.fakes import HashEmbedder\n"
            "from retrieval.pipeline.workbench import Workbench\nfrom retrieval.settings import Settings\n"
            "s = Settings(_env_file=None, chroma_path=sys.argv[1], reader_states_at_index=False)\n"
            "assert Workbench(s, embedder=HashEmbedder(), progress=False).load_corpus(sys.argv[2]).sync.added > 0\n")
    done = subprocess.run([sys.executable, "-c", code, str(store), str(path), str(ROOT), str(ROOT / "tests")],
                          capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_")}, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]


def garbage(store: Path, pages=(1, 2)) -> bytes:
    """Random bytes over whole pages of the SQLite file (0-based page numbers: 1 and 2 are the migrations
    table and its index, which Chroma's Rust code reads on opening and panics on)."""
    db = store / "chroma.sqlite3"
    with db.open("r+b") as f:
        for n in pages:
            f.seek(n * PAGE)
            f.write(np.random.default_rng(n).integers(0, 256, PAGE, dtype=np.uint8).tobytes())
    return db.read_bytes()


def truncate(store: Path) -> bytes:
    db = store / "chroma.sqlite3"
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size // 3)
    return db.read_bytes()


DAMAGES = {"garbage": garbage, "truncated": truncate}


# -- the boundary: every BaseException of a native library, never an interrupt -----------------------------------
def test_a_panic_in_a_store_read_is_a_reason_and_interrupts_go_on():
    def panics():
        raise PanicException("Expect it to be fetched: Database(SqliteError { code: 11 })")

    read = guarded(panics, VECTORS_UNAVAILABLE)
    assert read.value is None and "PanicException: Expect it to be fetched" in read.reason.text()
    assert native_failure(PanicException()) and not native_failure(ValueError())
    for interrupt in (KeyboardInterrupt, SystemExit, GeneratorExit):
        def stop(interrupt=interrupt):
            raise interrupt()

        with pytest.raises(interrupt):
            guarded(stop, VECTORS_UNAVAILABLE)


def test_a_panic_while_syncing_is_damage_not_a_crash(tmp_path):
    class Panics:
        def list_collections(self, **_):
            raise PanicException("Expect it to be fetched")

    class Interrupted:
        def list_collections(self, **_):
            raise KeyboardInterrupt

    from retrieval.ingest.corpus import chunk_documents, load_corpus

    s = settings_for(tmp_path / "chroma")
    chunks = chunk_documents(load_corpus(corpus(tmp_path)), s.chunk_tokens, s.chunk_overlap, s.contextual)
    import contextlib

    def request(client):
        return OpenRequest(s, chunks, HashEmbedder(), OK(), str(tmp_path / "c.jsonl"), "v",
                           contextlib.nullcontext, lambda: (client, OK()), False)

    opened = open_local(request(Panics()))
    assert opened.store is None and DAMAGED.matches(opened.reason), opened.reason
    assert "index --rebuild --corpus" in opened.reason.text()
    with pytest.raises(KeyboardInterrupt):
        open_local(request(Interrupted()))


# -- the attacker's case on a real store ------------------------------------------------------------------------
@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_store_is_found_before_chroma_reads_it(built, tmp_path, damage):
    s, store, _ = built
    assert probe_damage(store) is None and probe_damage(store, thorough=True) is None
    DAMAGES[damage](store)
    assert probe_damage(store, thorough=True) is not None
    with pytest.raises(StoreDamaged) as caught:
        open_client(store)   # the light check (or Chroma's failure) refuses it: one line, no panic, no traceback
    assert "\n" not in str(caught.value) and "index --rebuild" in str(caught.value)


def test_garbage_that_chroma_panics_on_is_real(built):
    """The file damage the tests write makes chromadb's Rust bindings panic when nothing checks first (the
    finding), so the tests above exercise the panic's case, not a milder one."""
    _, store, _ = built
    garbage(store)
    code = ("import sys, chromadb\ntry:\n    chromadb.PersistentClient(path=sys.argv[1])\n"
            "except BaseException as exc:\n    print(type(exc).__name__, isinstance(exc, Exception))\n")
    done = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True)
    assert done.stdout.split() == ["PanicException", "False"], (done.stdout, done.stderr[-500:])


def test_a_panic_on_opening_is_damage_and_the_next_open_reads_the_folder_again(built, monkeypatch):
    """Where the check before Chroma misses the damage, Chroma's panic is caught as damage, and the system it
    failed to start is forgotten (chromadb would hand it out again: an ``AttributeError`` at the next open)."""
    from retrieval.backends.chroma import client, damage

    s, store, path = built
    garbage(store)
    for module in (client, damage):   # the check before Chroma, and the one that names the damage after it
        monkeypatch.setattr(module, "probe_damage", lambda *args, **kwargs: None)
    for _ in range(2):
        with pytest.raises(StoreDamaged) as caught:
            open_client(store)
        assert "PanicException" in str(caught.value) and "index --rebuild" in str(caught.value)
    monkeypatch.undo()
    assert move_aside(store) is not None
    assert open_client(store).list_collections() == []   # a new store at the same path, in the same process


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_store_loads_lexical_only_with_the_rebuild_reason(built, tmp_path, damage):
    s, store, path = built
    DAMAGES[damage](store)
    for _ in range(2):   # a second open in the same process reads the folder again (no half-started client)
        bench = Workbench(s, embedder=HashEmbedder(), progress=False)
        state = bench.load_corpus(path)
        assert state.store is None and DAMAGED.matches(state.store_reason), state.store_reason
        assert rebuild_command(path) in state.store_reason.text()
        trace = bench.ask(QUESTION).to_dict()
        assert trace["tier"] == "lexical_only" and trace["tier_reason_code"]["code"] == "store.damaged"
        assert trace["final"] and "index --rebuild" in trace["tier_reason"]
    client, why = chroma_client(s)
    assert client is None and DAMAGED.matches(why)
    assert "danificado" in why.text("pt") and "index --rebuild" in why.text("pt")


@pytest.mark.parametrize("damage", DAMAGES)
def test_status_on_a_damaged_store_is_one_line_naming_rebuild(built, tmp_path, damage):
    s, store, path = built
    DAMAGES[damage](store)
    with pytest.raises(StoreDamaged) as caught:
        status(s, path, False)
    line = str(caught.value)
    assert "\n" not in line and f"index --rebuild --corpus {path}" in line and str(store) in line


@pytest.mark.parametrize("damage", DAMAGES)
def test_rebuild_moves_the_damaged_store_aside_and_workbenches_heal_in_process(built, tmp_path, damage):
    s, store, path = built
    other = corpus(tmp_path, [{"id": "z", "text": "Prazo de entrega do cofre."}], "other.jsonl")
    before = Workbench(s, embedder=HashEmbedder(), progress=False)
    assert before.load_corpus(other).store is not None   # a Workbench of this process holds a client of the store
    damaged = DAMAGES[damage](store)
    bench = Workbench(s, embedder=HashEmbedder(), progress=False)
    assert DAMAGED.matches(bench.load_corpus(path).store_reason)
    generation = client_generation(store)
    moved, state = bench.rebuild(path)
    assert moved is not None and moved.name.startswith("chroma.damaged-") and moved.parent == store.parent
    assert (moved / "chroma.sqlite3").read_bytes() == damaged   # kept as it was, never deleted
    assert state.store is not None and state.sync.added == 3 and probe_damage(store, thorough=True) is None
    assert client_generation(store) == generation + 1
    trace = bench.ask(QUESTION).to_dict()
    assert trace["tier"] != "lexical_only" and trace["dense"]["items"], trace["tier_reason"]
    again = before.load_corpus(other)   # the older Workbench opens the new store, not the moved one
    assert again.store is not None and again.sync.added == 1


def test_a_store_rebuilt_by_another_process_is_read_at_the_next_load(built, tmp_path):
    """``index --rebuild`` beside a running app: the app's Chroma system still reads the moved file; its next load
    (re-index, rebuild) reads the new store instead."""
    s, store, path = built
    bench = Workbench(s, embedder=HashEmbedder(), progress=False)
    assert bench.load_corpus(path).store is not None
    os.rename(store, tmp_path / "chroma.damaged-elsewhere")   # the other process moves it aside and builds anew
    _build(store, corpus(tmp_path, [{"id": "z", "text": "Prazo de entrega do cofre."}], "other.jsonl"))
    state = bench.load_corpus(path)
    assert state.sync.added == 3   # the new store had none of this corpus: not the moved file's collection
    assert bench.ask(QUESTION).to_dict()["dense"]["items"]


def test_rebuild_on_a_whole_store_drops_only_this_corpus(built, tmp_path):
    s, store, path = built
    other = corpus(tmp_path, [{"id": "z", "text": "Prazo de entrega do cofre."}], "other.jsonl")
    Workbench(s, embedder=HashEmbedder(), progress=False).load_corpus(other)
    assert Workbench(s, embedder=HashEmbedder(), progress=False).load_corpus(path).sync.unchanged in (0, 3)
    assert Workbench(s, embedder=HashEmbedder(), progress=False).load_corpus(path).sync.unchanged == 3
    assert rebuild_store(s, path, HashEmbedder.name) is None
    assert [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name] == []
    state = Workbench(s, embedder=HashEmbedder(), progress=False).load_corpus(path)
    assert state.sync.added == 3   # dropped, so embedded again
    # the other corpus' collection was never touched: nothing of it is embedded again
    assert Workbench(s, embedder=HashEmbedder(), progress=False).load_corpus(other).sync.unchanged == 1


def test_rebuild_refuses_a_server_store_without_quoting_it():
    s = Settings(_env_file=None, chroma_host="user:s3cret@127.0.0.1:9")
    with pytest.raises(StoreStatusError) as caught:
        rebuild_store(s)
    assert "RETRIEVAL_CHROMA_HOST" in str(caught.value) and "s3cret" not in str(caught.value)


def test_move_aside_never_overwrites_an_earlier_copy(tmp_path):
    store = tmp_path / "chroma"
    firsts = []
    for _ in range(2):
        store.mkdir()
        (store / "chroma.sqlite3").write_bytes(b"x" * 10)
        firsts.append(move_aside(store))
    assert firsts[0] != firsts[1] and all((p / "chroma.sqlite3").is_file() for p in firsts)
    assert move_aside(store) is None   # nothing to move
