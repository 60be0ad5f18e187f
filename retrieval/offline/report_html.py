"""The report to hand over of an evaluation: one self-contained HTML file of
:func:`retrieval.offline.evaluation.evaluate_configs`'s dict: the provisional decision
(:func:`retrieval.offline.report.choose`), its caveats, the metrics by configuration (judged@k beside nDCG@k), the
comparison against the baseline, and the per-question table of each configuration with its unjudged parents.

Opens offline: inline CSS, no script; charts are HTML bars; every value escaped (:mod:`retrieval.explain.html`)."""

from __future__ import annotations

from typing import Any, Mapping

from ..explain.html import esc, label, lang_of, num, page, table
from .evaluation.metrics import headline as headline_metrics
from .report import choose, comparison_rows


def evaluation_report(report: Mapping[str, Any], lang: str = "en") -> str:
    """A self-contained HTML report of an evaluation (:func:`retrieval.offline.evaluation.evaluate_configs`'s dict).

    Returns:
        The HTML document: the decision and its caveats, the metrics by configuration with judged@k beside
        nDCG@k (and as HTML bars), the comparison against the baseline, and each configuration's per-question
        table with its unjudged parents. No script; every value escaped.
    """
    lang = lang_of(lang)
    configs = report["configs"]
    kmax = report["k"][-1]
    ndcg, judged = f"ndcg@{kmax}", f"judged@{kmax}"
    decision = choose(report)
    parts = [f"<p class=\"muted\">{esc(label('run_line', lang, corpus=report.get('corpus'), n=report.get('questions'), split=report.get('split'), k=', '.join(map(str, report['k']))))}</p>",
             f"<h2>{esc(label('decision', lang))}</h2>",
             f"<p><b>{esc(label('choice', lang))}:</b> <code>{esc(decision['choice'])}</code> — {esc(decision['why'])}</p>"]
    caveats = _caveats(report, lang, kmax)
    if caveats:
        parts.append(f"<h3>{esc(label('caveats', lang))}</h3>" + "".join(f"<div class=\"warn\">{esc(c)}</div>"
                                                                       for c in caveats))
    if report.get("hypothesis"):
        parts.append(f"<h3>{esc(label('hypothesis', lang))}</h3><p>{esc(report['hypothesis'])}</p>")
    headline = headline_metrics(kmax) + ["abstention_accuracy"]
    headline.insert(headline.index(ndcg) + 1, judged)  # judged@k beside the nDCG@k it qualifies
    names = {judged: label("judged_name", lang, k=kmax)}
    parts.append(f"<h2>{esc(label('metrics', lang))}</h2>")
    parts.append(table([esc(label("config", lang)), esc(label("tier", lang))] + [esc(names.get(m, m)) for m in headline],
                        [[(f"<code>{esc(name)}</code>", False), (esc(cfg.get("tier")), False)]
                         + [(num(cfg["overall"].get(m)), True) for m in headline]
                         for name, cfg in configs.items()]))
    parts.append(f"<h3>{esc(label('chart', lang, k=kmax))}</h3>" + _bars(configs, ndcg, judged))
    rows = [r for r in comparison_rows(report, None) if r["metric"] in headline]
    if rows:
        keys = ("config", "metric", "value", "baseline", "delta", "p_value", "improved", "worsened", "lost_relevant")
        parts.append(f"<h2>{esc(label('comparison', lang))}</h2>")
        parts.append(table([esc(label(k, lang)) for k in keys],
                            [[(num(r.get(k)) if r.get(k) is not None else "—",
                               k in {"value", "delta", "p_value", "improved", "worsened", "lost_relevant"})
                              for k in keys] for r in rows]))
    for name, cfg in configs.items():
        parts.append(f"<h2>{esc(label('per_question', lang, c=name))}</h2>")
        body = []
        for q in cfg.get("questions") or []:
            unjudged = (q.get("judged") or {}).get("unjudged") or []
            ranked = " ".join(f"{esc(p)}?" if p in unjudged else esc(p) for p in (q.get("ranked") or [])[:kmax])
            result = "ok" if q.get("layer") == "ok" else f"{q.get('layer')} ({q.get('stage')})"
            body.append([(f"<code>{esc(q['id'])}</code>", False), (esc(q.get("group")), False),
                         (esc(q.get("question")), False), (esc(" ".join(q.get("relevant") or [])) or "—", False),
                         (ranked or "—", False), (num((q.get("metrics") or {}).get(ndcg)) or "—", True),
                         (esc(" ".join(unjudged)) or "—", False), (esc(result), False)])
        parts.append(table([esc(label(k, lang)) for k in ("id", "group", "question", "relevant", "ranked")]
                            + [esc(ndcg), esc(label("unjudged", lang, k=kmax)), esc(label("result", lang))], body))
    return page(label("evaluation_title", lang), lang, "".join(parts))


def _bars(configs: Mapping[str, Any], ndcg: str, judged: str) -> str:
    """nDCG@k and judged@k of each configuration as two HTML bars (width = value × 100 %)."""
    rows = []
    for name, cfg in configs.items():
        cells = [(f"<code>{esc(name)}</code>", False)]
        for metric, extra in ((ndcg, ""), (judged, " j")):
            value = cfg["overall"].get(metric)
            width = 0.0 if value is None else max(0.0, min(1.0, float(value))) * 100
            cells.append((f'<span class="bar{extra}" style="width:{width:.1f}px"></span> {num(value)}', False))
        rows.append(cells)
    return table(["", esc(ndcg), esc(judged)], rows).replace("<table>", '<table style="min-width:360px">', 1)


def _caveats(report: Mapping[str, Any], lang: str, kmax: int) -> list[str]:
    out = []
    if str(report.get("corpus") or "").replace("\\", "/").endswith("data/lab/corpus.jsonl"):
        out.append(label("caveat_lab", lang))
    lost: dict[str, tuple[set, set]] = {}
    for c in report.get("comparisons") or []:
        if c.get("wins_on_mean_but_lost_relevant"):
            metrics, ids = lost.setdefault(c["candidate"], (set(), set()))
            metrics.add(c["metric"])
            ids.update(x["id"] for x in c.get("lost_relevant") or [])
    for candidate, (metrics, ids) in lost.items():
        out.append(label("caveat_lost", lang, c=candidate, m=", ".join(sorted(metrics)), n=len(ids)))
    for name, cfg in report["configs"].items():
        value = cfg["overall"].get(f"judged@{kmax}")
        if value is not None and value < 0.8:
            out.append(label("caveat_judged", lang, k=kmax, c=name, v=f"{value:.2f}"))
    flawed = (report.get("question_problems") or {}).get("questions", 0)
    if flawed:
        out.append(label("caveat_problems", lang, n=flawed))
    if len(report["configs"]) > 1 and (report.get("questions") or 0) < 100:
        out.append(label("caveat_small", lang, n=report.get("questions")))
    return out
