"""One lock per collection: while another process writes corpus A's vectors (here a process holding A's write
lock, as an `index` of A would), a Workbench indexes and answers on corpus B without waiting, and one that
loads A waits, told at each look which process holds it, what it writes and how far it is."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

from helpers.fakes import HashEmbedder
from helpers.paths import ROOT

from retrieval.pipeline.index import collection_key
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings

HOLD = """
import sys, time
from pathlib import Path
from retrieval.pipeline.index import store_write_lock
from retrieval.settings import Settings
settings = Settings(chroma_path=sys.argv[1], _env_file=None)
with store_write_lock(settings, sys.argv[2], "indexing corpus A") as report:
    report(embedded=3, total=10)
    Path(sys.argv[3]).write_text("held")
    while not Path(sys.argv[4]).exists():
        time.sleep(0.05)
"""


def corpus(path, tenant_text):
    path.write_text("".join(json.dumps({"id": f"d{n}", "title": f"T{n}", "text": f"{tenant_text} documento {n}",
                                        "metadata": {}}) + "\n" for n in range(3)), encoding="utf-8")
    return path


def test_indexing_one_corpus_never_blocks_another_and_a_waiter_is_told_who_holds_it(tmp_path) -> None:
    a, b = corpus(tmp_path / "a.jsonl", "ativação"), corpus(tmp_path / "b.jsonl", "garantia")
    settings = Settings(chroma_path=tmp_path / "chroma", reranker_model="none", support_gate=False,
                        evidence_model=False, min_similarity=-1.0, _env_file=None)
    held, release = tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(settings.chroma_path),
                               collection_key(settings, a, HashEmbedder.name), str(held), str(release)], cwd=ROOT)
    try:
        while not held.exists():
            assert holder.poll() is None, "the holding process died"
            time.sleep(0.05)
        bench = Workbench(settings, embedder=HashEmbedder(), progress=False)
        loaded: list = []
        b_loader = threading.Thread(target=lambda: loaded.append(bench.load_corpus(b)))  # B: its own lock, not A's
        b_loader.start()
        b_loader.join(timeout=120)  # a store-wide lock would hold it until A's writer ends: it never ends here
        assert loaded, "loading corpus B waited on corpus A's writer"
        state = loaded[0]
        assert state.store is not None and len(state.chunks) == 3
        assert bench.ask("garantia", {}).final[0].parent_id in {"d0", "d1", "d2"}
        assert holder.poll() is None and not release.exists()  # A is still being written meanwhile

        seen: list[dict] = []
        other = Workbench(settings, embedder=HashEmbedder(), progress=False)
        loader = threading.Thread(target=lambda: other.load_corpus(a, on_wait=seen.append))
        loader.start()
        while not seen:
            assert loader.is_alive(), "the load of A did not wait for A's writer"
            time.sleep(0.05)
        assert seen[0]["pid"] == holder.pid and seen[0]["what"] == "indexing corpus A"
        assert (seen[0]["embedded"], seen[0]["total"]) == (3, 10)
        release.write_text("go")
        loader.join(timeout=120)
        assert not loader.is_alive() and other.state is not None and len(other.state.chunks) == 3
    finally:
        release.write_text("go")
        holder.wait(timeout=30)
