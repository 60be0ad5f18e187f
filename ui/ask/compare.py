"""The "Compare two configurations" tab: any second configuration B beside the sidebar's A on the same question
(both warm), with Jaccard@k, rank-biased overlap and the items only one side has. B's settings travel in the link
(``b_…``), held to the settings' own bounds; a B setting still at its default follows A's change."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import streamlit as st

from retrieval.core.errors import RetrievalError
from retrieval.explain import compare, tables
from retrieval.ingest.location import location_label
from retrieval.pipeline.view import TraceView
from retrieval.settings import bounds

from ..escape import code, md
from ..format import ms, num
from ..i18n import t
from ..keep import keep, remember, restore
from ..reasons import reason
from ..widgets import md_escape, relevance_badge, tier_color
from .page import Asked, mirror_url

#: B's widget keys (``cmp_<setting>``).
B_KEYS = ("cmp_dense_only", "cmp_reranker", "cmp_top_k", "cmp_rrf_k", "cmp_overfetch", "cmp_min_similarity")


def b_defaults(reranker: str) -> dict[str, Any]:
    """Configuration B's default, A's values (dense-only flipped), by B's widget key."""
    ss = st.session_state
    return {"cmp_dense_only": not bool(ss.dense_only), "cmp_reranker": reranker, "cmp_top_k": int(ss.top_k),
            "cmp_rrf_k": int(ss.rrf_k), "cmp_overfetch": int(ss.overfetch),
            "cmp_min_similarity": round(float(ss.min_similarity), 2)}


def b_follows_a(reranker: str) -> None:
    """A setting of B still at its default follows A's change (A's reranker changed: B's too, as the link says,
    which writes B only where it differs from that default); a setting B was given stays."""
    ss = st.session_state
    now, before = b_defaults(reranker), ss.get("_b_defaults")
    for key, value in (before or {}).items():
        b = round(float(ss[key]), 2) if key == "cmp_min_similarity" and key in ss else ss.get(key)
        if key in ss and now[key] != value and b == value:
            remember(key, now[key])
    ss._b_defaults = now


def b_fields(reranker: str) -> dict[str, Any]:
    """Configuration B's link fields: set only where B differs from its default (A's values, dense-only flipped)."""
    ss = st.session_state
    return dict(
        b_dense_only=None if bool(ss.cmp_dense_only) == (not ss.dense_only) else bool(ss.cmp_dense_only),
        b_reranker=None if ss.cmp_reranker == reranker else ss.cmp_reranker,
        b_top_k=None if int(ss.cmp_top_k) == int(ss.top_k) else int(ss.cmp_top_k),
        b_rrf_k=None if int(ss.cmp_rrf_k) == int(ss.rrf_k) else int(ss.cmp_rrf_k),
        b_overfetch=None if int(ss.cmp_overfetch) == int(ss.overfetch) else int(ss.cmp_overfetch),
        b_min_similarity=(None if round(float(ss.cmp_min_similarity), 2) == round(float(ss.min_similarity), 2)
                          else round(float(ss.cmp_min_similarity), 2)))


def _number(column: Any, label: str, setting: str, key: str, **kwargs: Any) -> None:
    low, high = bounds(setting)
    column.number_input(label, low, high, key=key, on_change=keep, args=(key,), **kwargs)


