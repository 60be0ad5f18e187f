"""Lay out parts of a trace dict with Streamlit. No retrieval logic: every value shown comes from the trace
(tables and diffs are built by :mod:`retrieval.explain.views`)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

import altair as alt
import pandas as pd
import streamlit as st

from retrieval.explain import support, tables

from .escape import code, md, md_text
from .i18n import TEXTS, header, t
from .keep import keep, kept, restore
from .reasons import reader_line, reason

TIER_COLORS = {"full": "green", "rrf_only": "blue", "dense_only": "violet", "lexical_only": "orange",
               "refusal": "red"}
RANKER_COLORS = {"bm25": "#e8833a", "dense": "#4c78a8"}
STATUS_COLORS = {"fell out": "#d62728", "moved in": "#2ca02c", "stayed in": "#7f7f7f", "stayed out": "#c7c7c7"}
RELEVANCE_KEYS = {"relevant": ("green", "✓ ", "rel_relevant"), "partial": ("orange", "~ ", "rel_partial"),
                  "not labeled": ("gray", "", "rel_none")}
LIST_KEYS = {"lexical": "list_lexical", "dense": "list_dense", "fused": "list_fused", "reranked": "list_reranked"}


def relevance_badge(mark: str | None, lang: str = "en") -> str:
    """A relevance mark (``tables.relevance_of``) as a coloured badge in ``lang``; '' for none."""
    if not mark or mark not in RELEVANCE_KEYS:
        return ""
    color, sign, key = RELEVANCE_KEYS[mark]
    return f":{color}-badge[{sign}{t(key, lang)}]"


def list_title(name: str, lang: str = "en") -> str:
    return t(LIST_KEYS[name], lang)


def md_escape(text: str) -> str:
    """Backslash-escape Markdown, HTML, Streamlit directive and LaTeX characters, keeping line breaks
    (:func:`ui.escape.md_text`)."""
    return md_text(text)


def highlighted(text: str, terms: Iterable[str]) -> str:
    """Markdown of ``text`` with the question's terms on a yellow background."""
    parts = []
    for segment, hit in tables.highlight_segments(text, terms):
        parts.append(f":orange-background[**{md_escape(segment)}**]" if hit else md_escape(segment))
    return "".join(parts)


def fmt_ms(value: float | None, lang: str = "en") -> str:
    return t("not_measured", lang) if value is None else f"{value:,.1f} ms"


def score_kind_label(kind: str | None, lang: str = "en") -> str:
    key = f"kind_{kind or 'none'}"
    return t(key, lang) if key in TEXTS else reason(kind, lang)


def short_kind(kind: str | None, lang: str = "en") -> str:
    if (kind or "").startswith("LambdaMART"):
        return "LambdaMART"
    return {"bm25": "BM25", "cosine": t("grp_dense", lang), "rrf": "RRF"}.get(kind or "", t("score", lang))


def table(frame: pd.DataFrame, lang: str = "en", dash: bool = True, **kwargs: Any) -> Any:
    """``st.dataframe`` with readable headers in ``lang`` (:func:`ui.i18n.header`; the frame keeps its column
    names) and, with ``dash``, "—" in the empty cells instead of None."""
    if dash and not frame.empty:
        frame = dashed(frame, lang)
    config = {c: st.column_config.Column(header(str(c), lang)) for c in frame.columns}
    return st.dataframe(frame, hide_index=True, width="stretch", column_config=config, **kwargs)


