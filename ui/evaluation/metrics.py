"""The figures: metrics by configuration (judged@k beside nDCG@k, wall time and per-request latency), the
comparison against the baseline per split, what was expected beside what was observed, two configurations
question by question, and the metrics by group with each candidate's gains. The metrics shown and offered are
the declared headline ones (:func:`retrieval.offline.evaluation.metrics.headline`); a picker's help says what
each measures."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from retrieval.explain import compare as cmp
from retrieval.offline import report as rep
from retrieval.offline.evaluation.metrics import describe, label

from ..escape import md, md_text
from ..format import num
from ..i18n import t
from ..reasons import reason
from ..widgets import table
from .page import Evaluated


def panel(run: Evaluated) -> None:
    lang, configs, kmax, headline = run.lang, run.report["configs"], run.kmax, run.headline
    st.subheader(t("ev_metrics", lang))
    summary = []
    for name, cfg in configs.items():
        timing = cfg["timings_ms"]
        summary.append({"config": name, "tier": cfg["tier"], **{m: cfg["overall"].get(m) for m in headline},
                        f"judged@{kmax}": cfg["overall"].get(f"judged@{kmax}"),
                        "wall time (s)": (round(timing["wall_total"] / 1000, 2)  # none for an imported run
                                          if timing.get("wall_total") is not None else None),
                        "alone, est. (s)": (round(timing["standalone_estimate"] / 1000, 2)
                                            if timing.get("standalone_estimate") else None),
                        "p50 / request (ms)": timing.get("total_p50"), "p95 / request (ms)": timing.get("total_p95"),
                        "LLM calls": (cfg.get("cost") or {}).get("llm_calls"),
                        "generator calls": (cfg.get("cost") or {}).get("retrieval_calls")})
    table(pd.DataFrame(summary).dropna(axis=1, how="all"), lang)
    st.caption(t("ev_metrics_caption", lang, k=kmax))
    comparison(run)
    two(run)
    by_group(run)


def _described(offered: list[str], lang: str) -> str:
    """A metric picker's help: each offered metric in words and what it measures, as its declaration says."""
    lines = [f"- **{label(m, lang)}** (`{m}`): {describe(m, lang)}" for m in offered if describe(m, lang)]
    if "abstention_accuracy" in offered:  # not a ranking metric: the run's own count, beside the declared ones
        lines.append(f"- **{t('ev_abstention_accuracy', lang)}** (`abstention_accuracy`): "
                     f"{t('ev_abstention_accuracy_help', lang)}")
    return "\n".join(lines)


def comparison(run: Evaluated) -> None:
    lang, report, headline = run.lang, run.report, run.headline
    st.subheader(t("ev_comparison", lang))
    splits = ["evaluated set"] + (["dev", "heldout"] if report.get("comparisons_by_split") else [])
    which = st.radio(t("ev_figures_of", lang), splits, horizontal=True, key="ev_cmp_split",
                     format_func=lambda v: t("ev_evaluated_set", lang) if v == "evaluated set"
                     else t(f"ev_split_{v}", lang))
    rows = rep.comparison_rows(report, None if which == "evaluated set" else which)
    frame = pd.DataFrame([r for r in rows if r["metric"] in headline])
    table(frame.dropna(axis=1, how="all") if not frame.empty else frame, lang)
    h1, h2 = st.columns(2)
    with h1:
        st.markdown(t("ev_expected", lang))
        st.markdown(md_text(report.get("hypothesis")) if report.get("hypothesis") else t("ev_no_expectation", lang))
    with h2:
        st.markdown(t("ev_observed", lang))
        lines = report.get("observed_codes") or report.get("observed") or []
        if not lines:
            st.markdown(t("ev_single", lang))
        for line in lines:
            st.markdown(reason(line, lang))


def two(run: Evaluated) -> None:
    lang, names = run.lang, run.names
    st.subheader(t("ev_two", lang))
    if len(names) < 2:
        st.caption(t("ev_two_need", lang))
        return
    x1, x2, x3 = st.columns(3)
    a = x1.selectbox("A", names, index=0, key="ev_two_a")
    b = x2.selectbox("B", names, index=len(names) - 1, key="ev_two_b")
    offered = [m for m in run.headline if m != "abstention_accuracy"]
    metric = x3.selectbox(t("ev_metric", lang), offered, key="ev_two_metric", help=_described(offered, lang))
    result = cmp.compare_report_configs(run.report, a, b, metric)
    st.markdown(t("ev_two_line", lang, metric=metric, a=md(a), b=md(b), ma=num(result["mean_a"] or 0, ".4f", lang),
                  mb=num(result["mean_b"] or 0, ".4f", lang), d=num(result["mean_delta"] or 0, "+.4f", lang),
                  improved=result["improved"], worsened=result["worsened"], tied=result["tied"]))
    table(pd.DataFrame(result["rows"]), lang)


def by_group(run: Evaluated) -> None:
    lang, report, configs, names = run.lang, run.report, run.report["configs"], run.names
    st.subheader(t("ev_by_group", lang))
    metric = st.selectbox(t("ev_metric", lang), run.headline, key="ev_group_metric",
                          help=_described(run.headline, lang))
    groups = sorted({g for c in configs.values() for g in c["groups"]})
    table(pd.DataFrame([{"group": g, **{n: configs[n]["groups"].get(g, {}).get(metric) for n in names}}
                        for g in groups]), lang)
    gains = []
    for c in report["comparisons"]:
        if c["metric"] == metric:
            for g, v in c["by_group"].items():
                gains.append({"candidate": c["candidate"], "group": g, "delta": v["delta"],
                              "improved": len(v["improved"]), "worsened": len(v["worsened"]),
                              "worsened ids": ", ".join(v["worsened"])})
    if gains:
        table(pd.DataFrame(gains), lang)
