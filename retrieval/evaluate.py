"""Evaluation over labeled questions: metrics per group and per question, layer diagnosis, comparisons.

Metrics come from ``ranx`` (recall@k, precision@k, MRR@k, nDCG@k with graded gains when ``graded`` is
present, hit rate@k). Questions with an empty ``relevant`` list count only in ``abstention_accuracy``
(abstained on unanswerable, answered on answerable). Each question runs once per configuration with
top_k = the largest k, and the metrics cut that list — the final list before the gate (see
:func:`ranked_parents`); ``final`` in the report is the list after the gate. Comparisons use ranx's paired
Fisher randomization test and list, per metric, the questions improved, worsened (also per group) and those
that lost a relevant document the baseline had found (``lost_relevant``).

The report also carries the evidence check (:func:`evidence_check`: gold spans cut by the chunking), the
failure layer of every question with counts per layer and group, dev / held-out figures of an ``all`` run,
cost and latency per configuration, and optionally a top-k sweep (:mod:`retrieval.sweep`). Exports are in
:mod:`retrieval.report`.
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import time
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .listcache import ListCache
from .pipeline import SCHEMA_VERSION, Trace, Workbench
from .settings import Settings
from .types import Chunk, Document, Question

METRICS = ("ndcg", "recall", "precision", "mrr", "hit_rate")

#: Named configurations (DESIGN.md, "Command line"): settings overrides over the base settings.
NAMED_CONFIGS: dict[str, dict[str, Any]] = {
    "bm25": {"dense_enabled": False, "hybrid_enabled": True, "reranker_model": "none"},
    "dense": {"hybrid_enabled": False, "reranker_model": "none"},
    "hybrid": {"reranker_model": "none"},
    "hybrid+rerank": {},
    # Further interventions, each one change away from ``hybrid``:
    "hybrid-rrf30": {"reranker_model": "none", "rrf_k": 30},
    "weighted-rrf": {"reranker_model": "none", "fusion": "weighted_rrf", "fusion_weights": "bm25=1.0,dense=0.5"},
    "combsum": {"reranker_model": "none", "fusion": "combsum"},
    "hybrid-use-m3": {"reranker_model": "none", "embedding_model": "use-m3"},
    "hybrid-minilm": {"reranker_model": "none", "embedding_model": "minilm"},
}


def split_of(question_id: str) -> str:
    """Fixed split by a hash of the question id: 70 % ``dev``, 30 % ``heldout``."""
    bucket = int(hashlib.sha1(question_id.encode("utf-8")).hexdigest(), 16) % 100
    return "dev" if bucket < 70 else "heldout"


def select(questions: Iterable[Question], split: str) -> list[Question]:
    if split not in {"dev", "heldout", "all"}:
        raise ValueError("split must be dev, heldout or all")
    return [q for q in questions if split == "all" or split_of(q.id) == split]


@dataclass(frozen=True)
class Config:
    name: str
    overrides: Mapping[str, Any]


def resolve_configs(names: Sequence[str], base: Settings, extra: Sequence[Mapping[str, Any]] = ()) -> list[Config]:
    """Named configs plus ``{"name", "settings"}`` entries from a config file.

    Raises:
        ValueError: an unknown name, or an entry without ``name``.
    """
    out = []
    for name in names:
        if name not in NAMED_CONFIGS:
            raise ValueError(f"unknown config '{name}' (named configs: {', '.join(NAMED_CONFIGS)})")
        overrides = dict(NAMED_CONFIGS[name])
        if name == "hybrid+rerank":
            overrides["reranker_model"] = base.reranker_model
        out.append(Config(name, overrides))
    for entry in extra:
        if not isinstance(entry, Mapping) or not entry.get("name"):
            raise ValueError("each config-file entry needs a 'name' and a 'settings' object")
        out.append(Config(str(entry["name"]), dict(entry.get("settings") or {})))
    return out


def _relevant_grades(q: Question) -> dict[str, int]:
    if q.graded:
        grades = {d: int(g) for d, g in q.graded.items() if g > 0}
        for d in q.relevant:
            grades.setdefault(d, 1)
        return grades
    return {d: 1 for d in q.relevant}


def diagnose(q: Question, trace: Trace, dedup: str, top_k: int) -> tuple[str, str | None]:
    """The layer of a question's outcome: ``ok``, ``coverage``, ``ordering`` or ``generation``, and a stage.

    * coverage: no relevant chunk among any generator's candidates (query, representation or index).
    * ordering: a relevant chunk was a candidate but is not in the final list; stage ``fusion``,
      ``reranker`` or ``gate``.
    * generation: a relevant chunk was in the context but the answer did not cite it or abstained; for an
      unanswerable question, an answer was given (stage ``gate``).
    """
    relevant = set(q.relevant)
    answer = trace.answer
    if not relevant:
        return ("ok", None) if answer.abstained else ("generation", "gate")
    final_parents = {f.parent_id for f in trace.final}
    if final_parents & relevant:
        cited = {trace.final[[f.chunk_id for f in trace.final].index(c)].parent_id for c in answer.citations
                 if c in trace.context_chunk_ids}
        if cited & relevant:
            return "ok", None
        return "generation", "abstained" if answer.abstained else "answer"
    candidates = {i.parent_id for lst in (trace.lexical, trace.dense) for i in lst.items}
    for variant in trace.variants:
        for side in ("lexical", "dense"):
            candidates |= {i["parent_id"] for i in variant.get(side, {}).get("items", [])}
    if not candidates & relevant:
        return "coverage", "candidates"
    fused_top = {i.parent_id for i in Workbench._dedup(trace.fused, dedup)[:top_k]}
    if not fused_top & relevant:
        return "ordering", "fusion"
    if trace.reranked.items:
        reranked_top = {i.parent_id for i in Workbench._dedup(trace.reranked, dedup)[:top_k]}
        if not reranked_top & relevant:
            return "ordering", "reranker"
    return "ordering", "gate"


def ranked_parents(trace: Trace, settings: Settings) -> list[str]:
    """The ranked list the metrics read: the final top_k *before* the gate (reranked order when a rerank
    ran, else fused, deduplicated). The gate is judged separately, by abstention accuracy, so a refusal
    does not hide how well the question was ranked."""
    source = trace.reranked if trace.reranked.items else trace.fused
    return [i.parent_id for i in Workbench._dedup(source, settings.dedup)[: settings.top_k]]


def _metric_names(ks: Sequence[int]) -> list[str]:
    return [f"{m}@{k}" for k in ks for m in METRICS]


def _scores(questions: Sequence[Question], finals: Mapping[str, list[str]], names: list[str],
            run_name: str) -> dict[str, dict[str, float]]:
    """Per-question ranx metrics (answerable questions only): ``{qid: {metric: value}}``."""
    from ranx import Qrels, Run, evaluate

    answerable = [q for q in questions if q.relevant]
    if not answerable:
        return {}
    qrels = Qrels({q.id: _relevant_grades(q) for q in answerable})
    run_dict = {}
    for q in answerable:
        ranked = finals.get(q.id) or []
        run_dict[q.id] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)} or {"__none__": 0.0}
    run = Run(run_dict, name=run_name)
    values = evaluate(qrels, run, names, return_mean=False, make_comparable=True)
    if len(names) == 1:
        values = {names[0]: values}
    ids = list(qrels.keys())
    return {qid: {n: float(values[n][i]) for n in names} for i, qid in enumerate(ids)}


def _aggregate(rows: Sequence[dict[str, Any]], per_q: Mapping[str, Mapping[str, float]], names: list[str]) -> dict:
    out: dict[str, Any] = {}
    scored = [per_q[r["id"]] for r in rows if r["id"] in per_q]
    for n in names:
        out[n] = round(statistics.fmean(s[n] for s in scored), 4) if scored else None
    abst = [r["abstained"] == (not r["relevant"]) for r in rows]
    out["abstention_accuracy"] = round(sum(abst) / len(abst), 4) if abst else None
    out["questions"] = len(rows)
    out["answerable"] = len(scored)
    return out


def _percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))], 3)


#: Settings that need their own index (and so their own Workbench); the others are per request.
INDEX_SETTINGS = frozenset({"embedding_model", "chunk_tokens", "chunk_overlap", "bm25_engine", "tenant_field",
                            "chroma_path", "chroma_host", "allow_downloads"})


def evidence_check(questions: Sequence[Question], chunks: Sequence[Chunk],
                   documents: Sequence[Document] = ()) -> dict[str, Any]:
    """Does each gold span survive whole inside some subchunk of its relevant parent?

    For every answerable question with ``answers``, each span is looked up (whitespace collapsed, Unicode
    NFC, case folded) in the subchunks of the question's relevant parents. A span found in a parent's text
    but in none of its subchunks was **cut** by the chunking: a coverage failure no search can fix. A span
    found in no relevant parent at all is listed under ``not_in_parent`` (a labeling problem, or the parser
    lost it).

    Returns:
        ``{"checked": spans, "questions": questions checked, "whole": spans found whole,
        "cut": [{"id", "parent", "span"}], "not_in_parent": [{"id", "parents", "span"}]}``.
    """
    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFC", text).split()).casefold()

    pieces: dict[str, list[str]] = {}
    for chunk in chunks:
        pieces.setdefault(chunk.parent_id, []).append(norm(chunk.text))
    parents = {d.id: norm(d.text) for d in documents}
    checked, questions_checked, cut, absent = 0, 0, [], []
    for q in questions:
        spans = [a for a in q.answers if a and a.strip()]
        if not q.relevant or not spans:
            continue
        questions_checked += 1
        for span in spans:
            checked += 1
            wanted = norm(span)
            if any(wanted in piece for p in q.relevant for piece in pieces.get(p, ())):
                continue
            holders = [p for p in q.relevant if wanted in parents.get(p, "")]
            if holders or not parents:
                cut.append({"id": q.id, "parent": holders[0] if holders else q.relevant[0], "span": span})
            else:
                absent.append({"id": q.id, "parents": list(q.relevant), "span": span})
    return {"checked": checked, "questions": questions_checked, "whole": checked - len(cut) - len(absent),
            "cut": cut, "not_in_parent": absent}


def _first_ranks(items: Iterable[Any], wanted: set[str]) -> dict[str, int]:
    """Parent → the 1-based rank of its first chunk in a list (only parents in ``wanted``)."""
    out: dict[str, int] = {}
    for item in items:
        if item.parent_id in wanted and item.parent_id not in out:
            out[item.parent_id] = item.rank
    return out


def _sum_or_none(values: Iterable[Any]) -> int | None:
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def _layer_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per layer (and per layer:stage), overall and per group."""
    def count(part: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        out = {layer: 0 for layer in LAYERS}
        for r in part:
            out[r["layer"]] += 1
        return out

    stages: dict[str, int] = {}
    for r in rows:
        if r["layer"] != "ok":
            key = f"{r['layer']}:{r['stage']}"
            stages[key] = stages.get(key, 0) + 1
    groups = sorted({r["group"] for r in rows})
    return {"overall": count(rows), "stages": dict(sorted(stages.items())),
            "groups": {g: count([r for r in rows if r["group"] == g]) for g in groups}}


#: The diagnosis layers, in the order the lab reads them.
LAYERS = ("ok", "coverage", "ordering", "generation")


def evaluate_configs(
    open_bench: Callable[[Settings], Workbench],
    base: Settings,
    questions: Sequence[Question],
    configs: Sequence[Config],
    ks: Sequence[int] = (1, 3, 5, 10),
    split: str = "all",
    progress: Callable[[int, int, str], None] | None = None,
    hypothesis: str | None = None,
    share_lists: bool = True,
    sweep: str | None = None,
    sweep_max_k: int = 20,
) -> dict[str, Any]:
    """Run every question once per config and build the evaluation report (DESIGN.md JSON).

    Args:
        open_bench: returns a loaded Workbench for a config's settings (cache it by :data:`INDEX_SETTINGS`:
            configs differing only in per-request settings share one index and one model).
        base: the settings every config starts from.
        share_lists: give each Workbench a :class:`~retrieval.listcache.ListCache`, so configs that differ
            only after the generators reuse the same BM25 and dense windows (the saving is reported per
            config as ``shared_lists``).
        sweep: a config name whose top-k sweep (k = 1 … ``sweep_max_k``, :mod:`retrieval.sweep`) is added
            to the report as ``sweep``.

    Raises:
        ValueError: an empty k list, a non-positive k, no question in the split, or an unknown sweep config.
    """
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 1:
        raise ValueError("k must be a list of positive integers")
    chosen = select(questions, split)
    if not chosen:
        raise ValueError(f"no question in split '{split}'")
    if sweep is not None and sweep not in {c.name for c in configs}:
        raise ValueError(f"sweep config '{sweep}' is not among the evaluated configs")
    names = _metric_names(ks)
    report: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "corpus": None,
                              "questions": len(chosen), "split": split, "k": ks, "configs": {},
                              "comparisons": [], "hypothesis": hypothesis}
    finals_by_config: dict[str, dict[str, list[str]]] = {}
    per_q_by_config: dict[str, dict[str, dict[str, float]]] = {}
    total = len(chosen) * len(configs)
    done = 0
    installed: list[Workbench] = []
    run_started = time.perf_counter()
    try:
        plans = []
        for config in configs:
            settings = base.with_overrides(**{**config.overrides, "top_k": ks[-1]})
            bench = open_bench(settings)
            if share_lists and bench.list_cache is None:
                bench.list_cache = ListCache()
                installed.append(bench)
            # One untimed request first, so model warm-up (first inference, store open) is not billed to
            # whichever config happens to run first.
            bench.ask("warm-up", chosen[0].filters, settings=settings)
            plans.append((config, settings, bench))
        first_bench = plans[0][2]
        report["corpus"] = str(first_bench.state.corpus_path)
        report["evidence_check"] = evidence_check(chosen, first_bench.state.chunks, first_bench.state.documents)
        cut_ids = {c["id"] for c in report["evidence_check"]["cut"]}
        acc = {c.name: {"rows": [], "finals": {}, "tiers": [], "costs": [], "stages": {}, "ms": 0.0,
                        "alone_ms": 0.0, "hits": 0, "misses": 0, "saved_ms": 0.0} for c in configs}
        # Question-major order: every config answers a question before the next question, so the query
        # vector and the generator lists computed for the first config are reused by the next ones (and
        # machine load falls on all configs alike).
        for q in chosen:
            embed_paid: dict[int, float] = {}
            for config, settings, bench in plans:
                a = acc[config.name]
                before = bench.list_cache.stats() if bench.list_cache is not None else None
                started = time.perf_counter()
                trace = bench.ask(q.question, q.filters, settings=settings)
                elapsed = (time.perf_counter() - started) * 1000
                a["ms"] += elapsed
                alone = elapsed
                if before is not None:
                    after = bench.list_cache.stats()
                    a["hits"] += after["hits"] - before["hits"]
                    a["misses"] += after["misses"] - before["misses"]
                    a["saved_ms"] += after["saved_ms"] - before["saved_ms"]
                    alone += after["saved_ms"] - before["saved_ms"]
                embed = trace.timings_ms.get("embed_query")
                if isinstance(embed, (int, float)):
                    paid = embed_paid.setdefault(id(bench), embed)  # the first config on this index paid it
                    alone += max(0.0, paid - embed)
                a["alone_ms"] += alone
                final = [f.parent_id for f in trace.final]
                source = trace.reranked if trace.reranked.items else trace.fused
                top = Workbench._dedup(source, settings.dedup)[: settings.top_k]
                ranked = [i.parent_id for i in top]
                a["finals"][q.id] = ranked
                a["tiers"].append(trace.tier)
                a["costs"].append(trace.costs)
                for stage, ms in trace.timings_ms.items():
                    if isinstance(ms, (int, float)):
                        a["stages"].setdefault(stage, []).append(ms)
                wanted = set(q.relevant) | set(q.graded or ())
                first = next((i for i, p in enumerate(ranked, start=1) if p in set(q.relevant)), None)
                layer, stage = diagnose(q, trace, settings.dedup, settings.top_k)
                a["rows"].append({
                    "id": q.id, "group": q.group, "split": split_of(q.id), "question": q.question,
                    "relevant": list(q.relevant), "final": final, "ranked": ranked,
                    "scores": [round(i.score, 6) for i in top],
                    "first_relevant_rank": first,
                    "abstained": trace.answer.abstained, "context": trace.context_chunk_ids,
                    "citations": trace.answer.citations, "answer": trace.answer.text[:500],
                    "tier": trace.tier, "layer": layer, "stage": stage,
                    "evidence_cut": q.id in cut_ids,
                    "candidates": {"bm25": [i.parent_id for i in trace.lexical.items],
                                   "dense": [i.parent_id for i in trace.dense.items]},
                    "relevant_ranks": {"bm25": _first_ranks(trace.lexical.items, wanted),
                                       "dense": _first_ranks(trace.dense.items, wanted),
                                       "fused": _first_ranks(trace.fused.items, wanted),
                                       "reranked": _first_ranks(trace.reranked.items, wanted)},
                    "latency_ms": trace.timings_ms.get("total")})
                done += 1
                if progress:
                    progress(done, total, config.name)
        for config, settings, bench in plans:
            a = acc[config.name]
            rows, finals, tiers, costs, stage_times = a["rows"], a["finals"], a["tiers"], a["costs"], a["stages"]
            per_q = _scores(chosen, finals, names, config.name)
            for row in rows:
                row["metrics"] = per_q.get(row["id"])
            groups = sorted({r["group"] for r in rows})
            tier_counts = {t: tiers.count(t) for t in dict.fromkeys(tiers)}
            entry = {
                "tier": max(tier_counts, key=tier_counts.get),
                "tiers": tier_counts,
                "settings": {k: v for k, v in settings.public_dict().items() if k in config.overrides or k == "top_k"},
                "overall": _aggregate(rows, per_q, names),
                "groups": {g: _aggregate([r for r in rows if r["group"] == g], per_q, names) for g in groups},
                "diagnosis": _layer_counts(rows),
                "timings_ms": {"wall_total": round(a["ms"], 1), "standalone_estimate": round(a["alone_ms"], 1),
                               **{f"{s}_p50": _percentile(v, 0.5) for s, v in stage_times.items()},
                               **{f"{s}_p95": _percentile(v, 0.95) for s, v in stage_times.items()}},
                "shared_lists": ({"hits": a["hits"], "misses": a["misses"], "saved_ms": round(a["saved_ms"], 1)}
                                 if bench.list_cache is not None else None),
                "cost": {"requests": len(rows),
                         "llm_calls": _sum_or_none(c.get("llm_calls") for c in costs),
                         "input_tokens": _sum_or_none(c.get("input_tokens") for c in costs),
                         "output_tokens": _sum_or_none(c.get("output_tokens") for c in costs),
                         "retrieval_calls": sum(c.get("retrieval_calls", 2 if settings.dense_enabled
                                                      and settings.hybrid_enabled else 1) for c in costs)},
                "questions": rows,
            }
            if split == "all":
                entry["splits"] = {part: _aggregate([r for r in rows if r["split"] == part], per_q, names)
                                   for part in ("dev", "heldout")}
            report["configs"][config.name] = entry
            finals_by_config[config.name] = finals
            per_q_by_config[config.name] = per_q
            if sweep == config.name:
                from .sweep import run_sweep

                report["sweep"] = {"config": config.name, **run_sweep(bench, chosen, settings, sweep_max_k)}
    finally:
        for bench in installed:  # a shared (cached) Workbench goes back to computing its own lists
            bench.list_cache = None
    report["wall_ms"] = round((time.perf_counter() - run_started) * 1000, 1)
    report["comparisons"] = compare(chosen, configs, finals_by_config, per_q_by_config, names)
    if split == "all":
        report["comparisons_by_split"] = {
            part: compare([q for q in chosen if split_of(q.id) == part], configs, finals_by_config,
                          per_q_by_config, names)
            for part in ("dev", "heldout")}
    report["observed"] = observed(report)
    return report


