"""Tune the pipeline to a corpus from its own labels: a search on the dev split, one check on held-out.

The search is a deterministic coordinate search from the default (the base settings): one setting at a time,
in the order of :func:`dimensions`, each value tried with the others at the best found so far; a value is
kept only when it beats that best's dev nDCG@10 (ties keep what was there, so the default wins a tie). Every
candidate runs through :func:`~.runner.evaluate_configs` on the evaluation's fixed **dev** split (the split
by question id hash, :func:`~.configs.split_of`); candidates share the Workbench and its generator lists
(:class:`~retrieval.core.listcache.ListCache`) where their windows agree. The search stops when its time budget
would be exceeded by the next candidate, and says what it covered.

The best dev configuration is then run once on the **held-out** split beside the default, and compared with
the evaluation's own code (:func:`~.compare.compare`: paired Fisher randomization test, relevant documents
lost). :func:`decide` recommends it only when held-out nDCG@10 improves with p < 0.05 and no relevant document
the default found in its top 10 is lost; otherwise the default is kept and the decision says why.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlencode

from ..core.listcache import ListCache
from ..backends.chroma import VectorStore
from ..backends.vectors import index_variant
from ..core.types import Question
from ..stages.fusion import METHODS
from ..explain.links import ViewParams, canonical_reranker, params_to_query
from ..settings import Settings, bounds
from .evaluation.compare import p_text
from .evaluation.calibrate import calibrate_abstention
from .evaluation.configs import Config, select_split
from .evaluation.metrics import brief
from .evaluation.runner import evaluate_configs

#: The decision's significance level (paired Fisher randomization test on held-out nDCG@10).
ALPHA = 0.05
#: Fewer answerable dev questions than this and the search is refused (its choice would be chance).
MIN_DEV_QUESTIONS = 5

#: ``(done, total, candidate name)`` after each request of the search.
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Step:
    """One coordinate of the search: a name and the override sets it tries (each a dict of settings)."""

    name: str
    values: tuple[Mapping[str, Any], ...]


def dimensions(base: Settings, templates: bool = True) -> list[Step]:
    """The settings that change rankings, in the order the search visits them, each with the values it tries
    (the base's own value is the starting point, so it is not listed).

    Reranker on/off (``ltr`` vs ``none``), fusion (every declared method with the weights its declaration
    lists for the tuner, :attr:`~retrieval.stages.fusion.base.FusionMethod.tuned_weights`: RRF, weighted RRF
    either way, the convex combination at w = 0.3 / 0.5 / 0.7, ranx's CombMNZ, ISR, CombMAX and BordaFuse, the
    weighted sums over min-max, z-score and sum normalised scores, plain and weighted either way), ``rrf_k``, the generator window (``overfetch``), the rerank depth
    (``reranker_max_input``) and, with ``templates``, the passage template (index-level: one vector collection
    per template, built once when it does not exist yet, never re-embedded when it does).
    """
    steps = [
        Step("reranker", ({"reranker_model": "none"},) if base.reranker_model != "none" else ({"reranker_model": "ltr"},)),
        Step("fusion", tuple({"fusion": m.name, "fusion_weights": w} for m in METHODS for w in m.tuned_weights
                             if (m.name, w) != (base.fusion, base.fusion_weights))),
        Step("rrf_k", tuple({"rrf_k": k} for k in (10, 30, 100) if k != base.rrf_k)),
        Step("overfetch", tuple({"overfetch": n} for n in (2, 8, 16) if n != base.overfetch)),
        Step("reranker_max_input", tuple({"reranker_max_input": n} for n in (10, 20, 50)
                                          if n != base.reranker_max_input)),
    ]
    if templates:
        steps.append(Step("passage_template", tuple({"passage_template": t}
                                                    for t in ("title-newline", "title-period", "text")
                                                    if t != base.passage_template)))
    return steps


def applies(step: str, values: Mapping[str, Any], settings: Settings) -> bool:
    """Whether trying ``values`` can change any ranking under ``settings``: ``rrf_k`` only matters to an RRF
    fusion, the rerank depth only with a reranker on."""
    if step == "rrf_k":
        return settings.fusion in {"rrf", "weighted_rrf"}
    if step == "reranker_max_input":
        return settings.reranker_model != "none"
    return True


def overrides_of(settings: Settings, base: Settings, names: Sequence[str]) -> dict[str, Any]:
    """The settings among ``names`` where ``settings`` differs from ``base`` (the candidate's overrides)."""
    return {n: getattr(settings, n) for n in names if getattr(settings, n) != getattr(base, n)}


def name_of(overrides: Mapping[str, Any]) -> str:
    """A candidate's name: its overrides, ``default`` for none."""
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "default"


@dataclass
class Search:
    """What the search evaluated, in order (``candidates``), whether the budget stopped it, and its time."""

    candidates: list[dict[str, Any]] = field(default_factory=list)
    planned: int = 0
    stopped_by_budget: bool = False
    skipped: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: The whole search's time, estimated once the default ran (its time, plus each later candidate at the
    #: default's time less the work it shares).
    estimate_s: float | None = None


def search(open_bench: Callable[[Settings], Any], base: Settings, questions: Sequence[Question], *,
           budget_s: float, metric: str = "ndcg@10", ks: Sequence[int] = (1, 3, 5, 10), templates: bool = True,
           progress: Progress | None = None, clock: Callable[[], float] = time.monotonic,
           steps: Sequence[Step] | None = None, embed_s: Callable[[Settings], float] | None = None) -> Search:
    """The coordinate search on the dev split (see the module's docstring).

    Args:
        open_bench: a Workbench per index settings (:func:`~.runner.bench_factory`).
        base: the default; every candidate is ``base`` plus its overrides.
        budget_s: seconds the search may take; it stops before a candidate that would exceed them (estimated
            by the previous candidate's time; after the default, less the query vectors and generator windows
            the next candidates reuse) and records ``stopped_by_budget``. The default always runs.
        metric: the dev metric that orders candidates (``ndcg@10``).
        steps: the coordinates to search (default: :func:`dimensions`).
        embed_s: seconds a candidate's index would take to embed before it can run (0 where its vectors are
            stored; :func:`embedding_seconds`): counted in the whole search's estimate, and a candidate whose
            embedding does not fit the budget left is left out, said so in ``not_run``.

    Raises:
        ValueError: fewer than :data:`MIN_DEV_QUESTIONS` questions of the dev split have a relevant document.
    """
    dev = [q for q in select_split(questions, "dev") if q.relevant]
    if not dev:
        raise ValueError("no answerable question in the dev split: nothing to tune on")
    if len(dev) < MIN_DEV_QUESTIONS:
        raise ValueError(f"tuning needs at least {MIN_DEV_QUESTIONS} answerable questions in the dev split; this set "
                         f"has {len(dev)} (of {len(questions)} questions, about 70 % fall in dev): a search on so few "
                         "would choose by chance")
    steps = list(steps) if steps is not None else dimensions(base, templates)
    names = [n for s in steps for v in s.values for n in v]
    names = list(dict.fromkeys(names))
    result = Search(planned=1 + sum(len(s.values) for s in steps))
    started = clock()
    caches: dict[int, ListCache] = {}
    done = {"n": 0}
    n_dev = len(select_split(questions, "dev"))

    def report(_: int, __: int, name: str) -> None:
        done["n"] += 1
        if progress:
            progress(done["n"], result.planned * n_dev, name)

    def run(settings: Settings, step: str) -> dict[str, Any]:
        overrides = overrides_of(settings, base, names)
        t0 = clock()
        rep = evaluate_configs(open_bench, base, questions, [Config(name_of(overrides), overrides)], ks, "dev",
                               report, list_caches=caches)
        entry = next(iter(rep["configs"].values()))
        bench = open_bench(base.with_overrides(**overrides))
        sync = getattr(bench.state, "sync", None)
        record = {"name": name_of(overrides), "step": step, "overrides": overrides,
                  "dev": {k: entry["overall"].get(k) for k in entry["overall"]},
                  "ms_per_request": round(entry["timings_ms"]["standalone_estimate"] / max(1, rep["questions"]), 1),
                  "seconds": round(clock() - t0, 2)}
        # What later candidates on this index will not pay again: the query vectors and generator windows.
        shared = sum(entry["timings_ms"].get(f"{stage}_p50") or 0.0 for stage in ("embed_query", "lexical", "dense"))
        record["shared_s"] = round(shared * rep["questions"] / 1000, 2)
        if "passage_template" in overrides and sync is not None:
            record["embedded_chunks"] = sync.added + sync.updated  # 0: the template's collection existed
        result.candidates.append(record)
        return record

    def score(record: Mapping[str, Any]) -> float:
        value = record["dev"].get(metric)
        return float("-inf") if value is None else float(value)

    best = run(base, "default")
    current = base
    # The next candidate's time, estimated by the previous one's; after the default, without the work it shares.
    last = max(0.0, best["seconds"] - best["shared_s"])
    embedding = {json.dumps(v, sort_keys=True): embed_s(base.with_overrides(**v))
                 for step in steps if step.name == "passage_template" for v in step.values} if embed_s else {}
    result.estimate_s = round(best["seconds"] + (result.planned - 1) * last + sum(embedding.values()), 1)
    if progress:  # said before the rest runs: what the whole search would take
        progress(done["n"], result.planned * n_dev, f"estimated whole search: {result.estimate_s:.0f} s")
    seen = {json.dumps(best["overrides"], sort_keys=True)}
    for step in steps:
        for values in step.values:
            if not applies(step.name, values, current):
                result.skipped.append(f"{step.name} {name_of(values)}: cannot change a ranking with "
                                      f"{'fusion=' + current.fusion if step.name == 'rrf_k' else 'no reranker'}")
                result.planned -= 1
                continue
            candidate = current.with_overrides(**values)
            key = json.dumps(overrides_of(candidate, base, names), sort_keys=True)
            if key in seen:
                result.planned -= 1
                continue
            if result.stopped_by_budget or clock() - started + last > budget_s:
                result.stopped_by_budget = True
                result.not_run.append(f"{step.name}: {name_of(values)}")
                continue
            extra = embedding.get(json.dumps(dict(values), sort_keys=True), 0.0)
            if extra and clock() - started + last + extra > budget_s:   # the others may still fit: go on
                result.not_run.append(f"{step.name}: {name_of(values)} (its index must be embedded first, about "
                                      f"{extra:.0f} s: more than the budget leaves)")
                continue
            seen.add(key)
            record = run(candidate, step.name)
            last = max(0.0, record["seconds"] - extra) if extra else record["seconds"]
            if score(record) > score(best):
                best = record
        current = base.with_overrides(**best["overrides"])
    result.seconds = round(clock() - started, 1)
    return result


def embedding_seconds(open_bench: Callable[[Settings], Any], base: Settings, probe: int = 16,
                      clock: Callable[[], float] = time.perf_counter) -> Callable[[Settings], float]:
    """``settings → seconds`` its index would take to embed before a candidate can run: 0 where the store
    already holds every chunk under that passage template, else the corpus' chunks at the rate of the default's
    embedder, timed once on ``probe`` chunks of this corpus (a store that cannot say what it holds counts as
    needing all of them)."""
    bench = open_bench(base)
    state, embedder = bench.state, getattr(bench, "embedder", None)
    chunks = list(state.chunks)
    rate: dict[str, float] = {}

    def seconds_per_chunk(template: str) -> float:
        if "s" not in rate:
            sample = [c.passage(template) for c in chunks[:probe]] or ["passage: x"]
            assert embedder is not None  # cost() asks only where there is one
            t0 = clock()
            embedder.embed_passages(sample)
            rate["s"] = max(1e-6, (clock() - t0) / len(sample))
        return rate["s"]

    def cost(settings: Settings) -> float:
        if embedder is None or not chunks:
            return 0.0
        store = state.store
        if isinstance(store, VectorStore):
            variant = index_variant(settings.chunk_tokens, settings.chunk_overlap, settings.contextual,
                                    settings.passage_template)
            other = VectorStore(store.client, store.corpus_key, store.model_name, variant)
            try:
                if sum(col.count() for col in other.owned().values()) >= len(chunks):
                    return 0.0
            except Exception:  # noqa: BLE001 - an estimate: a store that cannot say counts as empty
                pass
        return round(len(chunks) * seconds_per_chunk(settings.passage_template), 1)

    return cost


def ranked(candidates: Sequence[Mapping[str, Any]], metric: str = "ndcg@10") -> list[Mapping[str, Any]]:
    """Candidates best first on the dev metric (ties: the one evaluated first, so the default wins a tie)."""
    return sorted(candidates, key=lambda c: -(c["dev"].get(metric) or 0.0))


def decide(row: Mapping[str, Any] | None, alpha: float = ALPHA) -> tuple[bool, str]:
    """Recommend the tuned configuration or keep the default, and say why.

    Args:
        row: the held-out comparison of the tuned configuration against the default on nDCG@10 (a row of
            :func:`~.compare.compare`: ``delta``, ``p_value``, ``lost_relevant``), or ``None`` when the default
            was itself the best on dev.

    Returns:
        ``(recommended, why)``: recommended only when ``delta > 0``, ``p_value < alpha`` and no relevant
        document is lost; ``why`` names every condition that failed.
    """

    if row is None:
        return False, "the default was the best configuration on dev: nothing to confirm on held-out"
    delta, p, lost = row["delta"], row["p_value"], row["lost_relevant"]
    metric = row.get("metric", "ndcg@10")
    reasons = []
    if delta <= 0:
        reasons.append(f"held-out {metric} does not improve ({delta:+.4f})")
    elif p is None or p >= alpha:
        reasons.append(f"held-out {metric} {delta:+.4f} is not significant ({p_text(p)}; needs p < {alpha})")
    if lost:
        ids = ", ".join(x["id"] for x in lost[:5]) + (" …" if len(lost) > 5 else "")
        reasons.append(f"it loses a relevant document the default had in its top {metric.rsplit('@', 1)[-1]} in "
                       f"{len(lost)} held-out question{'s' if len(lost) != 1 else ''} ({ids})")
    if reasons:
        return False, "default kept: " + "; ".join(reasons)
    return True, f"held-out {metric} {delta:+.4f} ({p_text(p)}), no relevant document lost"


def tune(open_bench: Callable[[Settings], Any], base: Settings, questions: Sequence[Question], *,
         budget_s: float = 300.0, metric: str = "ndcg@10", templates: bool = True,
         progress: Progress | None = None, clock: Callable[[], float] = time.monotonic,
         steps: Sequence[Step] | None = None) -> dict[str, Any]:
    """Search on dev, check the best once on held-out against the default, decide.

    Returns:
        The tuning record: ``search`` (candidates with their dev metrics and time per request, planned,
        stopped_by_budget, skipped, seconds), ``best`` (the best dev candidate), ``heldout`` (both
        configurations' held-out metrics and time per request, the comparison rows; ``None`` when the default
        was best on dev), ``recommended``, ``why`` and ``overrides`` (the recommended overrides, ``{}`` when
        the default is kept), ``questions`` (dev, held-out).

    Raises:
        ValueError: no answerable dev question, or no question in the held-out split.
    """
    embed_s = embedding_seconds(open_bench, base) if templates else None
    found = search(open_bench, base, questions, budget_s=budget_s, metric=metric, templates=templates,
                   progress=progress, clock=clock, steps=steps, embed_s=embed_s)
    best = ranked(found.candidates, metric)[0]
    heldout_qs = select_split(questions, "heldout")
    record: dict[str, Any] = {
        "metric": metric, "budget_s": budget_s,
        "questions": {"dev": len(select_split(questions, "dev")), "heldout": len(heldout_qs),
                      "all": len(questions)},
        "search": {"candidates": found.candidates, "evaluated": len(found.candidates), "planned": found.planned,
                   "stopped_by_budget": found.stopped_by_budget, "skipped": found.skipped,
                   "not_run_budget": found.not_run, "estimate_s": found.estimate_s,
                   "seconds": found.seconds},
        "best": best, "heldout": None}
    row = None
    if found.stopped_by_budget:  # a search the budget cut short concludes nothing, whatever it saw
        record.update(recommended=False, overrides={}, comparison=None, abstention=None,
                      why=(f"default kept: the budget of {budget_s:.0f} s covered {len(found.candidates)} of "
                           f"{found.planned} candidates; the whole search needs about {found.estimate_s:.0f} s"))
        return record
    if best["overrides"]:
        if not heldout_qs:
            raise ValueError("no question in the held-out split: the best dev configuration cannot be checked")
        t0 = clock()
        rep = evaluate_configs(open_bench, base, questions,
                               [Config("default", {}), Config("tuned", dict(best["overrides"]))],
                               split="heldout")
        row = next((r for r in rep["comparisons"] if r["metric"] == metric), None)
        record["heldout"] = {
            "configs": {name: {"overall": entry["overall"],
                               "ms_per_request": round(entry["timings_ms"]["standalone_estimate"]
                                                       / max(1, rep["questions"]), 1)}
                        for name, entry in rep["configs"].items()},
            "comparisons": rep["comparisons"], "seconds": round(clock() - t0, 1)}
    recommended, why = decide(row, ALPHA)
    if best["overrides"] and row is None:  # nothing to compare on: no answerable held-out question
        recommended, why = False, "default kept: no answerable question in the held-out split to check it on"
    record.update(recommended=recommended, why=why,
                  overrides=dict(best["overrides"]) if recommended else {},
                  comparison=row and {k: row[k] for k in ("delta", "p_value", "lost_relevant", "improved",
                                                          "worsened")})
    record["abstention"] = abstention_check(open_bench, base.with_overrides(**record["overrides"]), questions)
    return record


def abstention_check(open_bench: Callable[[Settings], Any], settings: Settings,
                     questions: Sequence[Question]) -> dict[str, Any]:
    """The corpus' abstention thresholds calibrated on dev and checked on held-out
    (:func:`~.evaluation.calibrate.calibrate_abstention`), or why not (a set without unanswerable questions in
    both splits: ``{"recommended": False, "why": …, "overrides": {}}``)."""
    try:
        return calibrate_abstention(open_bench, settings, questions)
    except ValueError as exc:
        return {"recommended": False, "why": f"not calibrated: {exc}", "overrides": {}}


def adoptable(record: Mapping[str, Any]) -> bool:
    """Whether the held-out checks recommend anything: the ranking's, the abstention thresholds', or both."""
    return bool(record.get("recommended") or (record.get("abstention") or {}).get("recommended"))


def adoption_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """What ``tune --adopt`` stores (:func:`retrieval.offline.tuned.adopt`): the overrides the held-out checks
    recommend and their justification (``heldout``: the ranking's; ``abstention``: the thresholds')."""
    abstention = record.get("abstention") or {}
    out: dict[str, Any] = {
        "overrides": {**(record["overrides"] if record["recommended"] else {}),
                      **(abstention.get("overrides") or {} if abstention.get("recommended") else {})},
        "questions": record["questions"]["all"],
        "dev": {"questions": record["questions"]["dev"], "candidates": record["search"]["evaluated"]},
        "adopted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if record["recommended"]:
        row = record["comparison"]
        out["heldout"] = {"metric": record["metric"], "delta": row["delta"], "p_value": row["p_value"],
                          "questions": record["questions"]["heldout"]}
    if abstention.get("recommended"):
        out["abstention"] = {"heldout": dict(abstention["heldout"]), "dev": dict(abstention["dev"])}
    return out


def _within(name: str, value: int) -> bool:
    low, high = bounds(name)
    return (low is None or value >= low) and (high is None or value <= high)


def app_query(overrides: Mapping[str, Any], base: Settings, corpus: str | None) -> tuple[str, list[str]]:
    """The app's URL query string for ``overrides`` (only what its links carry: over-fetch, rrf_k, reranker,
    the corpus), and the overrides a link cannot carry (set them with ``tune --adopt`` or the environment)."""
    from dataclasses import replace


    defaults = ViewParams(top_k=base.top_k, overfetch=base.overfetch, rrf_k=base.rrf_k,
                          reranker=canonical_reranker(base.reranker_model))
    values: dict[str, Any] = {}
    outside = []
    for name, value in overrides.items():
        if name in {"overfetch", "rrf_k"} and _within(name, int(value)):  # the settings' own bounds
            values[name] = int(value)
        elif name == "reranker_model" and value in {"ltr", "none"}:
            values["reranker"] = canonical_reranker(value)
        else:
            outside.append(f"{name}={value}")
    if corpus:
        values["corpus"] = corpus
    query = params_to_query(replace(defaults, **values), defaults)
    return urlencode(query, doseq=True), outside


def markdown(record: Mapping[str, Any], corpus: str, questions: str, top: int = 8) -> str:
    """The tuning report: the search's size and time, the top dev candidates, the held-out comparison with
    time per request, and the decision."""

    metric = record["metric"]
    s = record["search"]
    lines = [f"# Tuning: {corpus}", "",
             f"Questions: {questions} ({record['questions']['dev']} dev, {record['questions']['heldout']} held-out; "
             "the evaluation's fixed split by question id).", "",
             f"Search: coordinate search from the default, {s['evaluated']} of {s['planned']} candidates evaluated "
             f"on dev in {s['seconds']:.0f} s (budget {record['budget_s']:.0f} s"
             + ("; **stopped by the budget**" if s["stopped_by_budget"] else "") + ").", ""]
    if s["not_run_budget"]:
        lines += [f"Left out by the budget ({len(s['not_run_budget'])}): " + "; ".join(s["not_run_budget"]), ""]
    if s["skipped"]:
        lines += ["Skipped (cannot change a ranking there): " + "; ".join(s["skipped"]), ""]
    cols = list(dict.fromkeys([metric, *brief(10)]))  # the tuning metric first, then the brief ones at 10
    lines += [f"## Top candidates on dev (by {metric})", "",
              "Time per request on dev is marginal: a candidate reuses the query vectors and generator windows of the "
              "candidates before it (the first, the default, paid them; a passage template loads its own index). "
              "The held-out table below times both configurations alike.", "",
              "| # | candidate | step | " + " | ".join(cols) + " | ms / request |",
              "| --- | --- | --- | " + " | ".join("---" for _ in cols) + " | --- |"]
    for i, c in enumerate(ranked(s["candidates"], metric)[:top], start=1):
        vals = " | ".join("—" if c["dev"].get(m) is None else f"{c['dev'][m]:.4f}" for m in cols)
        extra = f" (embedded {c['embedded_chunks']} chunks)" if c.get("embedded_chunks") else ""
        lines.append(f"| {i} | `{c['name']}`{extra} | {c['step']} | {vals} | {c['ms_per_request']:.0f} |")
    lines += ["", "## Held-out check", ""]
    held = record.get("heldout")
    if held is None:
        lines.append("Not run: the search did not finish within its budget." if s["stopped_by_budget"]
                     else "Not run: the default was the best configuration on dev.")
    else:
        lines += ["| config | " + " | ".join(cols) + " | ms / request |",
                  "| --- | " + " | ".join("---" for _ in cols) + " | --- |"]
        for name, entry in held["configs"].items():
            vals = " | ".join("—" if entry["overall"].get(m) is None else f"{entry['overall'][m]:.4f}" for m in cols)
            lines.append(f"| {name} | {vals} | {entry['ms_per_request']:.0f} |")
        row = record.get("comparison")
        if row:
            lines += ["", f"tuned vs default, {metric}: {row['delta']:+.4f} ({p_text(row['p_value'])}, paired Fisher "
                      f"randomization test), improved {len(row['improved'])}, worsened {len(row['worsened'])}, "
                      f"lost a relevant document in {len(row['lost_relevant'])}."]
    lines += ["", "## Decision", "",
              ("**Recommended**: " if record["recommended"] else "**Default kept**: ") + record["why"].removeprefix("default kept: ")
              + ".", ""]
    if record["recommended"]:
        lines.append("Overrides: `" + json.dumps(record["overrides"]) + "` (adopt with `tune --adopt`).")
    else:
        lines.append(f"Best on dev: `{record['best']['name']}` (not adopted).")
    ab = record.get("abstention")
    if ab:
        lines += ["", "## Abstention thresholds", ""]
        if "heldout" in ab:
            sup = ab.get("support") or {}
            lines += ["| | cosine gate | support threshold | dev accuracy | held-out accuracy |", "|---|---|---|---|---|",
                      f"| current | {ab['cosine']['current']:.4f} | {_num(sup.get('current'))} | "
                      f"{ab['dev']['current']:.4f} | {ab['heldout']['current']:.4f} |",
                      f"| calibrated on dev | {ab['cosine']['chosen']:.4f} | {_num(sup.get('chosen'))} | "
                      f"{ab['dev']['chosen']:.4f} | {ab['heldout']['chosen']:.4f} |", "",
                      f"Held-out ({ab['heldout']['questions']} questions): {ab['heldout']['gained']} gained, "
                      f"{ab['heldout']['lost']} lost (exact McNemar test, {p_text(ab['heldout']['p_value'])}).", ""]
        lines.append(("**Recommended**: " if ab["recommended"] else "**Kept**: ") + ab["why"] + "."
                     + (" Overrides: `" + json.dumps(ab["overrides"]) + "`." if ab["recommended"] else ""))
    return "\n".join(lines) + "\n"


def _num(value: Any) -> str:
    return "—" if value is None else f"{float(value):.4f}"


def write_outputs(record: Mapping[str, Any], out: Path, base: Settings, corpus: str, questions: str,
                  app_corpus: str | None) -> list[Path]:
    """``tune.json`` (the whole record), ``overrides.json`` (the recommended overrides, ``{}`` when the default is
    kept), ``configs.json`` (default and best dev candidate, an ``eval --config-file``), ``app-query.txt`` (the
    app's URL query string) and ``tune.md`` (the report) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    query, outside = app_query(record["overrides"], base, app_corpus)
    files = {
        "tune.json": json.dumps(record, ensure_ascii=False, indent=2, default=str),
        "overrides.json": json.dumps(record["overrides"], ensure_ascii=False, indent=2),
        "configs.json": json.dumps([{"name": "default", "settings": {}},
                                    {"name": "tuned", "settings": record["best"]["overrides"]}], indent=2),
        "app-query.txt": ("?" + query if query else "# the default: no URL parameter") + "\n"
                         + (f"# not in the URL (adopt them with tune --adopt): {', '.join(outside)}\n" if outside else ""),
        "tune.md": markdown(record, corpus, questions),
    }
    written = []
    for name, text in files.items():
        (out / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        written.append(out / name)
    return written
