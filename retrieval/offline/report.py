"""Exports of an evaluation report (the dict :func:`retrieval.offline.evaluation.evaluate_configs` returns).

Pure functions returning text: the comparison as CSV and JSON, the per-question table as CSV, a TREC run
file per configuration (``qid Q0 docno rank score run``, the format ``trec_eval`` reads), and a Markdown
decision record written from the run's own figures. :func:`write_outputs` writes them all to a folder
(``eval --out DIR``); the evaluation page offers the same texts as downloads.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..core.errors import InvalidId
from ..core.markdown import code, md
from ..core.reasons import Reason, declare, put
from ..core.safecsv import csv_text
from ..core.paths import LAB_CORPUS
from .evaluation.compare import p_reason, p_text
from .evaluation.metrics import best_positions, headline as headline_metrics
from .judgments import trec_field_problem

_log = logging.getLogger(__name__)

#: Next hypothesis suggested by the layer where most failures of the chosen configuration sit.
NEXT_BY_LAYER = {
    "coverage:candidates": "coverage: the relevant document never reaches the candidates — try a query "
                           "transform (rewrite for abbreviations and codes, multi-query for interpretations) or "
                           "re-chunk the documents whose evidence is cut; reranking cannot help here",
    "ordering:fusion": "ordering at fusion: relevant candidates fall below the cut — try another rrf_k, "
                       "per-ranker weights (weighted_rrf) or a larger overfetch window",
    "ordering:reranker": "ordering at the reranker: it pushes relevant chunks out — try a cross-encoder, a larger "
                         "reranker_max_input, or no rerank for the affected group",
    "ordering:gate": "ordering at the gate: relevant chunks are refused by min_similarity — recalibrate the gate "
                     "on the dev split (python -m retrieval calibrate)",
    "generation:answer": "generation: the evidence is in the context but not cited — try another answer adapter "
                         "(an LLM) or fewer, better-ordered context chunks",
    "generation:abstained": "generation: the answer abstains although evidence was sent — recalibrate the gate",
    "generation:gate": "abstention: unanswerable questions get an answer — raise min_similarity (calibrate)",
}


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)






def _csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """The rows' ``columns`` as CSV (other keys left out, ``None`` empty), through
    :func:`retrieval.core.safecsv.csv_text`: an id or question text that a spreadsheet would run as a formula
    (``=HYPERLINK(…)``, ``@SUM(…)``) is written with ``'`` in front; numbers stay numbers."""
    return csv_text(columns, ([row.get(c) for c in columns] for row in rows))


def metric_names(report: Mapping[str, Any]) -> list[str]:
    """The metric keys of the report, in the order of the configs' ``overall`` (ranking metrics, then
    ``abstention_accuracy``)."""
    first = next(iter(report["configs"].values()))["overall"]
    return [m for m in first if "@" in m] + ["abstention_accuracy"]


def decisive_p(comparison: Mapping[str, Any]) -> float | None:
    """The p-value a decision reads: Holm's adjusted one where the run compared several candidates (a report
    before it has only ``p_value``)."""
    return comparison.get("p_holm", comparison.get("p_value"))


def significant(comparison: Mapping[str, Any]) -> bool:
    """Whether the decisive p-value (:func:`decisive_p`) is below 0.05 (``False`` when there is none)."""
    p = decisive_p(comparison)
    return p is not None and p < 0.05


