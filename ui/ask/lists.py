"""The "Lists as cards" tab: BM25 (per-term contributions), dense, fused (stacked RRF contributions per list)
and reranked ("why it moved": each learned feature's contribution), four columns of cards."""

from __future__ import annotations

from typing import Mapping, Sequence

import altair as alt
import pandas as pd
import streamlit as st

from retrieval.explain import tables
from retrieval.ingest.location import location_label
from retrieval.pipeline.view import Item, TraceView
from retrieval.stages.rerank import KINDS

from ..escape import code, md
from ..format import num, ranker
from ..i18n import TEXTS, t
from ..reasons import reason
from ..widgets import RANKER_COLORS, chart, highlighted, list_title, relevance_badge
from .page import Asked


def panel(asked: Asked) -> None:
    """The four lists as cards, side by side (no Reranked column when nothing was reranked: its reason instead)."""
    trace, lang = asked.trace, asked.lang
    shown = [name for name in tables.LISTS if name != "reranked" or trace.reranked.items]
    if "reranked" not in shown:  # an empty Reranked column would take a quarter of the width for one line
        st.caption(f"{t('reranked_empty', lang)} — {reason(tables.empty_reason(trace, 'reranked'), lang)}")
    columns = st.columns(len(shown), gap="medium")
    for column, name in zip(columns, shown):
        with column:
            list_panel(trace, name, asked.choices.corpus.chunk_text, asked.terms, asked.choices.params.rows,
                       asked.relevant, asked.graded, lang)


def score_kind_label(kind: str | None, lang: str = "en", reranker_kind: str | None = None) -> str:
    """What a list's scores are: the interface's words for the generators' and RRF's kinds, the reranker kind's
    declaration for a reranked list, else the recorded kind."""
    key = f"kind_{kind or 'none'}"
    if key in TEXTS:
        return t(key, lang)
    declared = KINDS.get(reranker_kind) if reranker_kind in KINDS else None
    if declared is not None and declared.score_label is not None:
        return declared.score_label(lang)
    return code(str(kind))


def short_kind(kind: str | None, lang: str = "en") -> str:
    if (kind or "").startswith("LambdaMART"):
        return "LambdaMART"
    return {"bm25": "BM25", "cosine": t("grp_dense", lang), "rrf": "RRF"}.get(kind or "", t("score", lang))


