"""The rank grid tab: one table of every candidate chunk, the provenance card of one chunk, and "Why A above B".

Layout only: the rows, the card's signals and the deciding signal come from :mod:`retrieval.explain.grid`,
:mod:`~retrieval.explain.card` and :mod:`~retrieval.explain.why`; a fusion method's formula and a feature's words
are their declarations'; every other visible text is in :mod:`ui.i18n.grid`. Ids, terms and trace texts put into
Markdown go through :func:`ui.escape.code` / :func:`ui.escape.md`; table cells and select boxes show plain text.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd
import streamlit as st

from retrieval.explain import card as cards
from retrieval.explain import grid, why
from retrieval.explain.tables import empty_reason
from retrieval.ingest.location import location_label, pages_label
from retrieval.learned.judge import feature_label
from retrieval.pipeline.view import TraceView
from retrieval.stages.fusion import METHODS
from retrieval.stages.gate import GATES
from retrieval.stages.rerank import KINDS

from ..escape import code, md
from ..format import num, ranker
from ..i18n import t
from ..keep import keep, kept, remember, restore
from ..reasons import plain, reason
from ..widgets import highlighted, relevance_badge

#: Rows of the grid shown without scrolling, and their height in pixels (about 21 rows and the header fit in
#: 530 px: under the answer on a 1280×720 screen).
VISIBLE_ROWS = 21
ROW_HEIGHT = 24
RELEVANCE_MARKS = {"relevant": "✓", "partial": "~", "not labeled": "·"}
CARD_KEY, A_KEY, B_KEY, GRID_KEY = "card_pick", "why_a", "why_b", "rank_grid"
#: The row of "Why A above B" whose signal decided the order.
DECIDED_STYLE = "background-color: rgba(255, 193, 7, 0.25)"


def _num(value: float | None, spec: str, lang: str = "en") -> str:
    return num(value, spec, lang)


def _arrow(move: int | None) -> str:
    if move is None:
        return ""
    return f"↑{move}" if move > 0 else (f"↓{-move}" if move < 0 else "=")


def _bm25_share(shares: Mapping[str, float]) -> float | None:
    """The BM25 lists' share of the fused score (``bm25`` and its transforms' ``bm25:…`` lists)."""
    if not shares:
        return None
    return sum(v for r, v in shares.items() if r == "bm25" or r.startswith("bm25:"))


def fate_text(row: Mapping[str, Any], lang: str, markdown: bool = False) -> str:
    """Why a grid row is not in the final list, in ``lang`` ('' when it is); ids as code spans when
    ``markdown`` (trace texts escaped), plain otherwise (a table cell)."""
    fate, detail = row["fate"], row["fate_detail"]
    wrap = code if markdown else str
    if fate == "final":
        return t("fate_tail", lang) if detail.get("tail") else ""
    if fate == "dedup":
        if detail.get("context"):
            return t("fate_dedup_context", lang, kept=wrap(detail["kept"]), n=detail["context"])
        return t("fate_dedup", lang, kept=wrap(detail["kept"]))
    if fate == "top_k":
        return t("fate_top_k", lang, top_k=detail.get("top_k"))
    if fate == "mmr":
        return t("fate_mmr", lang)
    if fate == "window":
        return t("fate_window", lang, max_input=detail.get("max_input"))
    if fate == "gate":
        if "reason" in detail:
            return t("fate_gate_request", lang, reason=reason(detail["reason"], lang) if markdown
                     else plain(detail["reason"], lang))
        spec = GATES.get(detail["kind"]).value_spec if detail["kind"] in GATES else ".3f"
        return t("fate_gate", lang, kind=detail["kind"], value=_num(detail["value"], spec, lang),
                 threshold=_num(detail["threshold"], "", lang))
    return t("fate_not_fused", lang)


def _ids_label(rows: Sequence[Mapping[str, Any]]):
    final = {r["chunk_id"]: r["final"] for r in rows}
    return lambda cid: f"#{final[cid]} · {cid}" if final.get(cid) else cid


# -- the rank grid ---------------------------------------------------------------------------------------------
def rank_grid(trace: TraceView, relevant: Sequence[str] | None, graded: Mapping[str, int] | None,
              lang: str = "en") -> list[dict[str, Any]]:
    """One compact table of every candidate chunk (:func:`retrieval.explain.grid.grid_rows`); selecting a row opens its
    provenance card. Where a row's chunk has a place in its source (its trace items' page and section path: a PDF's
    page, a Markdown chunk's headings), a "where" column shows it (``p. 4 · Capítulo I › Seção II``). Returns the
    rows (grid order)."""
    rows = grid.grid_rows(trace, relevant, graded)
    st.subheader(t("grid_title", lang))
    if not rows:
        st.info(t("grid_empty", lang))
        return rows
    stage = t(f"stage_{grid.final_stage(trace)}", lang)
    st.caption(t("grid_caption", lang) + " " + t("grid_count", lang, n=len(rows),
                                                     f=sum(r["final"] is not None for r in rows), stage=stage))
    labels = grid.distinct_labels([r["chunk_id"] for r in rows])  # what tells the ids apart; whole in the card
    data: dict[str, Any] = {
        "final": pd.array([r["final"] for r in rows], dtype="Int64"),
        "chunk": [labels[r["chunk_id"]] for r in rows],  # shown; the whole id stays in the frame (downloads)
        "chunk_id": [r["chunk_id"] for r in rows],
    }
    config: dict[str, Any] = {
        "final": st.column_config.NumberColumn(t("col_final", lang), format="#%d", width=40, pinned=True,
                                               help=t("col_final_help", lang)),
        "chunk": st.column_config.TextColumn(t("col_chunk", lang), width=170, pinned=True,
                                             help=t("col_chunk_help", lang)),
    }
    if any(r["where"] for r in rows):
        data["where"] = [location_label(r["where"], lang) for r in rows]
        config["where"] = st.column_config.TextColumn(t("col_where", lang), width=200, help=t("col_where_help", lang))
    if relevant is not None:
        data["label"] = [RELEVANCE_MARKS.get(r["relevance"] or "", "") for r in rows]
        config["label"] = st.column_config.TextColumn(t("col_label", lang), width=32, pinned=True,
                                                      help=t("col_label_help", lang))
    ran = {name: bool(trace.ranked(name).items) for name in ("lexical", "dense", "reranked")}
    columns = [("lexical", "bm25_rank", "col_bm25_rank", None, "%d"), ("lexical", "bm25", "col_bm25",
                                                                      "col_bm25_help", "%.2f"),
               ("dense", "dense_rank", "col_dense_rank", None, "%d"), ("dense", "cosine", "col_cosine",
                                                                      "col_cosine_help", "%.3f"),
               (None, "fused_rank", "col_fused_rank", None, "%d"), (None, "rrf", "col_rrf", "col_rrf_help", "%.4f")]
    for source, name, label, helptext, fmt in columns:
        if source is not None and not ran[source]:
            continue
        values = [r[name] for r in rows]
        data[name] = pd.array(values, dtype="Int64") if fmt == "%d" else pd.array(values, dtype="Float64")
        config[name] = st.column_config.NumberColumn(t(label, lang), format=fmt, width=54 if fmt != "%d" else 44,
                                                     help=t(helptext, lang) if helptext else None)
    if ran["lexical"] and ran["dense"]:
        data["share"] = pd.array([None if (v := _bm25_share(r["shares"])) is None else 100 * v for r in rows],
                                 dtype="Float64")
        config["share"] = st.column_config.ProgressColumn(t("col_share", lang), format="%.0f %%", min_value=0.0,
                                                          max_value=100.0, width=64, help=t("col_share_help", lang))
    if ran["reranked"]:
        data["rerank_rank"] = pd.array([r["rerank_rank"] for r in rows], dtype="Int64")
        data["rerank"] = pd.array([r["rerank"] for r in rows], dtype="Float64")
        data["move"] = [_arrow(r["move"]) for r in rows]
        config["rerank_rank"] = st.column_config.NumberColumn(t("col_rerank_rank", lang), format="%d", width=48)
        config["rerank"] = st.column_config.NumberColumn(t("col_rerank", lang), format="%.3f", width=54,
                                                         help=t("col_rerank_help", lang))
        config["move"] = st.column_config.TextColumn(t("col_move", lang), width=40, help=t("col_move_help", lang))
    data["fate"] = [fate_text(r, lang) for r in rows]
    config["fate"] = st.column_config.TextColumn(t("col_fate", lang), width=190)
    ids = [r["chunk_id"] for r in rows]

    def picked() -> None:  # a selected row opens its card (the select box below follows it)
        selection = (st.session_state.get(GRID_KEY) or {}).get("selection") or {}
        chosen = selection.get("rows") or []
        if chosen and 0 <= chosen[0] < len(ids):
            remember(CARD_KEY, ids[chosen[0]])

    st.dataframe(pd.DataFrame(data), column_config=config, column_order=[c for c in data if c != "chunk_id"],
                 hide_index=True, width="stretch",
                 height=(min(len(rows), VISIBLE_ROWS) + 1) * ROW_HEIGHT + 3, row_height=ROW_HEIGHT,
                 key=GRID_KEY, on_select=picked, selection_mode="single-row", placeholder="")
    return rows


# -- the provenance card ---------------------------------------------------------------------------------------
def _fusion_formula(trace: TraceView, fusion: Mapping[str, Any], lang: str) -> str:
    """The fused score written out as its method declares its terms: ``bm25 1/(60 + 1) + dense 1/(60 + 3) = …``
    for a rank-based method, each list's weighted normalized score for CombSUM and the convex combination."""
    terms = fusion["terms"]
    parts = " + ".join(f"{code(x['ranker'])} {cards.term_formula(trace, x, lang)}" for x in terms)
    if not fusion["rank_based"]:  # Borda's points are whole numbers or halves
        spec = "g" if fusion.get("method") == "borda" else ".4f"
        return f"{parts} = **{_num(fusion['score'], spec, lang)}**"
    values = " + ".join(_num(x["value"], ".5f", lang) for x in terms)
    return f"{parts} = {values} = **{_num(fusion['score'], '.5f', lang)}**"


