"""Under the question: the tier in plain words with its reason, the answer with its citations, the report to
hand over, the learned support gate's decision and the transformed queries."""

from __future__ import annotations

import re
from typing import Callable, Iterable

import pandas as pd
import streamlit as st

from retrieval.explain import report_html, support, tables
from retrieval.ingest.location import cited_label
from retrieval.pipeline.view import TraceView
from retrieval.stages.answer import ABSTENTIONS
from retrieval.stages.rerank import KINDS
from retrieval.stages.tiers import FULL, TIERS

from ..escape import code, md
from ..format import num, stage
from ..i18n import t
from ..reasons import reader_line, reason
from ..widgets import highlighted, md_escape, table, tier_color
from .page import Asked


def panel(asked: Asked) -> None:
    """The tier line, the labeled question's line, the answer, the report, the support gate and the queries."""
    trace, lang, labeled = asked.trace, asked.lang, asked.labeled
    tier_badge(trace, lang)
    if labeled:
        st.caption(t("labeled_line", lang, id=code(labeled.id), group=md(labeled.group),
                     relevant=", ".join(code(r) for r in labeled.relevant) or t("none_abstention", lang)))
    answer_block(trace, asked.terms, lang, asked.choices.corpus.chunk_title)
    # The report to hand over: one self-contained HTML file of this question (retrieval/explain/report_html.py).
    st.download_button(t("dl_report", lang), report_html.question_report(trace, lang, asked.relevant, asked.graded),
                       "question-report.html", "text/html", on_click="ignore", help=t("ex_html_help", lang),
                       icon=":material/download:")
    support_block(trace, lang)
    if len(trace.queries) > 1:
        queries_block(trace, lang)


def tier_sentence(trace: TraceView, lang: str = "en") -> str:
    """The tier in plain words ("Answered with the learned ranker over BM25 + dense"): the full tier says which
    reranker kind read the candidates (its declaration's sentence), every other tier its own declaration's."""
    tier = trace.tier or ""
    kind = trace.models.reranker_kind or ""
    if tier == FULL.name and kind in KINDS and KINDS.get(kind).tier is not None:
        return KINDS.get(kind).tier(lang)
    if tier in TIERS:
        return TIERS.get(tier).sentence(lang)
    return t("tier_other", lang, tier=md(tier))


def tier_badge(trace: TraceView, lang: str = "en") -> None:
    """The plain-language tier line first, then the recorded reason in the page's language and the stages that
    did less than asked."""
    tier = trace.tier or ""
    name = tier if tier in TIERS else md(tier)  # a declared tier's name is plain words; any other is escaped
    st.markdown(f"**{tier_sentence(trace, lang)}** :{tier_color(tier)}-badge[{name}]")
    why = trace.tier_reason.value
    # The reader that could not load: one plain line (what is missing, what the page falls back to), the
    # recorded reason on hover; the same for the judge's note (its learned gate reads the reader too).
    plain = reader_line(why, tier, lang)
    if plain:
        st.caption(f"{t('tier_reason', lang)}: {plain}", help=reason(why, lang))
    elif why:
        st.caption(f"{t('tier_reason', lang)}: {reason(why, lang)}")
    for note in trace.notes:  # stages that did less than asked (MMR, a transform's LLM, a store read)
        code_ = note.note.value
        line = reader_line(code_, tier, lang)
        if line:
            st.caption(line, help=reason(code_, lang))
        else:
            st.caption(f"**{md_escape(stage(note.stage, lang))}**: {reason(code_, lang)}")


_CITE = re.compile(r"\\\[(\d+)\\\]")


def answer_block(trace: TraceView, terms: Iterable[str], lang: str = "en",
                 title_of: Callable[[str], str] | None = None) -> None:
    """The answer, its note, and each citation: the chunk it cites, its document's title (``title_of``: chunk id →
    title) and its place in its source, as its trace item carries it (``[1] `id` · Diário Oficial, 12/03/2024 ·
    p. 4 · Seção II``)."""
    ans = trace.answer
    final = trace.final
    st.subheader(t("answer", lang))
    if ans.abstained:
        # One reason, the true one: the tier line above carries ``tier_reason``; nothing else is added here.
        text = ABSTENTIONS.get(lang) if ans.text in ABSTENTIONS.values() else ans.text
        st.warning(f"**{t('abstained', lang)}** {md_escape(text or '')} {t('why_in_tier', lang)}")
        return
    text = _CITE.sub(lambda m: f"**\\[{m.group(1)}\\]**", md_escape(ans.text))
    with st.container(border=True):
        st.markdown(text)
    if ans.note.text:
        st.caption(reason(ans.note.value, lang))
    if ans.dropped_citations:
        st.caption(t("dropped_citations", lang) + ", ".join(code(c) for c in ans.dropped_citations))
    number = {item.chunk_id: i for i, item in enumerate(final, start=1)}
    for chunk_id in ans.citations:
        item = next((f for f in final if f.chunk_id == chunk_id), None)
        if item is None:
            continue
        cited = cited_label(title_of(chunk_id) if title_of else "", item.where, lang)
        with st.expander(f"[{number[chunk_id]}] {code(chunk_id)}" + (f" · {md(cited)}" if cited else "")):
            if item.sibling_of is not None:
                st.caption(t("citation_sibling", lang, parent=code(item.parent_id), rank=item.rank,
                             of=item.sibling_of, cos=num(item.similarity, ".3f", lang)))
            else:
                st.caption(t("citation_line", lang, parent=code(item.parent_id), rank=item.rank,
                             cos=num(item.similarity, ".3f", lang)))
            st.markdown(highlighted(item.text, terms))
    added = sum(1 for f in final if f.sibling_of is not None)
    st.caption(t("context_sent_siblings", lang, n=len(final), m=added) if added
               else t("context_sent", lang, n=len(final)))


def support_block(trace: TraceView, lang: str = "en") -> None:
    """The learned support gate: P against the threshold, the reason, and what pushed the log-odds."""
    summary = support.support_summary(trace)
    if summary is None:
        return
    if trace.gate.support.best is None:  # the gate did not run: its note
        inner = summary.params.get("why") if summary.code == "support.not_applied" else summary
        line = reader_line(inner, trace.tier or "", lang) or reason(summary, lang)
    else:
        line = reason(summary, lang)
    rows = support.support_rows(trace, lang)
    with st.expander(t("support_gate", lang), expanded=trace.answer.abstained):
        st.markdown(line)
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


def queries_block(trace: TraceView, lang: str = "en") -> None:
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
    with st.expander(t("variant_lists", lang, n=len(trace.variants))):
        for variant in trace.variants:
            q = variant.query
            st.markdown(f"**{md(q.kind)}**{t('hypothesis_only', lang) if q.hypothesis_only else ''}: "
                        f"{md_escape(q.text)}")
            for side, listed in (("lexical", variant.lexical), ("dense", variant.dense)):
                items = listed.items
                if items:
                    st.caption(f"{side}: " + ", ".join(f"#{i.rank} {code(i.chunk_id)}" for i in items[:10]))
