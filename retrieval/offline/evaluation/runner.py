"""The question runner: every question once per configuration, then the report (docs/contracts.md, "The
evaluation report").

Each question runs with top_k = the largest k; the metrics cut the list the gate read (``trace.selected``:
after dedup, top_k and MMR — what the pipeline kept, before the gate) read as a parent ranking (each parent
once, at its best rank: with ``dedup="chunk"`` a parent may hold several of its places), and ``final`` in the
report is the list after the gate. The row's ``ranked`` is that parent ranking, so the metrics, the
significance tests and the exports (TREC run, per-question table) read the same list. Configurations that differ only after the generators share one index and, through a
:class:`~retrieval.core.listcache.ListCache` passed to each request, the same BM25 and dense windows.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping, Sequence

from ...core.listcache import ListCache
from ...core.redact import scrub
from ...core.split import split_of
from ...core.types import Question
from ...pipeline.trace import SCHEMA_VERSION, Trace
from ...pipeline.workbench import Workbench
from ...settings import Settings
from .compare import compare, observed
from .configs import Config, select_split
from .diagnose import answer_holds_span, diagnose, evidence_check, first_ranks, layer_counts, question_problems, visible_corpus
from .labels import resolve_labels
from .metrics import aggregate, best_positions, judged_share, metric_names, parent_run, percentile, scores
from ..runs import ImportedRun, parent_rankings
from .sweep import run_sweep

if TYPE_CHECKING:
    from tqdm import tqdm

#: ``(done, total, config name)`` after each request.
Progress = Callable[[int, int, str], None]


def progress_position(done: int, total: int, name: str, names: Sequence[str]) -> dict[str, int]:
    """Where a run of :func:`evaluate_configs` stands after ``progress(done, total, name)``, for a progress line.

    The run is question-major (every configuration answers a question before the next one), so ``done``
    counts question × configuration requests: the question is ``ceil(done / configs)``, the configuration is
    ``name``'s place in ``names``. Every count is clamped to its range (never "question -46/44"), whatever a
    caller passes.

    Returns:
        ``number`` (1-based configuration, 0 before the first request), ``n`` configurations, ``q`` (1-based
        question, 0 before the first), ``per`` questions, ``done`` and ``total`` requests.
    """
    n = max(1, len(names))
    total = max(0, int(total))
    done = min(max(0, int(done)), total)
    per = -(-total // n)  # questions: total is questions × configurations
    q = min(per, -(-done // n))
    if not done:
        number = 0
    elif name in names:
        number = list(names).index(name) + 1
    else:
        number = (done - 1) % n + 1
    return {"number": number, "n": n, "q": q, "per": per, "done": done, "total": total}


@dataclass
class _Acc:
    """What one configuration gathered over the questions."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    finals: dict[str, list[str]] = field(default_factory=dict)
    tiers: list[str] = field(default_factory=list)
    costs: list[dict[str, Any]] = field(default_factory=list)
    stages: dict[str, list[float]] = field(default_factory=dict)
    ms: float = 0.0
    alone_ms: float = 0.0
    hits: int = 0
    misses: int = 0
    saved_ms: float = 0.0


@dataclass(frozen=True)
class _Plan:
    config: Config
    settings: Settings
    bench: Any
    lists: ListCache | None