def provenance_card(trace: TraceView, chunk_id: str, chunk_text: Mapping[str, str], terms: frozenset[str],
                    relevant: Sequence[str] | None, graded: Mapping[str, int] | None, lang: str = "en",
                    chunk_code: Mapping[str, str] | None = None) -> None:
    """Every signal of one chunk (:func:`retrieval.explain.grid.provenance`): its page and section path (where its
    trace items carry them), its text with the question's terms marked and its code blocks, BM25 per term, cosine
    and dense rank, the RRF terms with k, the reranker's score and each feature's contribution, and the gate's
    decision."""
    card = cards.provenance(trace, chunk_id, relevant, graded)
    row = card["row"]
    st.subheader(t("card_title", lang))
    where = t("card_final", lang, n=row["final"]) if row["final"] else fate_text(row, lang, markdown=True)
    badge = relevance_badge(row["relevance"], lang)
    st.markdown(t("card_head", lang, chunk=code(chunk_id), parent=code(row["parent_id"]), where=where)
                + (f" {badge}" if badge else ""))
    place = where_line(row["where"], lang)
    if place:
        st.markdown(place)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        st.caption(t("card_text", lang))
        with st.container(border=True):
            st.markdown(highlighted(chunk_text.get(chunk_id, ""), terms))
        source = (chunk_code or {}).get(chunk_id)
        if source:
            st.caption(t("card_code", lang))
            st.code(source, language=None, wrap_lines=True)
        _dense_line(card["dense"], lang)
        _fusion_lines(trace, card["fusion"], row, lang)
        _gate_line(card["gate"], row, lang)
    with right:
        _bm25_section(trace, card["bm25"], lang)
        _rerank_section(trace, card["rerank"], lang)


