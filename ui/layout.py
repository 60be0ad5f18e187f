"""Lay out parts of a trace dict with Streamlit. No retrieval logic: every value shown comes from the trace
(tables and diffs are built by :mod:`retrieval.views`)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

import altair as alt
import pandas as pd
import streamlit as st

from retrieval import views

from .escape import code, md, md_text

TIER_COLORS = {"full": "green", "rrf_only": "blue", "dense_only": "violet", "lexical_only": "orange",
               "refusal": "red"}
RANKER_COLORS = {"bm25": "#e8833a", "dense": "#4c78a8"}
STATUS_COLORS = {"fell out": "#d62728", "moved in": "#2ca02c", "stayed in": "#7f7f7f", "stayed out": "#c7c7c7"}
RELEVANCE_BADGES = {"relevant": ":green-badge[✓ relevant]", "partial": ":orange-badge[~ partial]",
                    "not labeled": ":gray-badge[not labeled]"}
LIST_TITLES = {"lexical": "Lexical (BM25)", "dense": "Dense (cosine)", "fused": "Fused (RRF)",
               "reranked": "Reranked"}


def md_escape(text: str) -> str:
    """Backslash-escape Markdown, HTML, Streamlit directive and LaTeX characters, keeping line breaks
    (:func:`ui.escape.md_text`)."""
    return md_text(text)


def highlighted(text: str, terms: Iterable[str]) -> str:
    """Markdown of ``text`` with the question's terms on a yellow background."""
    parts = []
    for segment, hit in views.highlight_segments(text, terms):
        parts.append(f":orange-background[**{md_escape(segment)}**]" if hit else md_escape(segment))
    return "".join(parts)


def fmt_ms(value: float | None) -> str:
    return "not measured" if value is None else f"{value:,.1f} ms"


def score_kind_label(kind: str | None) -> str:
    return views.SCORE_KIND_LABELS.get(kind or "none", kind or "none")


def short_kind(kind: str | None) -> str:
    return {"bm25": "BM25", "cosine": "cosine", "rrf": "RRF"}.get(kind or "", kind or "score")


# -- header ----------------------------------------------------------------------------------------------------
def tier_badge(trace: Mapping[str, Any]) -> None:
    tier = trace["tier"]
    color = TIER_COLORS.get(tier, "gray")
    st.markdown(f"**Tier** :{color}-badge[{tier}] &nbsp; {md_escape(trace.get('tier_reason') or '')}")
    for note in trace.get("notes") or []:  # stages that did less than asked (MMR, a transform's LLM, a store read)
        st.caption(f"**{md_escape(note['stage'])}**: {md_escape(note['note'])}")


def models_line(trace: Mapping[str, Any]) -> None:
    m = trace.get("models") or {}
    reranker = m.get("reranker")
    if reranker:
        kind = m.get("reranker_kind") or "not loaded"
        rr = f"`{reranker}` ({kind})"
        if m.get("reranker_status") and m.get("reranker_status") != "loaded":
            rr += f" — {md_escape(m['reranker_status'])}"
    else:
        rr = "off"
    st.caption(f"Embedder `{m.get('embedder')}` ({md_escape(str(m.get('embedder_status')))}) · reranker {rr} · "
               f"BM25 `{m.get('bm25_engine')}` · store `{m.get('vector_store')}` · "
               f"answer `{m.get('answer_adapter')}`")


# -- answer ----------------------------------------------------------------------------------------------------
_CITE = re.compile(r"\\\[(\d+)\\\]")


def answer_block(trace: Mapping[str, Any], terms: Iterable[str], lang: str = "en") -> None:
    from retrieval.answer import ABSTENTIONS

    from .i18n import t

    ans = trace["answer"]
    final = trace.get("final") or []
    st.subheader(t("answer", lang))
    adapter = ans.get("adapter")
    st.caption(f"{t('answered_by', lang)} `{adapter}`")
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
        st.caption("Dropped citations (not in the context sent): " + ", ".join(ans["dropped_citations"]))
    number = {item["chunk_id"]: i for i, item in enumerate(final, start=1)}
    for chunk_id in ans.get("citations") or []:
        item = next((f for f in final if f["chunk_id"] == chunk_id), None)
        if item is None:
            continue
        sim = item.get("similarity")
        with st.expander(f"[{number[chunk_id]}] {code(chunk_id)}"):
            st.caption(f"parent {code(item['parent_id'])} · final rank {item['rank']} · cosine to question "
                       f"{'—' if sim is None else f'{sim:.3f}'}")
            st.markdown(highlighted(item["text"], terms))
    st.caption(t("context_sent", lang, n=len(final)))


