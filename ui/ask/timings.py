"""The "Timings, costs, downloads" tab: the developer's lines (the models and engines of the request, every
millisecond in a named stage, the costs) and the trace and list downloads."""

from __future__ import annotations

import json
from typing import Any, Mapping

import pandas as pd
import streamlit as st

from retrieval.backends.embedders import EMBEDDERS
from retrieval.explain import tables

from ..escape import code, md
from ..format import ms, stage
from ..i18n import t
from ..reasons import recorded
from ..widgets import table
from .page import Asked


def panel(asked: Asked) -> None:
    trace, lang = asked.trace, asked.lang
    models_line(trace, lang)
    timings_and_costs(trace, lang)
    st.markdown(f"**{t('downloads', lang)}**")
    columns = st.columns(5)
    columns[0].download_button(t("dl_trace", lang), json.dumps(trace, ensure_ascii=False, indent=2), "trace.json",
                               "application/json", on_click="ignore")
    for col, (name, text) in zip(columns[1:], tables.lists_csv(trace, asked.relevant, asked.graded).items()):
        col.download_button(f"{stage(name, lang)} (CSV)", text, f"{name}.csv", "text/csv", on_click="ignore")


def models_line(trace: Mapping[str, Any], lang: str = "en") -> None:
    """The answer adapter, then the models and engines of the request."""
    st.caption(f"{t('answered_by', lang)} {code(str((trace.get('answer') or {}).get('adapter')))}")
    m = trace.get("models") or {}
    reranker = m.get("reranker")
    if reranker:
        kind = m.get("reranker_kind") or t("not_loaded", lang)
        rr = f"{code(reranker)} ({md(kind)})"
        if m.get("reranker_status") and m.get("reranker_status") != "loaded":
            rr += f" — {recorded(m, 'reranker_status', lang)}"
    else:
        rr = t("off", lang)
    status = m.get("embedder_status")
    status = t("loaded", lang) if status == "loaded" else recorded(m, "embedder_status", lang)
    embedder = str(m.get("embedder"))
    if embedder in EMBEDDERS:
        embedder = f"{code(embedder)} — {md(EMBEDDERS.get(embedder).label(lang))}"
    else:
        embedder = code(embedder)
    st.caption(t("models_line", lang, embedder=embedder, status=status, reranker=rr,
                 bm25=code(str(m.get("bm25_engine"))), store=code(str(m.get("vector_store"))),
                 answer=code(str(m.get("answer_adapter")))))


def timings_and_costs(trace: Mapping[str, Any], lang: str = "en") -> None:
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