def where_line(where: Mapping[str, Any], lang: str = "en") -> str:
    """The card's line of a chunk's place in its source: ``Page: p. 4 · Section: Capítulo I › Seção II``, each part
    where the chunk has it (Markdown escaped); ``""`` where it has neither."""
    pages, section = pages_label(where, lang), where.get("section")
    parts = ([t("card_page", lang, pages=md(pages))] if pages else []) + (
        [t("card_section", lang, section=md(section))] if section else [])
    return " · ".join(parts)


def _bm25_section(trace: TraceView, bm25: Mapping[str, Any] | None, lang: str) -> None:
    if bm25 is None:
        lexical = trace.lexical
        why = (reason(lexical.note.value, lang)
               if not lexical.items and lexical.note.text else t("card_no_bm25_any", lang))
        st.markdown(t("card_no_bm25", lang, why=why))
        return
    st.markdown(t("card_bm25", lang, rank=bm25["rank"], score=_num(bm25["score"], ".3f", lang)))
    if not bm25["terms"]:
        return
    top = max(v for _, v in bm25["terms"]) or 1.0
    st.dataframe(pd.DataFrame(bm25["terms"], columns=["term", "contribution"]), hide_index=True, width="stretch",
                 row_height=ROW_HEIGHT, height=(min(len(bm25["terms"]), 8) + 1) * ROW_HEIGHT + 3,
                 column_config={"term": st.column_config.TextColumn(t("card_term", lang)),
                                "contribution": st.column_config.ProgressColumn(
                                    t("card_contribution", lang), format="%.3f", min_value=0.0,
                                    max_value=float(top))})


