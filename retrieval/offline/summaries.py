"""The plain-text summaries of offline work the command line prints: an evaluation report (metrics per
configuration and group, comparisons, failure layers, problems), the release gate's verdicts, the gate's
calibration, a tuning run, a learned ranker, a trained judge and the raters' agreement.

Each function returns the text (lines joined by line feeds, nothing when there is nothing to say); the command
line echoes it as it is, control characters escaped (``retrieval.cli``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from . import learn
from .evaluation.compare import p_text
from .evaluation.metrics import brief
from .report import problem_lines


def evaluation(report: Mapping[str, Any], split: str) -> str:
    """The evaluation report as text (``eval``): metrics per config and group, comparisons, layers, evidence
    check, the questions with problems (labels no configuration can satisfy), and what an imported run lacks."""
    lines: list[str] = []
    kmax = report["k"][-1]
    short = brief(kmax)  # recall also at the smallest k (one --k: recall@k once)
    cols = list(dict.fromkeys([short[0], f"recall@{report['k'][0]}", *short[1:], "abstention_accuracy"]))
    if report.get("tuned"):
        lines.append(f"settings: {report['tuned']} (every configuration starts from it)")
    lines.append(f"{report['questions']} questions, split {split}\n")
    lines.append(f"{'config':<16} {'tier':<13} " + " ".join(f"{c:>20}" for c in cols))
    for name, cfg in report["configs"].items():
        vals = [cfg["overall"].get(c) for c in cols]
        lines.append(f"{name:<16} {cfg['tier']:<13} "
                     + " ".join(f"{'—' if v is None else f'{v:.4f}':>20}" for v in vals))
    for name, cfg in report["configs"].items():
        lines.append(f"\n{name} by group:")
        for group, vals in cfg["groups"].items():
            lines.append(f"  {group:<14} "
                         + " ".join(f"{c}={'—' if vals.get(c) is None else round(vals[c], 4)}" for c in cols))
    for c in report["comparisons"]:
        if c["metric"] == f"ndcg@{kmax}":
            lines.append(f"\n{c['candidate']} vs {c['baseline']}: Δ{c['metric']} {c['delta']:+.4f} "
                         f"({p_text(c['p_value'])}"
                         + (f", Holm {p_text(c['p_holm'])}" if len(report["configs"]) > 2 and "p_holm" in c else "")
                         + "), "
                         f"improved {len(c['improved'])}, worsened {len(c['worsened'])}, "
                         f"lost a relevant document in {len(c['lost_relevant'])}"
                         + (" — wins on the mean but loses evidence the baseline found"
                            if c["wins_on_mean_but_lost_relevant"] else ""))
    lines.append("\nfailure layers (ok / coverage / ordering / generation) and wall time:")
    for name, cfg in report["configs"].items():
        d = cfg["diagnosis"]["overall"]
        t = cfg["timings_ms"]
        alone = t.get("standalone_estimate")
        wall = f"{t['wall_total'] / 1000:.1f} s" if "wall_total" in t else "imported run"
        spans = cfg["diagnosis"].get("answer_spans") or {}
        held = f"   answers holding a span {spans['held']}/{spans['checked']}" if spans.get("checked") else ""
        lines.append(f"  {name:<16} {d['ok']:>4} / {d['coverage']:>4} / {d['ordering']:>4} / {d['generation']:>4}   "
                     f"{wall}" + (f" (alone ≈ {alone / 1000:.1f} s)" if alone else "") + held)
    ev = report.get("evidence_check") or {}
    if ev:
        lines.append(f"\nevidence check: {ev['checked']} gold spans, {len(ev['cut'])} cut by the chunking, "
                     f"{len(ev['not_in_parent'])} not in the relevant parent")
    lines += problem_lines(report)
    lines += [f"observed: {line}" for line in report.get("observed") or []]
    if report.get("hypothesis"):
        lines.append(f"hypothesis: {report['hypothesis']}")
    for imported_name, cfg in report["configs"].items():
        named = cfg.get("imported")
        if named and (named["not_in_corpus"] or named["unanswered"] or named["not_in_set"]):
            lines.append(f"\nrun {imported_name}: {sum(map(len, named['not_in_corpus'].values()))} ids not in the "
                         f"corpus (in {len(named['not_in_corpus'])} questions), {len(named['unanswered'])} "
                         f"questions unanswered, {len(named['not_in_set'])} of its questions not in the set")
    return "\n".join(lines)


def gate(checks: Sequence[Any]) -> str:
    """The release gate's verdict per candidate (``eval --gate``): ``PASS`` or ``FAIL`` and the reason."""
    return "\n".join(("PASS " if c.passed else "FAIL ") + c.reason.text() for c in checks)


