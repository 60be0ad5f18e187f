"""Tenant-filtered dense search in the dense layouts (retrieval/backends/chroma/layout.py,
:class:`~retrieval.backends.chroma.DenseLayout`), the store alone, on the benchmark's SYNTHETIC corpora.

The synthetic chunks get a tenant each (six tenants, seeded, independent of their ``year``), so a tenant holds
about 1/6 of the corpus, as the filter of the earlier measurement did. Each layout is built in its own Chroma
store with the same synthetic vectors (:class:`bench.synthetic.SyntheticEmbedder`: no model runs; the query
vectors are synthetic too, so only the store is timed), and the same queries (the synthetic questions, cycled
over the tenants) are timed through :meth:`VectorStore.query`:

* ``tenant``: the request's filter (one tenant), in the one-collection layout (``tenant_buckets=1``, the layout
  before) and in the per-tenant layout (the default);
* ``tenant + year``: one tenant and one year (about 1/36 of the corpus) in both;
* ``floor``: Chroma's own unfiltered query of the tenant's collection (``collection.query``, nothing of ours
  around it), the unfiltered query over the same tenant's chunks that the target compares with;
* ``all``: an unfiltered query over the whole corpus (one collection), for reference.

HNSW recall@window of each against exact cosine search over the tenant's chunks, and how many queries gave the
same list in both layouts, come with them. Many tenants (``--many N``): N tenants of a 10k corpus, one
collection each against hash buckets and one collection (build, unchanged re-index, query latency, disk): how
the bucket count was chosen. Stores of ``cache_from`` chunks and more are kept in ``.retrieval/bench/`` and reused.

    python -m bench.tenants [--sizes 10000,100000] [--many 1000] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from retrieval.ingest.corpus import chunk_documents, load_corpus
from retrieval.backends.store import VectorStore, open_client
from retrieval.core.filters import Filters
from retrieval.core.paths import PROJECT_ROOT
from retrieval.core.types import Chunk

from .stats import pct as _pct
from .synthetic import SEED, SyntheticEmbedder, synthetic_corpus, synthetic_questions

CACHE = PROJECT_ROOT / ".retrieval" / "bench"
TENANTS = 6
WINDOW = 20
LAYOUTS = {"one collection": 1, "per tenant": 0}


class _NoModel:
    """Gives :class:`SyntheticEmbedder` its dimension; no model runs (the store is timed alone)."""

    name = "synthetic"

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros((len(texts), 384), dtype=np.float32)


def with_tenants(chunks: Sequence[Chunk], tenants: int = TENANTS, seed: int = SEED) -> list[Chunk]:
    """The chunks with a ``tenant`` field (``t0`` … ``t<n-1>``, drawn with ``seed``: independent of ``year``)."""
    drawn = np.random.default_rng(seed).integers(0, tenants, len(chunks))
    return [replace(c, metadata={**c.metadata, "tenant": f"t{int(t)}"}) for c, t in zip(chunks, drawn)]


def _embed_lookup(chunks: Sequence[Chunk], matrix: np.ndarray) -> Callable[[list[str]], np.ndarray]:
    """An ``embed`` for :meth:`VectorStore.sync` that returns the precomputed rows (by passage text)."""
    row = {c.passage(): i for i, c in enumerate(chunks)}
    return lambda texts: matrix[[row[t] for t in texts]]


def _build(folder: Path, key: str, chunks: Sequence[Chunk], embed: Callable, buckets: int,
           ef_search: int) -> tuple[VectorStore, dict[str, Any]]:
    """Open (building when absent) one layout's store; the figures of the build, or of the unchanged re-index
    when the store was already there."""
    store = VectorStore(open_client(folder), key, "synthetic-vectors", "tenants", ef_search=ef_search,
                        tenant_field="tenant", tenant_buckets=buckets)
    started = time.perf_counter()
    report = store.sync(chunks, embed, batch=4096, progress=False)
    seconds = round(time.perf_counter() - started, 1)
    written = report.added + report.updated + report.removed + report.migrated
    return store, {"layout": report.layout, "collections": report.collections,
                   ("build_s" if written else "reindex_s"): seconds,
                   "written": written}


def _times(run: Callable[[int], Any], n: int) -> tuple[list[float], list[Any]]:
    times, out = [], []
    for i in range(n):
        started = time.perf_counter()
        out.append(run(i))
        times.append((time.perf_counter() - started) * 1000)
    return times, out


def _summary(times: list[float]) -> dict[str, float]:
    return {"p50_ms": _pct(times, 0.5), "p95_ms": _pct(times, 0.95)}


def compare_layouts(n: int, *, ef_search: int = 100, cache_from: int = 100_000, queries: int = 60,
                    rounds: int = 2, cache: Path = CACHE) -> dict[str, Any]:
    """Build (or reuse) both layouts of the ``n``-chunk synthetic corpus with six tenants and time the queries.

    Each query set runs ``rounds`` times, interleaving the layouts, after one warm-up query per tenant and
    layout (not timed)."""
    cache.mkdir(parents=True, exist_ok=True)
    path = synthetic_corpus(cache / f"synthetic-{n}-seed{SEED}.jsonl", n)
    started = time.perf_counter()
    chunks = with_tenants(chunk_documents(load_corpus(path), 120, 30))
    embedder = SyntheticEmbedder(_NoModel())
    matrix = np.vstack([embedder.embed_passages([c.passage() for c in chunks[i : i + 4096]])
                        for i in range(0, len(chunks), 4096)])
    prepare_s = round(time.perf_counter() - started, 1)
    embed = _embed_lookup(chunks, matrix)
    tmp = tempfile.TemporaryDirectory()
    root = cache / f"tenants-{n}-seed{SEED}" if n >= cache_from else Path(tmp.name)
    out: dict[str, Any] = {"chunks": len(chunks), "tenants": TENANTS, "window": WINDOW, "ef_search": ef_search,
                           "prepare_s": prepare_s, "vectors": "synthetic (store timed alone)", "layouts": {}}
    stores = {}
    for name, buckets in LAYOUTS.items():
        stores[name], out["layouts"][name] = _build(root / name.replace(" ", "-"), str(path), chunks, embed,
                                                    buckets, ef_search)

    tenant_of = np.array([c.metadata["tenant"] for c in chunks])
    year_of = np.array([c.metadata["year"] for c in chunks])
    texts = [q for q, _ in synthetic_questions(path, n, n=queries)]
    vectors = embedder.embed_passages(texts)
    tenants = [f"t{i % TENANTS}" for i in range(len(texts))]
    years = [2020 + (i // TENANTS) % 6 for i in range(len(texts))]
    tenant_flt = [Filters((("tenant", (t,)),)) for t in tenants]
    both_flt = [Filters((("tenant", (t,)), ("year", (y,)))) for t, y in zip(tenants, years)]
    per_tenant = stores["per tenant"]
    floor_col = [per_tenant.collections[per_tenant.layout.name_for(t)] for t in tenants]

    def exact(i: int, mask: np.ndarray) -> set[str]:
        rows = np.flatnonzero(mask)
        best = rows[np.argsort(-(matrix[rows] @ vectors[i]), kind="stable")[:WINDOW]]
        return {chunks[j].chunk_id for j in best}

    truth_t = [exact(i, tenant_of == tenants[i]) for i in range(len(texts))]
    truth_ty = [exact(i, (tenant_of == tenants[i]) & (year_of == years[i])) for i in range(len(texts))]
    runs: dict[str, Callable[[int], Any]] = {
        "all, unfiltered (one collection)": lambda i: stores["one collection"].query(vectors[i], Filters(), WINDOW),
        "floor: tenant's collection, unfiltered (Chroma alone)": lambda i: floor_col[i].query(
            query_embeddings=[vectors[i].tolist()], n_results=WINDOW, include=["distances"]),
    }
    for name, store in stores.items():
        runs[f"tenant ({name})"] = lambda i, s=store: s.query(vectors[i], tenant_flt[i], WINDOW)
        runs[f"tenant + year ({name})"] = lambda i, s=store: s.query(vectors[i], both_flt[i], WINDOW)
    for store in stores.values():  # warm-up: one query per tenant (not timed)
        _times(lambda i, s=store: s.query(vectors[i], tenant_flt[i], WINDOW), TENANTS)
    times: dict[str, list[float]] = {k: [] for k in runs}
    lists: dict[str, list[Any]] = {}
    for _ in range(rounds):
        for key, run in runs.items():
            spent, got = _times(run, len(texts))
            times[key] += spent
            lists[key] = got
    rows = {}
    for key in runs:
        row: dict[str, Any] = _summary(times[key])
        if key.startswith("tenant"):
            truth = truth_ty if "year" in key else truth_t
            got_ids = [{i.chunk_id for i in lst.items} for lst in lists[key]]
            row["recall"] = round(float(np.mean([len(g & t) / max(len(t), 1) for g, t in zip(got_ids, truth)])), 4)
        rows[key] = row
    floor = rows["floor: tenant's collection, unfiltered (Chroma alone)"]["p50_ms"]
    for key, row in rows.items():
        row["x_floor_p50"] = round(row["p50_ms"] / floor, 2) if floor else None
    for kind in ("tenant", "tenant + year"):
        a, b = lists[f"{kind} (one collection)"], lists[f"{kind} (per tenant)"]
        out[f"same_list_{kind}"] = sum([i.chunk_id for i in x.items] == [i.chunk_id for i in y.items]
                                       for x, y in zip(a, b)) / len(a)
    out.update(rows=rows, queries=len(texts), rounds=rounds)
    tmp.cleanup()
    return out


def many_tenants(n_tenants: int, n_chunks: int = 10_000, buckets: Sequence[int] = (0, 16, 1),
                 queries: int = 60) -> dict[str, Any]:
    """``n_tenants`` tenants over ``n_chunks`` synthetic chunks, in one collection per tenant against hash
    buckets and one collection: build, unchanged re-index, tenant query (after one warm-up round), disk."""
    path = synthetic_corpus(CACHE / f"synthetic-{n_chunks}-seed{SEED}.jsonl", n_chunks)
    chunks = with_tenants(chunk_documents(load_corpus(path), 120, 30), n_tenants)
    embedder = SyntheticEmbedder(_NoModel())
    matrix = embedder.embed_passages([c.passage() for c in chunks])
    embed = _embed_lookup(chunks, matrix)
    texts = [q for q, _ in synthetic_questions(path, n_chunks, n=queries)]
    vectors = embedder.embed_passages(texts)
    flts = [Filters((("tenant", (f"t{(i * 7919) % n_tenants}",)),)) for i in range(len(texts))]
    out: dict[str, Any] = {"tenants": n_tenants, "chunks": len(chunks), "layouts": {}}
    for count in buckets:
        folder = Path(tempfile.mkdtemp(prefix="tenants-many-"))
        try:
            store, built = _build(folder, str(path), chunks, embed, count, 100)
            started = time.perf_counter()
            again = VectorStore(open_client(folder), str(path), "synthetic-vectors", "tenants", ef_search=100,
                                tenant_field="tenant", tenant_buckets=count).sync(chunks, embed, progress=False)
            built["reindex_s"] = round(time.perf_counter() - started, 2)
            built["reindex_written"] = again.added + again.updated + again.removed + again.migrated
            _times(lambda i: store.query(vectors[i], flts[i], WINDOW), len(texts))  # warm-up
            warm, _ = _times(lambda i: store.query(vectors[i], flts[i], WINDOW), len(texts))
            built.update(query=_summary(warm),
                         disk_mb=round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20, 1))
            out["layouts"][store.layout.kind] = built
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return out


def markdown(results: dict[str, Any]) -> str:
    """The tenant-layout rows for the README: p50/p95 ms, ×floor p50, recall@window."""
    lines = ["| chunks (tenant's share) | query | p50/p95 ms | × floor p50 | recall@20 |",
             "| --- | --- | ---: | ---: | ---: |"]
    for r in results.get("sizes", []):
        share = f"{r['chunks']:,} (1/{r['tenants']})"
        for key, row in r["rows"].items():
            recall = row.get("recall", "")
            lines.append(f"| {share} | {key} | {row['p50_ms']:.1f}/{row['p95_ms']:.1f} | ×{row['x_floor_p50']} "
                         f"| {recall} |")
    many = results.get("many")
    if many:
        lines += ["", f"{many['tenants']:,} tenants over {many['chunks']:,} chunks:", "",
                  "| layout | collections | build s | re-index s (written) | tenant query p50/p95 ms | disk MB |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for kind, v in many["layouts"].items():
            lines.append(f"| {kind} | {v['collections']:,} | {v.get('build_s')} | {v['reindex_s']} "
                         f"({v['reindex_written']}) | {v['query']['p50_ms']:.1f}/{v['query']['p95_ms']:.1f} "
                         f"| {v['disk_mb']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="synthetic corpus sizes (chunks), comma-separated")
    parser.add_argument("--many", type=int, default=0, help="also N tenants over 10k chunks (0: skip)")
    parser.add_argument("--json-out", type=Path, default=PROJECT_ROOT / "artifacts" / "bench" / "tenants.json")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"seed": SEED, "sizes": []}
    for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
        print(f"tenant layouts at {n:,} chunks…", file=sys.stderr, flush=True)
        results["sizes"].append(compare_layouts(n))
    if args.many:
        print(f"{args.many:,} tenants…", file=sys.stderr, flush=True)
        results["many"] = many_tenants(args.many)
    table = markdown(results)
    print(table)
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    args.json_out.with_suffix(".md").write_text(table, encoding="utf-8")
    print(f"written: {args.json_out}", file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