def _dense_line(dense: Mapping[str, Any], lang: str) -> None:
    if dense["cosine"] is None:
        st.markdown(t("card_no_dense", lang))
    elif dense["cosine_from"] == "gate":
        st.markdown(t("card_dense_gate", lang, cos=_num(dense["cosine"], ".3f", lang)))
    else:
        st.markdown(t("card_dense", lang, cos=_num(dense["cosine"], ".3f", lang), rank=dense["rank"]))


def _fusion_lines(trace: TraceView, fusion: Mapping[str, Any] | None, row: Mapping[str, Any],
                  lang: str) -> None:
    if fusion is None:
        st.markdown(t("card_no_fused", lang))
        return
    method = METHODS.get(fusion["method"]).label(lang) if fusion["method"] in METHODS else md(fusion["method"])
    st.markdown(t("card_fused", lang, rank=fusion["rank"], method=method,
                  formula=_fusion_formula(trace, fusion, lang)))
    shares = " · ".join(f"{ranker(r, lang)} {num(v * 100, '.0f', lang)} %" for r, v in row["shares"].items())
    if fusion["rank_based"]:
        st.caption(t("card_rrf_k", lang, k=fusion["k"], shares=md(shares)))
    else:
        st.caption(t("card_shares", lang, shares=md(shares)))


def _rerank_section(trace: TraceView, rerank: Mapping[str, Any] | None, lang: str) -> None:
    if rerank is None:
        why = reason(empty_reason(trace, "reranked"), lang) if not trace.reranked.items else \
            t("fate_window", lang, max_input=trace.settings.reranker_max_input)
        st.markdown(t("card_no_rerank", lang, why=why))
        return
    kind = KINDS.get(rerank["kind"]) if rerank["kind"] in KINDS else None
    st.markdown(t("card_rerank", lang, kind=md(rerank["kind"] or rerank["score_kind"] or ""), rank=rerank["rank"],
                  score=_num(rerank["score"], ".3f", lang), fused=rerank["fused_rank"], move=_arrow(rerank["move"])))
    if not rerank["features"]:
        scale = kind.score_label(lang) if kind and kind.score_label else md(rerank["score_kind"] or "")
        st.caption(t("card_rerank_scale", lang, kind=scale))
        return
    st.caption(t("card_rerank_unit", lang, bias=_num(rerank["bias"], "+.3f", lang)))
    frame = pd.DataFrame([{"contribution": value, "label": feature_label(name, lang), "feature": name}
                          for name, value in rerank["features"]])
    st.dataframe(frame, hide_index=True, width="stretch", row_height=ROW_HEIGHT, height=10 * ROW_HEIGHT + 3,
                 column_config={"label": st.column_config.TextColumn(t("card_feature", lang)),
                                "feature": st.column_config.TextColumn(t("card_feature_id", lang), width=110),
                                "contribution": st.column_config.NumberColumn(t("card_contribution", lang),
                                                                              format="%+.4f", width=90)})