def evaluate_configs(open_bench: Callable[[Settings], Any], base: Settings, questions: Sequence[Question],
                     configs: Sequence[Config], ks: Sequence[int] = (1, 3, 5, 10), split: str = "all",
                     progress: Progress | None = None, hypothesis: str | None = None, share_lists: bool = True,
                     sweep: str | None = None, sweep_max_k: int = 20,
                     list_caches: dict[int, ListCache] | None = None,
                     tenants: Collection[str] | None = None,
                     imported: Sequence[ImportedRun] = ()) -> dict[str, Any]:
    """Run every question once per config and build the evaluation report (docs/contracts.md, "The evaluation report").

    Args:
        open_bench: returns a loaded Workbench for a config's settings (cache it by ``Settings.index_key()``:
            configs differing only in per-request settings share one index and one model).
        base: the settings every config starts from.
        share_lists: one :class:`ListCache` per index for this run, so configs that differ only after the
            generators reuse the same windows (the saving is reported per config as ``shared_lists``).
        sweep: a config name whose top-k sweep (k = 1 … ``sweep_max_k``) is added as ``sweep``.
        list_caches: the list caches (one per Workbench, keyed by its ``id``) to use and fill, so several runs
            over the same questions (the tuner's candidates) reuse each other's windows and query vectors;
            ``None``: fresh caches for this run.
        imported: runs of other engines (:mod:`retrieval.offline.runs`), scored beside the configs with the
            same metrics, judged@k, comparisons against the baseline and the layers that apply (coverage:
            no relevant parent anywhere in the run's list; ordering: one below the cut-off); the ids the
            corpus does not hold and the questions the run does not answer are named in the entry.
        tenants: the tenants whose documents the label checks (``question_problems``, ``evidence_check``)
            may read: an access policy's tenants for the user (:func:`retrieval.serving.access.allowed_tenants`), so
            another tenant's document reads exactly as an id not in the corpus; ``None`` (single-user mode,
            the CLI): the whole corpus (:func:`~.diagnose.visible_corpus`).

    The report's ``question_problems`` (:func:`~.diagnose.question_problems`) lists the questions whose labels
    no configuration can satisfy (a tenant or a relevant id not in the corpus, a relevant document in another
    tenant): they are scored as labeled, and counted so the figures can be read with them in mind.

    Raises:
        ValueError: an empty k list, a non-positive k, no question in the split, or an unknown sweep config.
    """
    ks, chosen = _checked(ks, questions, split, configs, sweep)
    names = metric_names(ks)
    started = time.perf_counter()
    plans = _plans(open_bench, base, configs, ks[-1], chosen[0], share_lists, list_caches)
    first = plans[0].bench.state
    tenant_field = plans[0].settings.tenant_field
    documents, chunks, types = visible_corpus(first.documents, first.chunks, first.field_types, tenant_field,
                                              tenants)
    chosen, labels = resolve_labels(chosen, documents, chunks)  # chunk ids and spans of this chunking
    report: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "corpus": str(first.corpus_path),
                              "questions": len(chosen), "split": split, "k": ks, "configs": {},
                              "comparisons": [], "hypothesis": hypothesis,
                              "evidence_check": evidence_check(chosen, chunks, documents),
                              "question_problems": question_problems(chosen, documents, types, tenant_field),
                              "labels": labels}
    cut_ids = {c["id"] for c in report["evidence_check"]["cut"]}
    acc = {p.config.name: _Acc() for p in plans}
    done, total = 0, len(chosen) * len(plans)
    # Question-major order: every config answers a question before the next question, so the query vector
    # and the generator lists computed for the first config are reused by the next ones (and machine load
    # falls on all configs alike).
    for q in chosen:
        embed_paid: dict[int, float] = {}
        for plan in plans:
            _run_question(plan, q, acc[plan.config.name], embed_paid, q.id in cut_ids)
            done += 1
            if progress:
                progress(done, total, plan.config.name)
    per_q_by_config = {}
    runs = {name: parent_run(chosen, a.finals) for name, a in acc.items()}  # built once, read by all below
    for plan in plans:
        a = acc[plan.config.name]
        per_q = scores(chosen, a.finals, names, plan.config.name, run=runs[plan.config.name])
        report["configs"][plan.config.name] = _entry(plan, a, per_q, names, split)
        per_q_by_config[plan.config.name] = per_q
        if sweep == plan.config.name:

            report["sweep"] = {"config": plan.config.name, **run_sweep(plan.bench, chosen, plan.settings, sweep_max_k)}
    finals_by_config = {name: a.finals for name, a in acc.items()}
    compared = list(configs)
    parents = {d.id for d in documents}
    chunk_parent = {c.chunk_id: c.parent_id for c in chunks}
    for run in imported:
        name = run.name if run.name not in report["configs"] else f"{run.name} (run)"
        rankings, named = parent_rankings(run, parents, chunk_parent, [q.id for q in chosen])
        per_q = scores(chosen, rankings, names, name)
        report["configs"][name] = _imported_entry(run, chosen, rankings, named, per_q, names, split, ks[-1])
        per_q_by_config[name], finals_by_config[name] = per_q, rankings
        compared.append(Config(name, {}))
    report["wall_ms"] = round((time.perf_counter() - started) * 1000, 1)
    report["comparisons"] = compare(chosen, compared, finals_by_config, per_q_by_config, names)
    if split == "all":
        report["comparisons_by_split"] = {
            part: compare([q for q in chosen if split_of(q.id) == part], compared, finals_by_config,
                          per_q_by_config, names)
            for part in ("dev", "heldout")}
    lines = observed(report)
    report["observed"] = [line.text() for line in lines]  # the report JSON: the English lines and their codes
    report["observed_codes"] = [line.to_dict() for line in lines]
    return scrub(report, base.secrets())  # no secret of the settings in any export of it