def comparison_rows(report: Mapping[str, Any], split: str | None = None) -> list[dict[str, Any]]:
    """One row per (config, metric): the value, and against the baseline the delta, the p-value and Holm's
    adjusted one (over the candidates), whether that one is below 0.05, improved, worsened and lost-relevant
    counts. ``split`` reads ``dev`` / ``heldout`` figures of an ``all`` run."""
    comparisons = report["comparisons"] if split is None else (report.get("comparisons_by_split") or {}).get(split, [])
    by_key = {(c["candidate"], c["metric"]): c for c in comparisons}
    rows = []
    for name, cfg in report["configs"].items():
        values = cfg["overall"] if split is None else (cfg.get("splits") or {}).get(split, {})
        for metric in metric_names(report):
            c = by_key.get((name, metric))
            rows.append({"split": split or report["split"], "config": name, "tier": cfg["tier"], "metric": metric,
                         "value": values.get(metric),
                         "baseline": c["baseline"] if c else None, "delta": c["delta"] if c else None,
                         "p_value": c["p_value"] if c else None,
                         "p_holm": decisive_p(c) if c else None,
                         "significant": significant(c) if c else None,
                         "improved": len(c["improved"]) if c else None,
                         "worsened": len(c["worsened"]) if c else None,
                         "lost_relevant": len(c["lost_relevant"]) if c else None,
                         "wins_on_mean_but_lost_relevant": c["wins_on_mean_but_lost_relevant"] if c else None})
    return rows


COMPARISON_COLUMNS = ("split", "config", "tier", "metric", "value", "baseline", "delta", "p_value", "p_holm",
                      "significant",
                      "improved", "worsened", "lost_relevant", "wins_on_mean_but_lost_relevant")


def comparison_csv(report: Mapping[str, Any]) -> str:
    """The comparison table as CSV: the evaluated split, then ``dev`` and ``heldout`` when the run had both."""
    rows = comparison_rows(report)
    if report.get("comparisons_by_split"):
        for part in ("dev", "heldout"):
            rows += comparison_rows(report, part)
    return _csv(rows, COMPARISON_COLUMNS)


def comparison_json(report: Mapping[str, Any]) -> str:
    """The whole report as JSON (docs/contracts.md, "The evaluation report")."""
    return json.dumps(report, ensure_ascii=False, indent=2)


def question_rows(report: Mapping[str, Any], config: str) -> list[dict[str, Any]]:
    """The per-question table of one configuration: expected relevant parents, candidates from each
    generator with ranks, evidence sent to the answer, citations, the result and its layer."""
    cfg = report["configs"][config]
    kmax = report["k"][-1]
    rows = []
    for r in cfg["questions"]:
        ranks = r.get("relevant_ranks") or {}

        def ranked(side: str) -> str:
            found = ranks.get(side) or {}
            return " ".join(f"{p}@{found[p]}" for p in r["relevant"] if p in found) or "—"

        metrics = r.get("metrics") or {}
        rows.append({
            "id": r["id"], "group": r["group"], "split": r.get("split"), "question": r["question"],
            "relevant": " ".join(r["relevant"]) or "(none: abstain)",
            "bm25 ranks": ranked("bm25"), "dense ranks": ranked("dense"), "fused ranks": ranked("fused"),
            "reranked ranks": ranked("reranked"),
            "final (parents)": " ".join(r["ranked"]),
            "evidence sent": " ".join(r.get("context") or []),
            "citations": " ".join(r.get("citations") or []),
            "first relevant rank": r["first_relevant_rank"],
            f"ndcg@{kmax}": metrics.get(f"ndcg@{kmax}"),
            "abstained": r["abstained"],
            "result": "ok" if r["layer"] == "ok" else f"{r['layer']} ({r['stage']})",
            # "yes"/"no": the answer holds a labelled answer span (blank: the question has none)
            "answer holds a span": {True: "yes", False: "no"}.get(r.get("answer_span"), ""),
            "evidence cut": r.get("evidence_cut", False),
            # the top-k parents with no judgment for the question (nDCG reads them as not relevant)
            "unjudged": " ".join((r.get("judged") or {}).get("unjudged") or []),
        })
    return rows


def question_csv(report: Mapping[str, Any], config: str) -> str:
    rows = question_rows(report, config)
    return _csv(rows, list(rows[0]) if rows else ["id"])


def _run_name(name: str) -> str:
    return re.sub(r"[\s\x00-\x1f\x7f-\x9f]+", "_", name.strip()) or "run"


def _run_field(run: str, what: str, value: Any) -> str:
    value = str(value)
    problem = trec_field_problem(value)
    if problem is not None:
        raise InvalidId(f"TREC run {run}: the {what} {value!r} {problem}, which a run line ('qid Q0 docno rank "
                        "score run', whitespace-separated) cannot carry")
    return value


