"""The decision first: the provisional choice and its evidence, the caveats (a fictitious set, a default the run
does not support, a candidate that wins on the mean but loses a relevant document), where the run's time went,
and the decision record."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from retrieval.core.paths import LAB_CORPUS
from retrieval.offline import report as rep
from retrieval.stages.rerank import KINDS, RerankerSpec

from ..escape import code, md
from ..format import num
from ..i18n import t
from ..reasons import recorded
from ..widgets import table
from .page import Evaluated


def default_config(base_reranker: str, hybrid: bool) -> str:
    """The named configuration the app's default settings are: ``dense`` without hybrid, else its reranker kind's
    own (``hybrid+ltr``), ``hybrid`` without a reranker, else ``hybrid+rerank``."""
    if not hybrid:
        return "dense"
    spec = RerankerSpec.parse(base_reranker)
    if not spec.configured:
        return "hybrid"
    evaluation = KINDS.get(spec.kind).evaluation
    return evaluation[0] if evaluation else "hybrid+rerank"


def panel(run: Evaluated) -> None:
    lang, report, configs = run.lang, run.report, run.report["configs"]
    st.subheader(t("ev_decision", lang))
    decision = rep.choose(report)
    st.success(t("ev_choice", lang, choice=md(decision["choice"]), why=recorded(decision, "why", lang)))
    evidence = [r for r in rep.comparison_rows(report, None) if r["metric"] == decision["metric"]]
    if evidence:
        table(pd.DataFrame(evidence).dropna(axis=1, how="all"), lang)
    caveats = []
    if str(report.get("corpus")) == str(LAB_CORPUS.resolve()):
        caveats.append(t("ev_fictitious", lang))
    base = run.page.base
    default_mode = default_config(base.reranker_model, base.hybrid_enabled)
    if decision["choice"] != default_mode and default_mode in configs:
        caveats.append(t("ev_default_caveat", lang, default=code(default_mode), choice=code(decision["choice"]),
                         metric=decision["metric"], n=report["questions"]))
    by_candidate: dict[str, list] = {}
    for c in report["comparisons"]:
        if c["wins_on_mean_but_lost_relevant"]:
            by_candidate.setdefault(c["candidate"], []).append(c)
    for candidate, found in by_candidate.items():  # one warning per finding, not one per metric
        lost = {x["id"]: x["lost"] for c in found for x in c["lost_relevant"]}
        caveats.append(t("ev_lost_caveat", lang, candidate=code(candidate),
                         metrics=", ".join(c["metric"] for c in found), n=len(lost))
                       + ", ".join(f"{md(q)} ({', '.join(map(md, v))})" for q, v in list(lost.items())[:8]))
    for name, cfg in configs.items():  # an imported run's ids the corpus does not hold: said, never silent
        named = cfg.get("imported")
        if named and (named["not_in_corpus"] or named["unanswered"]):
            caveats.append(t("ev_run_named", lang, name=code(name), questions=len(named["not_in_corpus"]),
                             ids=sum(len(v) for v in named["not_in_corpus"].values()),
                             unanswered=len(named["unanswered"])))
    for caveat in caveats:
        st.warning(caveat)
    phases = st.session_state.get("ev_phases")
    if phases:
        st.caption(t("ev_time_went", lang) + " · ".join(f"{t('ph_' + k, lang)} **{num(v, '.1f', lang)} s**"
                                                        for k, v in phases.items()))
    with st.expander(t("ev_record", lang)):
        # Its source, not rendered: it quotes question ids, document ids, groups and the hypothesis as written.
        st.code(rep.decision_record(report), language="markdown", wrap_lines=True)
    st.caption(t("ev_run_line", lang, corpus=code(str(report["corpus"])), n=report["questions"],
                 split=code(report["split"]), k=", ".join(map(str, report["k"])), kmax=run.kmax))
