"""Faults: the vector store disappearing between index and ask, and a re-index killed with SIGKILL half-way."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from helpers.fakes import HashEmbedder
from helpers.paths import ROOT

pytestmark = pytest.mark.stress


def _corpus(path, docs, tag):
    with path.open("w", encoding="utf-8") as out:
        for n in range(docs):
            out.write(json.dumps({"id": f"d{n}", "text": f"O PX-{n} ativa em {n} horas após o pagamento {tag}.",
                                  "metadata": {"tenant": "lumen" if n % 2 else "ventura"}}, ensure_ascii=False) + "\n")
    return path


def test_store_folder_removed_between_index_and_ask_gives_its_tier_and_reason(tmp_path):
    from retrieval.stages.tiers import TIERS
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    chroma = tmp_path / "chroma"
    settings = Settings(chroma_path=chroma, min_similarity=-1.0, reranker_model="none", support_gate=False,
                        _env_file=None)  # store faults, not the learned judge
    corpus = _corpus(tmp_path / "c.jsonl", 20, "v1")
    bench = Workbench(settings, embedder=HashEmbedder(), progress=False)
    bench.load_corpus(corpus)
    before = bench.ask("Quando o PX-3 ativa?", {"tenant": "lumen"})
    assert before.tier == "rrf_only" and before.dense.items
    shutil.rmtree(chroma)
    after = bench.ask("Quando o PX-3 ativa?", {"tenant": "lumen"})  # the long-lived workbench (the app's)
    assert after.tier in TIERS
    if after.tier == "lexical_only":
        assert "dense search failed" in after.tier_reason
    else:  # the store still answers from what it holds open: the same lists
        assert after.dense.chunk_ids() == before.dense.chunk_ids()
    assert after.lexical.chunk_ids() == before.lexical.chunk_ids()
    # Another workbench on the same path: it rebuilds the store, or (Chroma keeps the removed database open in
    # this process) its dense search fails, and the request runs lexical_only saying why.
    fresh = Workbench(settings, embedder=HashEmbedder(), progress=False)
    state = fresh.load_corpus(corpus)
    trace = fresh.ask("Quando o PX-3 ativa?", {"tenant": "lumen"})
    assert trace.tier in {"rrf_only", "lexical_only"}
    if trace.tier == "lexical_only":
        assert "dense search failed" in trace.tier_reason or "vector store" in trace.tier_reason, trace.tier_reason
        assert trace.dense.status.startswith("skipped:")  # the trace's "note" (the field holds the store's own)
    else:
        assert state.store is not None and trace.dense.chunk_ids() == before.dense.chunk_ids()
    assert trace.lexical.chunk_ids() == before.lexical.chunk_ids()


SLOW_INDEX = """
import sys, time
sys.path[:0] = [{tests!r}, {root!r}]
from helpers.fakes import HashEmbedder
from retrieval.pipeline import Workbench
from retrieval.settings import Settings

class Slow(HashEmbedder):
    batch = 8
    def embed_passages(self, texts):
        print("batch", flush=True)
        time.sleep(0.2)
        return super().embed_passages(texts)

bench = Workbench(Settings(chroma_path={chroma!r}, _env_file=None), embedder=Slow(), progress=False)
bench.load_corpus({corpus!r})
print("done", flush=True)
"""


def test_reindex_killed_half_way_leaves_the_previous_index_answering(tmp_path):
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    chroma, corpus = tmp_path / "chroma", tmp_path / "c.jsonl"
    settings = Settings(chroma_path=chroma, min_similarity=-1.0, reranker_model="none", support_gate=False,
                        _env_file=None)  # store faults, not the learned judge
    _corpus(corpus, 30, "v1")
    first = Workbench(settings, embedder=HashEmbedder(), progress=False)
    first.load_corpus(corpus)
    reference = first.ask("Quando o PX-3 ativa?", {"tenant": "lumen"})
    stored = dict(first.state.store._stored_hashes(5000))
    del first

    _corpus(corpus, 400, "v2")  # a changed corpus: every chunk re-embedded, slowly, in a child process
    script = SLOW_INDEX.format(tests=str(ROOT / "tests"), root=str(ROOT), chroma=str(chroma), corpus=str(corpus))
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_")})
    batches = 0
    deadline = time.monotonic() + 120
    while batches < 10 and time.monotonic() < deadline:
        line = child.stdout.readline()
        assert line and line.strip() != "done", "the re-index finished before it could be killed"
        batches += line.strip() == "batch"
    os.kill(child.pid, signal.SIGKILL)  # half-way through embedding the new version
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    _corpus(corpus, 30, "v1")  # the previous corpus: its index must be intact
    again = Workbench(settings, embedder=HashEmbedder(), progress=False)
    state = again.load_corpus(corpus)
    assert state.store is not None, state.store_reason
    assert (state.sync.added, state.sync.updated, state.sync.removed) == (0, 0, 0)  # nothing half-written
    assert dict(state.store._stored_hashes(5000)) == stored
    trace = again.ask("Quando o PX-3 ativa?", {"tenant": "lumen"})
    assert trace.fused.chunk_ids() == reference.fused.chunk_ids() and trace.tier == reference.tier
