"""The Milvus backend against the local one on the benchmark's SYNTHETIC corpora, ratios within one run.

For each size, one child process per backend (so each backend's app-process memory is its own):

* ``local``: the in-process BM25 (``bm25s``) and Chroma (embedded), as ``RETRIEVAL_BACKEND=local``;
* ``milvus``: ``retrieval.backends.milvus`` against a Milvus Lite **server process** started for the run (or the server
  given with ``--uri``), so the app process holds no index: the server's memory is reported apart;
* ``server``: ``retrieval.backends.milvus`` against the real **Milvus 2.3.5 standalone server** started for the run
  from its own environment (``make milvus-server-env``; ``bench/milvus_server.py``). 2.3 has no sparse
  vectors, so the backend keeps BM25 in the app process there (``InProcessLexical``) and only the dense side
  and the filters are in Milvus. Left out, with a note, where that environment is missing.

Both index the same chunks with the same synthetic vectors (``bench.synthetic.SyntheticEmbedder``, word
vectors summed: no model runs, the embedding time is measured and reported apart from the store's). The
corpus has six ``year`` values; ``year`` is the tenant field here, so each of the six tenants has its own BM25
statistics on both sides and the Milvus partition key is ``year``.

Measured: ingest (chunks/s of the store write alone, and with embedding; Milvus: until the flush returns, the
background compaction that follows is waited for and reported apart), re-index of the unchanged corpus,
lexical p50/p95 (tenant given, as every request on a multi-tenant corpus), dense p50/p95 with the tenant
filter and without any filter, memory of the app process (RSS after the queries, and its peak) and of the
Milvus server, and how often the two backends returned the same lists. Run:

    python bench/milvus_backend.py --sizes 100000 [--queries 60] [--uri http://host:19530] [--json-out FILE]
        [--backends local,milvus,server]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import CACHE  # noqa: E402
from bench.stats import pct as _pct  # noqa: E402
from bench.synthetic import SEED, SyntheticEmbedder, synthetic_corpus, synthetic_questions  # noqa: E402
from retrieval.ingest.corpus import chunk_documents, load_corpus  # noqa: E402
from retrieval.core.filters import Filters, build_filters, field_types  # noqa: E402

TENANT = "year"
WINDOW = 20
BACKENDS = ("local", "milvus", "server")


class _NoModel:
    """Stands in for the real model inside SyntheticEmbedder: gives the dimension, runs nothing."""

    name = "synthetic"

    def embed_queries(self, texts):
        return np.zeros((len(texts), 384), dtype=np.float32)


class _Timed:
    """An embedder wrapper that adds up the time spent embedding passages."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.batch, self.seconds = inner, inner.name, 4096, 0.0

    def embed_passages(self, texts):
        started = time.perf_counter()
        try:
            return self.inner.embed_passages(texts)
        finally:
            self.seconds += time.perf_counter() - started


