"""A broken vector store heals, from the command line as a user meets it (the attacker's case): a real store built
with the real embedding model, then garbage written over pages of its ``chroma.sqlite3`` (the pages chromadb's Rust
code panics on) or the file truncated. ``ask`` answers ``lexical_only`` with the reason ``store.damaged`` naming
``index --rebuild``; ``index`` and ``index --status`` print that one line and exit 2; nothing prints a traceback or a
native panic; ``index --rebuild`` moves the store aside (kept byte for byte), builds it again, and the next ``ask``
answers in the full tier."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import ROOT

pytestmark = pytest.mark.integration

ROWS = [
    {"id": "a", "title": "Ativação", "text": "O pagamento do PX-7 ativa o serviço em 24 horas após a confirmação."},
    {"id": "b", "title": "Garantia", "text": "A garantia do modelo PX-17 cobre defeitos de fabricação por dois anos."},
    {"id": "c", "title": "Cancelamento", "text": "Para cancelar a assinatura, acesse o painel e clique em cancelar."},
]
QUESTION = "Quando o PX-7 é ativado após o pagamento?"
PAGE = 4096
#: A reranker that loads offline from the embedder already on disk: the full tier, whatever the shipped judge.
FULL = ("--set", "reranker_model=bi-encoder:e5-small")


def run(*args, store: Path, timeout=600):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_")}
    env.update(RETRIEVAL_CHROMA_PATH=str(store), RETRIEVAL_READER_STATES_AT_INDEX="false")
    return subprocess.run([sys.executable, "-m", "retrieval", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def clean(stderr: str) -> list[str]:
    """stderr's lines but the progress bars (by design on stderr); no traceback, no native panic among them."""
    assert "Traceback" not in stderr and "panicked" not in stderr and "PanicException" not in stderr, stderr
    return [line for line in stderr.strip().splitlines() if line and not line.startswith(("embedding chunks",
                                                                                          "reader states"))]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The corpus and a whole store of it, indexed once with the real embedding model."""
    folder = tmp_path_factory.mktemp("damaged")
    corpus = folder / "c.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    done = run("index", "--corpus", str(corpus), store=folder / "template")
    assert done.returncode == 0, done.stderr[-2000:]
    return corpus, folder / "template"


def garbage(db: Path) -> None:
    with db.open("r+b") as f:
        for n in (1, 2):   # the migrations table and its index: chromadb's Rust code panics reading them
            f.seek(n * PAGE)
            f.write(os.urandom(PAGE))


def truncate(db: Path) -> None:
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size // 3)


@pytest.mark.parametrize("damage", [garbage, truncate], ids=["garbage", "truncated"])
def test_a_damaged_store_is_one_line_then_rebuilt(indexed, tmp_path, damage):
    corpus, template = indexed
    store = tmp_path / "chroma"
    shutil.copytree(template, store)
    damage(store / "chroma.sqlite3")
    damaged = (store / "chroma.sqlite3").read_bytes()

    asked = run("ask", QUESTION, "--corpus", str(corpus), "--json", store=store)
    assert asked.returncode == 0, asked.stderr[-2000:]
    trace = json.loads(asked.stdout)
    assert trace["tier"] == "lexical_only" and trace["tier_reason_code"]["code"] == "store.damaged"
    assert f"index --rebuild --corpus {corpus}" in trace["tier_reason"] and trace["final"]
    assert len(clean(asked.stderr)) <= 1   # at most the one warning line that says the same

    for args in (["index", "--status"], ["index"]):
        done = run(*args, "--corpus", str(corpus), store=store)
        lines = clean(done.stderr)
        assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
        assert len(lines) == 1 and lines[0].startswith("error: the vector store at"), lines
        assert "is damaged" in lines[0] and f"index --rebuild --corpus {corpus}" in lines[0]

    rebuilt = run("index", "--rebuild", "--corpus", str(corpus), store=store)
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    clean(rebuilt.stderr)
    first = rebuilt.stdout.splitlines()[0]
    assert first.startswith("moved the damaged vector store to ") and "not deleted" in first
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("chroma.damaged-")]
    assert len(moved) == 1 and str(moved[0]) in first
    assert (moved[0] / "chroma.sqlite3").read_bytes() == damaged   # kept as it was
    assert "vectors: +3" in rebuilt.stdout

    again = run("ask", QUESTION, "--corpus", str(corpus), "--json", *FULL, store=store)
    assert again.returncode == 0, again.stderr[-2000:]
    clean(again.stderr)
    trace = json.loads(again.stdout)
    assert trace["tier"] == "full", trace["tier_reason"]
    assert trace["dense"]["items"] and trace["final"][0]["chunk_id"].startswith("a#")
    status = run("index", "--status", "--corpus", str(corpus), store=store)
    assert status.returncode == 0 and "3 chunks" in status.stdout, status.stderr