def trec_run(report: Mapping[str, Any], config: str) -> str:
    """A TREC run file of one configuration: ``qid Q0 docno rank score run`` per line, ranks from 1, the
    final parent list before the gate, each parent once at its best rank (the list the metrics read:
    :func:`~retrieval.offline.evaluation.metrics.parent_ranking`), scores as the pipeline gave them (reranked or fused;
    strictly decreasing scores are not guaranteed across ties).

    The run tag is the configuration's name with whitespace and control characters as ``_``. A question id or
    docno that is empty or holds whitespace or a control character would make a corrupt line: it raises
    :class:`~retrieval.core.errors.InvalidId` (one line naming the id) rather than being rewritten into another id;
    :func:`write_outputs` then skips this run alone and writes the other exports.
    """
    run = _run_name(config)
    lines = []
    for r in report["configs"][config]["questions"]:
        scores = r.get("scores") or []
        qid = _run_field(run, "question id", r["id"])
        best = best_positions(r["ranked"])  # already one per parent in a report of this version
        for rank, position in enumerate(best, start=1):
            doc = _run_field(run, "docno", r["ranked"][position])
            score = scores[position] if position < len(scores) else float(len(best) - rank + 1)
            lines.append(f"{qid} Q0 {doc} {rank} {score:.6f} {run}")
    return "\n".join(lines) + ("\n" if lines else "")


def _is_fixture(report: Mapping[str, Any]) -> bool:

    return str(report.get("corpus") or "") == str(LAB_CORPUS.resolve())


KEPT = declare("decision.kept", en="no candidate beats the baseline significantly on {metric} (p < 0.05) without "
               "losing on the held-out split", pt="nenhuma candidata supera a referência com significância em {metric} "
               "(p < 0,05) sem perder na parte reservada")
BEATS = declare("decision.beats", en="{metric} {delta:+.4f} over {baseline!c} ({p})",
                pt="{metric} {delta:+.4f} sobre {baseline!c} ({p})")
BEATS_HELD = declare("decision.beats_heldout", en="{metric} {delta:+.4f} over {baseline!c} ({p}); held-out "
                     "{held:+.4f} ({held_p})", pt="{metric} {delta:+.4f} sobre {baseline!c} ({p}); parte reservada "
                     "{held:+.4f} ({held_p})")


HOLM = declare("p.holm", en="{p}, Holm-adjusted over {n} candidates", pt="{p}, ajustado por Holm entre {n} candidatas")


def _p(report: Mapping[str, Any], comparison: Mapping[str, Any]) -> Reason:
    """The decisive p as a reason: saying it is Holm's adjusted one when there are several candidates."""
    n = len(report["configs"]) - 1
    shown = p_reason(decisive_p(comparison))
    return HOLM(p=shown, n=n) if n > 1 and "p_holm" in comparison else shown


def choose(report: Mapping[str, Any], metric: str | None = None,
           name: Callable[[str], str] = str) -> dict[str, Any]:
    """The provisional decision: the candidate with the largest positive delta on ``metric`` (default
    ``ndcg@K`` with the largest K) that is significant (p < 0.05) and does not lose on the held-out split
    (when the run has one); otherwise the baseline stays. ``why`` is the decision's reason in English (``name``
    writes the baseline's name into it: the decision record passes :func:`~retrieval.core.markdown.code`) and
    ``why_code`` the same as a code and parameters, for a page in its language."""
    metric = metric or f"ndcg@{report['k'][-1]}"
    rows = [c for c in report["comparisons"] if c["metric"] == metric]
    held = {c["candidate"]: c for c in (report.get("comparisons_by_split") or {}).get("heldout", [])
            if c["metric"] == metric}
    good = [c for c in rows if c["delta"] > 0 and significant(c)
            and (c["candidate"] not in held or held[c["candidate"]]["delta"] >= 0)]
    baseline = next(iter(report["configs"]))
    if not good:
        return put({"choice": baseline, "metric": metric}, "why", KEPT(metric=metric))
    best = max(good, key=lambda c: c["delta"])
    if best["candidate"] in held:
        other = held[best["candidate"]]
        why = BEATS_HELD(metric=metric, delta=best["delta"], baseline=baseline, p=_p(report, best),
                         held=other["delta"], held_p=_p(report, other))
    else:
        why = BEATS(metric=metric, delta=best["delta"], baseline=baseline, p=_p(report, best))
    decision = put({"choice": best["candidate"], "metric": metric}, "why", why)
    decision["why"] = why.text(quote=name) if name is not str else decision["why"]
    return decision


