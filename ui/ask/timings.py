"""The "Timings, costs, downloads" tab: the developer's lines (the models and engines of the request, every
millisecond in a named stage, the costs) and the trace and list downloads."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from retrieval.backends.embedders import EMBEDDERS
from retrieval.explain import tables
from retrieval.pipeline.view import TraceView

from ..escape import code, md
from ..format import ms, stage
from ..i18n import t
from ..reasons import reason
from ..widgets import table
from .page import Asked


def panel(asked: Asked) -> None:
    trace, lang = asked.trace, asked.lang
    models_line(trace, lang)
    timings_and_costs(trace, lang)
    st.markdown(f"**{t('downloads', lang)}**")
    columns = st.columns(5)
    columns[0].download_button(t("dl_trace", lang), json.dumps(trace.raw, ensure_ascii=False, indent=2), "trace.json",
                               "application/json", on_click="ignore")
    for col, (name, text) in zip(columns[1:], tables.lists_csv(trace, asked.relevant, asked.graded).items()):
        col.download_button(f"{stage(name, lang)} (CSV)", text, f"{name}.csv", "text/csv", on_click="ignore")


def models_line(trace: TraceView, lang: str = "en") -> None:
    """The answer adapter, then the models and engines of the request."""
    st.caption(f"{t('answered_by', lang)} {code(str(trace.answer.adapter))}")
    m = trace.models
    reranker = m.reranker
    if reranker:
        kind = m.reranker_kind or t("not_loaded", lang)
        rr = f"{code(reranker)} ({md(kind)})"
        if m.reranker_status.text and m.reranker_status.text != "loaded":
            rr += f" — {reason(m.reranker_status.value, lang)}"
    else:
        rr = t("off", lang)
    status = t("loaded", lang) if m.embedder_status.text == "loaded" else reason(m.embedder_status.value, lang)
    embedder = str(m.embedder)
    if embedder in EMBEDDERS:
        embedder = f"{code(embedder)} — {md(EMBEDDERS.get(embedder).label(lang))}"
    else:
        embedder = code(embedder)
    st.caption(t("models_line", lang, embedder=embedder, status=status, reranker=rr,
                 bm25=code(str(m.bm25_engine)), store=code(str(m.vector_store)),
                 answer=code(str(m.answer_adapter))))


def timings_and_costs(trace: TraceView, lang: str = "en") -> None:
    left, right = st.columns(2)
    with left:
        st.markdown(f"**{t('timings_per_stage', lang)}**")
        frame = pd.DataFrame([{"stage": t("outside_stages", lang) if r["stage"] == tables.UNATTRIBUTED
                               else r["stage"], "time": ms(r["ms"], lang)} for r in tables.timing_rows(trace)])
        table(frame, lang, dash=False)
    with right:
        st.markdown(f"**{t('costs', lang)}**")
        frame = pd.DataFrame([{"cost": r["cost"], "value": t("not_measured", lang) if r["value"] is None
                               else str(r["value"])} for r in tables.cost_rows(trace)])
        table(frame, lang, dash=False)
