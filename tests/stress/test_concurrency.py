"""One shared ``Workbench`` (as the app shares it) under 8 threads × 200 mixed requests while an evaluation runs
on the same workbench and another corpus is re-indexed into the same store, then the same 8 × 200 again once
the evaluation is over: 0 errors, 0 leaks, and every trace equal to the same request run alone. The hash
embedder stands in for the model (query vectors are cached anyway). Latency percentiles are printed (figures,
not assertions)."""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from helpers.fakes import HashEmbedder

from helpers.fuzz import assert_trace_invariants

pytestmark = pytest.mark.stress

THREADS, PER_THREAD = 8, 200
QUESTIONS = {
    "lumen": ["O PX-7 não foi ativado apesar do pagamento, o que faço?", "Qual o prazo do PX-7 e qual o prazo do reembolso?",
              "Quanto tempo leva a ativação do PX-17?", "Como pedir reembolso de uma compra?", "E-mail de confirmação não chegou"],
    "ventura": ["Posso usar o cartão virtual em uma compra presencial?", "Minha conta foi bloqueada, o que faço?",
                "Como contestar uma compra no cartão?", "Qual o prazo do chargeback?", "O erro E-19 aparece no app"],
}
VARIANTS = [
    {}, {"transforms": ("rewrite",)}, {"transforms": ("multi_query",)}, {"transforms": ("hyde",)},
    {"transforms": ("decompose", "hyde")}, {"transforms": ("multi_hop",)}, {"transforms": ("self_query",)},
    {"mmr_lambda": 0.5}, {"fusion": "weighted_rrf", "fusion_weights": "bm25=1,dense=0.5"}, {"min_similarity": -1.0},
    {"dedup": "chunk", "top_k": 3}, {"hybrid_enabled": False},
]


def _canonical(trace) -> str:
    """The trace without what legitimately differs between runs (timings, and whether a query vector came from
    the cache: a request's first run alone embeds its question, a later run finds it cached)."""
    data = trace.to_dict()
    data.pop("timings_ms")
    data.pop("cache")
    for value in (data["costs"].get("techniques") or {}).values():
        value.pop("ms", None)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    settings = Settings(chroma_path=tmp_path_factory.mktemp("stress") / "chroma", _env_file=None)
    bench = Workbench(settings, embedder=HashEmbedder(), progress=False)
    bench.load_corpus(None)
    return bench


def _other_corpus(path, docs=400):
    rng = random.Random(7)
    words = ["garantia", "troca", "loja", "prazo", "entrega", "frete", "cupom", "pedido", "nota", "devolução"]
    with path.open("w", encoding="utf-8") as out:
        for n in range(docs):
            text = " ".join(rng.choice(words) for _ in range(60)) + f". Código XB-{n}."
            out.write(json.dumps({"id": f"o{n}", "text": text, "metadata": {"tenant": rng.choice(["a", "b"])}}) + "\n")
    return path


def test_shared_workbench_under_threads_equals_each_request_alone(shared, tmp_path):
    from retrieval.ingest.corpus import load_questions
    from retrieval.core.paths import LAB_QUESTIONS
    from retrieval.offline.evaluation import Config, evaluate_configs
    from retrieval.pipeline.workbench import Workbench

    requests = [(q, tenant, v) for tenant, qs in QUESTIONS.items() for q in qs for v in range(len(VARIANTS))]
    settings_of = [shared.settings.with_overrides(**v) for v in VARIANTS]
    alone = {}
    for question, tenant, v in requests:  # each request run alone first: the reference traces
        alone[(question, tenant, v)] = _canonical(shared.ask(question, {"tenant": tenant}, settings=settings_of[v]))

    errors: list[str] = []
    mismatches: list[tuple] = []
    latencies: list[float] = []
    during_eval: list[float] = []
    outside_eval: list[float] = []
    lock = threading.Lock()
    rng = random.Random(13)
    schedule = [[rng.choice(requests) for _ in range(PER_THREAD)] for _ in range(THREADS)]

    def worker(jobs):
        for question, tenant, v in jobs:
            cached = evaluating.is_set()  # the evaluation runs meanwhile (with its own generator-list cache)
            started = time.perf_counter()
            try:
                trace = shared.ask(question, {"tenant": tenant}, settings=settings_of[v])
                elapsed = time.perf_counter() - started
                assert_trace_invariants(trace, shared.state.chunk_by_id, {"tenant": [tenant]})
                same = _canonical(trace) == alone[(question, tenant, v)]
            except Exception as exc:  # noqa: BLE001 - counted and reported
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")
                continue
            with lock:
                latencies.append(elapsed)
                (during_eval if cached else outside_eval).append(elapsed)
                if not same:
                    mismatches.append((question, tenant, VARIANTS[v]))

    background_errors: list[str] = []
    evaluating = threading.Event()

    def evaluation():
        evaluating.set()
        try:
            questions = load_questions(LAB_QUESTIONS)
            report = evaluate_configs(lambda s: shared, shared.settings, questions,
                                      [Config("hybrid", {"reranker_model": "none"}), Config("bm25", {"dense_enabled": False})],
                                      (1, 5), "all")
            assert set(report["configs"]) == {"hybrid", "bm25"}
        except Exception as exc:  # noqa: BLE001
            background_errors.append(f"evaluation: {type(exc).__name__}: {exc}")
        finally:
            evaluating.clear()

    def reindex():
        try:
            other = Workbench(shared.settings, embedder=HashEmbedder(), progress=False)
            for _ in range(2):
                state = other.load_corpus(_other_corpus(tmp_path / "other.jsonl"))
                assert state.store is not None, state.store_reason
        except Exception as exc:  # noqa: BLE001
            background_errors.append(f"re-index: {type(exc).__name__}: {exc}")

    started = time.perf_counter()
    side = [threading.Thread(target=evaluation), threading.Thread(target=reindex)]
    for thread in side:
        thread.start()
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(worker, schedule))
    for thread in side:
        thread.join()
    wall = time.perf_counter() - started
    # Second round, the evaluation over: the same 8 × 200 requests, re-index running.
    assert not evaluating.is_set()
    side = threading.Thread(target=reindex)
    side.start()
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(worker, schedule))
    side.join()
    def pct(values):
        return "n/a" if not values else "p50 {:.1f} ms, p95 {:.1f} ms".format(
            *(float(np.percentile(values, p)) * 1000 for p in (50, 95)))

    print(f"\nconcurrency: 2 rounds of {THREADS} threads × {PER_THREAD} requests ({len(set(map(tuple, itertools.chain(*schedule))))} "
          f"distinct), with an evaluation and a re-index: {len(errors)} errors, {len(mismatches)} traces unlike "
          f"the request alone; all {pct(latencies)}; while the evaluation's list cache was on "
          f"({len(during_eval)} requests) {pct(during_eval)}; without it ({len(outside_eval)}) {pct(outside_eval)}; "
          f"wall {wall:.1f} s")
    assert not background_errors, background_errors
    assert not errors, errors[:5]
    assert not mismatches, mismatches[:5]
    assert len(latencies) == 2 * THREADS * PER_THREAD