def _next_hypothesis(report: Mapping[str, Any], config: str) -> str:
    stages = report["configs"][config].get("diagnosis", {}).get("stages", {})
    cut = len((report.get("evidence_check") or {}).get("cut", []))
    if not stages:
        return "no failure left in this set: widen the question set (new groups, real questions) before changing the pipeline"
    top, count = max(stages.items(), key=lambda kv: kv[1])
    text = NEXT_BY_LAYER.get(top, f"{top}: inspect these questions one by one")
    note = f" ({count} questions fail at {top}"
    if cut:
        note += f"; {cut} gold spans are cut by the chunking"
    return text + note + ")."


def _cell(value: Any) -> str:
    """``value`` as a code span inside a Markdown table row: its pipes escaped (GFM splits a row at every
    unescaped pipe, code spans included, and reads ``\\|`` there as a pipe)."""
    return code(value).replace("|", "\\|")


def decision_record(report: Mapping[str, Any], title: str | None = None, now: datetime | None = None) -> str:
    """A Markdown decision record written from the run: baseline, hypothesis, intervention, observed effect
    (figures and p-values, per split and group), new failures, failure layers, cost and latency, the
    provisional decision, and the next hypothesis left untested.

    Every text the run did not write itself (configuration names, question and document ids, groups, the
    corpus path, the hypothesis, settings, tenants, gold spans) is escaped as the page escapes it
    (:mod:`retrieval.core.markdown`): names and ids as code spans, prose as literal text, so the record renders as
    written in any Markdown viewer (no image, link or HTML from an id such as ``![x](http://host/x.png)``).
    """
    configs = report["configs"]
    names = list(configs)
    baseline = names[0]
    kmax = report["k"][-1]
    headline = headline_metrics(kmax) + ["abstention_accuracy"]
    decision = choose(report, name=code)
    when = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    source = Path(str(report.get("corpus") or "corpus"))
    corpus_name = source.parent.name if source.stem in {"corpus", "queries"} else source.stem
    out = [f"# {md(title) if title else f'Decision record: retrieval configuration ({md(corpus_name)})'}",
           "",
           f"Status: provisional, generated from an evaluation run on {when}. Corpus {code(report.get('corpus'))}, "
           f"{report['questions']} questions, split {code(report['split'])}, "
           f"k = {', '.join(map(str, report['k']))}.",
           ""]
    if _is_fixture(report):
        out += ["> The lab corpus and questions are fictitious fixtures: these figures show the method and the "
                "runner, not a benchmark of real data.", ""]
    b = configs[baseline]
    out += ["## Baseline", "",
            f"{code(baseline)} (tier {code(b['tier'])}, settings {_settings(b['settings'])}): "
            + ", ".join(f"{m} {_fmt(b['overall'].get(m))}" for m in headline) + ".", ""]
    out += ["## Hypothesis (written before the run)", "",
            f"> {md(report['hypothesis'])}" if report.get("hypothesis") else "> none was recorded with this run.", ""]
    out += ["## Intervention", ""]
    for name in names[1:]:
        c = configs[name]
        out.append(f"- {code(name)} (tier {code(c['tier'])}): settings {_settings(c['settings'])}")
    if len(names) == 1:
        out.append("- none: a single configuration was evaluated.")
    by_key = {(c["candidate"], c["metric"]): c for c in report["comparisons"]}
    out += _observed_section(report, names, baseline, headline, by_key)
    out += _failures_section(names, headline, by_key, kmax)
    out += _layers_section(report, names)
    out += _cost_section(configs, names)
    out += ["## Decision", "",
            f"Provisional choice: **{code(decision['choice'])}** — {decision['why']}. It holds for this corpus, this "
            "question set and these settings only; adopt it where the cost above is acceptable.",
            "", "## Next hypothesis (not tested in this run)", "", f"- {_next_hypothesis(report, decision['choice'])}", ""]
    return "\n".join(out)


