"""The "Where is my document?" tab: any chunk or parent, by id or title: its rank and score in each list, or why
it is absent, and what RRF, the reranker and the gate would have given it (:mod:`retrieval.explain.where`)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import streamlit as st

from retrieval.explain import where as explain
from retrieval.ingest.location import location_label

from ..escape import code, md
from ..format import num
from ..i18n import t
from ..keep import keep, remember, restore
from ..reasons import reason
from .page import Asked


@st.fragment
def panel(asked: Asked) -> None:
    """A search or a pick re-runs this panel only."""
    ss, lang, corpus = st.session_state, asked.lang, asked.choices.corpus
    state, titles = corpus.state, corpus.titles
    st.caption(t("where_caption", lang))
    w1, w2 = st.columns([1, 2])
    restore("where_q"), restore("where_pick")  # the search shown before, when the tab is opened again
    needle = w1.text_input(t("where_search", lang), key="where_q", on_change=keep, args=("where_q",))
    options = []  # nothing listed before a search: the page never shows another tenant's ids unasked
    # Under a policy only the user's tenants' parents are found: no other tenant's ids, titles or owner.
    where_tenants = corpus.tenant_values if asked.page.access.restricted and corpus.multi_tenant else None
    for pid, _ in (explain.search_targets(state, needle, limit=40, tenants=where_tenants) if needle.strip() else []):
        options.append(pid)
        options.extend(explain.targets(state, pid))
    options = [""] + list(dict.fromkeys(options))
    if ss.get("where_pick") not in options:
        remember("where_pick", "")
    picked = w2.selectbox(t("where_pick", lang), options, key="where_pick", on_change=keep, args=("where_pick",),
                          format_func=lambda v: "—" if not v else (v if "#" in v else f"{v} · {titles.get(v, '')}"))
    if not picked:
        return
    bench = corpus.bench
    q_vec = None
    if getattr(bench, "embedder", None) is not None and state.store is not None:  # the vector the request used
        q_vec = bench.question_vector(asked.question, asked.trace.query_vector_from)
    reranker = bench.reranker(asked.choices.params.reranker)[0] if asked.trace.models.reranker else None
    where_block(explain.explain_many(state, asked.trace, explain.targets(state, picked), query_vector=q_vec,
                                     reranker=reranker, reader=bench.reader_store.reader), lang)


def where_block(explained: Sequence[Mapping[str, Any]], lang: str = "en") -> None:
    for entry in explained:
        place = location_label(entry.get("where") or {}, lang)  # its page and section, where it has them
        st.markdown(t("w_head", lang, chunk=code(entry["chunk_id"]), parent=code(entry["parent_id"]),
                      window=entry["window"]) + (f" · {md(place)}" if place else ""))
        for name, info in entry["lists"].items():
            line = reason(explain.describe({**info, "window": entry["window"]}, name), lang)
            st.markdown(f"- **{md(name)}**: {line}")
        fusion = entry.get("fusion") or {}
        if fusion.get("status") == "computed":
            parts = " + ".join(f"{r} 1/({fusion['rrf_k']} + {v})" for r, v in fusion["ranks"].items()) or "—"
            st.markdown(t("w_rrf", lang, parts=parts, score=num(fusion["score"], ".5f", lang))
                        + (t("w_fused_rank", lang, rank=fusion["would_rank"]) if fusion.get("would_rank") else ""))
        rerank = entry.get("rerank") or {}
        if rerank.get("status") == "computed":
            st.markdown(t("w_rerank", lang, score=num(rerank["score"], ".4f", lang))
                        + (t("w_rerank_rank", lang, rank=rerank["would_rank"]) if rerank.get("would_rank") else ""))
        elif rerank.get("status") == "not_run":
            st.markdown(t("w_no_reranker", lang))
        reader = entry.get("reader") or {}
        if reader.get("status") == "computed":
            st.markdown(t("w_reader", lang, score=num(reader["score"], ".3f", lang)))
        gate = entry.get("gate") or {}
        if gate.get("cosine") is not None:
            line = t("w_gate_passes" if gate.get("passes_similarity") else "w_gate_fails", lang,
                     cos=num(gate["cosine"], ".3f", lang), threshold=num(gate["threshold"], "", lang))
        else:
            line = t("w_gate_none", lang)
        if gate.get("codes"):
            line += t("w_codes", lang, codes=", ".join(map(code, gate["codes"])),
                      state=(t("w_missing", lang, codes=", ".join(map(code, gate["missing_codes"])))
                             if gate["missing_codes"] else t("w_all_present", lang)))
        learned = gate.get("learned")
        if learned:
            line += t("w_learned", lang, p=num(learned["p_support"], ".2f", lang),
                      threshold=num(learned["threshold"], ".2f", lang),
                      verdict=t("w_answers" if learned["passes"] else "w_abstains", lang),
                      read=t("card_support_read", lang) if learned["read_this_chunk"] else "")
        st.markdown(line)
