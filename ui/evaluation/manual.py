"""Manual rankings (works without a run): two lists typed by hand, fused by RRF (or weighted RRF), with a tenant
filter on a document → tenant map, and what-if edits (drop / inject an item) over them — the lab's fixture
exercises as a tool. :func:`what_if_block` also serves the what-if on one evaluated question."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from retrieval.core.defaults import RRF_K
from retrieval.explain.whatif import FIXTURE_LABEL, Edit, manual_fusion, parse_mapping, parse_ranking, what_if
from retrieval.stages.fusion import parse_weights

from ..escape import code, md
from ..i18n import t
from ..reasons import reason
from ..widgets import table
from .page import EvalPage


def edit_controls(lists: dict[str, list[str]], key: str, lang: str) -> list[Edit]:
    """Drop / inject controls over ``lists``; returns the chosen edits (none when 'no change')."""
    a, b, c, d = st.columns([1, 1, 2, 1])
    action = a.selectbox(t("wi_change", lang), ["none", "drop", "inject"], key=f"{key}_action",
                         format_func=lambda v: t(f"wi_{v}", lang))
    ranker = b.selectbox(t("wi_in_list", lang), list(lists), key=f"{key}_ranker")
    if action == "drop":
        doc = c.selectbox(t("wi_document", lang), lists.get(ranker) or [""], key=f"{key}_drop")
        return [Edit("drop", ranker, doc)] if doc else []
    if action == "inject":
        doc = c.text_input(t("wi_doc_id", lang), key=f"{key}_inject")
        rank = d.number_input(t("wi_at_rank", lang), 1, 1000, 1, key=f"{key}_rank")
        return [Edit("inject", ranker, doc.strip(), int(rank))] if doc.strip() else []
    return []


def what_if_block(lists: dict[str, list[str]], k: int, relevant: set[str], parents: dict[str, str] | None, key: str,
                  lang: str) -> None:
    edits = edit_controls(lists, key, lang)
    try:
        result = what_if(lists, edits, k=k, parents=parents)
    except ValueError as exc:
        st.error(reason(str(exc), lang))
        return
    frame = pd.DataFrame(result["rows"])
    if relevant:
        frame.insert(1, "relevant", [(parents or {}).get(i, i) in relevant for i in frame["id"]])
    table(frame, lang, dash=False)
    if edits:
        moved = [r for r in result["rows"] if r["rank_before"] != r["rank_after"]]
        st.caption(t("wi_moved", lang, n=len(moved)))


def panel(page: EvalPage, expanded: bool) -> None:
    lang = page.lang
    with st.expander(t("mn_title", lang), expanded=expanded):
        st.caption(t("mn_label", lang, label=code(FIXTURE_LABEL)))
        m1, m2 = st.columns(2)
        lex_text = m1.text_input(t("mn_lex", lang), "d1,d3,d2", key="mn_lex")
        den_text = m2.text_input(t("mn_den", lang), "d2,d1,d4", key="mn_den")
        m3, m4, m5, m6 = st.columns(4)
        mk = int(m3.number_input("rrf_k", 1, 1000, RRF_K, key="mn_k"))
        mtop = int(m4.number_input("top_k", 1, 100, 10, key="mn_top"))
        mapping_text = m5.text_input(t("mn_map", lang), "", key="mn_map", placeholder="d1=A,d2=A,d3=B,d4=A")
        tenant = m6.text_input(t("mn_tenant", lang), "", key="mn_tenant", placeholder="A")
        weights_text = st.text_input(t("mn_weights", lang), "", key="mn_w", placeholder="lexical=1.0,semantic=0.5")
        try:
            lists = {"lexical": parse_ranking(lex_text), "semantic": parse_ranking(den_text)}
            mapping = parse_mapping(mapping_text)
            fused = manual_fusion(lists, k=mk, top_k=mtop, weights=parse_weights(weights_text) or None,
                                  doc_values=mapping, allowed=tenant.strip() or None)
            st.markdown(t("mn_fused", lang, kind=t("mn_weighted", lang) if weights_text.strip() else "RRF", k=mk))
            table(pd.DataFrame(fused["rows"]), lang, dash=False)
            removed = {r: ids for r, ids in fused["removed"].items() if ids}
            if removed:
                st.caption(t("mn_removed", lang)
                           + "; ".join(f"{r}: {', '.join(map(md, ids))}" for r, ids in removed.items()))
            st.markdown(t("mn_what_if", lang))
            what_if_block(fused["filtered"], mk, set(), None, "mn_wi", lang)
        except ValueError as exc:
            st.error(reason(str(exc), lang))