def list_panel(trace: TraceView, name: str, chunk_text: Mapping[str, str], terms: frozenset[str],
               rows: int, relevant: Sequence[str] | None, graded: Mapping[str, int] | None,
               lang: str = "en") -> None:
    block = trace.ranked(name)
    kind = block.score_kind
    title = list_title(name, lang)
    reranker_kind = trace.models.reranker_kind
    if name == "reranked" and reranker_kind and block.items:
        title = f"{title} ({reranker_kind})"  # one of the rerankers' own kinds (retrieval/stages/rerank/)
    st.subheader(title)
    items = block.items
    st.caption(t("list_count", lang, n=len(items),
                 kind=score_kind_label(kind, lang, reranker_kind if name == "reranked" else None)))
    if not items:
        st.info(f"{t('empty', lang)} — {reason(tables.empty_reason(trace, name), lang)}")
        return
    if block.note.text:
        st.caption(reason(block.note.value, lang))
    if name == "fused":
        contribution_chart(trace, rows, lang)
    # "only dense" means something only when BM25 ran too (in dense-only mode every item is dense-only).
    both_ran = all(lst.items and not lst.skipped for lst in (trace.lexical, trace.dense))
    for item in items[:rows]:
        with st.container(border=True):
            mark = relevance_badge(tables.relevance_of(item.parent_id, relevant, graded), lang)
            where = location_label(item.where, lang)  # its page and section, where the trace item carries them
            st.markdown(f"**#{item.rank}** {code(item.chunk_id)}" + (f" · {md(where)}" if where else "")
                        + f" {mark}")
            detail = f"{short_kind(kind, lang)} **{num(item.score, '.4f', lang)}**"
            if name == "fused":
                ranks = item.ranks
                detail += " · " + " · ".join(
                    f"{ranker(r, lang)} {'#' + str(ranks[r]) if r in ranks else '—'}" for r in ("bm25", "dense"))
                if len(ranks) == 1 and both_ran:
                    detail += f" &nbsp; :orange-badge[{t('only_in_list', lang, name=ranker(next(iter(ranks)), lang))}]"
            elif name == "reranked" and item.fused_rank is not None:
                move = item.fused_rank - item.rank
                arrow = f"▲{move}" if move > 0 else (f"▼{-move}" if move < 0 else "=")
                detail += f" · {t('stage_fused', lang)} #{item.fused_rank} → #{item.rank} ({arrow})"
            st.caption(f"{t('parent', lang)} {code(item.parent_id)} · {detail}")
            text, cut_before, cut_after = tables.snippet(chunk_text.get(item.chunk_id, ""), terms, width=200)
            st.markdown(("… " if cut_before else "") + highlighted(text, terms) + (" …" if cut_after else ""))
            if name == "reranked" and item.feature_contributions:
                _why_moved(item, lang)
            if name == "lexical" and item.terms:
                with st.expander(t("bm25_per_term", lang)):
                    # A two-column list, not a table: a quarter-width column cuts a table's second column off.
                    st.markdown("  \n".join(f"{code(term)} **{num(value, '.3f', lang)}**" for term, value in
                                              sorted(item.terms.items(), key=lambda kv: -kv[1])))
    if len(items) > rows:
        st.caption(t("more_in_csv", lang, n=len(items) - rows, rows=rows))


def _why_moved(item: Item, lang: str) -> None:
    with st.expander(t("why_moved", lang)):
        why_rows = tables.feature_contribution_rows(item.feature_contributions, 6)

        def why_bars() -> alt.Chart:
            return alt.Chart(pd.DataFrame(why_rows)).mark_bar().encode(
                x=alt.X("contribution:Q", title=t("axis_ltr_contribution", lang)),
                y=alt.Y("feature:N", sort=None, title=None),
                color=alt.condition(alt.datum.contribution > 0, alt.value("#2a9d8f"), alt.value("#e76f51")),
                tooltip=["feature", "contribution", "meaning"]).properties(height=26 * len(why_rows) + 20)

        chart(("why_moved", why_rows, lang), why_bars, width="stretch")
        st.caption(t("ltr_sum", lang, score=num(item.score, ".3f", lang),
                     bias=num(item.feature_contributions.get("bias", 0.0), ".3f", lang)))


def contribution_chart(trace: TraceView, rows: int, lang: str = "en") -> None:
    contribution = tables.contribution_rows(trace, limit=rows)
    data = pd.DataFrame(contribution)
    if data.empty:
        return
    data["item"] = "#" + data["fused_rank"].astype(str)
    order = [f"#{r}" for r in sorted(data["fused_rank"].unique())]

    def bars() -> alt.Chart:
        return alt.Chart(data).mark_bar().encode(
            y=alt.Y("item:N", sort=order, title=None, axis=alt.Axis(labelOverlap=False)),
            x=alt.X("contribution:Q", stack="zero", title=t("axis_rrf_contribution", lang)),
            color=alt.Color("ranker:N", scale=alt.Scale(domain=list(RANKER_COLORS),
                                                        range=list(RANKER_COLORS.values())),
                            legend=alt.Legend(orient="top", title=None)),
            tooltip=["chunk_id", "ranker", "ranker_rank", alt.Tooltip("contribution:Q", format=".5f")],
        ).properties(height=max(140, 26 * len(order)))

    chart(("contribution", contribution, lang), bars, width="stretch", height=max(140, 26 * len(order)) + 60)