# -- the four lists --------------------------------------------------------------------------------------------
def _labels(relevant: Sequence[str] | None, graded: Mapping[str, int] | None, parent_id: str) -> str:
    mark = views.relevance_of(parent_id, relevant, graded)
    return RELEVANCE_BADGES.get(mark, "") if mark else ""


def list_panel(trace: Mapping[str, Any], name: str, chunk_text: Mapping[str, str], terms: frozenset[str],
               rows: int, relevant: Sequence[str] | None, graded: Mapping[str, int] | None) -> None:
    block = trace.get(name) or {}
    kind = block.get("score_kind")
    title = LIST_TITLES[name]
    reranker_kind = (trace.get("models") or {}).get("reranker_kind")
    if name == "reranked" and reranker_kind and block.get("items"):
        title = f"Reranked ({reranker_kind})"
    st.subheader(title)
    items = block.get("items") or []
    st.caption(f"{len(items)} item(s) · score: {md_escape(score_kind_label(kind))}")
    if not items:
        st.info(f"Empty — {md(views.empty_reason(trace, name))}")
        return
    if block.get("note"):
        st.caption(md_escape(block["note"]))
    if name == "fused":
        contribution_chart(trace, rows)
    # "only dense" means something only when BM25 ran too (in dense-only mode every item is dense-only).
    both_ran = all((trace.get(lst) or {}).get("items") and not ((trace.get(lst) or {}).get("note") or "")
                   .startswith("skipped") for lst in ("lexical", "dense"))
    for item in items[:rows]:
        with st.container(border=True):
            head = f"**#{item['rank']}** {code(item['chunk_id'])} {_labels(relevant, graded, item['parent_id'])}"
            st.markdown(head)
            detail = f"{short_kind(kind)} **{item['score']:.4f}**"
            if name == "fused":
                ranks = item.get("ranks") or {}
                detail += " · " + " · ".join(
                    f"{r} {'#' + str(ranks[r]) if r in ranks else '—'}" for r in ("bm25", "dense"))
                if len(ranks) == 1 and both_ran:
                    detail += f" &nbsp; :orange-badge[only {next(iter(ranks))}]"
            elif name == "reranked" and item.get("fused_rank") is not None:
                move = item["fused_rank"] - item["rank"]
                arrow = f"▲{move}" if move > 0 else (f"▼{-move}" if move < 0 else "=")
                detail += f" · fused #{item['fused_rank']} → #{item['rank']} ({arrow})"
            st.caption(f"parent {code(item['parent_id'])} · {detail}")
            text, cut_before, cut_after = views.snippet(chunk_text.get(item["chunk_id"], ""), terms, width=200)
            st.markdown(("… " if cut_before else "") + highlighted(text, terms) + (" …" if cut_after else ""))
            if name == "reranked" and item.get("feature_contributions"):
                with st.expander("Why it moved (learned ranker)"):
                    why = pd.DataFrame(views.feature_contribution_rows(item, 6))
                    bars = alt.Chart(why).mark_bar().encode(
                        x=alt.X("contribution:Q", title="contribution (raw LambdaMART score)"),
                        y=alt.Y("feature:N", sort=None, title=None),
                        color=alt.condition(alt.datum.contribution > 0, alt.value("#2a9d8f"), alt.value("#e76f51")),
                        tooltip=["feature", "contribution", "meaning"])
                    st.altair_chart(bars.properties(height=26 * len(why) + 20), width="stretch")
                    st.caption(f"score {item['score']:.3f} = the sum of every feature's contribution "
                               f"plus a bias of {item['feature_contributions'].get('bias', 0.0):.3f}")
            if name == "lexical" and item.get("terms"):
                with st.expander("BM25 per term"):
                    # A two-column list, not a table: a quarter-width column cuts a table's second column off.
                    st.markdown("  \n".join(f"{code(term)} **{value:.3f}**" for term, value in
                                              sorted(item["terms"].items(), key=lambda kv: -kv[1])))
    if len(items) > rows:
        st.caption(f"+{len(items) - rows} more in the CSV download (rows per panel: {rows}).")


