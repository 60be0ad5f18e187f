"""The same pipeline against a Chroma server (``RETRIEVAL_CHROMA_HOST``) gives the embedded store's lists.

Starts ``chroma run`` (the CLI shipped with the chromadb package) on a free local port with a temporary
path, waits for its heartbeat with a bounded timeout, and always terminates it. Works offline.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

QUESTIONS = 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _chroma_cli() -> str | None:
    local = Path(sys.executable).parent / "chroma"
    return str(local) if local.exists() else shutil.which("chroma")


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    cli = _chroma_cli()
    assert cli is not None, "the `chroma` CLI of the pinned chromadb package is missing"
    port = _free_port()
    log = tmp_path_factory.mktemp("chroma-server-log") / "server.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen([cli, "run", "--path", str(tmp_path_factory.mktemp("chroma-server")),
                                 "--host", "127.0.0.1", "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"no heartbeat from chroma run within 30 s: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


class _StoredVectors:
    """The lab embedder, with passage vectors read back from the embedded store (the same e5 output, without
    paying the model twice): the server gets exactly the vectors the embedded store holds."""

    def __init__(self, bench):
        self.name, self.batch, self._real = bench.embedder.name, 64, bench.embedder
        chunks = bench.state.chunks
        vectors = bench.state.store.vectors([c.chunk_id for c in chunks])
        self._by_text = {c.indexed_text: vectors[c.chunk_id] for c in chunks}

    def embed_queries(self, texts):
        return self._real.embed_queries(texts)

    def embed_passages(self, texts):
        import numpy as np

        return np.vstack([self._by_text[t] for t in texts])


def test_server_store_gives_the_embedded_lists(chroma_server, lab_bench, lab_questions):
    from retrieval.pipeline.workbench import Workbench

    remote = Workbench(lab_bench.settings.with_overrides(chroma_host=chroma_server),
                       embedder=_StoredVectors(lab_bench), progress=False)
    state = remote.load_corpus()
    assert state.store is not None, state.store_reason
    assert state.sync.added == len(state.chunks) == lab_bench.state.store.count()
    assert (state.sync.layout, state.sync.collections) == ("one collection per tenant", 2)  # as embedded
    answerable = [q for q in lab_questions if q.relevant][:QUESTIONS]
    for q in answerable:
        here, there = lab_bench.ask(q.question, q.filters), remote.ask(q.question, q.filters)
        assert there.models["vector_store"] == "chroma-server"
        assert [i.chunk_id for i in there.dense.items] == [i.chunk_id for i in here.dense.items], q.id
        assert [f.chunk_id for f in there.final] == [f.chunk_id for f in here.final], q.id
        assert there.tier == here.tier
    assert remote.load_corpus().sync.unchanged == len(state.chunks)  # a re-index through the server re-embeds nothing
