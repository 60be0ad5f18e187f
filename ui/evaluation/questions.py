"""Per question: one configuration's results question by question (failures only on demand), the unjudged
parents of each, and the questions whose relevant document a candidate lost."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from retrieval.offline import report as rep

from ..escape import code, md
from ..i18n import t
from ..widgets import table
from .page import Evaluated


def panel(run: Evaluated) -> str:
    """Draw the table; returns the configuration it shows (the exports' per-question CSV follows it)."""
    lang, report, names, kmax = run.lang, run.report, run.names, run.kmax
    st.subheader(t("ev_per_question", lang))
    q1, q2 = st.columns([1, 3])
    config = q1.selectbox(t("ev_configuration", lang), names, index=len(names) - 1, key="ev_q_config")
    only_failures = q2.toggle(t("ev_failures_only", lang), key="ev_q_fail")
    rows = rep.question_rows(report, config)
    if only_failures:
        rows = [r for r in rows if r["result"] != "ok"]
    table(pd.DataFrame(rows), lang)
    st.caption(t("ev_unjudged_caption", lang, k=kmax))
    for c in report["comparisons"]:
        if c["metric"] == f"ndcg@{kmax}" and c["lost_relevant"]:
            st.caption(t("ev_lost_line", lang, candidate=code(c["candidate"]), baseline=code(c["baseline"]), k=kmax)
                       + "; ".join(f"{md(x['id'])} → {', '.join(map(md, x['lost']))}" for x in c["lost_relevant"]))
    return config