def dashed(frame: pd.DataFrame, lang: str = "en") -> pd.DataFrame:
    """``frame`` for reading: a column with empty cells becomes text ("—" for the empty ones, numbers as
    written), yes / no for booleans in ``lang``; full numeric columns stay numbers."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        is_bool = values.map(lambda v: isinstance(v, bool)).any()
        if not values.isna().any() and not is_bool:
            continue
        out[column] = [("—" if v is None or (isinstance(v, float) and v != v) else
                        (t("yes", lang) if v else t("no", lang)) if isinstance(v, bool) else
                        f"{v:.4g}" if isinstance(v, float) else str(v)) for v in values]
    return out


# -- charts ----------------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=512)
def _vega_spec(key: str, _build: Any) -> dict[str, Any]:
    """The Vega-Lite spec of the Altair chart ``_build()`` returns, once per ``key`` (Altair validates every
    encoding against its schema on each build: most of a warm rerun's server time went there)."""
    spec = _build().to_dict()
    view = (spec.get("config") or {}).get("view") or {}
    for name in ("continuousWidth", "continuousHeight"):  # Altair's default theme; Streamlit draws without it
        view.pop(name, None)
    if not view:
        (spec.get("config") or {}).pop("view", None)
    if not spec.get("config", True):
        spec.pop("config")
    return spec


def chart(key: Any, build: Any, **kwargs: Any) -> Any:
    """``st.vega_lite_chart`` of the Altair chart ``build()`` returns, built once per ``key`` (everything the
    chart shows: its rows and labels, the language); ``kwargs`` as for ``st.altair_chart``."""
    import json

    return st.vega_lite_chart(_vega_spec(json.dumps(key, sort_keys=True, default=str), build), **kwargs)


# -- header ----------------------------------------------------------------------------------------------------
def tier_sentence(trace: Mapping[str, Any], lang: str = "en") -> str:
    """The tier in plain words (\"Answered with the learned ranker over BM25 + dense (full)\")."""
    tier = trace.get("tier") or ""
    kind = (trace.get("models") or {}).get("reranker_kind") or ""
    if tier == "full":
        key = {"ltr": "tier_full_ltr", "cross-encoder": "tier_full_cross"}.get(kind, "tier_full")
    else:
        key = f"tier_{tier}"
    return t(key, lang) if key in TEXTS else t("tier_other", lang, tier=md(tier))


def tier_badge(trace: Mapping[str, Any], lang: str = "en") -> None:
    """The plain-language tier line first, then the recorded reason (translated at display: :mod:`ui.reasons`)
    and the stages that did less than asked."""
    tier = trace["tier"]
    color = TIER_COLORS.get(tier, "gray")
    st.markdown(f"**{tier_sentence(trace, lang)}** :{color}-badge[{tier if tier in TIER_COLORS else md(tier)}]")
    recorded = trace.get("tier_reason")
    # The reader that could not load: one plain line (what is missing, what the page falls back to), the
    # recorded reason on hover; the same for the judge's note (its learned gate reads the reader too).
    plain = reader_line(recorded, tier, lang)
    if plain:
        st.caption(f"{t('tier_reason', lang)}: {plain}", help=reason(recorded, lang))
    elif recorded:
        st.caption(f"{t('tier_reason', lang)}: {reason(recorded, lang)}")
    for note in trace.get("notes") or []:  # stages that did less than asked (MMR, a transform's LLM, a store read)
        line = reader_line(note["note"], tier, lang)
        if line:
            st.caption(line, help=reason(note["note"], lang))
        else:
            st.caption(f"**{md_escape(note['stage'])}**: {reason(note['note'], lang)}")


def models_line(trace: Mapping[str, Any], lang: str = "en") -> None:
    """The answer adapter, then the models and engines of the request (developer's lines: the Timings tab)."""
    st.caption(f"{t('answered_by', lang)} {code(str((trace.get('answer') or {}).get('adapter')))}")
    m = trace.get("models") or {}
    reranker = m.get("reranker")
    if reranker:
        kind = m.get("reranker_kind") or t("not_loaded", lang)
        rr = f"{code(reranker)} ({md(kind)})"
        if m.get("reranker_status") and m.get("reranker_status") != "loaded":
            rr += f" — {reason(m['reranker_status'], lang)}"
    else:
        rr = t("off", lang)
    status = m.get("embedder_status")
    status = t("loaded", lang) if status == "loaded" else reason(str(status), lang)
    st.caption(t("models_line", lang, embedder=code(str(m.get("embedder"))), status=status, reranker=rr,
                 bm25=code(str(m.get("bm25_engine"))), store=code(str(m.get("vector_store"))),
                 answer=code(str(m.get("answer_adapter")))))


# -- answer ----------------------------------------------------------------------------------------------------
_CITE = re.compile(r"\\\[(\d+)\\\]")


def answer_block(trace: Mapping[str, Any], terms: Iterable[str], lang: str = "en") -> None:
    from retrieval.stages.answer import ABSTENTIONS

    ans = trace["answer"]
    final = trace.get("final") or []
    st.subheader(t("answer", lang))
    if ans.get("abstained"):
        # One reason, the true one: the tier line above carries ``tier_reason``; nothing else is added here.
        text = ABSTENTIONS.get(lang) if ans.get("text") in ABSTENTIONS.values() else ans.get("text")
        st.warning(f"**{t('abstained', lang)}** {md_escape(text or '')} {t('why_in_tier', lang)}")
        return
    text = _CITE.sub(lambda m: f"**\\[{m.group(1)}\\]**", md_escape(ans.get("text") or ""))
    with st.container(border=True):
        st.markdown(text)
    if ans.get("note"):
        st.caption(md_escape(ans["note"]))
    if ans.get("dropped_citations"):
        st.caption(t("dropped_citations", lang) + ", ".join(code(c) for c in ans["dropped_citations"]))
    number = {item["chunk_id"]: i for i, item in enumerate(final, start=1)}
    for chunk_id in ans.get("citations") or []:
        item = next((f for f in final if f["chunk_id"] == chunk_id), None)
        if item is None:
            continue
        sim = item.get("similarity")
        with st.expander(f"[{number[chunk_id]}] {code(chunk_id)}"):
            st.caption(t("citation_line", lang, parent=code(item["parent_id"]), rank=item["rank"],
                         cos="—" if sim is None else f"{sim:.3f}"))
            st.markdown(highlighted(item["text"], terms))
    st.caption(t("context_sent", lang, n=len(final)))


# -- the four lists --------------------------------------------------------------------------------------------
def _labels(relevant: Sequence[str] | None, graded: Mapping[str, int] | None, parent_id: str,
            lang: str = "en") -> str:
    return relevance_badge(tables.relevance_of(parent_id, relevant, graded), lang)


def list_panel(trace: Mapping[str, Any], name: str, chunk_text: Mapping[str, str], terms: frozenset[str],
               rows: int, relevant: Sequence[str] | None, graded: Mapping[str, int] | None,
               lang: str = "en") -> None:
    block = trace.get(name) or {}
    kind = block.get("score_kind")
    title = list_title(name, lang)
    reranker_kind = (trace.get("models") or {}).get("reranker_kind")
    if name == "reranked" and reranker_kind and block.get("items"):
        title = f"{title} ({reranker_kind})"  # one of the rerankers' own kinds (rerank.py)
    st.subheader(title)
    items = block.get("items") or []
    st.caption(t("list_count", lang, n=len(items), kind=score_kind_label(kind, lang)))
    if not items:
        st.info(f"{t('empty', lang)} — {reason(tables.empty_reason(trace, name), lang)}")
        return
    if block.get("note"):
        st.caption(reason(block["note"], lang))
    if name == "fused":
        contribution_chart(trace, rows, lang)
    # "only dense" means something only when BM25 ran too (in dense-only mode every item is dense-only).
    both_ran = all((trace.get(lst) or {}).get("items") and not ((trace.get(lst) or {}).get("note") or "")
                   .startswith("skipped") for lst in ("lexical", "dense"))
    for item in items[:rows]:
        with st.container(border=True):
            head = f"**#{item['rank']}** {code(item['chunk_id'])} {_labels(relevant, graded, item['parent_id'], lang)}"
            st.markdown(head)
            detail = f"{short_kind(kind, lang)} **{item['score']:.4f}**"
            if name == "fused":
                ranks = item.get("ranks") or {}
                detail += " · " + " · ".join(
                    f"{r} {'#' + str(ranks[r]) if r in ranks else '—'}" for r in ("bm25", "dense"))
                if len(ranks) == 1 and both_ran:
                    detail += f" &nbsp; :orange-badge[{t('only_in_list', lang, name=next(iter(ranks)))}]"
            elif name == "reranked" and item.get("fused_rank") is not None:
                move = item["fused_rank"] - item["rank"]
                arrow = f"▲{move}" if move > 0 else (f"▼{-move}" if move < 0 else "=")
                detail += f" · {t('stage_fused', lang)} #{item['fused_rank']} → #{item['rank']} ({arrow})"
            st.caption(f"{t('parent', lang)} {code(item['parent_id'])} · {detail}")
            text, cut_before, cut_after = tables.snippet(chunk_text.get(item["chunk_id"], ""), terms, width=200)
            st.markdown(("… " if cut_before else "") + highlighted(text, terms) + (" …" if cut_after else ""))
            if name == "reranked" and item.get("feature_contributions"):
                with st.expander(t("why_moved", lang)):
                    why_rows = tables.feature_contribution_rows(item, 6)

                    def why_bars() -> alt.Chart:
                        return alt.Chart(pd.DataFrame(why_rows)).mark_bar().encode(
                            x=alt.X("contribution:Q", title=t("axis_ltr_contribution", lang)),
                            y=alt.Y("feature:N", sort=None, title=None),
                            color=alt.condition(alt.datum.contribution > 0, alt.value("#2a9d8f"),
                                                alt.value("#e76f51")),
                            tooltip=["feature", "contribution", "meaning"]).properties(height=26 * len(why_rows) + 20)

                    chart(("why_moved", why_rows, lang), why_bars, width="stretch")
                    st.caption(t("ltr_sum", lang, score=f"{item['score']:.3f}",
                                 bias=f"{item['feature_contributions'].get('bias', 0.0):.3f}"))
            if name == "lexical" and item.get("terms"):
                with st.expander(t("bm25_per_term", lang)):
                    # A two-column list, not a table: a quarter-width column cuts a table's second column off.
                    st.markdown("  \n".join(f"{code(term)} **{value:.3f}**" for term, value in
                                              sorted(item["terms"].items(), key=lambda kv: -kv[1])))
    if len(items) > rows:
        st.caption(t("more_in_csv", lang, n=len(items) - rows, rows=rows))


def contribution_chart(trace: Mapping[str, Any], rows: int, lang: str = "en") -> None:
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


def support_block(trace: Mapping[str, Any], lang: str = "en") -> None:
    """The learned support gate: P against the threshold, the reason, and what pushed the log-odds."""
    summary = support.support_summary(trace, lang)
    if summary is None:
        return
    rows = support.support_rows(trace, lang)
    if ((trace.get("gate") or {}).get("support") or {}).get("best") is None:  # the gate did not run: its note
        summary = (reader_line(summary.removeprefix("not applied: "), trace.get("tier") or "", lang)
                   or reason(summary, lang))
    else:
        summary = md_escape(summary)
    with st.expander(t("support_gate", lang), expanded=bool((trace.get("answer") or {}).get("abstained"))):
        st.markdown(summary)
        if not rows:
            return
        directions = {d: t(f"legend_{d.replace(' ', '_')}", lang)
                      for d in ("for answering", "against answering", "baseline")}
        height = max(140, 30 * len(rows))
        # The Vega-Lite spec written out: building it through Altair validated every encoding against its schema,
        # about 80 ms of each new question's page run
        spec = {
            "data": {"values": [{**r, "direction": directions.get(r["direction"], r["direction"])} for r in rows]},
            "mark": {"type": "bar"},
            "height": height,
            "encoding": {
                "y": {"field": "label", "type": "nominal", "sort": [r["label"] for r in rows], "title": None,
                      "axis": {"labelOverlap": False, "labelLimit": 320}},
                "x": {"field": "contribution", "type": "quantitative", "title": t("support_axis", lang)},
                "color": {"field": "direction", "type": "nominal",
                          "scale": {"domain": list(directions.values()), "range": ["#2e7d32", "#c62828", "#9e9e9e"]},
                          "legend": {"orient": "top", "title": None}},
                "tooltip": [{"field": "label", "type": "nominal"}, {"field": "feature", "type": "nominal"},
                            {"field": "value", "type": "quantitative", "format": ".3f"},
                            {"field": "contribution", "type": "quantitative", "format": "+.3f"},
                            {"field": "meaning", "type": "nominal"}]}}
        st.vega_lite_chart(spec, width="stretch", height=height + 60)
        st.caption(t("support_caption", lang))


# -- movement and losses ---------------------------------------------------------------------------------------
def movement_chart(trace: Mapping[str, Any], lang: str = "en") -> None:
    st.subheader(t("rank_movement", lang))
    rows = tables.movement_rows(trace)
    if not rows:
        st.info(t("nothing_moved", lang) + reason(tables.empty_reason(trace, "reranked").removeprefix("no rerank ran: "),
                                                  lang))
        return
    data = pd.DataFrame(rows)
    stages = {name: t(f"stage_{name}", lang) for name in ("fused", "reranked")}
    statuses = {name: t("status_" + name.replace(" ", "_"), lang) for name in STATUS_COLORS}
    data["stage"] = data["stage"].map(lambda v: stages.get(v, v))
    data["status"] = data["status"].map(lambda v: statuses.get(v, v))
    top_k = (trace.get("settings") or {}).get("top_k")

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
    dedup = "chunk" if (trace.get("settings") or {}).get("dedup") == "chunk" else "parent"
    st.caption(t("movement_caption", lang, n=len(rows) // 2, dedup=code(dedup), top_k=top_k))


def lost_table(trace: Mapping[str, Any], relevant: Sequence[str] | None, graded: Mapping[str, int] | None,
               lang: str = "en") -> None:
    st.subheader(t("lost_title", lang))
    if not (trace.get("reranked") or {}).get("items"):
        st.info(t("nothing_lost", lang) + reason(tables.empty_reason(trace, "reranked").removeprefix("no rerank ran: "),
                                                 lang))
        return
    rows = tables.lost_rows(trace, relevant, graded)
    if not rows:
        st.success(t("dropped_nothing", lang))
        return
    for row in rows:
        after = row["reranked_rank"]
        line = (f"{code(row['chunk_id'])} · {t('stage_fused', lang)} #{row['fused_rank']} → "
                f"{'#' + str(after) if after is not None else t('not_reranked', lang)}")
        if row.get("reader") is not None:
            line += f" · {t('reader_score', lang)} {row['reader']:.3f}"
        if row["relevance"] == "relevant":
            st.markdown(f":red-background[:red[**{t('lost_relevant', lang)}**]] {line} "
                        f"({t('parent', lang)} {code(row['parent_id'])})")
        else:
            st.markdown(f"{line} {relevance_badge(row['relevance'], lang)}")


# -- timings and costs -----------------------------------------------------------------------------------------
def queries_block(trace: Mapping[str, Any], lang: str = "en") -> None:
    """The original and transformed queries, what each lost, and the lists each fed into the fusion."""
    st.subheader(t("queries", lang))
    st.caption(t("queries_caption", lang))
    table(pd.DataFrame(tables.query_rows(trace)), lang, dash=False)
    for row in tables.query_rows(trace):
        if row["flags"]:
            st.error(t("query_lost", lang, kind=code(row["kind"]), flags=md(row["flags"])))
    if tables.technique_rows(trace):
        st.markdown(t("cost_per_technique", lang))
        table(pd.DataFrame(tables.technique_rows(trace)), lang, dash=False)
    with st.expander(t("variant_lists", lang, n=len(trace.get("variants") or []))):
        for variant in trace.get("variants") or []:
            q = variant["query"]
            st.markdown(f"**{md(q['kind'])}**{t('hypothesis_only', lang) if q['hypothesis_only'] else ''}: "
                        f"{md_escape(q['text'])}")
            for side in ("lexical", "dense"):
                items = (variant.get(side) or {}).get("items") or []
                if items:
                    st.caption(f"{side}: " + ", ".join(f"#{i['rank']} {code(i['chunk_id'])}" for i in items[:10]))


def timings_and_costs(trace: Mapping[str, Any], lang: str = "en") -> None:
    left, right = st.columns(2)
    with left:
        st.markdown(f"**{t('timings_per_stage', lang)}**")
        frame = pd.DataFrame([{"stage": t("outside_stages", lang) if r["stage"] == tables.UNATTRIBUTED
                               else r["stage"], "time": fmt_ms(r["ms"], lang)} for r in tables.timing_rows(trace)])
        table(frame, lang, dash=False)
    with right:
        st.markdown(f"**{t('costs', lang)}**")
        frame = pd.DataFrame([{"cost": r["cost"], "value": t("not_measured", lang) if r["value"] is None
                               else str(r["value"])} for r in tables.cost_rows(trace)])
        table(frame, lang, dash=False)


# -- compare two configurations on one question ----------------------------------------------------------------
def compare_block(a: Mapping[str, Any], b: Mapping[str, Any], label_a: str, label_b: str,
                  relevant: Sequence[str] | None, graded: Mapping[str, int] | None, note: str,
                  lang: str = "en") -> None:
    from retrieval.explain import compare

    result = compare.compare_traces(a, b)
    st.caption(note)
    m1, m2, m3 = st.columns(3)
    m1.metric(f"Jaccard@{result['k']}", f"{result['jaccard']:.2f}")
    m2.metric(f"RBO (p = {result['p']})", f"{result['rbo']:.3f}")
    m3.metric(t("same_final", lang), t("yes", lang) if result["same"] else t("no", lang))
    left, right = st.columns(2)
    only = {"a": set(result["only_a"]), "b": set(result["only_b"])}
    for col, label, trace, side in ((left, label_a, a, "a"), (right, label_b, b, "b")):
        with col:
            total = (trace.get("timings_ms") or {}).get("total")
            st.markdown(f"**{md_escape(label)}** :{TIER_COLORS.get(trace['tier'], 'gray')}-badge[{trace['tier']}] · "
                        + t("compare_times", lang, total=fmt_ms(total, lang),
                            outside=fmt_ms(tables.unattributed_ms(trace), lang)))
            if not trace.get("final"):
                st.caption(t("final_empty", lang) + reason(trace.get("tier_reason"), lang))
            for item in trace.get("final") or []:
                flag = f" :blue-badge[{t('only_here', lang)}]" if item["chunk_id"] in only[side] else ""
                st.markdown(f"#{item['rank']} {code(item['chunk_id'])} "
                            f"{_labels(relevant, graded, item['parent_id'], lang)}{flag}")
    moved = [r for r in result["movement"] if r["move"]]
    if moved:
        st.markdown(f"**{t('movement_ab', lang)}** " + " · ".join(
            f"{code(r['id'])} #{r['rank_a']} → #{r['rank_b']} ({'▲' if r['move'] > 0 else '▼'}{abs(r['move'])})"
            for r in moved))
    elif result["same"]:
        st.success(t("same_lists", lang))


# -- judging ---------------------------------------------------------------------------------------------------
GRADE_OPTIONS = ("not judged", 0, 1, 2, 3)


def judge_block(trace: Mapping[str, Any], pooled: Sequence[Mapping[str, Any]], titles: Mapping[str, str],
                texts: Mapping[str, str], terms: frozenset[str], key_prefix: str, blind: bool,
                only_unjudged: bool, stored: Mapping[str, int], lang: str = "en") -> dict[str, int]:
    """One grade control per pooled parent; returns the grades currently chosen (parent → 0-3)."""
    import hashlib

    order = list(pooled)
    if blind:  # a fixed shuffle per question: the order no longer tells the rank
        order.sort(key=lambda p: hashlib.sha1(f"{key_prefix}{p['parent_id']}".encode()).hexdigest())
    chosen: dict[str, int] = {}
    for entry in pooled:  # a grade given and not saved yet is kept while another tab is open (ui/keep.py)
        value = kept(f"{key_prefix}{entry['parent_id']}", stored.get(entry["parent_id"], "not judged"))
        if value != "not judged" and value is not None:
            chosen[entry["parent_id"]] = int(value)
    for entry in order:
        pid = entry["parent_id"]
        key = f"{key_prefix}{pid}"
        restore(key, stored.get(pid, "not judged"))
        if only_unjudged and pid in stored and st.session_state[key] != "not judged":
            continue
        with st.container(border=True):
            head = f"{code(pid)} · {md(titles.get(pid, ''))}"
            if not blind:
                head += " · " + ", ".join(f"{n} #{r}" for n, r in entry["lists"].items())
            st.markdown(head)
            text, cut_before, cut_after = tables.snippet(texts.get(entry["chunk_ids"][0], ""), terms, width=320)
            st.markdown(("… " if cut_before else "") + highlighted(text, terms) + (" …" if cut_after else ""))
            st.radio(f"{t('grade', lang)} · {code(pid)}", GRADE_OPTIONS, key=key, horizontal=True,
                     help=t("grade_help", lang), on_change=keep, args=(key,),
                     format_func=lambda v: t("not_judged", lang) if v == "not judged" else str(v))
        value = st.session_state[key]
        if value == "not judged":
            chosen.pop(pid, None)
        else:
            chosen[pid] = int(value)
    return chosen


# -- where is my document --------------------------------------------------------------------------------------
def where_line(entry: Mapping[str, Any], list_name: str, lang: str = "en") -> str:
    """One list entry of :func:`retrieval.explain.where.explain` in words: ``explain.describe`` in English, its
    Portuguese counterpart here (the values are the entry's)."""
    from retrieval.explain.where import describe

    if lang == "en":
        return md_escape(describe(entry, list_name))
    status = entry.get("status")
    if status == "in_list":
        extra = (t("w_exact", lang, rank=entry["exact_rank"]) if entry.get("exact_rank")
                 else t("w_exact_unknown", lang, note=reason(entry["note"], lang)) if entry.get("note") else "")
        return t("w_in_list", lang, rank=entry["rank"], score=f"{entry['score']:.4f}") + extra
    if status == "filtered":
        return t("w_filtered", lang, field=code(entry["field"]), value=code(repr(entry["value"])),
                 allowed=", ".join(code(repr(v)) for v in entry["allowed"]))
    if status == "no_token":
        return t("w_no_token", lang, q=", ".join(map(code, entry["question_tokens"])),
                 c=", ".join(map(code, entry["chunk_tokens"][:60])) + (" …" if len(entry["chunk_tokens"]) > 60 else ""))
    if status == "outside_window" and entry.get("rank") is None:
        return t("w_beyond", lang, beyond=entry.get("beyond"), window=entry.get("window", "?"),
                 score=f"{entry['score']:.4f}")
    if status == "outside_window":
        return t("w_outside", lang, rank=entry["rank"], window=entry.get("window", "?"), score=f"{entry['score']:.4f}")
    if status == "hnsw_miss":
        return t("w_hnsw", lang, cos=f"{entry['cosine']:.4f}", rank=entry["exact_rank"])
    if status == "absent":
        return t("w_absent", lang)
    return reason(entry.get("note") or str(status), lang)


def where_block(explained: Sequence[Mapping[str, Any]], lang: str = "en") -> None:
    for entry in explained:
        st.markdown(t("w_head", lang, chunk=code(entry["chunk_id"]), parent=code(entry["parent_id"]),
                      window=entry["window"]))
        for name, info in entry["lists"].items():
            st.markdown(f"- **{md(name)}**: {where_line({**info, 'window': entry['window']}, name, lang)}")
        fusion = entry.get("fusion") or {}
        if fusion.get("status") == "computed":
            parts = " + ".join(f"{r} 1/({fusion['rrf_k']} + {v})" for r, v in fusion["ranks"].items()) or "—"
            st.markdown(t("w_rrf", lang, parts=parts, score=f"{fusion['score']:.5f}")
                        + (t("w_fused_rank", lang, rank=fusion["would_rank"]) if fusion.get("would_rank") else ""))
        rerank = entry.get("rerank") or {}
        if rerank.get("status") == "computed":
            st.markdown(t("w_rerank", lang, score=f"{rerank['score']:.4f}")
                        + (t("w_rerank_rank", lang, rank=rerank["would_rank"]) if rerank.get("would_rank") else ""))
        elif rerank.get("status") == "not_run":
            st.markdown(t("w_no_reranker", lang))
        reader = entry.get("reader") or {}
        if reader.get("status") == "computed":
            st.markdown(t("w_reader", lang, score=f"{reader['score']:.3f}"))
        gate = entry.get("gate") or {}
        if gate.get("cosine") is not None:
            line = t("w_gate_passes" if gate.get("passes_similarity") else "w_gate_fails", lang,
                     cos=f"{gate['cosine']:.3f}", threshold=gate["threshold"])
        else:
            line = t("w_gate_none", lang)
        if gate.get("codes"):
            line += t("w_codes", lang, codes=", ".join(map(code, gate["codes"])),
                      state=(t("w_missing", lang, codes=", ".join(map(code, gate["missing_codes"])))
                             if gate["missing_codes"] else t("w_all_present", lang)))
        learned = gate.get("learned")
        if learned:
            line += t("w_learned", lang, p=f"{learned['p_support']:.2f}", threshold=f"{learned['threshold']:.2f}",
                      verdict=t("w_answers" if learned["passes"] else "w_abstains", lang),
                      read=t("card_support_read", lang) if learned["read_this_chunk"] else "")
        st.markdown(line)


def nav_links(ask_label: str, eval_label: str) -> None:
    """Sidebar links to both pages, named (the built-in navigation would call the main page "app").

    A page run on its own (e.g. under AppTest) has no multipage context: the links are then left out."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.page_link("app.py", label=ask_label, icon="🔎")
        st.page_link("pages/2_Evaluation.py", label=eval_label, icon="📊")
    except StreamlitAPIException:
        pass