def observed(report: Mapping[str, Any]) -> list[str]:
    """One line per candidate: what the run showed on the headline metrics (to set beside the hypothesis)."""
    kmax = report["k"][-1]
    lines = []
    rows = report.get("comparisons") or []
    for candidate in dict.fromkeys(r["candidate"] for r in rows):
        parts = []
        for metric in (f"ndcg@{kmax}", f"recall@{kmax}", f"mrr@{kmax}"):
            row = next((r for r in rows if r["candidate"] == candidate and r["metric"] == metric), None)
            if row:
                parts.append(f"{metric} {row['delta']:+.4f} ({_fmt_p(row['p_value'])})")
        head = next(r for r in rows if r["candidate"] == candidate and r["metric"] == f"ndcg@{kmax}")
        lost = len(head["lost_relevant"])
        lines.append(f"{candidate} vs {head['baseline']}: " + ", ".join(parts)
                     + f"; {len(head['improved'])} questions improved, {len(head['worsened'])} worsened"
                     + (f"; {lost} lost a relevant document the baseline had in its top {kmax}" if lost else ""))
    return lines


def _fmt_p(p: Any) -> str:
    from .report import p_text

    return p_text(p)


def _metric_k(metric: str) -> int:
    return int(metric.rsplit("@", 1)[1])