def _checked(ks: Sequence[int], questions: Sequence[Question], split: str, configs: Sequence[Config],
             sweep: str | None) -> tuple[list[int], list[Question]]:
    """The sorted cut-offs and the split's questions, or a ValueError naming what is wrong."""
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 1:
        raise ValueError("k must be a list of positive integers")
    chosen = select_split(questions, split)
    if not chosen:
        raise ValueError(f"no question in split '{split}'")
    if sweep is not None and sweep not in {c.name for c in configs}:
        raise ValueError(f"sweep config '{sweep}' is not among the evaluated configs")
    return ks, chosen


def _plans(open_bench: Callable[[Settings], Any], base: Settings, configs: Sequence[Config], top_k: int,
           first: Question, share_lists: bool, caches: dict[int, ListCache] | None = None) -> list[_Plan]:
    """One plan per config: its settings, its (shared) Workbench and the run's list cache for that index."""
    caches = {} if caches is None else caches
    plans = []
    for config in configs:
        settings = base.with_overrides(**{**config.overrides, "top_k": top_k})
        bench = open_bench(settings)
        lists = caches.setdefault(id(bench), ListCache()) if share_lists else None
        # One untimed request first, so model warm-up (first inference, store open) is not billed to
        # whichever config happens to run first.
        bench.ask("warm-up", first.filters, settings=settings)
        plans.append(_Plan(config, settings, bench, lists))
    return plans


def _run_question(plan: _Plan, q: Question, a: _Acc, embed_paid: dict[int, float], evidence_cut: bool) -> None:
    """Ask one question under one config and add its row (and its costs and timings) to ``a``."""
    before = plan.lists.stats() if plan.lists is not None else None
    started = time.perf_counter()
    trace = plan.bench.ask(q.question, q.filters, settings=plan.settings, lists=plan.lists)
    elapsed = (time.perf_counter() - started) * 1000
    a.ms += elapsed
    alone = elapsed
    if before is not None and plan.lists is not None:
        after = plan.lists.stats()
        a.hits += after["hits"] - before["hits"]
        a.misses += after["misses"] - before["misses"]
        a.saved_ms += after["saved_ms"] - before["saved_ms"]
        alone += after["saved_ms"] - before["saved_ms"]
    embed = trace.timings_ms.get("embed_query")
    if isinstance(embed, (int, float)):
        paid = embed_paid.setdefault(id(plan.bench), embed)  # the first config on this index paid it
        alone += max(0.0, paid - embed)
    a.alone_ms += alone
    best = best_positions([i.parent_id for i in trace.selected])  # each parent at its best rank
    ranked = [trace.selected[i].parent_id for i in best]
    a.finals[q.id] = ranked
    a.tiers.append(trace.tier)
    a.costs.append(trace.costs)
    for stage, ms in trace.timings_ms.items():
        if isinstance(ms, (int, float)):
            a.stages.setdefault(stage, []).append(ms)
    a.rows.append(_row(q, trace, plan.settings, ranked, [trace.selected[i].score for i in best], evidence_cut))


