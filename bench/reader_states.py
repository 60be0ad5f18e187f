"""What storing the reader's states at index time buys (``make bench-states``): index speed, a request's cost by
stage, memory, and the store's read cost at any size.

``--corpus lab`` (or a corpus path; FaQuAD's ``../shared/data/faquad/corpus.jsonl``): in one process, on fresh
folders,

* indexing: chunks/s of ``index`` without the reader's states (BM25 + vectors), and of the reader's pass over
  every chunk (:meth:`~retrieval.pipeline.workbench.Workbench.store_reader_states`) for each codec asked;
* the default request (``ltr``: judge features, rerank, gate) on ``--questions`` questions of the set, by stage,
  p50 / p95: **new** (the store empty, the memory cache empty: every candidate encoded, as before this change),
  **indexed** (the states stored at index time, the memory cache emptied before each question: nothing encoded)
  and **warm** (the same questions again); and the naive RRF request (``reranker_model=none``) beside them;
* the process' RSS after each phase.

``--store-sizes 1000,10000,100000``: a state store filled with that many passages of synthetic unit rows (the
lab corpus' mean tokens a passage), each codec asked; p50 / p95 of reading one request's window (30 random
passages) from it into an empty memory cache, and its bytes on disk. Time to read does not depend on what the
rows hold, so synthetic rows time it as real ones would.

Writes ``artifacts/bench/reader_states.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from bench.stats import pct
from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS, PROJECT_ROOT


def _rss_mb() -> float:
    """This process' resident memory now (from /proc), in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pct(values: Sequence[float]) -> dict[str, float | None]:
    return {"p50": pct(values, 0.5), "p95": pct(values, 0.95)}


STAGES = ("judge_features", "rerank", "gate")


def _requests(bench, questions, settings, reader=None, clear: bool = False) -> dict[str, Any]:
    per_stage: dict[str, list[float]] = {s: [] for s in (*STAGES, "rerank+gate+judge", "total")}
    encoded = 0
    for q in questions:
        if clear and reader is not None:
            reader.clear()
        before = reader.passages_encoded if reader is not None else 0
        trace = bench.ask(q.question, dict(q.filters), settings=settings)
        if reader is not None:
            encoded += reader.passages_encoded - before
        t = trace.timings_ms
        for s in STAGES:
            per_stage[s].append(float(t.get(s) or 0.0))
        per_stage["rerank+gate+judge"].append(sum(float(t.get(s) or 0.0) for s in STAGES))
        per_stage["total"].append(float(t.get("total") or sum(v for v in t.values() if v)))
    return {**{k: _pct(v) for k, v in per_stage.items()}, "passages_encoded": encoded}


def corpus_run(corpus: Path, questions_path: Path, n_questions: int, codecs: Sequence[str]) -> dict[str, Any]:
    from retrieval.ingest.corpus import load_questions
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    out: dict[str, Any] = {"corpus": str(corpus), "rss_mb": {}}
    questions = load_questions(questions_path)[:n_questions]
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(chroma_path=Path(tmp) / "chroma", reader_states_at_index=False, _env_file=None)
        bench = Workbench(base, progress=False)
        started = time.perf_counter()
        bench.load_corpus(corpus)
        index_s = time.perf_counter() - started
        chunks = len(bench.state.chunks)
        out["chunks"] = chunks
        out["index_without_states_chunks_per_s"] = round(chunks / index_s, 1)
        out["rss_mb"]["indexed"] = round(_rss_mb())
        # the naive request: RRF and the cosine gate alone (no learned ranker, support gate or evidence model: the
        # reader is not read)
        naive = base.with_overrides(reranker_model="none", support_gate=False, evidence_model=False)
        bench.ask(questions[0].question, dict(questions[0].filters), settings=naive)  # loads what it needs
        out["naive_rrf"] = _requests(bench, questions, naive)

        reader, _ = bench.reader_store.reader()
        reader.store = None  # "new": no store, every candidate encoded
        bench.ask(questions[0].question, dict(questions[0].filters))  # loads the judge and the reader
        out["new"] = _requests(bench, questions, base, reader, clear=True)
        out["rss_mb"]["after_new"] = round(_rss_mb())
        out["codecs"] = {}
        for codec in codecs:
            settings = base.with_overrides(reader_state_codec=codec)
            bench_c = Workbench(settings, embedder=bench.embedder, progress=False)
            bench_c.state = bench.state
            started = time.perf_counter()
            report = bench_c.store_reader_states()
            states_s = time.perf_counter() - started
            reader, _ = bench_c.reader_store.reader()
            row = {"states_chunks_per_s": round(chunks / states_s, 1), "report": report.line(),
                   "bytes_per_passage": round(report.bytes_per_passage),
                   "index_with_states_chunks_per_s": round(chunks / (index_s + states_s), 1)}
            row["indexed"] = _requests(bench_c, questions, settings, reader, clear=True)
            _requests(bench_c, questions, settings, reader)   # every question once more, nothing cleared
            row["warm"] = _requests(bench_c, questions, settings, reader)
            row["rss_mb"] = round(_rss_mb())
            out["codecs"][codec] = row
    return out