@st.fragment
def panel(asked: Asked) -> None:
    """Configuration B against the sidebar's A: a change of B re-runs this panel (and its link) only."""
    ss, lang, page, current = st.session_state, asked.lang, asked.page, asked.choices.params
    st.markdown(t("config_b", lang))
    for key, value in b_defaults(current.reranker).items():
        restore(key, value)  # B as it was left (ui/keep.py), else its default
    if ss.cmp_reranker not in page.rerankers.specs:
        remember("cmp_reranker", current.reranker)
    b1, b2, b3, b4, b5, b6 = st.columns(6)
    b1.toggle(t("b_dense_only", lang), key="cmp_dense_only", on_change=keep, args=("cmp_dense_only",))
    b2.selectbox(t("b_reranker", lang), list(page.rerankers.specs), key="cmp_reranker", on_change=keep,
                 args=("cmp_reranker",))
    _number(b3, "B: top_k", "top_k", "cmp_top_k")
    _number(b4, "B: rrf_k", "rrf_k", "cmp_rrf_k")
    _number(b5, t("b_overfetch", lang), "overfetch", "cmp_overfetch")
    _number(b6, t("b_min_cos", lang), "min_similarity", "cmp_min_similarity", step=0.01)
    mirror_url(page, dataclasses.replace(current, **b_fields(current.reranker)))  # B's link follows B here
    for key in B_KEYS:
        ss[f"_kept_{key}"] = ss[key]  # kept as a whole run keeps them (ui.ask.page.KEPT)
    if not current.ab:
        st.info(t("turn_on_ab", lang))
        return
    trace = asked.trace
    try:
        other = asked.request.with_overrides(
            hybrid_enabled=not ss.cmp_dense_only, reranker_model=ss.cmp_reranker, top_k=int(ss.cmp_top_k),
            rrf_k=int(ss.cmp_rrf_k), overfetch=int(ss.cmp_overfetch),
            min_similarity=round(float(ss.cmp_min_similarity), 2))
        with st.spinner(t("running_ab", lang)):
            # Like with like: A and B measured after the first request above, so both reuse the loaded models and
            # the cached query vector; a reranker only B uses is loaded by one unmeasured B run.
            if ss.cmp_reranker not in (page.rerankers.of("none") + [current.reranker]):
                asked.run(other, "cmp-warmup")
            warm_a = asked.run(asked.request, "cmp-a")
            warm_b = asked.run(other, "cmp-b")
        timings = trace.timings_ms
        compare_block(TraceView.from_dict(warm_a), TraceView.from_dict(warm_b), t("a_sidebar", lang), "B",
                      asked.relevant, asked.graded,
                      t("warm_note", lang, cold=ms(timings.get("total"), lang), embed=ms(timings.get("embed_query"), lang),
                        outside=ms(tables.unattributed_ms(trace), lang)), lang)
    except (RetrievalError, ValueError) as exc:
        st.error(t("b_failed", lang, error=reason(str(exc), lang)))


def compare_block(a: TraceView, b: TraceView, label_a: str, label_b: str,
                  relevant: Sequence[str] | None, graded: Mapping[str, int] | None, note: str,
                  lang: str = "en") -> None:
    result = compare.compare_traces(a, b)
    st.caption(note)
    m1, m2, m3 = st.columns(3)
    m1.metric(f"Jaccard@{result['k']}", num(result["jaccard"], ".2f", lang))
    m2.metric(f"RBO (p = {num(result['p'], '', lang)})", num(result["rbo"], ".3f", lang))
    m3.metric(t("same_final", lang), t("yes", lang) if result["same"] else t("no", lang))
    lengths = (len(a.final), len(b.final))
    if lengths[0] != lengths[1]:  # the overlap measures read lists of different lengths: say so
        st.caption(t("ab_lengths", lang, a=lengths[0], b=lengths[1], k=result["k"]))
    left, right = st.columns(2)
    only = {"a": set(result["only_a"]), "b": set(result["only_b"])}
    for col, label, trace, side in ((left, label_a, a, "a"), (right, label_b, b, "b")):
        with col:
            total, tier = trace.timings_ms.get("total"), trace.tier or ""
            st.markdown(f"**{md_escape(label)}** :{tier_color(tier)}-badge[{tier}] · "
                        + t("compare_times", lang, total=ms(total, lang),
                            outside=ms(tables.unattributed_ms(trace), lang)))
            if not trace.final:
                st.caption(t("final_empty", lang) + reason(trace.tier_reason.value, lang))
            for item in trace.final:
                flag = f" :blue-badge[{t('only_here', lang)}]" if item.chunk_id in only[side] else ""
                mark = relevance_badge(tables.relevance_of(item.parent_id, relevant, graded), lang)
                where = location_label(item.where, lang)
                st.markdown(f"#{item.rank} {code(item.chunk_id)}" + (f" · {md(where)}" if where else "")
                            + f" {mark}{flag}")
    moved = [r for r in result["movement"] if r["move"]]
    if moved:
        st.markdown(f"**{t('movement_ab', lang)}** " + " · ".join(
            f"{code(r['id'])} #{r['rank_a']} → #{r['rank_b']} ({'▲' if r['move'] > 0 else '▼'}{abs(r['move'])})"
            for r in moved))
    elif result["same"]:
        st.success(t("same_lists", lang))
