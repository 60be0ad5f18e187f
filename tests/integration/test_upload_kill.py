"""An upload killed while it is indexed, and two uploads of one collection at once (retrieval.serving.uploads):

* ``retrieval index --collection … --add`` is killed (SIGKILL) while it embeds a new file's chunks: the next load
  of the collection (a restart) answers from what is whole — the earlier document, and the new one, resumed, its
  vectors synced to the last chunk — and never from half an index;
* two writers add to one collection at the same moment (two sessions of one user): the second waits on the
  collection's lock, told who holds it, and neither file is lost nor mixed with the other.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from retrieval.ingest.collection import Collection
from retrieval.pipeline.workbench import Workbench
from retrieval.serving.uploads import add_uploads, collection_for
from retrieval.settings import Settings

ROOT = Path(__file__).resolve().parents[2]

EARLIER = "# Portaria 12\n\nO atendimento ao público da ouvidoria vai das nove às dezesseis horas.\n"


def long_markdown() -> str:
    """A document of about 90 chunks (some tens of seconds of embedding on two cores): one fact among acts."""
    acts = [f"## Ato {n}\n\nO ato {n} nomeia o servidor {n} para a comissão de número {n * 7} do exercício."
            for n in range(1, 400)]
    acts.insert(200, "## Ato da frota\n\nA frota municipal de ambulâncias tem exatamente vinte e três veículos.")
    return "# Diário de atos\n\n" + "\n\n".join(acts) + "\n"


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_")}
    env.update(RETRIEVAL_WRITE_ROOTS=str(tmp_path / "w"), RETRIEVAL_CHROMA_PATH=str(tmp_path / "chroma"),
               RETRIEVAL_READER_STATES_AT_INDEX="false", PYTHONPATH=str(ROOT))
    return env


def test_an_upload_killed_while_embedding_is_resumed_whole_at_the_next_load(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    env = env_for(tmp_path)
    earlier, later = tmp_path / "portaria.md", tmp_path / "diario.md"
    earlier.write_text(EARLIER, encoding="utf-8")
    later.write_text(long_markdown(), encoding="utf-8")
    cli = [sys.executable, "-m", "retrieval", "index", "--collection", "ana@example.com"]
    done = subprocess.run([*cli, "--add", str(earlier)], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    proc = subprocess.Popen([*cli, "--add", str(later)], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen = []
    deadline = time.monotonic() + 240
    assert proc.stdout is not None
    for line in proc.stdout:  # killed once its first batch of chunks is embedded and written, the rest not yet
        seen.append(line)
        done = re.search(r"embedding chunks:.*?\| *(\d+)/(\d+)", line)
        if done and 0 < int(done.group(1)) < int(done.group(2)) or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "".join(seen)[-2000:]

    settings = Settings(write_roots=str(tmp_path / "w"), chroma_path=tmp_path / "chroma", _env_file=None,
                        reader_states_at_index=False)
    collection = collection_for(settings, "ana@example.com")
    assert [e.name for e in collection.manifest().entries] == ["portaria.md", "diario.md"]
    bench = Workbench(settings, progress=False)   # the restart: a new process' first load of the collection
    state = bench.load_corpus(collection.root)
    assert sorted(d.id for d in state.documents) == ["diario", "portaria"]
    assert state.sync is not None and state.sync.added > 0, "the killed run had left chunks to embed"
    earlier_chunks = sum(1 for c in state.chunks if c.parent_id == "portaria")
    assert state.sync.unchanged > earlier_chunks, "the batches written before the kill are kept, not embedded again"
    assert state.store is not None and state.store.count() == len(state.chunks)
    trace = bench.ask("Quantos veículos tem a frota municipal de ambulâncias?").to_dict()
    assert trace["tier"] == "full"
    assert "vinte e três veículos" in trace["final"][0]["text"]
    trace = bench.ask("Qual o horário de atendimento da ouvidoria?").to_dict()
    assert trace["final"][0]["parent_id"] == "portaria"


def test_two_uploads_at_once_wait_on_the_lock_and_keep_both(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    settings = Settings(write_roots=str(tmp_path / "w"), chroma_path=tmp_path / "chroma", _env_file=None)
    bench = Workbench(settings, embedder=None, progress=False)
    inside = threading.Event()
    order: list[str] = []
    waits: list[dict] = []

    def slow_index(folder: Path, on_progress=None):
        order.append(f"index {len(Collection(folder).manifest().entries)}")
        inside.set()
        time.sleep(1.5)   # the first writer holds the lock while the second arrives
        return bench.load_corpus(folder, on_progress=on_progress)

    results = {}

    def upload(name: str, text: str) -> None:
        results[name] = add_uploads(settings, "local", [(name, text.encode())], slow_index,
                                    on_wait=lambda holder: waits.append(dict(holder)))

    first = threading.Thread(target=upload, args=("a.md", "# A\n\nO documento A trata de pontes.\n"))
    first.start()
    assert inside.wait(30)
    second = threading.Thread(target=upload, args=("b.md", "# B\n\nO documento B trata de viadutos.\n"))
    second.start()
    first.join(60)
    second.join(60)
    assert [e.name for r in results.values() for e in r.entries] == ["a.md", "b.md"]
    assert order == ["index 1", "index 2"]   # one after the other: the second read the first's manifest
    assert waits and waits[0]["what"] == "adding to a collection" and waits[0]["pid"] == os.getpid()
    collection = collection_for(settings, "local")
    assert [e.name for e in collection.manifest().entries] == ["a.md", "b.md"]
    assert sorted(d.id for d in bench.state.documents) == ["a", "b"]
    assert {d.id: d.text.strip().split("\n")[-1] for d in bench.state.documents} == {
        "a": "O documento A trata de pontes.", "b": "O documento B trata de viadutos."}
