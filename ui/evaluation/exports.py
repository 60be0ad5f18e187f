"""The exports of one evaluation: the comparison CSV, the report JSON, the decision record, the per-question CSV,
the report to hand over (HTML) and a TREC run per configuration."""

from __future__ import annotations

import streamlit as st

from retrieval.core.errors import InvalidId
from retrieval.offline import report as rep
from retrieval.offline import report_html

from ..escape import md
from ..i18n import t
from .page import Evaluated


def panel(run: Evaluated, question_config: str) -> None:
    lang, report = run.lang, run.report
    st.subheader(t("ev_exports", lang))
    e = st.columns(4)
    e[0].download_button(t("ex_comparison", lang), rep.comparison_csv(report), "comparison.csv", "text/csv",
                         on_click="ignore")
    e[1].download_button(t("ex_report", lang), rep.comparison_json(report), "report.json", "application/json",
                         on_click="ignore")
    e[2].download_button(t("ex_record", lang), rep.decision_record(report), "decision.md", "text/markdown",
                         on_click="ignore")
    e[3].download_button(t("ex_per_question", lang, config=question_config), rep.question_csv(report, question_config),
                         f"questions-{question_config}.csv", "text/csv", on_click="ignore")
    st.download_button(t("ex_html", lang), report_html.evaluation_report(report, lang), "evaluation-report.html",
                       "text/html", on_click="ignore", help=t("ex_html_help", lang), icon=":material/download:")
    runs = st.columns(max(1, len(run.names)))
    for col, name in zip(runs, run.names):
        try:
            text, why = rep.trec_run(report, name), None
        except InvalidId as exc:  # an id a run line cannot carry (a space): this run alone is not offered
            text, why = "", str(exc)
        col.download_button(t("ex_trec", lang, name=name), text, f"{name}.run", "text/plain", on_click="ignore",
                            disabled=why is not None, help=None if why is None else md(why))