def compare(questions: Sequence[Question], configs: Sequence[Config], finals: Mapping[str, Mapping[str, list[str]]],
            per_q: Mapping[str, Mapping[str, Mapping[str, float]]], names: list[str]) -> list[dict[str, Any]]:
    """Each config against the first (the baseline), per metric.

    Each row: ``delta`` of the means, ``p_value`` of ranx's paired Fisher randomization test, the questions
    that ``improved`` or ``worsened``, the same counted ``by_group``, and ``lost_relevant``: the questions
    where a relevant parent the baseline had in its top K (K of the metric) is missing from the candidate's
    top K, whatever the mean says. ``wins_on_mean_but_lost_relevant`` flags a positive delta with losses.
    """
    answerable = [q for q in questions if q.relevant]
    if len(configs) < 2 or not answerable:
        return []
    from ranx import Qrels, Run
    from ranx import compare as ranx_compare

    qrels = Qrels({q.id: _relevant_grades(q) for q in answerable})
    runs = []
    for config in configs:
        run_dict = {}
        for q in answerable:
            ranked = finals[config.name].get(q.id) or []
            run_dict[q.id] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)} or {"__none__": 0.0}
        runs.append(Run(run_dict, name=config.name))
    report = ranx_compare(qrels, runs, names, stat_test="fisher", max_p=0.05, rounding_digits=6,
                          make_comparable=True).to_dict()
    base = configs[0].name
    groups = sorted({q.group for q in answerable})
    out = []
    for config in configs[1:]:
        for metric in names:
            k = _metric_k(metric)
            b = [per_q[base][q.id][metric] for q in answerable]
            c = [per_q[config.name][q.id][metric] for q in answerable]
            lost = []
            for q in answerable:
                had = set(q.relevant) & set((finals[base].get(q.id) or [])[:k])
                missing = sorted(had - set((finals[config.name].get(q.id) or [])[:k]))
                if missing:
                    lost.append({"id": q.id, "group": q.group, "lost": missing})
            by_group = {}
            for g in groups:
                idx = [i for i, q in enumerate(answerable) if q.group == g]
                by_group[g] = {"questions": len(idx),
                               "delta": round(statistics.fmean(c[i] - b[i] for i in idx), 4),
                               "improved": [answerable[i].id for i in idx if c[i] > b[i]],
                               "worsened": [answerable[i].id for i in idx if c[i] < b[i]]}
            delta = round(statistics.fmean(c) - statistics.fmean(b), 4)
            out.append({
                "baseline": base, "candidate": config.name, "metric": metric,
                "delta": delta,
                "p_value": report[base]["comparisons"][config.name][metric],
                "improved": [q.id for q, x, y in zip(answerable, b, c) if y > x],
                "worsened": [q.id for q, x, y in zip(answerable, b, c) if y < x],
                "by_group": by_group,
                "lost_relevant": lost,
                "wins_on_mean_but_lost_relevant": bool(delta > 0 and lost),
            })
    return out