def _settings(settings: Any) -> str:
    """A configuration's settings as one code span of JSON (their values are the run's inputs)."""
    return code(json.dumps(settings, ensure_ascii=False))


def _observed_section(report: Mapping[str, Any], names: list[str], baseline: str, headline: list[str],
                      by_key: Mapping[tuple[str, str], Any]) -> list[str]:
    """The observed effect: the headline table with p-values, per split, the observations, per group."""
    configs = report["configs"]
    out: list[str] = []
    out += ["", "## Observed effect", "",
            f"Paired Fisher randomization test (ranx) against {code(baseline)}; p < 0.05 marked *.", "",
            "| config | " + " | ".join(headline) + " |", "|---" * (len(headline) + 1) + "|"]
    for name in names:
        cells = []
        for m in headline:
            value = _fmt(configs[name]["overall"].get(m))
            c = by_key.get((name, m))
            if c:
                star = "*" if c["p_value"] is not None and c["p_value"] < 0.05 else ""
                value += f" ({c['delta']:+.4f}, {p_text(c['p_value'])}{star})"
            cells.append(value)
        out.append(f"| {_cell(name)} | " + " | ".join(cells) + " |")
    if report.get("comparisons_by_split"):
        out += ["", f"Per split, {headline[0]} (delta against {code(baseline)}, p-value):", "",
                "| config | dev | held-out |", "|---|---|---|"]
        for name in names:
            cells = []
            for part in ("dev", "heldout"):
                value = _fmt((configs[name].get("splits") or {}).get(part, {}).get(headline[0]))
                c = next((x for x in report["comparisons_by_split"].get(part, [])
                          if x["candidate"] == name and x["metric"] == headline[0]), None)
                if c:
                    value += f" ({c['delta']:+.4f}, {p_text(c['p_value'])})"
                cells.append(value)
            out.append(f"| {_cell(name)} | " + " | ".join(cells) + " |")
    if report.get("observed"):
        out += ["", "Observed, beside the hypothesis:", ""] + [f"- {md(line)}" for line in report["observed"]]
    groups = sorted({g for c in configs.values() for g in c["groups"]})
    if len(names) > 1 and groups:
        out += ["", f"By group ({headline[0]} delta against {code(baseline)}; improved / worsened questions):", "",
                "| config | " + " | ".join(md(g) for g in groups) + " |", "|---" * (len(groups) + 1) + "|"]
        for name in names[1:]:
            c = by_key.get((name, headline[0]))
            if not c:
                continue
            cells = []
            for g in groups:
                bg = c["by_group"].get(g)
                cells.append("—" if not bg else f"{bg['delta']:+.4f} ({len(bg['improved'])}/{len(bg['worsened'])})")
            out.append(f"| {_cell(name)} | " + " | ".join(cells) + " |")
    return out


def _failures_section(names: list[str], headline: list[str], by_key: Mapping[tuple[str, str], Any],
                      kmax: int) -> list[str]:
    """New failures against the baseline: worsened questions and lost relevant documents."""
    out: list[str] = []
    out += ["", "## New failures", ""]
    any_failure = False
    for name in names[1:]:
        c = by_key.get((name, headline[0]))
        if not c:
            continue
        if c["worsened"]:
            any_failure = True
            shown = ", ".join(code(q) for q in c["worsened"][:15]) + (" …" if len(c["worsened"]) > 15 else "")
            out.append(f"- {code(name)} worsened {len(c['worsened'])} questions on {headline[0]}: {shown}")
        if c["lost_relevant"]:
            any_failure = True
            shown = "; ".join(f"{code(x['id'])} lost {', '.join(map(code, x['lost']))}" for x in c["lost_relevant"][:10])
            flag = " — **wins on the mean but loses evidence the baseline found**" if c["wins_on_mean_but_lost_relevant"] else ""
            out.append(f"- {code(name)} lost a relevant document the baseline had in its top {kmax} in "
                       f"{len(c['lost_relevant'])} questions{flag}: {shown}" + (" …" if len(c["lost_relevant"]) > 10 else ""))
    if not any_failure:
        out.append("- none against the baseline.")
    return out