def _gate_line(gate: Mapping[str, Any], row: Mapping[str, Any], lang: str) -> None:
    declared = GATES.get(gate["kind"]) if gate["kind"] in GATES else None
    spec = declared.value_spec if declared is not None else ".3f"
    kind = declared.measure(lang) if declared is not None and declared.measure is not None else gate["kind"]
    values = {"kind": kind, "value": _num(gate["value"], spec, lang) if gate["value"] is not None else
              t("unknown", lang), "threshold": _num(gate["threshold"], "", lang)}
    if gate["decision"] == "passed":
        line = t("card_gate_passed", lang, **values)
    elif gate["reason"]:
        line = t("card_gate_request", lang, reason=reason(gate["reason"], lang))
    elif gate["decision"] == "refused":
        line = t("card_gate_refused", lang, **values)
    elif row["fate"] == "dedup" and row["fate_detail"].get("context"):  # not gated itself: its document passed
        line = t("card_gate_sibling", lang, n=row["fate_detail"]["context"], kept=code(row["fate_detail"]["kept"]))
    else:
        line = t("card_gate_not_read", lang, why=fate_text(row, lang, markdown=True))
    st.markdown(line)
    support = gate.get("support")
    if support:
        st.caption(t("card_support", lang, p=_num(support["p"], ".2f", lang), op="≥" if support["passes"] else "<",
                     threshold=_num(support["threshold"], ".2f", lang),
                     verdict=t("card_support_answers" if support["passes"] else "card_support_abstains", lang),
                     read=t("card_support_read", lang) if support["read"] else ""))


# -- why A above B ---------------------------------------------------------------------------------------------
_GROUP_FORMAT = {"bm25": ".3f", "dense": ".3f", "rrf": ".5f", "rerank": "+.4f"}


def _value(group: str, value: float | None, lang: str = "en") -> str:
    if value is None:
        return "—"
    return f"{num(value * 100, '.0f', lang)} %" if group == "share" else num(value, _GROUP_FORMAT[group], lang)


def _signal_cells(row: Mapping[str, Any], lang: str) -> tuple[str, str]:
    group, signal = row["group"], row["signal"]
    if group == "bm25":
        return (t("grp_bm25_score", lang), "") if signal == "score" else (t("grp_bm25", lang), signal)
    if group == "dense":
        return t("grp_dense", lang), ""
    if group in ("rrf", "share"):
        return t(f"grp_{group}", lang), signal
    if signal == "score":
        return t("grp_rerank_score", lang), ""
    return t("grp_rerank", lang), feature_label(signal, lang)


def _sentence(trace: TraceView, result: Mapping[str, Any], rows_by_id: Mapping[str, Any], lang: str) -> str:
    deciding = result["deciding"]
    kind, signal, diff = deciding["kind"], deciding["signal"], deciding["diff"]
    upper, lower = code(result["upper"]), code(result["lower"])
    stage = t(f"stage_{result['stage']}", lang)
    if kind == "feature":
        return t("why_feature", lang, upper=upper, lower=lower, signal=md(feature_label(signal, lang)),
                 diff=num(diff, "+.3f", lang))
    if kind == "score":
        return t("why_score", lang, upper=upper, lower=lower, diff=num(diff, "+.3f", lang))
    if kind == "rrf":
        return t("why_rrf", lang, upper=upper, lower=lower, signal=md(signal), diff=num(diff, "+.5f", lang))
    if kind == "tie":
        return t("why_tie", lang, upper=upper, lower=lower, stage=stage, signal=t(f"signal_{signal}", lang))
    if kind == "absent":
        return t("why_absent", lang, upper=upper, lower=lower, stage=stage,
                 signal=fate_text(rows_by_id[result["lower"]], lang, markdown=True))
    if kind == "mmr":
        return t("why_mmr", lang, upper=upper, lower=lower, lam=trace.settings.mmr_lambda)
    return t("why_unranked", lang, stage=stage)