def contribution_chart(trace: Mapping[str, Any], rows: int) -> None:
    data = pd.DataFrame(views.contribution_rows(trace, limit=rows))
    if data.empty:
        return
    data["item"] = "#" + data["fused_rank"].astype(str)
    order = [f"#{r}" for r in sorted(data["fused_rank"].unique())]
    chart = alt.Chart(data).mark_bar().encode(
        y=alt.Y("item:N", sort=order, title=None, axis=alt.Axis(labelOverlap=False)),
        x=alt.X("contribution:Q", stack="zero", title="RRF contribution"),
        color=alt.Color("ranker:N", scale=alt.Scale(domain=list(RANKER_COLORS), range=list(RANKER_COLORS.values())),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=["chunk_id", "ranker", "ranker_rank", alt.Tooltip("contribution:Q", format=".5f")],
    ).properties(height=max(140, 26 * len(order)))
    st.altair_chart(chart, width="stretch", height=max(140, 26 * len(order)) + 60)


def support_block(trace: Mapping[str, Any], lang: str = "en") -> None:
    """The learned support gate: P against the threshold, the reason, and what pushed the log-odds."""
    from .i18n import t

    summary = views.support_summary(trace, lang)
    if summary is None:
        return
    rows = views.support_rows(trace, lang)
    with st.expander(t("support_gate", lang), expanded=bool((trace.get("answer") or {}).get("abstained"))):
        st.markdown(md_escape(summary))
        if not rows:
            return
        data = pd.DataFrame(rows)
        height = max(140, 30 * len(rows))
        chart = alt.Chart(data).mark_bar().encode(
            y=alt.Y("label:N", sort=[r["label"] for r in rows], title=None,
                    axis=alt.Axis(labelOverlap=False, labelLimit=320)),
            x=alt.X("contribution:Q", title=t("support_axis", lang)),
            color=alt.Color("direction:N", scale=alt.Scale(domain=["for answering", "against answering", "baseline"],
                                                           range=["#2e7d32", "#c62828", "#9e9e9e"]),
                            legend=alt.Legend(orient="top", title=None)),
            tooltip=["label", "feature", alt.Tooltip("value:Q", format=".3f"),
                     alt.Tooltip("contribution:Q", format="+.3f"), "meaning"],
        ).properties(height=height)
        st.altair_chart(chart, width="stretch", height=height + 60)
        st.caption(t("support_caption", lang))


# -- movement and losses ---------------------------------------------------------------------------------------
def movement_chart(trace: Mapping[str, Any]) -> None:
    st.subheader("Rank movement")
    rows = views.movement_rows(trace)
    if not rows:
        st.info("Nothing moved: " + md(views.empty_reason(trace, "reranked").removeprefix("no rerank ran: ")))
        return
    data = pd.DataFrame(rows)
    top_k = (trace.get("settings") or {}).get("top_k")
    base = alt.Chart(data).encode(
        x=alt.X("stage:N", sort=["fused", "reranked"], title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("rank:Q", scale=alt.Scale(reverse=True, zero=False), title="rank (1 = top)"),
        color=alt.Color("status:N", scale=alt.Scale(domain=list(STATUS_COLORS), range=list(STATUS_COLORS.values())),
                        legend=alt.Legend(orient="top", title=None)),
        detail="chunk_id:N",
        tooltip=["chunk_id", "fused_rank", "reranked_rank", "final_rank", "status"],
    )
    lines = base.mark_line(point=True, strokeWidth=2)
    labels = base.transform_filter(alt.datum.stage == "reranked").mark_text(align="left", dx=6, fontSize=11).encode(
        text="chunk_id:N")
    st.altair_chart((lines + labels).properties(height=320), width="stretch")
    dedup = "chunk" if (trace.get("settings") or {}).get("dedup") == "chunk" else "parent"
    st.caption(f"Raw fused rank → reranked rank for the {len(rows) // 2} candidates the reranker saw. Colour: in or "
               f"out of the final list the answer used (dedup by {dedup}, top_k = {top_k}, the gate), against the "
               f"fused list deduplicated and cut the same way; a chunk whose parent has a better-ranked chunk is out "
               f"whatever its rank. Red lines fell out of the context.")


def lost_table(trace: Mapping[str, Any], relevant: Sequence[str] | None, graded: Mapping[str, int] | None) -> None:
    st.subheader("Evidence lost by the reranker")
    if not (trace.get("reranked") or {}).get("items"):
        st.info("Nothing lost: " + md(views.empty_reason(trace, "reranked").removeprefix("no rerank ran: ")))
        return
    rows = views.lost_rows(trace, relevant, graded)
    if not rows:
        st.success("The reranker dropped nothing from the fused top_k.")
        return
    for row in rows:
        after = row["reranked_rank"]
        line = (f"{code(row['chunk_id'])} · fused #{row['fused_rank']} → "
                f"{'#' + str(after) if after is not None else 'not reranked'}")
        if row["relevance"] == "relevant":
            st.markdown(f":red-background[:red[**LOST RELEVANT**]] {line} (parent {code(row['parent_id'])})")
        else:
            st.markdown(f"{line} {RELEVANCE_BADGES.get(row['relevance'], '') if row['relevance'] else ''}")


# -- timings and costs -----------------------------------------------------------------------------------------
def queries_block(trace: Mapping[str, Any]) -> None:
    """The original and transformed queries, what each lost, and the lists each fed into the fusion."""
    st.subheader("Queries")
    st.caption("Every query searched the same filters. A transform that lost a code, a negation or a condition "
               "is flagged and, by default, searched the original query instead. HyDE text is a search hint only: "
               "it never enters the context, the answer or the citations.")
    frame = pd.DataFrame(views.query_rows(trace))
    st.dataframe(frame, hide_index=True, width="stretch")
    for row in views.query_rows(trace):
        if row["flags"]:
            st.error(f"{code(row['kind'])} lost: {md(row['flags'])}")
    if views.technique_rows(trace):
        st.markdown("**Cost per technique** (extra retrieval calls, LLM calls, tokens, wall time in ms)")
        st.dataframe(pd.DataFrame(views.technique_rows(trace)), hide_index=True, width="stretch")
    with st.expander(f"Candidate lists of the {len(trace.get('variants') or [])} extra queries"):
        for variant in trace.get("variants") or []:
            q = variant["query"]
            st.markdown(f"**{md(q['kind'])}**{' (hypothesis only)' if q['hypothesis_only'] else ''}: {md_escape(q['text'])}")
            for side in ("lexical", "dense"):
                items = (variant.get(side) or {}).get("items") or []
                if items:
                    st.caption(f"{side}: " + ", ".join(f"#{i['rank']} {code(i['chunk_id'])}" for i in items[:10]))


def timings_and_costs(trace: Mapping[str, Any]) -> None:
    left, right = st.columns(2)
    with left:
        st.markdown("**Timings per stage**")
        frame = pd.DataFrame([{"stage": r["stage"], "time": fmt_ms(r["ms"])} for r in views.timing_rows(trace)])
        st.dataframe(frame, hide_index=True, width="stretch")
    with right:
        st.markdown("**Costs**")
        frame = pd.DataFrame([{"cost": r["cost"], "value": "not measured" if r["value"] is None else str(r["value"])}
                              for r in views.cost_rows(trace)])
        st.dataframe(frame, hide_index=True, width="stretch")


# -- A/B -------------------------------------------------------------------------------------------------------
def ab_block(hybrid: Mapping[str, Any], dense: Mapping[str, Any], relevant: Sequence[str] | None,
             graded: Mapping[str, int] | None) -> None:
    st.subheader("Manual A/B: hybrid vs dense-only")
    diff = views.diff_finals(hybrid, dense)
    left, right = st.columns(2)
    for col, label, trace, only in ((left, "Hybrid", hybrid, {d["id"] for d in diff["only_a"]}),
                                     (right, "Dense-only", dense, {d["id"] for d in diff["only_b"]})):
        with col:
            st.markdown(f"**{label}** :{TIER_COLORS.get(trace['tier'], 'gray')}-badge[{trace['tier']}] · "
                        f"total {fmt_ms((trace.get('timings_ms') or {}).get('total'))}")
            if not trace.get("final"):
                st.caption("Final list empty: " + md_escape(trace.get("tier_reason") or ""))
            for item in trace.get("final") or []:
                flag = " :blue-badge[only here]" if item["chunk_id"] in only else ""
                st.markdown(f"#{item['rank']} {code(item['chunk_id'])} {_labels(relevant, graded, item['parent_id'])}{flag}")
    if diff["same"]:
        st.success("Both modes return the same final list, in the same order.")
    else:
        moved = [d for d in diff["both"] if d["moved"]]
        st.markdown(f"Overlap {diff['overlap']:.0%} · only in hybrid: {len(diff['only_a'])} · "
                    f"only in dense-only: {len(diff['only_b'])} · same chunk, different rank: {len(moved)}")
        if moved:
            st.caption(" · ".join(f"{code(d['id'])} #{d['rank_a']} → #{d['rank_b']}" for d in moved))


# -- compare two configurations on one question ----------------------------------------------------------------
def compare_block(a: Mapping[str, Any], b: Mapping[str, Any], label_a: str, label_b: str,
                  relevant: Sequence[str] | None, graded: Mapping[str, int] | None, note: str) -> None:
    from retrieval import compare

    result = compare.compare_traces(a, b)
    st.caption(note)
    m1, m2, m3 = st.columns(3)
    m1.metric(f"Jaccard@{result['k']}", f"{result['jaccard']:.2f}")
    m2.metric(f"RBO (p = {result['p']})", f"{result['rbo']:.3f}")
    m3.metric("same final list", "yes" if result["same"] else "no")
    left, right = st.columns(2)
    only = {"a": set(result["only_a"]), "b": set(result["only_b"])}
    for col, label, trace, side in ((left, label_a, a, "a"), (right, label_b, b, "b")):
        with col:
            total = (trace.get("timings_ms") or {}).get("total")
            st.markdown(f"**{md_escape(label)}** :{TIER_COLORS.get(trace['tier'], 'gray')}-badge[{trace['tier']}] · "
                        f"total {fmt_ms(total)} · outside any stage {fmt_ms(views.unattributed_ms(trace))}")
            if not trace.get("final"):
                st.caption("Final list empty: " + md_escape(trace.get("tier_reason") or ""))
            for item in trace.get("final") or []:
                flag = " :blue-badge[only here]" if item["chunk_id"] in only[side] else ""
                st.markdown(f"#{item['rank']} {code(item['chunk_id'])} {_labels(relevant, graded, item['parent_id'])}{flag}")
    moved = [r for r in result["movement"] if r["move"]]
    if moved:
        st.markdown("**Rank movement A → B:** " + " · ".join(
            f"{code(r['id'])} #{r['rank_a']} → #{r['rank_b']} ({'▲' if r['move'] > 0 else '▼'}{abs(r['move'])})"
            for r in moved))
    elif result["same"]:
        st.success("Both configurations return the same final list, in the same order.")


# -- judging ---------------------------------------------------------------------------------------------------
GRADE_OPTIONS = ("not judged", 0, 1, 2, 3)
GRADE_HELP = "0 not relevant · 1 marginal · 2 relevant · 3 answers the question"


def judge_block(trace: Mapping[str, Any], pooled: Sequence[Mapping[str, Any]], titles: Mapping[str, str],
                texts: Mapping[str, str], terms: frozenset[str], key_prefix: str, blind: bool,
                only_unjudged: bool, stored: Mapping[str, int]) -> dict[str, int]:
    """One grade control per pooled parent; returns the grades currently chosen (parent → 0-3)."""
    import hashlib

    order = list(pooled)
    if blind:  # a fixed shuffle per question: the order no longer tells the rank
        order.sort(key=lambda p: hashlib.sha1(f"{key_prefix}{p['parent_id']}".encode()).hexdigest())
    chosen: dict[str, int] = {}
    for entry in pooled:
        value = st.session_state.get(f"{key_prefix}{entry['parent_id']}", stored.get(entry["parent_id"], "not judged"))
        if value != "not judged" and value is not None:
            chosen[entry["parent_id"]] = int(value)
    for entry in order:
        pid = entry["parent_id"]
        key = f"{key_prefix}{pid}"
        if key not in st.session_state:
            st.session_state[key] = stored.get(pid, "not judged")
        if only_unjudged and pid in stored and st.session_state[key] != "not judged":
            continue
        with st.container(border=True):
            head = f"{code(pid)} · {md(titles.get(pid, ''))}"
            if not blind:
                head += " · " + ", ".join(f"{n} #{r}" for n, r in entry["lists"].items())
            st.markdown(head)
            text, cut_before, cut_after = views.snippet(texts.get(entry["chunk_ids"][0], ""), terms, width=320)
            st.markdown(("… " if cut_before else "") + highlighted(text, terms) + (" …" if cut_after else ""))
            st.radio(f"Grade · {code(pid)}", GRADE_OPTIONS, key=key, horizontal=True, help=GRADE_HELP,
                     format_func=str)
        value = st.session_state[key]
        if value == "not judged":
            chosen.pop(pid, None)
        else:
            chosen[pid] = int(value)
    return chosen


# -- where is my document --------------------------------------------------------------------------------------
def where_block(explained: Sequence[Mapping[str, Any]]) -> None:
    from retrieval.explain import describe

    for entry in explained:
        st.markdown(f"**{code(entry['chunk_id'])}** (parent {code(entry['parent_id'])}; window {entry['window']})")
        rows = [{"list": name, "where": describe({**info, "window": entry["window"]}, name)}
                for name, info in entry["lists"].items()]
        for row in rows:
            st.markdown(f"- **{row['list']}**: {md_escape(row['where'])}")
        fusion = entry.get("fusion") or {}
        if fusion.get("status") == "computed":
            parts = " + ".join(f"{r} 1/({fusion['rrf_k']} + {v})" for r, v in fusion["ranks"].items()) or "no rank"
            st.markdown(f"- **RRF would give** {parts} = **{fusion['score']:.5f}**"
                        + (f", fused rank {fusion['would_rank']}" if fusion.get("would_rank") else ""))
        rerank = entry.get("rerank") or {}
        if rerank.get("status") == "computed":
            st.markdown(f"- **the reranker would give** {rerank['score']:.4f}"
                        + (f" (rank {rerank['would_rank']} among the reranked)" if rerank.get("would_rank") else ""))
        elif rerank.get("status") == "not_run":
            st.markdown("- **reranker**: none configured for this request")
        gate = entry.get("gate") or {}
        if gate.get("cosine") is not None:
            verdict = "passes" if gate.get("passes_similarity") else "fails"
            line = f"- **gate**: cosine {gate['cosine']:.3f} {verdict} the threshold {gate['threshold']}"
        else:
            line = "- **gate**: no cosine (filtered or no vector)"
        if gate.get("codes"):
            line += (f"; codes named by the question {', '.join(map(md, gate['codes']))}: "
                     + (f"missing {', '.join(map(md, gate['missing_codes']))}" if gate["missing_codes"]
                        else "all present"))
        learned = gate.get("learned")
        if learned:
            verdict = "answers" if learned["passes"] else "abstains for the whole request"
            line += (f"; learned support gate: P {learned['p_support']:.2f} vs {learned['threshold']:.2f}, it "
                     f"{verdict}" + (" (it read this chunk)" if learned["read_this_chunk"] else ""))
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