def _row(q: Question, trace: Trace, settings: Settings, ranked: list[str], ranked_scores: list[float],
         evidence_cut: bool) -> dict[str, Any]:
    """The report row of one question under one config (``ranked``: the parent ranking the metrics read, and
    ``ranked_scores`` the score of each parent's best chunk)."""
    wanted = set(q.relevant) | set(q.graded or ())
    layer, stage = diagnose(q, trace, settings.dedup, settings.top_k)
    return {
        "id": q.id, "group": q.group, "split": split_of(q.id), "question": q.question,
        "relevant": list(q.relevant), "final": [f.parent_id for f in trace.gated], "ranked": ranked,
        "scores": [round(x, 6) for x in ranked_scores],
        "first_relevant_rank": next((i for i, p in enumerate(ranked, start=1) if p in set(q.relevant)), None),
        "abstained": trace.answer.abstained, "context": trace.context_chunk_ids,
        "citations": trace.answer.citations, "answer": trace.answer.text[:500],
        "answer_span": answer_holds_span(trace.answer.text, q.answers) if q.relevant else None,
        "tier": trace.tier, "layer": layer, "stage": stage, "evidence_cut": evidence_cut,
        "candidates": {"bm25": [i.parent_id for i in trace.lexical.items],
                       "dense": [i.parent_id for i in trace.dense.items]},
        "relevant_ranks": {"bm25": first_ranks(trace.lexical.items, wanted),
                           "dense": first_ranks(trace.dense.items, wanted),
                           "fused": first_ranks(trace.fused.items, wanted),
                           "reranked": first_ranks(trace.reranked.items, wanted)},
        "latency_ms": trace.timings_ms.get("total"),
        "judged": _judged(ranked, wanted, settings.top_k)}


def _judged(ranked: list[str], judged: set[str], k: int) -> dict[str, Any]:
    """judged@k of one question's parent ranking (:func:`~.metrics.judged_share`) and its unjudged parents."""
    share, unjudged = judged_share(ranked, judged, k)
    return {"k": k, "share": None if share is None else round(share, 4), "unjudged": unjudged}


def _entry(plan: _Plan, a: _Acc, per_q: Mapping[str, Mapping[str, float]], names: list[str],
           split: str) -> dict[str, Any]:
    """A config's report entry: tier, metrics overall / per group / per split, diagnosis, timings, cost."""
    for row in a.rows:
        row["metrics"] = per_q.get(row["id"])
    rows, settings, config = a.rows, plan.settings, plan.config
    groups = sorted({r["group"] for r in rows})
    tier_counts = {t: a.tiers.count(t) for t in dict.fromkeys(a.tiers)}
    entry = {
        "tier": max(tier_counts, key=tier_counts.__getitem__),
        "tiers": tier_counts,
        "settings": {k: v for k, v in settings.public_dict().items() if k in config.overrides or k == "top_k"},
        "overall": aggregate(rows, per_q, names),
        "groups": {g: aggregate([r for r in rows if r["group"] == g], per_q, names) for g in groups},
        "diagnosis": layer_counts(rows),
        "timings_ms": {"wall_total": round(a.ms, 1), "standalone_estimate": round(a.alone_ms, 1),
                       **{f"{s}_p50": percentile(v, 0.5) for s, v in a.stages.items()},
                       **{f"{s}_p95": percentile(v, 0.95) for s, v in a.stages.items()}},
        "shared_lists": ({"hits": a.hits, "misses": a.misses, "saved_ms": round(a.saved_ms, 1)}
                         if plan.lists is not None else None),
        "cost": {"requests": len(rows),
                 "llm_calls": _sum_or_none(c.get("llm_calls") for c in a.costs),
                 "input_tokens": _sum_or_none(c.get("input_tokens") for c in a.costs),
                 "output_tokens": _sum_or_none(c.get("output_tokens") for c in a.costs),
                 "retrieval_calls": sum(c.get("retrieval_calls", 2 if settings.dense_enabled
                                              and settings.hybrid_enabled else 1) for c in a.costs)},
        "questions": rows,
    }
    if split == "all":
        entry["splits"] = {part: aggregate([r for r in rows if r["split"] == part], per_q, names)
                           for part in ("dev", "heldout")}
    return entry