def _rss_mb(pid: int | None = None) -> dict[str, float]:
    """Current and peak resident memory (MB) of a process, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid or 'self'}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": fields.get("VmRSS"), "peak_mb": fields.get("VmHWM")}


def _corpus(n: int) -> tuple[Path, list[tuple[str, dict[str, Any]]]]:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = synthetic_corpus(CACHE / f"synthetic-{n}-seed{SEED}.jsonl", n)
    questions = synthetic_questions(path, n)
    return path, [(q, {TENANT: 2020 + i % 6}) for i, (q, _) in enumerate(questions)]


def _time(run, items) -> tuple[list[float], list[Any]]:
    times, out = [], []
    for item in items:
        started = time.perf_counter()
        out.append(run(item))
        times.append((time.perf_counter() - started) * 1000)
    return times, out


def child(backend: str, n: int, n_queries: int, uri: str | None, workdir: Path) -> dict[str, Any]:
    path, questions = _corpus(n)
    questions = questions[:n_queries]
    started = time.perf_counter()
    chunks = chunk_documents(load_corpus(path), 120, 30)
    read_s = time.perf_counter() - started
    types = field_types(chunks)
    embedder = _Timed(SyntheticEmbedder(_NoModel()))
    out: dict[str, Any] = {"backend": backend, "chunks": len(chunks), "read_chunk_s": round(read_s, 1)}
    server, stats = None, None
    if backend == "local":
        from retrieval.backends.lexical import LexicalIndex
        from retrieval.backends.store import VectorStore, open_client

        started = time.perf_counter()
        lexical = LexicalIndex(chunks, TENANT, "bm25s")
        out["lexical_build_s"] = round(time.perf_counter() - started, 1)
        store = VectorStore(open_client(workdir / "chroma"), str(path), embedder.name, "bench", ef_search=100)
        started = time.perf_counter()
        store.sync(chunks, embedder.embed_passages, 4096, False)
        sync_s = time.perf_counter() - started
        out["store"] = "chroma (embedded)"
        raw_unfiltered = lambda v: store.query(v, Filters(), WINDOW)  # noqa: E731
    else:
        from retrieval.backends.milvus import (
            InProcessLexical,
            MilvusLexical,
            MilvusStore,
            open_client,
            server_features,
            tenant_names,
            tenant_stats,
        )

        if backend == "server":
            from bench.milvus_server import MilvusServerProcess

            server = MilvusServerProcess(workdir / "milvus-server", timeout=120)
            uri = server.start()
            out["server_start_s"] = server.start_s
            out["store"] = f"Milvus {server.version} standalone server (the milvus wheel, bench/milvus_server.py)"
        elif uri is None:
            port = _free_port()
            server = subprocess.Popen([sys.executable, "-m", "milvus_lite", "server", "--data-dir",
                                       str(workdir / "milvus"), "--port", str(port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _wait(port)
            uri = f"http://127.0.0.1:{port}"
            out["store"] = "Milvus Lite 3.2.2 server process (python -m milvus_lite server)"
        else:
            out["store"] = f"Milvus server at {uri}"
        client = open_client(uri, os.environ.get("RETRIEVAL_MILVUS_TOKEN"), 600.0)
        features = server_features(client, uri, 60.0)
        out["features"] = {"version": features.version, "lexical": features.lexical_reason or "in Milvus (sparse)"}
        started = time.perf_counter()
        stats = (tenant_stats if features.sparse else tenant_names)(chunks, TENANT)
        out["lexical_build_s"] = round(time.perf_counter() - started, 1)
        store = MilvusStore(client, str(path), embedder.name, "bench", tenant_field=TENANT, types=types,
                            ef_search=100, timeout=600.0, server=True, features=features)
        store.drop()
        started = time.perf_counter()
        store.sync(chunks, embedder.embed_passages, 4096, False, stats=stats)
        sync_s = time.perf_counter() - started
        if features.sparse:
            lexical = MilvusLexical(store, chunks, TENANT, stats)
        else:  # BM25 in the app process (the local engine), built after the store's ingest
            started = time.perf_counter()
            lexical = InProcessLexical(chunks, TENANT, "bm25s", features.lexical_reason)
            out["lexical_build_s"] = round(time.perf_counter() - started, 1)
        # Milvus Lite compacts in the background after a flush, and its searches get several times faster once
        # it is done; a Milvus server builds the HNSW index of each sealed segment in the background: queries
        # are timed once every row is indexed and the server has been idle (steady state), the wait reported.
        out["index_wait_s"] = _wait_indexed(client, store.name)
        out["settle_s"] = _settle(server.pid if server is not None else None, 120.0 if backend == "server" else 900.0)

        def raw_unfiltered(v):  # one search over every tenant, no expression (the backend's read consistency)
            return store.client.search(store.name, data=[np.asarray(v, np.float32).tolist()], anns_field="dense",
                                       limit=WINDOW, output_fields=["id"], timeout=600.0,
                                       search_params={"metric_type": "COSINE", "params": {"ef": 100}},
                                       **store.read_level)

    store_s = sync_s - embedder.seconds
    out.update(embed_s=round(embedder.seconds, 1), store_write_s=round(store_s, 1),
               ingest_chunks_per_s=round(len(chunks) / store_s, 1),
               ingest_with_embedding_chunks_per_s=round(len(chunks) / sync_s, 1))
    started = time.perf_counter()
    again = store.sync(chunks, embedder.embed_passages, 4096, False,
                       **({"stats": stats} if backend != "local" else {}))
    out["reindex_unchanged_s"] = round(time.perf_counter() - started, 1)
    out["reindex_written"] = again.added + again.updated + again.removed

    flts = [build_filters(f, types, TENANT) for _, f in questions]
    vectors = [embedder.inner.embed_passages([q])[0] for q, _ in questions]
    lexical.search(questions[0][0], flts[0], WINDOW)  # warm-up (first-use costs are not a query's)
    store.query(vectors[0], flts[0], WINDOW)
    lex_ms, lex_lists = _time(lambda i: lexical.search(questions[i][0], flts[i], WINDOW), range(len(questions)))
    den_ms, den_lists = _time(lambda i: store.query(vectors[i], flts[i], WINDOW), range(len(questions)))
    raw_ms, _ = _time(raw_unfiltered, vectors)
    out["lexical_ms"] = {"p50": _pct(lex_ms, 0.5), "p95": _pct(lex_ms, 0.95)}
    out["dense_tenant_ms"] = {"p50": _pct(den_ms, 0.5), "p95": _pct(den_ms, 0.95)}
    out["dense_unfiltered_ms"] = {"p50": _pct(raw_ms, 0.5), "p95": _pct(raw_ms, 0.95)}
    out["lists"] = {"lexical": [[i.chunk_id for i in lst.items] for lst in lex_lists],
                    "dense": [[i.chunk_id for i in lst.items] for lst in den_lists]}
    out["app_memory"] = _rss_mb()
    if server is not None:
        out["server_memory"] = _rss_mb(server.pid)
        if backend == "server":
            server.stop()
        else:
            server.kill()
            server.wait()
    return out


def _wait_indexed(client: Any, name: str, limit_s: float = 600.0) -> float | None:
    """Wait until the dense index covers every row (``describe_index``: indexed rows = total rows); the seconds,
    or None where the server does not say (Milvus Lite)."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit_s:
        try:
            info = client.describe_index(name, "dense")
        except Exception:  # noqa: BLE001 - a server that does not report it
            return None
        total, done = info.get("total_rows"), info.get("indexed_rows")
        if total is None or done is None:
            return None
        if done >= total:
            return round(time.perf_counter() - started, 1)
        time.sleep(1)
    return round(time.perf_counter() - started, 1)


