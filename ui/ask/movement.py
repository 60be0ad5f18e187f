"""The "Movement and losses" tab: rank movement between the fused and the reranked list, and what the reranker
dropped from the fused top_k."""

from __future__ import annotations

from typing import Mapping, Sequence

import altair as alt
import pandas as pd
import streamlit as st

from retrieval.explain import tables
from retrieval.ingest.location import location_label
from retrieval.pipeline.view import TraceView

from ..escape import code, md
from ..format import num
from ..i18n import t
from ..reasons import reason
from ..widgets import chart, relevance_badge
from .page import Asked

STATUS_COLORS = {"fell out": "#d62728", "moved in": "#2ca02c", "stayed in": "#7f7f7f", "stayed out": "#c7c7c7"}


def panel(asked: Asked) -> None:
    left, right = st.columns([3, 2], gap="large")
    with left:
        movement_chart(asked.trace, asked.lang)
    with right:
        lost_table(asked.trace, asked.relevant, asked.graded, asked.lang)


def _why_not(trace: TraceView, lang: str) -> str:
    """Why nothing was reranked: the empty list's reason, without its lead when it is "no rerank ran"."""
    why = tables.empty_reason(trace, "reranked")
    inner = why.params.get("why") if why.code == "rerank.none_ran" else why
    return reason(inner, lang)


def movement_chart(trace: TraceView, lang: str = "en") -> None:
    st.subheader(t("rank_movement", lang))
    rows = tables.movement_rows(trace)
    if not rows:
        st.info(t("nothing_moved", lang) + _why_not(trace, lang))
        return
    data = pd.DataFrame(rows)
    stages = {name: t(f"stage_{name}", lang) for name in ("fused", "reranked")}
    statuses = {name: t("status_" + name.replace(" ", "_"), lang) for name in STATUS_COLORS}
    data["stage"] = data["stage"].map(lambda v: stages.get(v, v))
    data["status"] = data["status"].map(lambda v: statuses.get(v, v))
    top_k = trace.settings.top_k

    def lines_and_labels() -> alt.LayerChart:
        base = alt.Chart(data).encode(
            x=alt.X("stage:N", sort=list(stages.values()), title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("rank:Q", scale=alt.Scale(reverse=True, zero=False), title=t("axis_rank", lang)),
            color=alt.Color("status:N", scale=alt.Scale(domain=list(statuses.values()),
                                                        range=list(STATUS_COLORS.values())),
                            legend=alt.Legend(orient="top", title=None)),
            detail="chunk_id:N",
            tooltip=["chunk_id", "fused_rank", "reranked_rank", "final_rank", "status"],
        )
        lines = base.mark_line(point=True, strokeWidth=2)
        labels = base.transform_filter(alt.datum.stage == stages["reranked"]).mark_text(
            align="left", dx=6, fontSize=11).encode(text="chunk_id:N")
        return (lines + labels).properties(height=320)

    chart(("movement", rows, lang), lines_and_labels, width="stretch")
    dedup = "chunk" if trace.settings.dedup == "chunk" else "parent"
    st.caption(t("movement_caption", lang, n=len(rows) // 2, dedup=code(dedup), top_k=top_k))


def lost_table(trace: TraceView, relevant: Sequence[str] | None, graded: Mapping[str, int] | None,
               lang: str = "en") -> None:
    st.subheader(t("lost_title", lang))
    if not trace.reranked.items:
        st.info(t("nothing_lost", lang) + _why_not(trace, lang))
        return
    rows = tables.lost_rows(trace, relevant, graded)
    if not rows:
        st.success(t("dropped_nothing", lang))
        return
    for row in rows:
        after = row["reranked_rank"]
        where = location_label(row["where"], lang)
        line = (f"{code(row['chunk_id'])}" + (f" · {md(where)}" if where else "")
                + f" · {t('stage_fused', lang)} #{row['fused_rank']} → "
                f"{'#' + str(after) if after is not None else t('not_reranked', lang)}")
        if row.get("reader") is not None:
            line += f" · {t('reader_score', lang)} {num(row['reader'], '.3f', lang)}"
        if row["relevance"] == "relevant":
            st.markdown(f":red-background[:red[**{t('lost_relevant', lang)}**]] {line} "
                        f"({t('parent', lang)} {code(row['parent_id'])})")
        else:
            st.markdown(f"{line} {relevance_badge(row['relevance'], lang)}")