#: How each kind of :func:`retrieval.offline.evaluation.diagnose.question_problems` reads in a caveat.
PROBLEM_LABELS = {"tenant_not_in_corpus": "tenant not in the corpus",
                  "relevant_not_in_corpus": "relevant id not in the corpus",
                  "relevant_in_other_tenant": "relevant document in another tenant"}


def _problem_entry(kind: str, entry: Mapping[str, Any]) -> str:
    if kind == "tenant_not_in_corpus":
        return f"{entry['id']} ({entry['tenant']!r})"
    if kind == "relevant_not_in_corpus":
        return f"{entry['id']} ({', '.join(entry['relevant'])})"
    return f"{entry['id']} (" + ", ".join(f"{d} in {t!r}" for d, t in entry["relevant"].items()) + ")"


def problem_lines(report: Mapping[str, Any], shown: int = 10) -> list[str]:
    """The caveat of the questions with problems: a count, then one line per kind with the question ids
    (the first ``shown``); no line when there is none."""
    problems = report.get("question_problems") or {}
    labels = report.get("labels") or {}
    resolved = []
    if labels.get("chunk_ids"):
        resolved.append(f"relevant ids naming chunks, read as their parents: {len(labels['chunk_ids'])} "
                        + "; ".join(f"{e['id']}: {e['named']} → {e['parent']}" for e in labels["chunk_ids"][:shown]))
    if labels.get("bad_spans"):
        resolved.append(f"evidence spans not scored: {len(labels['bad_spans'])} "
                        + "; ".join(f"{e['id']}: {e['parent']}[{e['start']}:{e['end']}] {e['why']}"
                                    for e in labels["bad_spans"][:shown]))
    if not problems.get("questions"):
        return resolved
    lines = resolved + [f"questions with problems: {problems['questions']} (scored as labeled; no configuration can find "
             "their relevant documents, so each counts 0 there)"]
    for kind, label in PROBLEM_LABELS.items():
        entries = problems.get(kind) or []
        if entries:
            more = f" and {len(entries) - shown} more" if len(entries) > shown else ""
            lines.append(f"  {label}: {len(entries)}: "
                         + "; ".join(_problem_entry(kind, e) for e in entries[:shown]) + more)
    return lines


def _layers_section(report: Mapping[str, Any], names: list[str]) -> list[str]:
    """Failure layers per config and the evidence check."""
    configs = report["configs"]
    out: list[str] = []
    out += ["", "## Failure layers", "", "| config | ok | coverage | ordering | generation | stages | "
            "answers holding a labelled span |", "|---|---|---|---|---|---|---|"]
    for name in names:
        d = configs[name].get("diagnosis") or {}
        o = d.get("overall", {})
        stages = ", ".join(f"{k} {v}" for k, v in (d.get("stages") or {}).items()) or "—"
        spans = d.get("answer_spans") or {}
        held = f"{spans['held']} of {spans['checked']}" if spans.get("checked") else "—"
        out.append(f"| {_cell(name)} | {o.get('ok', '—')} | {o.get('coverage', '—')} | {o.get('ordering', '—')} | "
                   f"{o.get('generation', '—')} | {stages} | {held} |")
    out.append("")
    out.append("A generation failure at stage `span` cites a relevant chunk with an answer that holds none of the "
               "question's labelled spans (compared case- and accent-folded, numbers without thousands separators).")
    ev = report.get("evidence_check")
    if ev:
        out += ["", f"Evidence check: {ev['checked']} gold spans of {ev['questions']} questions; {ev['whole']} "
                f"survive whole in a subchunk, {len(ev['cut'])} are cut by the chunking (coverage failures no "
                f"search can fix), {len(ev['not_in_parent'])} are not in the relevant parent."]
        for c in ev["cut"][:10]:
            out.append(f"- cut: {code(c['id'])} in {code(c['parent'])}: “{md(c['span'][:120])}”")
    problems = problem_lines(report)
    if problems:
        out += ["", problems[0][0].upper() + problems[0][1:] + ":"] + [f"- {md(line.strip())}" for line in problems[1:]]
    return out


