"""Cost of the learned judge per request on the lab corpus: the reader's scores of the rerank window (cold: no
token state kept; warm: the candidates read before), features, reranker, support and evidence models at a
generator window of 20 (rerank window 30), beside the query embedding and the cost sentence vectors would add
(embedding the context's sentences with the same model).

    python scripts/judge_cost.py [--repeat 3]

Prints p50 / p95 in ms over the lab questions (each request repeated; the first run of each is warm-up).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere: the project's package


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from retrieval.ingest.corpus import load_questions
    from retrieval.core.paths import LAB_QUESTIONS
    from retrieval.learned.judge.features import candidate_features, gate_features, sentence_features
    from retrieval.pipeline.workbench import open_workbench
    from retrieval.settings import Settings
    from retrieval.stages.judge import judge_input, text_view
    from retrieval.stages.select import dedup

    settings = Settings().with_overrides(reranker_model="none", support_gate=False, evidence_model=False)
    bench = open_workbench(settings, progress=False)
    models, why = bench.judge(Settings())
    assert models is not None, why
    state = bench.state
    text_view(state)
    reader = bench.reader_store.reader()[0]
    reader.store = None  # cold here means encoded; reading states from disk is bench/reader.py's 'disk' column
    cost: dict[str, list[float]] = {k: [] for k in ("reader_cold", "reader_warm", "features", "reranker", "support",
                                                    "evidence_features", "evidence_model", "judge_total",
                                                    "embed_query", "sentence_vectors")}
    for q in load_questions(LAB_QUESTIONS):
        trace = bench.ask(q.question, dict(q.filters))
        tenant = q.filters.get(settings.tenant_field)
        for n in range(args.repeat + 1):
            t0 = time.perf_counter()
            vec = bench.encoder.embedder.embed_queries([trace.question])[0]
            if n == 0:  # the first run of each question reads its candidates cold: no token state kept
                reader.clear()
            t1 = time.perf_counter()
            inp, why = judge_input(state, trace.question, tenant, trace.lexical, trace.dense, trace.fused, vec,
                                   settings.reranker_max_input, bench.reader_store.reader)
            assert inp is not None, why
            t1r = time.perf_counter()
            rows = candidate_features(inp, settings.reranker_max_input)
            t2 = time.perf_counter()
            ex = models.rerank(rows.X)
            order = sorted(range(len(ex.raw)), key=lambda j: -ex.raw[j])
            t3 = time.perf_counter()
            ids = [rows.chunk_ids[j] for j in order]
            top = [i for i in dedup([_Item(c, state.chunk_by_id[c].parent_id) for c in ids], "parent")][:5]
            idx = [rows.chunk_ids.index(i.chunk_id) for i in top]
            models.support_proba(gate_features(inp, rows, idx))  # the gate's features and model
            t4 = time.perf_counter()
            sent = sentence_features(trace.question, [i.chunk_id for i in top], inp.view, inp.stats, rows.terms,
                                     inp.reader, inp.reader_sentences)
            t5 = time.perf_counter()
            models.evidence_scores(sent.X)
            t6 = time.perf_counter()
            if n == 0:
                cost["reader_cold"].append((t1r - t1) * 1000)
                continue
            cost["reader_warm"].append((t1r - t1) * 1000)
            cost["embed_query"].append((t1 - t0) * 1000)
            cost["features"].append((t2 - t1r) * 1000)
            cost["reranker"].append((t3 - t2) * 1000)
            cost["support"].append((t4 - t3) * 1000)
            cost["evidence_features"].append((t5 - t4) * 1000)
            cost["evidence_model"].append((t6 - t5) * 1000)
            cost["judge_total"].append((t6 - t1) * 1000)   # with the reader, warm
            if n == 1:
                s0 = time.perf_counter()
                bench.encoder.embedder.embed_passages(list(sent.texts))
                cost["sentence_vectors"].append((time.perf_counter() - s0) * 1000)
    print(f"{'part':<20} {'p50 ms':>8} {'p95 ms':>8}   (lab corpus, {len(cost['features'])} runs)")
    for name, values in cost.items():
        print(f"{name:<20} {statistics.median(values):>8.2f} {float(np.percentile(values, 95)):>8.2f}")


class _Item:
    def __init__(self, chunk_id: str, parent_id: str) -> None:
        self.chunk_id, self.parent_id = chunk_id, parent_id


if __name__ == "__main__":
    main()
