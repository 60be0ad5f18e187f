"""No silent stage: one guarded store read (a store that answers ``query`` but fails ``get`` never raises out
of ``ask``: the stage that read it drops, its reason in the trace), MMR that cannot run says so, an LLM
transform that falls back to the local adapter says so, and a misspelled or partial tenant field is refused
at load. Hand-built corpus, fake embedder and store: no model."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import numpy as np
import pytest
from helpers.fakes import HashEmbedder

from retrieval.backends.base import OK as STORE_OK
from retrieval.backends.store import VECTORS_UNAVAILABLE, StoreRead, guarded, read_vectors, read_window
from retrieval.core.filters import Filters
from retrieval.core.reasons import raw
from retrieval.core.types import RankedList, ScoredItem
from retrieval.pipeline.index import build_index
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings
from retrieval.stages.answer import ExtractiveAnswerer
from retrieval.stages.select import select

DOCS = [
    {"id": "a", "title": "Ativação", "text": "O PX-7 é ativado em 24 horas após o pagamento.", "metadata": {"tenant": "t1"}},
    {"id": "b", "title": "Reembolso", "text": "O reembolso do PX-7 leva 7 dias úteis.", "metadata": {"tenant": "t1"}},
    {"id": "c", "title": "Garantia", "text": "O PX-7 tem garantia de um ano após a ativação.", "metadata": {"tenant": "t1"}},
    {"id": "d", "title": "Outro", "text": "Prazo de entrega do cofre.", "metadata": {"tenant": "t2"}},
]
QUESTION = "Quando o PX-7 é ativado após o pagamento?"


class GetFails:
    """Answers ``query`` (a fixed cosine window, a# only: b# and c# are lexical-only finds) but fails every
    ``get`` of stored vectors, as a Chroma whose SQLite refuses the read would."""

    def __init__(self, chunks) -> None:
        self.chunks = {c.chunk_id: c for c in chunks}
        self.gets = 0

    def query(self, vector, flt: Filters, window: int) -> RankedList:
        tenants = flt.get("tenant") or ()
        hits = [cid for cid in self.chunks if cid.startswith("a#") and self.chunks[cid].metadata["tenant"] in tenants]
        return RankedList("dense", "cosine", tuple(ScoredItem(cid, "a", r, 0.9) for r, cid in enumerate(hits, 1)))

    def vectors(self, ids):
        self.gets += 1
        raise ConnectionError("too many SQL variables")

    def count(self) -> int:
        return len(self.chunks)


def _write(path, docs):
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n", encoding="utf-8")
    return path


def _bench(tmp_path, **overrides) -> tuple[Workbench, GetFails]:
    settings = Settings(_env_file=None, chroma_path=tmp_path / "unused", **overrides)
    bench = Workbench(settings, embedder=HashEmbedder(), progress=False)
    state = build_index(settings, _write(tmp_path / "c.jsonl", DOCS), None, "no embedder here",
                        lambda: (None, "unused"), threading.RLock())
    store = GetFails(state.chunks)
    bench.state = dataclasses.replace(state, store=store, store_reason=STORE_OK())
    return bench, store


def _notes(trace, stage):
    return [n.reason.text() for n in trace.notes if n.stage == stage]


# -- the guarded read -----------------------------------------------------------------------------------------
def test_a_guarded_read_returns_the_value_or_one_line_why():
    assert guarded(lambda: {"x": 1}, VECTORS_UNAVAILABLE) == StoreRead({"x": 1})

    def boom():
        raise ConnectionError("database is locked\n  (sqlite)")

    failed = guarded(boom, VECTORS_UNAVAILABLE)
    assert failed.value is None and not failed.ok
    assert failed.reason.text() == "stored vectors unavailable: ConnectionError: database is locked (sqlite)"
    assert read_vectors(None, ["a#0"]).reason.text() == "stored vectors unavailable: no vector store"
    store = GetFails([])
    assert read_vectors(store, []) == StoreRead({}) and store.gets == 0  # nothing asked, nothing read
    assert read_vectors(store, ["a#0"]).reason.text().startswith("stored vectors unavailable: ConnectionError")
    assert read_window(store, np.zeros(2), Filters(()), 3).ok


def test_a_store_that_fails_get_never_raises_out_of_ask_and_each_stage_says_why(tmp_path):
    bench, store = _bench(tmp_path, reranker_model="none", support_gate=False, evidence_model=False,
                          mmr_lambda=0.5, min_similarity=-1.0)
    trace = bench.ask(QUESTION, {"tenant": "t1"})
    assert store.gets >= 2  # MMR and the gate both tried
    assert trace.tier == "rrf_only" and trace.final  # the request still answers, from the BM25 gate
    assert trace.gate["kind"] == "bm25" and "BM25 gate used" in trace.gate["note"]
    (mmr_note,) = _notes(trace, "select")
    assert mmr_note.startswith("MMR not applied (stored vectors unavailable: ConnectionError: too many SQL")
    assert _notes(trace, "gate") == [trace.gate["note"]]
    assert trace.to_dict()["notes"] == [n.to_dict() for n in trace.notes]


def test_the_learned_judge_drops_on_a_failed_read_with_its_reason(tmp_path):
    bench, _ = _bench(tmp_path, min_similarity=-1.0)  # defaults: the learned ranker, support gate, evidence
    models, why = bench.judge(bench.settings)
    assert models is not None, f"the shipped judge model does not load: {why}"  # the defect this would hide
    trace = bench.ask(QUESTION, {"tenant": "t1"})
    (judge_note,) = _notes(trace, "judge_features")
    assert judge_note.startswith("the judge's stored vectors unavailable: ConnectionError")
    assert trace.tier == "rrf_only" and trace.final
    assert trace.tier_reason == f"learned ranker: {judge_note}"
    assert trace.gate["support"]["note"] == f"not applied: {judge_note}"


# -- MMR that cannot run ----------------------------------------------------------------------------------------
def test_mmr_without_vectors_keeps_the_order_and_says_why():
    fused = RankedList("fused", "rrf", (ScoredItem("a#0", "a", 1, 0.9), ScoredItem("b#0", "b", 2, 0.8),
                                        ScoredItem("c#0", "c", 3, 0.7)))
    off = select(fused, "parent", 2, 3, 0.5, None, raw("the dense side did not run: dense switched off"))
    assert [i.chunk_id for i in off.items] == ["a#0", "b#0"]
    assert off.note.text() == "MMR not applied (the dense side did not run: dense switched off): the first 2 kept in order"
    failed = select(fused, "parent", 2, 3, 0.5, GetFails([]))
    assert [i.chunk_id for i in failed.items] == ["a#0", "b#0"] and "ConnectionError" in failed.note.text()
    assert select(fused, "parent", 2, 3, None, None).note is None  # MMR not asked: nothing to say


def test_mmr_with_dense_off_is_noted_in_the_trace(tmp_path):
    bench, store = _bench(tmp_path, reranker_model="none", support_gate=False, evidence_model=False,
                          mmr_lambda=0.5, dense_enabled=False)
    trace = bench.ask(QUESTION, {"tenant": "t1"})
    assert trace.tier == "lexical_only" and store.gets == 0
    (note,) = _notes(trace, "select")
    assert note.startswith("MMR not applied (the dense side did not run: ") and trace.tier_reason in note


# -- an LLM transform that falls back ---------------------------------------------------------------------------
class FailingLLM:
    costs = {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0}

    @classmethod
    def from_settings(cls, settings):
        return cls()

    def run(self, technique, question):
        raise TimeoutError("sk-secret would be in here")


def test_an_llm_transform_fallback_is_recorded_in_the_trace(tmp_path, monkeypatch):
    monkeypatch.setattr("retrieval.pipeline.expand.LLMTransformer", FailingLLM)
    bench, _ = _bench(tmp_path, reranker_model="none", support_gate=False, evidence_model=False,
                      llm_base_url="http://127.0.0.1:9/v1", llm_model="fake", transforms=("rewrite",))
    trace = bench.ask(QUESTION, {"tenant": "t1"}, answerer=ExtractiveAnswerer())
    why = "the LLM failed (TimeoutError); the local adapter wrote this query"
    assert trace.costs["techniques"]["rewrite"]["fallback"] == why
    assert _notes(trace, "transforms") == [f"rewrite: {why}"]
    assert "sk-secret" not in json.dumps(trace.to_dict(), ensure_ascii=False, default=str)


def test_store_write_lock_is_one_writer_per_machine_and_never_blocks_a_store_it_cannot_lock(tmp_path):
    """Two processes syncing one store take turns (``retrieval serve``'s workers opening one corpus); a store
    whose lock file cannot be created syncs under the process lock only."""
    import fcntl
    import os
    import subprocess
    import sys

    from retrieval.pipeline.index import lock_path, store_write_lock
    from retrieval.settings import Settings

    settings = Settings(chroma_path=tmp_path / "chroma")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from retrieval.pipeline.index import store_write_lock; "
         "from retrieval.settings import Settings\n"
         f"with store_write_lock(Settings(chroma_path={str(tmp_path / 'chroma')!r})):\n"
         "    print('held', flush=True); sys.stdin.readline()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        fd = os.open(lock_path(settings, ""), os.O_RDWR)   # the collection's lock (the subprocess' key: "")
        try:
            with pytest.raises(BlockingIOError):  # held by the other process
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            holder.communicate("\n", timeout=30)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released with its process' turn
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    finally:
        if holder.poll() is None:
            holder.kill()
    with store_write_lock(settings):  # and this process takes its own turn
        pass
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    with store_write_lock(Settings(chroma_path=blocked / "chroma")):  # its folder cannot exist: no lock, no error
        entered = True
    assert entered and not (blocked / "chroma.locks").exists()
    with store_write_lock(Settings(chroma_path=Path("/"))):  # no name to put a lock beside: no lock, no error
        entered_root = True
    assert entered_root


def test_each_passage_template_and_chunking_has_its_own_collection():
    from retrieval.backends.store import index_variant

    assert index_variant(120, 30) == index_variant(120, 30, False, "title-newline") == "chunks-120-30"
    assert index_variant(120, 30, True, "text") == "chunks-120-30+context+text"