def why_a_above_b(trace: TraceView, rows: Sequence[Mapping[str, Any]], lang: str = "en") -> None:
    """Two chunks (by default final #1 and #2) side by side, signal by signal, and the signal that decided
    their order (:func:`retrieval.explain.grid.why_above`)."""
    st.subheader(t("why_title", lang))
    ids = [r["chunk_id"] for r in rows]
    if len(ids) < 2:
        st.info(t("why_few", lang))
        return
    for key, default in ((A_KEY, ids[0]), (B_KEY, ids[1])):
        if kept(key) not in ids:  # another question: final #1 and #2
            remember(key, default)
        restore(key)  # the pair picked before, when the tab is opened again
    label = _ids_label(rows)
    c1, c2 = st.columns(2)
    c1.selectbox(t("why_a", lang), ids, key=A_KEY, format_func=label, on_change=keep, args=(A_KEY,))
    c2.selectbox(t("why_b", lang), ids, key=B_KEY, format_func=label, on_change=keep, args=(B_KEY,))
    a, b = st.session_state[A_KEY], st.session_state[B_KEY]
    if a == b:
        st.info(t("why_same", lang))
        return
    result = why.why_above(trace, a, b)
    rows_by_id = {r["chunk_id"]: r for r in rows}
    st.markdown(_sentence(trace, result, rows_by_id, lang))
    deciding = result["deciding"]
    decided_group = {"feature": "rerank", "score": "rerank", "rrf": "rrf"}.get(deciding["kind"])
    table = []
    for entry in result["rows"]:
        what, signal = _signal_cells(entry, lang)
        only = {"upper": t("why_only_upper", lang), "lower": t("why_only_lower", lang)}.get(entry["only"] or "", "")
        table.append({"decided": "★" if (entry["group"], entry["signal"]) == (decided_group, deciding["signal"])
                      else "", "group": what, "signal": signal,
                      "upper": _value(entry["group"], entry["upper"], lang),
                      "lower": _value(entry["group"], entry["lower"], lang),
                      "diff": _value(entry["group"], entry["diff"], lang) if entry["group"] != "share" else
                      f"{num(entry['diff'] * 100, '+.0f', lang)} pp", "only": only})
    table.sort(key=lambda r: not r["decided"])  # the deciding signal first, then the groups in pipeline order
    frame = pd.DataFrame(table, columns=["group", "signal", "upper", "lower", "diff", "only", "decided"])
    styled = frame.style.apply(lambda r: [DECIDED_STYLE if r["decided"] else ""] * len(r), axis=1)
    st.dataframe(styled, hide_index=True, width="stretch", row_height=ROW_HEIGHT,
                 height=(min(len(table), 16) + 1) * ROW_HEIGHT + 3,
                 column_config={"group": st.column_config.TextColumn(t("why_group", lang), width=130),
                                "signal": st.column_config.TextColumn(t("why_signal", lang), width=190),
                                "upper": st.column_config.TextColumn(t("why_upper", lang, id=result["upper"]),
                                                                     width=140),
                                "lower": st.column_config.TextColumn(t("why_lower", lang, id=result["lower"]),
                                                                     width=140),
                                "diff": st.column_config.TextColumn(t("why_diff", lang), width=80),
                                "only": st.column_config.TextColumn(t("why_only", lang), width=60),
                                "decided": st.column_config.TextColumn(t("why_decided", lang), width=60)})


# -- the whole view --------------------------------------------------------------------------------------------
def analyst_view(trace: TraceView, chunk_text: Mapping[str, str], terms: frozenset[str],
                 relevant: Sequence[str] | None, graded: Mapping[str, int] | None, lang: str = "en",
                 chunk_code: Mapping[str, str] | None = None) -> None:
    """The rank grid, then the provenance card of the chunk picked (in the grid or the box), then "Why A above
    B"."""
    rows = rank_grid(trace, relevant, graded, lang)
    if not rows:
        return
    ids = [r["chunk_id"] for r in rows]
    if kept(CARD_KEY) not in ids:  # another question: final #1
        remember(CARD_KEY, ids[0])
    restore(CARD_KEY)  # the chunk picked before, when the tab is opened again
    st.selectbox(t("card_pick", lang), ids, key=CARD_KEY, format_func=_ids_label(rows), on_change=keep,
                 args=(CARD_KEY,))
    provenance_card(trace, st.session_state[CARD_KEY], chunk_text, terms, relevant, graded, lang, chunk_code)
    st.divider()
    why_a_above_b(trace, rows, lang)


def panel(asked: Any) -> None:
    """The grid tab of one question (:class:`ui.ask.page.Asked`), as a fragment: a pick re-runs it alone."""
    corpus = asked.choices.corpus
    st.fragment(analyst_view)(asked.trace, corpus.chunk_text, asked.terms, asked.relevant, asked.graded, asked.lang,
                              corpus.chunk_code)
