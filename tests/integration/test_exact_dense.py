"""Dense search that repeats (``dense_exact_up_to``): a corpus small enough is searched exactly, so the same query
vector gets the same list in every process and an evaluation run twice gives the same runs and metrics.

Chroma's HNSW graph is rebuilt in part each time a process opens a collection (its recent writes inserted again
by several threads): on 12,000 clustered vectors, four processes querying the same 200 vectors gave two
different sets of lists (docs/evaluation.md, "Numbers that repeat")."""

from __future__ import annotations

import csv
import inspect
import json
import subprocess
import sys

import numpy as np
import pytest
from helpers.paths import ROOT

from retrieval.backends.store import VectorStore, open_client
from retrieval.core.filters import Filters
from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents

from helpers.cli import run

pytestmark = pytest.mark.integration
LAB = ROOT / "data" / "lab"
DIM = 16


def _corpus(n: int = 120):
    docs = [Document(f"d{i:03d}", "", f"Texto {i}.", {"tenant": "ab"[i % 2], "year": 2020 + i % 3})
            for i in range(n)]
    return chunk_documents(docs, 50, 0)


def _embed(texts):
    """A fixed pseudo-random unit vector per text; two texts share one (an exact tie broken by chunk id)."""
    out = []
    for text in texts:
        seed = int(text.split()[-1].rstrip(".")) % 100   # "Texto 3." and "Texto 103." share a vector
        v = np.random.default_rng(seed).standard_normal(DIM)
        out.append(v / np.linalg.norm(v))
    return np.asarray(out, dtype=np.float32)


def _by_hand(chunks, vector, keep, window):
    """The exact answer: cosine of every admitted chunk, best first, ties by chunk id."""
    vectors = _embed([c.text for c in chunks])
    q = vector / np.linalg.norm(vector)
    rows = sorted(((-float(v @ q), c.chunk_id) for c, v in zip(chunks, vectors) if keep(c.metadata)))
    return [cid for _, cid in rows[:window]]


@pytest.mark.parametrize("tenant_field", ["tenant", None], ids=["per-tenant-collections", "one-collection"])
def test_exact_search_is_the_cosine_ranking_computed_by_hand(tmp_path, tenant_field) -> None:
    chunks = _corpus()
    store = VectorStore(open_client(tmp_path), "exact", "random-16", tenant_field=tenant_field, exact_up_to=1000)
    store.sync(chunks, _embed, progress=False)
    assert store.searched_exactly and store.exact is not None
    vector = np.random.default_rng(7).standard_normal(DIM).astype(np.float32)
    year = Filters((("year", (2021,)),))
    tenant_year = Filters((("tenant", ("a",)), ("year", (2021, 2022))))
    got = {
        "all": store.query(vector, Filters(()), 15),
        "year": store.query(vector, year, 15),
        "tenant+year": store.query(vector, tenant_year, 15),
    }
    want = {
        "all": _by_hand(chunks, vector, lambda m: True, 15),
        "year": _by_hand(chunks, vector, year.matches, 15),
        "tenant+year": _by_hand(chunks, vector, tenant_year.matches, 15),
    }
    for name, ranked in got.items():
        assert [i.chunk_id for i in ranked.items] == want[name], name
        assert [i.rank for i in ranked.items] == list(range(1, 16))
    # "Texto 3." and "Texto 103." share their vector: wherever they both appear, the lower chunk id comes first
    ids = [i.chunk_id for i in store.query(_embed(["Texto 3."])[0], Filters(()), 4).items]
    assert ids[:2] == ["d003#0", "d103#0"]
    assert store.query(_embed(["Texto 3."])[0], Filters(()), 4).items[0].score == pytest.approx(1.0, abs=1e-6)


def test_exact_search_sees_the_next_sync_and_a_large_corpus_goes_to_hnsw(tmp_path) -> None:
    chunks = _corpus(40)
    store = VectorStore(open_client(tmp_path), "grows", "random-16", exact_up_to=40)
    store.sync(chunks, _embed, progress=False)
    vector = _embed(["Texto 7."])[0]
    assert store.query(vector, Filters(()), 1).items[0].chunk_id == "d007#0"
    store.sync(chunks[:7] + chunks[8:], _embed, progress=False)       # d007 removed: its vector is gone too
    assert store.searched_exactly
    assert "d007#0" not in [i.chunk_id for i in store.query(vector, Filters(()), 39).items]
    store.sync(_corpus(41), _embed, progress=False)                   # one past the bound: HNSW
    assert not store.searched_exactly and store.exact is None
    assert store.query(vector, Filters(()), 1).items[0].chunk_id == "d007#0"


PROBE = """
import json
import numpy as np
from retrieval.backends.store import VectorStore, open_client
from retrieval.core.filters import Filters
from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents
DIM = {dim}
{helpers}
store = VectorStore(open_client({path!r}), "procs", "random-16", tenant_field="tenant", exact_up_to=1000)
store.sync(_corpus(), _embed, progress=False)   # everything stored already: reads the hashes, writes nothing
rng = np.random.default_rng(3)
lists = [[(i.chunk_id, i.score) for i in store.query(rng.standard_normal(16), Filters((("tenant", ("b",)),)), 10).items]
         for _ in range(20)]
print(json.dumps(lists))
"""


def test_two_processes_get_the_same_lists(tmp_path) -> None:
    path = tmp_path / "store"
    VectorStore(open_client(path), "procs", "random-16", tenant_field="tenant").sync(_corpus(), _embed,
                                                                                     progress=False)
    helpers = inspect.getsource(_corpus) + "\n" + inspect.getsource(_embed)
    code = PROBE.format(dim=DIM, helpers=helpers, path=str(path))
    outs = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for out in outs:
        assert out.returncode == 0, out.stderr[-2000:]
    first, second = (json.loads(out.stdout) for out in outs)
    assert first == second and len(first) == 20 and all(len(lst) == 10 for lst in first)


def test_an_evaluation_run_twice_gives_the_same_lists_and_metrics(lab_bench, chroma_dir, tmp_path) -> None:
    """The lab set, dense and the full pipeline, evaluated by two processes: every run file and every
    per-question metric equal."""
    env = {"RETRIEVAL_CHROMA_PATH": str(chroma_dir)}
    outs = []
    for name in ("one", "two"):
        got = run("eval", "--corpus", str(LAB / "corpus.jsonl"), "--questions", str(LAB / "questions.jsonl"),
                  "--configs", "dense,hybrid+rerank", "--k", "10", "--out", str(tmp_path / name), env_extra=env)
        assert got.returncode == 0, got.stderr[-3000:]
        outs.append(tmp_path / name)
    for config in ("dense", "hybrid+rerank"):
        runs = [(out / f"{config}.run").read_text(encoding="utf-8") for out in outs]
        assert runs[0] == runs[1] and len(runs[0].splitlines()) >= 100, config
        rows = []
        for out in outs:
            with open(out / f"questions-{config}.csv", encoding="utf-8", newline="") as fh:
                rows.append([(r["id"], r["final (parents)"], r["citations"], r["ndcg@10"]) for r in csv.DictReader(fh)])
        assert rows[0] == rows[1] and len(rows[0]) >= 20, config