def store_run(sizes: Sequence[int], codecs: Sequence[str], tokens: int = 134, hidden: int = 384,
              reads: int = 200, window: int = 30) -> dict[str, Any]:
    from retrieval.learned.reader.states import StateStore

    rng = np.random.default_rng(0)
    out: dict[str, Any] = {}
    fit_rows = rng.normal(size=(20_000, hidden)).astype(np.float32)
    fit_rows /= np.linalg.norm(fit_rows, axis=1, keepdims=True)
    for codec in codecs:
        for size in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                store = StateStore(Path(tmp) / "s", hidden, limit_mb=1_048_576, codec=codec)
                store.fit(fit_rows)
                block = fit_rows[:tokens]
                started = time.perf_counter()
                for start in range(0, size, 1000):
                    store.put_many({f"k{i}": (block, ((0, tokens),)) for i in range(start, min(size, start + 1000))})
                fill_s = time.perf_counter() - started
                times = []
                for _ in range(reads):
                    keys = [f"k{i}" for i in rng.choice(size, window, replace=False)]
                    t0 = time.perf_counter()
                    found = store.get_many(keys)
                    times.append((time.perf_counter() - t0) * 1000)
                    assert len(found) == window
                out[f"{codec}@{size}"] = {"passages": size, "bytes": store.size_bytes(),
                                          "gb": round(store.size_bytes() / 1e9, 2),
                                          "fill_passages_per_s": round(size / fill_s),
                                          f"read_{window}_ms": _pct(times)}
                print(codec, size, out[f"{codec}@{size}"], flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="", help="'lab' or a corpus path (its questions: --questions)")
    parser.add_argument("--questions", type=Path, default=None)
    parser.add_argument("--n-questions", type=int, default=20)
    parser.add_argument("--codecs", default="fp16,sq8")
    parser.add_argument("--store-sizes", default="", help="e.g. 1000,10000,100000")
    parser.add_argument("--json-out", type=Path, default=PROJECT_ROOT / "artifacts" / "bench" / "reader_states.json")
    args = parser.parse_args(argv)
    codecs = [c.strip() for c in args.codecs.split(",") if c.strip()]
    report: dict[str, Any] = {}
    if args.corpus:
        corpus = LAB_CORPUS if args.corpus == "lab" else Path(args.corpus)
        questions = args.questions or (LAB_QUESTIONS if args.corpus == "lab" else corpus.with_name("questions.jsonl"))
        report["corpus"] = corpus_run(corpus, questions, args.n_questions, codecs)
        print(json.dumps(report["corpus"], indent=1))
    if args.store_sizes:
        report["store"] = store_run([int(s) for s in args.store_sizes.split(",")], codecs)
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