def calibration(result: Mapping[str, Any]) -> str:
    """The chosen cosine gate and the abstention accuracy per split (``calibrate``)."""
    lines = [f"min_similarity = {result['threshold']}  (set RETRIEVAL_MIN_SIMILARITY)"]
    for split in ("dev", "heldout"):
        r = result[split]
        lines.append(f"{split:<8} {r['questions']} questions, abstention accuracy {r['abstention_accuracy']}")
    return "\n".join(lines)


def tuning(record: Mapping[str, Any]) -> str:
    """What a tuning run searched, the best on dev, the held-out decision and the abstention check (``tune``)."""
    s = record["search"]
    lines = [f"searched {s['evaluated']} of {s['planned']} candidates on {record['questions']['dev']} dev questions "
             f"in {s['seconds']:.0f} s" + (" (stopped by the budget)" if s["stopped_by_budget"] else "")]
    best = record["best"]
    lines.append(f"best on dev: {best['name']} ({record['metric']} {best['dev'].get(record['metric'])})")
    lines.append(("recommended: " if record["recommended"] else "") + record["why"])
    abstention = record.get("abstention") or {}
    if abstention:
        lines.append(("abstention thresholds recommended: " if abstention.get("recommended") else "abstention: ")
                     + abstention["why"] + (f" ({', '.join(f'{k}={v}' for k, v in abstention['overrides'].items())})"
                                            if abstention.get("recommended") else ""))
    return "\n".join(lines)


def learned_ranker(record: Mapping[str, Any]) -> str:
    """The labels read, the held-out figures, the decision and the model folder (``tune --learn-ranker``)."""
    lines = [f"labels: {source} ({n} question{'s' if n != 1 else ''})" for source, n in record["sources"]]
    counts = record["labels"]
    lines.append(f"  {counts['questions']} questions in all ({counts['merged']} merged into a question an earlier "
                 f"file holds, {counts['outside']} left out: judged only on documents this corpus does not hold); "
                 f"{counts['train']} answerable in the training part, {counts['heldout']} held out")
    lines.append(learn.summary(record))
    if not record["recommended"]:
        lines.append(record["why"])
    lines.append(f"model folder: {record['folder']} (model_card.md says what it was trained on)")
    return "\n".join(lines)


def training(result: Any, target: Path) -> str:
    """The trained judge's time, folder and held-out figures per part (``train``;
    :class:`retrieval.offline.training.TrainResult`)."""
    lines = [f"trained in {result.seconds:.0f} s; wrote {target} (model_card.md holds the held-out metrics)"]
    for part, m in result.metrics.items():
        lines.append(f"  {part:<22} nDCG@10 rrf {m['ndcg@10']['rrf']} → ltr {m['ndcg@10']['ltr']}, lost "
                     f"{m['lost_relevant']}; support gate answered {m['support_gate']['answered_answerable']}, "
                     f"abstained {m['support_gate']['abstained_unanswerable']} / leave-out "
                     f"{m['support_gate']['abstained_leave_out']} "
                     f"(clean {m['support_gate']['abstained_leave_out_clean']})")
    return "\n".join(lines)


def agreement(result: Mapping[str, Any], shown: int = 20) -> str:
    """Cohen's kappa per pair of raters, Fleiss' kappa, and the first ``shown`` disagreements, widest gap first
    (``judgments agreement``; :func:`retrieval.offline.raters.agreement`)."""
    lines = [f"{len(result['raters'])} raters, {result['pairs']} graded pairs"]
    for c in result["cohen"]:
        lines.append(f"  Cohen's kappa {c['a']} / {c['b']}: {'n/a' if c['kappa'] is None else c['kappa']} "
                     f"over {c['pairs']} pairs")
    if result["fleiss"]:
        lines.append(f"  Fleiss' kappa over {result['fleiss']['pairs']} pairs every rater graded: "
                     f"{result['fleiss']['kappa']}")
    lines.append(f"{len(result['disagreements'])} pairs graded differently (widest gap first):")
    for d in result["disagreements"][:shown]:
        lines.append(f"  {d['qid']} {d['parent']}: " + ", ".join(f"{r} {g}" for r, g in d["grades"].items()))
    return "\n".join(lines)
