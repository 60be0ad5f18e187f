"""Which layer each failure belongs to (coverage, ordering, generation) by configuration and group, where the
misses are (a chart), and whether the gold spans survive the chunking."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from ..i18n import t
from ..widgets import table
from .page import Evaluated


def panel(run: Evaluated) -> None:
    lang, report, configs, names = run.lang, run.report, run.report["configs"], run.names
    st.subheader(t("ev_layers", lang))
    st.caption(t("ev_layers_caption", lang))
    layer_rows = []
    for name, cfg in configs.items():
        d = cfg["diagnosis"]
        spans = d.get("answer_spans") or {}
        held = f"{spans['held']} / {spans['checked']}" if spans.get("checked") else "—"
        layer_rows.append({"config": name, "group": t("ev_all_groups", lang), **d["overall"],
                           t("ev_spans_held", lang): held})
        for g, counts in d["groups"].items():
            layer_rows.append({"config": name, "group": g, **counts})
    table(pd.DataFrame(layer_rows), lang)
    stage_rows = [{"config": n, "where": k, "questions": v} for n, c in configs.items()
                  for k, v in c["diagnosis"]["stages"].items()]
    if stage_rows:
        st.altair_chart(alt.Chart(pd.DataFrame(stage_rows)).mark_bar().encode(
            x=alt.X("questions:Q", title=t("ev_axis_questions", lang)),
            y=alt.Y("config:N", title=t("ev_axis_config", lang)),
            # the legend under the bars and the element's height given (Streamlit's "content" height gave the
            # chart a few pixels: both configurations' bars in one flat row)
            color=alt.Color("where:N", title=t("ev_axis_layer", lang), legend=alt.Legend(orient="bottom", columns=3)),
            tooltip=["config", "where", "questions"]).properties(height=40 * len(names)),
            width="stretch", height=40 * len(names) + 140)
    ev = report.get("evidence_check") or {}
    st.subheader(t("ev_evidence", lang))
    st.caption(t("ev_evidence_caption", lang, checked=ev.get("checked", 0), questions=ev.get("questions", 0),
                 whole=ev.get("whole", 0), cut=len(ev.get("cut", [])), elsewhere=len(ev.get("not_in_parent", []))))
    if ev.get("cut") or ev.get("not_in_parent"):
        table(pd.DataFrame(ev.get("cut", []) + ev.get("not_in_parent", [])), lang)