def _settle(pid: int | None, limit_s: float = 900.0) -> float:
    """Wait until process ``pid`` has used under 5% of a core for 5 s in a row (or 60 s for a remote server)."""
    started = time.perf_counter()
    if pid is None:
        time.sleep(60)
        return 60.0
    tick = os.sysconf("SC_CLK_TCK")
    cpu = lambda: sum(int(x) for x in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13]) / tick  # noqa: E731
    quiet, last = 0, cpu()
    while quiet < 5 and time.perf_counter() - started < limit_s:
        time.sleep(1)
        now = cpu()
        quiet = quiet + 1 if now - last < 0.05 else 0
        last = now
    return round(time.perf_counter() - started, 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int) -> None:
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the Milvus Lite server did not start")


def compare(local: dict[str, Any], milvus: dict[str, Any]) -> dict[str, Any]:
    """The lists and the ratios of one Milvus backend (``milvus`` or ``server``) against the local one."""
    out: dict[str, Any] = {}
    for side in ("lexical", "dense"):
        a, b = local["lists"][side], milvus["lists"][side]
        same = sum(x == y for x, y in zip(a, b))
        overlap = np.mean([len(set(x) & set(y)) / max(1, len(x)) for x, y in zip(a, b)])
        out[side] = {"identical_lists": f"{same}/{len(a)}", f"overlap@{WINDOW}": round(float(overlap), 3)}
    ratio = lambda k, q="p50": (round(milvus[k][q] / local[k][q], 2) if local[k][q] else None)  # noqa: E731
    out["ratios_milvus_over_local"] = {
        "ingest_chunks_per_s": round(milvus["ingest_chunks_per_s"] / local["ingest_chunks_per_s"], 2),
        "lexical_p50": ratio("lexical_ms"), "lexical_p95": ratio("lexical_ms", "p95"),
        "dense_tenant_p50": ratio("dense_tenant_ms"), "dense_unfiltered_p50": ratio("dense_unfiltered_ms"),
        "app_rss": round(milvus["app_memory"]["rss_mb"] / local["app_memory"]["rss_mb"], 2)}
    return out


