"""The top-k sweep: how recall and redundancy of one configuration's final list move with k (k = 1…20)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from retrieval.offline.evaluation import select_split
from retrieval.offline.evaluation.sweep import run_sweep

from ..escape import md
from ..i18n import t
from .page import Evaluated, open_bench


def panel(run: Evaluated) -> None:
    ss, lang, report, configs = st.session_state, run.lang, run.report, run.report["configs"]
    st.subheader(t("ev_sweep", lang))
    st.caption(t("ev_sweep_caption", lang))
    s1, s2 = st.columns([1, 3])
    config = s1.selectbox(t("ev_configuration", lang), run.names, key="ev_sweep_config")
    if s2.button(t("ev_sweep_run", lang)):
        overrides = dict(configs[config]["settings"])
        overrides.pop("top_k", None)
        settings = run.base.with_overrides(**overrides)
        bench = open_bench(run.corpus)(settings)
        chosen = select_split(run.questions.values(), report["split"])
        with st.spinner(t("ev_sweeping", lang)):
            ss.ev_sweep = {"config": config, **run_sweep(bench, chosen, settings, 20)}
    sweep = ss.get("ev_sweep")
    if not sweep:
        return
    points = pd.DataFrame(sweep["points"]).melt(id_vars=["k"], value_vars=["recall", "redundancy"],
                                                var_name="measure", value_name="value")
    st.altair_chart(alt.Chart(points).mark_line(point=True).encode(
        x=alt.X("k:Q", title=t("ev_axis_topk", lang)),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=t("h_value", lang)),
        color="measure:N", tooltip=["k", "measure", "value"]), width="stretch")
    st.caption(t("ev_sweep_line", lang, config=md(sweep["config"]), n=sweep["questions"],
                 dup=md(str(sweep["near_duplicate"]))))