def bench_factory(corpus: Any, progress: bool = True) -> Callable[[Settings], Workbench]:
    """A Workbench factory for :func:`evaluate_configs` that reuses one Workbench per index-level settings."""
    cache: dict[tuple, Workbench] = {}

    def open_bench(settings: Settings) -> Workbench:
        key = tuple(str(getattr(settings, name)) for name in sorted(INDEX_SETTINGS))
        if key not in cache:
            bench = Workbench(settings, progress=progress)
            bench.load_corpus(corpus)
            cache[key] = bench
        return cache[key]

    return open_bench


class TqdmProgress:
    """A progress bar on stderr for :func:`evaluate_configs`."""

    def __init__(self) -> None:
        self._bar = None

    def __call__(self, done: int, total: int, name: str) -> None:
        from tqdm import tqdm

        if self._bar is None:
            self._bar = tqdm(total=total, desc="evaluating", unit="question", file=sys.stderr)
        self._bar.set_postfix_str(name)
        self._bar.update(1)
        if done == total:
            self._bar.close()


def calibrate_gate(bench: Workbench, questions: Sequence[Question], settings: Settings | None = None) -> dict[str, Any]:
    """Choose ``min_similarity`` on the dev split; report abstention accuracy on dev and held-out.

    A request abstains when no final chunk reaches the threshold, i.e. when the best cosine among its
    final top_k is below it. The threshold maximizing dev accuracy (abstain on unanswerable, answer on
    answerable) is chosen; among equally good ones, the midpoint of the widest best interval.

    Returns:
        ``{"threshold", "dev": {...}, "heldout": {...}, "points": [(qid, split, best_cosine, answerable)]}``.
    """
    s = (settings or bench.settings).with_overrides(min_similarity=-1.0)
    points = []
    for q in questions:
        trace = bench.ask(q.question, q.filters, settings=s)
        sims = [f.similarity for f in trace.final if f.similarity is not None]
        points.append((q.id, split_of(q.id), max(sims) if sims else -1.0, bool(q.relevant)))

    def accuracy(rows: list[tuple], t: float) -> float | None:
        return round(sum((p[2] >= t) == p[3] for p in rows) / len(rows), 4) if rows else None

    dev = [p for p in points if p[1] == "dev"]
    held = [p for p in points if p[1] == "heldout"]
    cuts = sorted({p[2] for p in dev})
    candidates = [cuts[0] - 1e-3] + [(a + b) / 2 for a, b in zip(cuts, cuts[1:])] + [cuts[-1] + 1e-3]
    best = max(accuracy(dev, t) for t in candidates)
    good = [t for t in candidates if accuracy(dev, t) == best]
    threshold = round(statistics.median(good), 4)
    return {"threshold": threshold,
            "dev": {"questions": len(dev), "abstention_accuracy": accuracy(dev, threshold)},
            "heldout": {"questions": len(held), "abstention_accuracy": accuracy(held, threshold)},
            "points": points}