def _imported_entry(run: ImportedRun, questions: Sequence[Question], rankings: Mapping[str, list[str]],
                    named: Mapping[str, Any], per_q: Mapping[str, Mapping[str, float]], names: list[str], split: str,
                    top_k: int) -> dict[str, Any]:
    """An imported run's report entry: the same figures as a config's where they apply (no tier, timings,
    cost or answer: the engine ran elsewhere)."""
    rows = []
    for q in questions:
        ranked = rankings.get(q.id) or []
        relevant = set(q.relevant)
        first = next((i for i, p in enumerate(ranked, start=1) if p in relevant), None)
        layer = ("ok" if not relevant or (first is not None and first <= top_k) else
                 "coverage" if first is None else "ordering")
        rows.append({"id": q.id, "group": q.group, "split": split_of(q.id), "question": q.question,
                     "relevant": list(q.relevant), "final": ranked[:top_k], "ranked": ranked, "scores": [],
                     "first_relevant_rank": first, "abstained": not ranked, "context": [], "citations": [],
                     "answer": "", "tier": "imported", "layer": layer,
                     "stage": None if layer == "ok" else ("candidates" if layer == "coverage" else "run"),
                     "evidence_cut": False, "candidates": {}, "relevant_ranks": {},
                     "latency_ms": None, "metrics": per_q.get(q.id),
                     "judged": _judged(ranked, relevant | set(q.graded or ()), top_k),
                     "not_in_corpus": named["not_in_corpus"].get(q.id, [])})
    groups = sorted({r["group"] for r in rows})
    entry = {"tier": "imported", "tiers": {"imported": len(rows)},
             "settings": {"run": run.source, "format": run.format},
             "imported": {"source": run.source, "format": run.format, **named},
             "overall": aggregate(rows, per_q, names),
             "groups": {g: aggregate([r for r in rows if r["group"] == g], per_q, names) for g in groups},
             "diagnosis": layer_counts(rows), "timings_ms": {}, "shared_lists": None,
             "cost": {"requests": 0, "llm_calls": None, "input_tokens": None, "output_tokens": None,
                      "retrieval_calls": 0},
             "questions": rows}
    if split == "all":
        entry["splits"] = {part: aggregate([r for r in rows if r["split"] == part], per_q, names)
                           for part in ("dev", "heldout")}
    return entry


def _sum_or_none(values: Any) -> int | None:
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def bench_factory(corpus: Any, progress: bool = True) -> Callable[[Settings], Any]:
    """A Workbench factory for :func:`evaluate_configs`: one Workbench per ``Settings.index_key()``."""

    cache: dict[tuple, Any] = {}

    def open_bench(settings: Settings) -> Any:
        key = settings.index_key()
        if key not in cache:
            bench = Workbench(settings, progress=progress)
            bench.load_corpus(corpus)
            cache[key] = bench
        return cache[key]

    return open_bench


class TqdmProgress:
    """A progress bar on stderr for :func:`evaluate_configs` (and the tuner, whose total shrinks as steps are
    skipped: the bar's total follows what it is told)."""

    def __init__(self, desc: str = "evaluating", postfix_width: int | None = None,
                 close_at_total: bool = True) -> None:
        self._bar: tqdm | None = None
        self._desc, self._width, self._close_at_total = desc, postfix_width, close_at_total

    def __call__(self, done: int, total: int, name: str) -> None:
        from tqdm import tqdm

        if self._bar is None:
            self._bar = tqdm(total=total, desc=self._desc, unit="question", file=sys.stderr)
        self._bar.total = max(total, done)
        self._bar.set_postfix_str(name if self._width is None else name[:self._width])
        # ``done`` is the count so far (a message with the same count moves nothing; a new phase that counts
        # from 1 again, as the ranker's held-out check after its tracing, starts the bar over)
        if done != self._bar.n:
            self._bar.update(done - self._bar.n)
        else:
            self._bar.refresh()
        if self._close_at_total and done == total:
            self._bar.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
