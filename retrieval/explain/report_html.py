"""The report to hand over of one question: one self-contained HTML file of its trace.

Each opens offline in any browser: inline CSS, no script, no external resource; charts are HTML bars (a
``div`` whose width is the value). Every value read from the trace or the report (ids, texts, reasons, the
question, the hypothesis) goes through :func:`html.escape`, so a chunk id holding markup shows as text.

* :func:`question_report` — the answer with its citations, the tier, the rank grid (:func:`retrieval.explain.grid.
  grid_rows`) as a table, the provenance of each final item (BM25 per term, cosine, the RRF terms
  ``w / (k + r)``, the reranker's feature contributions in raw LambdaMART units) and what the reranker dropped.
  Each chunk is named with its place in its source where the trace's items carry one (``p. 4 · Seção II``:
  :func:`retrieval.ingest.location.location_label`).

The words are English or Portuguese (``lang``), and so are the trace's reasons where it recorded their codes
(a trace without codes keeps its English text).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.reasons import Reason
from ..ingest.location import location_label
from ..learned.judge.features import feature_label
from ..pipeline.view import Said, TraceView
from . import card as cards
from . import grid
from .html import esc, label, lang_of, num, page, table
from .tables import lost_rows

_FATES = {"final": ("", ""), "not_fused": ("not fused", "não fundido"),
          "window": ("outside the rerank window", "fora da janela do rerank"), "dedup": ("dedup", "dedup"),
          "top_k": ("below top_k", "abaixo do top_k"), "mmr": ("not picked by MMR", "o MMR não o escolheu"),
          "gate": ("refused by the gate", "recusado pelo portão")}


# -- one question --------------------------------------------------------------------------------------------
def question_report(trace: TraceView, lang: str = "en", relevant: Sequence[str] | None = None,
                    graded: Mapping[str, int] | None = None) -> str:
    """A self-contained HTML report of one request's trace (the view of ``Trace.to_dict()``).

    Args:
        trace: the trace.
        lang: ``en`` or ``pt`` (the report's words and the trace's coded reasons).
        relevant, graded: the question's labels, when it is a labeled one (the grid's label column).

    Returns:
        The HTML document, with no script and every trace value escaped.
    """
    lang = lang_of(lang)
    parts = [f"<p><b>{esc(label('question', lang))}:</b> {esc(trace.question)}</p>",
             f"<p><b>{esc(label('tier', lang))}:</b> <span class=\"tier\">{esc(trace.tier)}</span></p>"]
    if trace.tier_reason.text:
        parts.append(f"<p class=\"muted\">{esc(label('tier_reason', lang))}: "
                     f"{esc(_said(trace.tier_reason, lang))}</p>")
    parts.append(_answer(trace, lang))
    rows = grid.grid_rows(trace, relevant, graded)
    parts.append(f"<h2>{esc(label('grid', lang))}</h2><p class=\"muted\">{esc(label('grid_note', lang))}</p>")
    parts.append(_grid_table(rows, lang, relevant is not None))
    parts.append(f"<h2>{esc(label('provenance', lang))}</h2>")
    for item in trace.final:
        parts.append(_provenance(trace, item.chunk_id, lang, relevant, graded))
    parts.append(_dropped(trace, lang, relevant, graded))
    return page(label("question_title", lang), lang, "".join(parts))


def _answer(trace: TraceView, lang: str) -> str:
    ans = trace.answer
    out = [f"<h2>{esc(label('answer', lang))}</h2>"]
    if ans.abstained:
        out.append(f"<div class=\"answer\"><b>{esc(label('abstained', lang))}</b> {esc(ans.text)}</div>")
        return "".join(out)
    out.append(f"<div class=\"answer\">{esc(ans.text)}</div>")
    number = {item.chunk_id: i for i, item in enumerate(trace.final, start=1)}
    cited = [item for item in trace.final if item.chunk_id in set(ans.citations)]
    if cited:
        out.append(f"<h3>{esc(label('citations', lang))}</h3><ol>")
        for item in cited:
            out.append(f"<li value=\"{number[item.chunk_id]}\"><code>{esc(item.chunk_id)}</code>{_where(item.where)} "
                       f"({esc(label('parent', lang))} <code>{esc(item.parent_id)}</code>)<br>{esc(item.text)}</li>")
        out.append("</ol>")
    return "".join(out)


def _where(where: Mapping[str, Any]) -> str:
    """`` · p. 4 · Seção II``: a chunk's place in its source (its trace item's or grid row's ``where``), escaped;
    ``""`` where it has none."""
    said = location_label(where)
    return f" · <span class=\"where\">{esc(said)}</span>" if said else ""


def _text(value: Any, lang: str) -> str:
    """A recorded reason in ``lang`` (its code's template), or the text as recorded."""
    found = Reason.from_dict(value) if isinstance(value, Mapping) else None
    return found.text(lang) if found is not None else str(value or "")


def _said(said: Said, lang: str) -> str:
    """A reason the trace recorded: its code in ``lang``, else its text."""
    return _text(said.value, lang)


def _fate(row: Mapping[str, Any], lang: str) -> str:
    words = _FATES.get(row["fate"], (row["fate"], row["fate"]))[1 if lang == "pt" else 0]
    detail = row.get("fate_detail") or {}
    if row["fate"] == "dedup" and detail.get("kept"):
        words += f" ({label('parent', lang)}: {detail['kept']})"
    elif row["fate"] == "top_k" and detail.get("top_k"):
        words += f" ({detail['top_k']})"
    elif row["fate"] == "gate" and detail.get("reason"):
        words += f": {_text(detail['reason'], lang)}"
    elif row["fate"] == "gate" and detail.get("value") is not None:
        words += f" ({detail.get('kind')} {detail['value']:.3f} < {detail.get('threshold')})"
    return esc(words)


def _grid_table(rows: Sequence[Mapping[str, Any]], lang: str, labeled: bool) -> str:
    marks = {"relevant": "✓", "partial": "~", "not labeled": "·"}
    placed = any(r.get("where") for r in rows)  # a "where" column only for a corpus whose chunks have a place
    keys = ["final", "chunk", "parent"] + (["where"] if placed else []) + (["label"] if labeled else []) + [
        "bm25_rank", "bm25", "dense_rank", "cosine", "fused_rank", "rrf", "rerank_rank", "rerank", "move", "fate"]
    body = []
    for r in rows:
        move = r["move"]
        cells = [(num(r["final"]), True), (f"<code>{esc(r['chunk_id'])}</code>", False),
                 (f"<code>{esc(r['parent_id'])}</code>", False)]
        if placed:
            cells.append((esc(location_label(r.get("where") or {})), False))
        if labeled:
            cells.append((esc(marks.get(r["relevance"] or "", "")), False))
        cells += [(num(r["bm25_rank"]), True), (num(r["bm25"], ".3f"), True), (num(r["dense_rank"]), True),
                  (num(r["cosine"], ".3f"), True), (num(r["fused_rank"]), True), (num(r["rrf"], ".5f"), True),
                  (num(r["rerank_rank"]), True), (num(r["rerank"], ".3f"), True),
                  ("" if move is None else ("=" if move == 0 else f"↑{move}" if move > 0 else f"↓{-move}"), False),
                  (_fate(r, lang), False)]
        body.append(cells)
    return table([esc(label(k, lang)) for k in keys], body)


def _provenance(trace: TraceView, chunk_id: str, lang: str, relevant: Sequence[str] | None,
                graded: Mapping[str, int] | None) -> str:
    card = cards.provenance(trace, chunk_id, relevant, graded)
    row = card["row"]
    out = [f"<h3>#{num(row['final'])} <code>{esc(chunk_id)}</code>{_where(row['where'])} · "
           f"{esc(label('parent', lang))} <code>{esc(row['parent_id'])}</code></h3>"]
    bm25 = card["bm25"]
    if bm25:
        out.append(f"<p>BM25 #{bm25['rank']} · {num(bm25['score'], '.3f')}</p>")
        if bm25["terms"]:
            out.append(table([esc(label("term", lang)), esc(label("contribution", lang))],
                              [[(f"<code>{esc(term)}</code>", False), (num(value, ".3f"), True)]
                               for term, value in bm25["terms"]]))
    else:
        out.append(f"<p>BM25: {esc(label('not_in', lang))}</p>")
    dense = card["dense"]
    out.append(f"<p>{esc(label('dense_line', lang))}: {num(dense['cosine'], '.3f') or '—'}"
               + (f" · dense #{dense['rank']}" if dense["rank"] else "") + "</p>")
    fusion = card["fusion"]
    if fusion:
        terms = " + ".join(f"{esc(t['ranker'])} {esc(cards.term_formula(trace, t, lang))}" for t in fusion["terms"])
        out.append(f"<p>{esc(label('rrf_terms', lang))}: {terms} = {num(fusion['score'], '.5f')} "
                   f"(#{fusion['rank']})</p>")
    rerank = card["rerank"]
    if rerank:
        out.append(f"<p>{esc(label('rerank_score', lang))} ({esc(rerank['score_kind'])}): {num(rerank['score'], '.3f')}"
                   f" · #{rerank['rank']}</p>")
        if rerank["features"]:
            rows = [[(f"{esc(feature_label(name, lang))} <code>{esc(name)}</code>", False), (num(value, "+.4f"), True)]
                    for name, value in rerank["features"]]
            if rerank["bias"] is not None:
                rows.append([(esc(label("bias", lang)), False), (num(rerank["bias"], "+.4f"), True)])
            out.append(f"<p>{esc(label('features', lang))}</p>"
                       + table([esc(label("feature", lang)), esc(label("contribution", lang))], rows))
    return "".join(out)


def _dropped(trace: TraceView, lang: str, relevant: Sequence[str] | None,
             graded: Mapping[str, int] | None) -> str:
    out = [f"<h2>{esc(label('dropped', lang))}</h2>"]
    if not trace.reranked.items:
        note = trace.reranked.note
        reason = _said(note, lang) if note.text else _said(trace.tier_reason, lang)
        out.append(f"<p class=\"muted\">{esc(reason)}</p>")
        return "".join(out)
    rows = lost_rows(trace, relevant, graded)
    if not rows:
        out.append(f"<p>{esc(label('dropped_none', lang))}</p>")
        return "".join(out)
    body = []
    for r in rows:
        after = r["reranked_rank"]
        mark = f"<span class=\"lost\">{esc(r['relevance'])}</span>" if r["relevance"] == "relevant" else esc(
            r["relevance"] or "")
        body.append([(f"<code>{esc(r['chunk_id'])}</code>{_where(r['where'])}", False),
                     (f"<code>{esc(r['parent_id'])}</code>", False),
                     (f"#{r['fused_rank']} → " + (f"#{after}" if after is not None else "—"), False), (mark, False)])
    out.append(table([esc(label(k, lang)) for k in ("chunk", "parent", "fused_to", "relevance")], body))
    return "".join(out)
