"""What-if on one evaluated question: its BM25 and dense lists, edited by hand (drop / inject), re-fused."""

from __future__ import annotations

import streamlit as st

from retrieval.core.errors import RetrievalError
from retrieval.core.split import split_of

from ..escape import code
from ..i18n import t
from ..reasons import reason
from .manual import what_if_block
from .page import Evaluated, open_bench


def panel(run: Evaluated) -> None:
    lang, configs = run.lang, run.report["configs"]
    st.subheader(t("ev_what_if", lang))
    st.caption(t("ev_what_if_caption", lang))
    w1, w2 = st.columns([1, 3])
    config = w1.selectbox(t("ev_configuration", lang), run.names, key="ev_wi_config")
    qids = [r["id"] for r in configs[config]["questions"] if r["relevant"]]
    qid = w2.selectbox(t("question", lang), qids, key="ev_wi_q",
                       format_func=lambda i: f"{i} · {run.questions[i].question[:80]}")
    if not qid:
        return
    q = run.questions[qid]
    settings = run.base.with_overrides(**dict(configs[config]["settings"]))
    try:
        trace = open_bench(run.corpus)(settings).ask(q.question, q.filters, settings=settings)
        lists = {name: lst.chunk_ids() for name, lst in (("bm25", trace.lexical), ("dense", trace.dense)) if lst.items}
        parents = {i.chunk_id: i.parent_id for lst in (trace.lexical, trace.dense) for i in lst.items}
        st.caption(t("ev_wi_line", lang, relevant=", ".join(map(code, q.relevant)), split=split_of(q.id),
                     k=settings.rrf_k))
        if lists:
            what_if_block(lists, settings.rrf_k, set(q.relevant), parents, "ev_wi", lang)
        else:
            st.info(t("ev_wi_none", lang))
    except RetrievalError as exc:
        st.error(reason(str(exc), lang))