def markdown(results: list[dict[str, Any]]) -> str:
    rows = ["| chunks | backend | ingest (chunks/s, store only) | re-index unchanged | lexical p50 / p95 | "
            "dense, tenant p50 / p95 | dense, unfiltered p50 | app RSS (peak) | server RSS |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        for b in (b for b in BACKENDS if b in r):
            x = r[b]
            server = f"{x['server_memory']['rss_mb']:,.0f} MB" if "server_memory" in x else "—"
            rows.append(f"| {x['chunks']:,} | {b} | {x['ingest_chunks_per_s']:,.0f} | {x['reindex_unchanged_s']} s "
                        f"({x['reindex_written']} written) | {x['lexical_ms']['p50']:.1f} / {x['lexical_ms']['p95']:.1f} ms | "
                        f"{x['dense_tenant_ms']['p50']:.1f} / {x['dense_tenant_ms']['p95']:.1f} ms | "
                        f"{x['dense_unfiltered_ms']['p50']:.1f} ms | {x['app_memory']['rss_mb']:,.0f} MB "
                        f"({x['app_memory']['peak_mb']:,.0f}) | {server} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000", help="comma-separated chunk counts (synthetic corpora)")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--uri", help="a Milvus server to measure instead of a Milvus Lite server process")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="which of local, milvus (Milvus Lite server, or --uri) and server (Milvus 2.3.5) to run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        sizes = []
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not sizes or min(sizes) < 100 or args.queries < 1 or "local" not in backends \
            or not set(backends) <= set(BACKENDS):
        print("error: --sizes must be chunk counts ≥ 100, --queries ≥ 1 and --backends local plus any of "
              "milvus, server", file=sys.stderr)
        return 2
    if "server" in backends and args.child is None:
        from bench.milvus_server import ENV, server_python

        if server_python() is None:
            print(f"note: no Milvus server environment at {ENV.name}/ (make milvus-server-env): its row is left out",
                  file=sys.stderr)
            backends.remove("server")
    if args.child:
        backend, n = args.child.split(":")
        with tempfile.TemporaryDirectory(dir=CACHE if CACHE.exists() else None) as tmp:
            print(json.dumps(child(backend, int(n), args.queries, args.uri, Path(tmp))))
        return 0
    results = []
    for n in sizes:
        row: dict[str, Any] = {"chunks": n}
        for backend in backends:
            cmd = [sys.executable, __file__, "--sizes", str(n), "--queries", str(args.queries),
                   "--child", f"{backend}:{n}"] + (["--uri", args.uri] if args.uri and backend == "milvus" else [])
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"error: the {backend} run at {n} chunks failed: {done.stderr.strip().splitlines()[-1:]}",
                      file=sys.stderr)
                return 2
            row[backend] = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{n} {backend}: done", file=sys.stderr)
        row["comparison"] = {b: compare(row["local"], row[b]) for b in backends if b != "local"}
        results.append(row)
    for r in results:
        for b in backends:
            r[b].pop("lists", None)
    print(markdown(results))
    print(json.dumps([r["comparison"] for r in results], indent=1))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