def _cost_section(configs: Mapping[str, Any], names: list[str]) -> list[str]:
    """Cost and latency per config, and how to read them."""
    out: list[str] = []
    out += ["", "## Cost and latency", "",
            "| config | wall time (s) | alone, estimated (s) | per question p50 / p95 (ms) | rerank p50 (ms) | "
            "LLM calls | tokens in / out | generator lists reused (saved s) |", "|---|---|---|---|---|---|---|---|"]
    for name in names:
        c = configs[name]
        t = c["timings_ms"]
        cost = c.get("cost") or {}
        shared = c.get("shared_lists")
        reuse = "—" if not shared else f"{int(shared['hits'])} ({shared['saved_ms'] / 1000:.1f})"
        alone = t.get("standalone_estimate")
        wall = "—" if t.get("wall_total") is None else f"{t['wall_total'] / 1000:.1f}"  # an imported run: none
        out.append(f"| {_cell(name)} | {wall} | {'—' if alone is None else f'{alone / 1000:.1f}'} | "
                   f"{_fmt(t.get('total_p50'), 1)} / "
                   f"{_fmt(t.get('total_p95'), 1)} | {_fmt(t.get('rerank_p50'), 1)} | {_fmt(cost.get('llm_calls'))} | "
                   f"{_fmt(cost.get('input_tokens'))} / {_fmt(cost.get('output_tokens'))} | {reuse} |")
    out += ["", "Wall time is the time spent in each configuration's requests (the configurations answer each "
            "question in turn). Configurations after the first reuse the query vector and the generator lists "
            "already computed for the same question, so \"alone, estimated\" adds back the time they saved. "
            "Costs of external services that were not called are 0; a cost that was not measured is shown as —."
            ""]
    return out


def export_texts(report: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The texts of :func:`write_outputs`, by file name, and one line per export that cannot be made.

    An export that cannot carry what the run holds (a TREC run, whose lines are whitespace-separated, and a
    document or question id with a space: :class:`~retrieval.core.errors.InvalidId`) is left out, named with its
    reason in one line; every other export is made. ``report.json`` then records those lines under
    ``exports_skipped``, so the folder says what it lacks.
    """
    makers: dict[str, Callable[[], str]] = {"comparison.csv": lambda: comparison_csv(report)}
    for name in report["configs"]:
        safe = re.sub(r"[^0-9A-Za-z_.+-]+", "_", name)
        makers[f"questions-{safe}.csv"] = partial(question_csv, report, name)
        makers[f"{safe}.run"] = partial(trec_run, report, name)
    makers["decision.md"] = lambda: decision_record(report)
    texts: dict[str, str] = {}
    skipped: list[str] = []
    for file_name, make in makers.items():
        try:
            texts[file_name] = make()
        except InvalidId as exc:
            skipped.append(f"{file_name} skipped: {exc}")
    whole = {**report, "exports_skipped": skipped} if skipped else report
    return {"report.json": comparison_json(whole), **texts}, skipped


def write_outputs(report: Mapping[str, Any], out_dir: str | Path,
                  on_skip: Callable[[str], None] | None = None) -> list[Path]:
    """Write ``report.json``, ``comparison.csv``, ``questions-<config>.csv``, ``<config>.run`` (TREC) and
    ``decision.md`` into ``out_dir`` (created). Returns the paths written.

    An export that cannot be made (a TREC run of an id holding a space: :func:`export_texts`) is skipped and
    the others are written; each skip is one line, given to ``on_skip`` (default: a warning in the log, which the
    command line prints on stderr) and kept in ``report.json``'s ``exports_skipped``. Every text is made before
    the first file is written.
    """
    texts, skipped = export_texts(report)
    for line in skipped:
        (on_skip or _log.warning)(line)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
