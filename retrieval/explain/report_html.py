"""Reports to hand over: one self-contained HTML file of a question's trace, one of an evaluation.

Each opens offline in any browser: inline CSS, no script, no external resource; charts are HTML bars (a
``div`` whose width is the value). Every value read from the trace or the report (ids, texts, reasons, the
question, the hypothesis) goes through :func:`html.escape`, so a chunk id holding markup shows as text.

* :func:`question_report` — the answer with its citations, the tier, the rank grid (:func:`retrieval.explain.grid.
  grid_rows`) as a table, the provenance of each final item (BM25 per term, cosine, the RRF terms
  ``w / (k + r)``, the reranker's feature contributions in raw LambdaMART units) and what the reranker dropped.
* :func:`evaluation_report` — the provisional decision (:func:`retrieval.offline.report.choose`), its caveats, the
  metrics by configuration (judged@k beside nDCG@k), the comparison against the baseline, and the per-question
  table of each configuration with its unjudged parents.

The words are English or Portuguese (``lang``); the trace's own reasons stay as recorded (English).
"""

from __future__ import annotations

from html import escape
from typing import Any, Iterable, Mapping, Sequence

from ..offline.report import choose, comparison_rows
from . import grid
from .views import LANGUAGES, lost_rows

_LABELS: dict[str, tuple[str, str]] = {
    "question_title": ("Question report", "Relatório da pergunta"),
    "evaluation_title": ("Evaluation report", "Relatório de avaliação"),
    "question": ("Question", "Pergunta"),
    "tier": ("Tier", "Nível"),
    "tier_reason": ("Why this tier (as recorded)", "Por que este nível (como registrado)"),
    "answer": ("Answer", "Resposta"),
    "abstained": ("Abstained.", "Abstenção."),
    "citations": ("Citations", "Citações"),
    "grid": ("Rank grid", "Grade de posições"),
    "grid_note": ("One row per chunk found by any list; an empty cell: that list does not hold the chunk.",
                  "Uma linha por trecho encontrado por alguma lista; célula vazia: a lista não tem o trecho."),
    "final": ("final", "final"), "chunk": ("chunk", "trecho"), "parent": ("parent", "pai"),
    "label": ("label", "rótulo"), "bm25_rank": ("BM25 #", "BM25 #"), "bm25": ("BM25", "BM25"),
    "dense_rank": ("dense #", "denso #"), "cosine": ("cosine", "cosseno"), "fused_rank": ("fused #", "fusão #"),
    "rrf": ("RRF", "RRF"), "rerank_rank": ("rerank #", "rerank #"), "rerank": ("rerank", "rerank"),
    "move": ("move", "mov."), "fate": ("why out", "por que saiu"),
    "provenance": ("Provenance of the final items", "Proveniência dos itens finais"),
    "bm25_terms": ("BM25 per term", "BM25 por termo"), "term": ("term", "termo"),
    "contribution": ("contribution", "contribuição"),
    "dense_line": ("Cosine to the question", "Cosseno com a pergunta"),
    "rrf_terms": ("RRF terms (k = rrf_k, ranks from 1)", "Termos RRF (k = rrf_k, posições a partir de 1)"),
    "features": ("Reranker feature contributions (raw LambdaMART score, not a probability)",
                 "Contribuições das características do reranqueador (nota LambdaMART bruta, não é probabilidade)"),
    "feature": ("feature", "característica"), "bias": ("bias", "viés"),
    "rerank_score": ("Reranker score", "Nota do reranqueador"),
    "not_in": ("not in this list", "fora desta lista"),
    "dropped": ("Dropped by the reranker", "Descartados pelo reranqueador"),
    "dropped_none": ("The reranker dropped nothing from the fused top_k.",
                     "O reranqueador não tirou nada do top_k da fusão."),
    "fused_to": ("fused # → reranked #", "fusão # → rerank #"),
    "relevance": ("relevance", "relevância"),
    "decision": ("Decision", "Decisão"), "choice": ("Provisional choice", "Escolha provisória"),
    "caveats": ("Caveats", "Ressalvas"),
    "caveat_lab": ("The lab set is fictitious: these figures demonstrate the method, not a benchmark of real data.",
                   "O conjunto de laboratório é fictício: estes números demonstram o método, não são um benchmark "
                   "de dados reais."),
    "caveat_lost": ("{c} wins on the mean of {m} but loses a relevant document the baseline had in {n} question(s).",
                    "{c} ganha na média de {m} mas perde um documento relevante que a referência tinha em {n} "
                    "pergunta(s)."),
    "caveat_judged": ("judged@{k} of {c} is {v}: nDCG@{k} scores the unjudged items as not relevant.",
                      "julgados@{k} de {c} é {v}: o nDCG@{k} conta os itens sem julgamento como irrelevantes."),
    "caveat_problems": ("{n} question(s) have labels no configuration can satisfy (see the decision record).",
                        "{n} pergunta(s) têm rótulos que nenhuma configuração satisfaz (ver o registro da decisão)."),
    "caveat_small": ("With {n} questions a small difference is not evidence.",
                     "Com {n} perguntas uma diferença pequena não é evidência."),
    "metrics": ("Metrics by configuration", "Métricas por configuração"),
    "chart": ("nDCG@{k} and judged@{k} by configuration", "nDCG@{k} e julgados@{k} por configuração"),
    "comparison": ("Comparison against the baseline", "Comparação com a referência"),
    "per_question": ("Per question: {c}", "Por pergunta: {c}"),
    "config": ("configuration", "configuração"), "metric": ("metric", "métrica"), "value": ("value", "valor"),
    "baseline": ("baseline", "referência"), "delta": ("Δ vs baseline", "Δ sobre a referência"),
    "p_value": ("p-value", "valor-p"), "improved": ("improved", "melhorou"), "worsened": ("worsened", "piorou"),
    "lost_relevant": ("relevant lost", "relevantes perdidos"), "id": ("id", "id"), "group": ("group", "grupo"),
    "relevant": ("relevant", "relevantes"), "ranked": ("final (parents)", "final (pais)"),
    "unjudged": ("unjudged in top {k}", "sem julgamento no top {k}"), "result": ("result", "resultado"),
    "hypothesis": ("Expectation (written before the run)", "Expectativa (escrita antes de rodar)"),
    "run_line": ("Corpus {corpus} · {n} questions · split {split} · k = {k}",
                 "Corpus {corpus} · {n} perguntas · partição {split} · k = {k}"),
    "judged_name": ("judged@{k}", "julgados@{k}"),
    "footer": ("Built from the recorded trace; every value as the pipeline wrote it.",
               "Feito a partir do trace registrado; cada valor como o pipeline o escreveu."),
}

_FATES = {"final": ("", ""), "not_fused": ("not fused", "não fundido"),
          "window": ("outside the rerank window", "fora da janela do rerank"), "dedup": ("dedup", "dedup"),
          "top_k": ("below top_k", "abaixo do top_k"), "mmr": ("not picked by MMR", "o MMR não o escolheu"),
          "gate": ("refused by the gate", "recusado pelo portão")}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1200px;
color:#1f2328;line-height:1.45;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}h3{font-size:1rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}th,td{border:1px solid #d0d7de;padding:2px 6px;
text-align:left;vertical-align:top}th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font-family:ui-monospace,Menlo,Consolas,monospace;background:#f6f8fa;padding:0 2px}
.tier{display:inline-block;padding:0 6px;border-radius:4px;background:#ddf4ff}
.answer{border:1px solid #d0d7de;border-radius:6px;padding:.6rem}.muted{color:#59636e;font-size:.85rem}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:.4rem;border-radius:4px;margin:.3rem 0}
.bar{background:#4c78a8;height:.8rem;display:inline-block}.bar.j{background:#e8833a}
.lost{color:#cf222e;font-weight:bold}
"""


def _l(key: str, lang: str, **values: Any) -> str:
    text = _LABELS[key][1 if lang == "pt" else 0]
    return text.format(**values) if values else text


def _e(value: Any) -> str:
    """A value as escaped HTML text ('' for None)."""
    return "" if value is None else escape(str(value), quote=True)


def _num(value: Any, spec: str = ".4f") -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return _e(value)
    if isinstance(value, (int, float)):
        return format(value, spec) if isinstance(value, float) else str(value)
    return _e(value)


def _table(headers: Sequence[str], rows: Iterable[Sequence[tuple[str, bool]]]) -> str:
    """A table: ``headers`` (already escaped) and rows of ``(cell HTML, numeric)``."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="n">{c}</td>' if n else f"<td>{c}</td>" for c, n in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _page(title: str, lang: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="{"pt-BR" if lang == "pt" else "en"}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_e(title)}</title>'
            f"<style>{_CSS}</style></head><body><h1>{_e(title)}</h1>{body}"
            f'<p class="muted">{_e(_l("footer", _lang(lang)))}</p></body></html>\n')


def _lang(lang: str) -> str:
    return lang if lang in LANGUAGES else "en"


# -- one question --------------------------------------------------------------------------------------------
def question_report(trace: Mapping[str, Any], lang: str = "en", relevant: Sequence[str] | None = None,
                    graded: Mapping[str, int] | None = None) -> str:
    """A self-contained HTML report of one request's trace (``Trace.to_dict()``).

    Args:
        trace: the trace dict.
        lang: ``en`` or ``pt`` (the report's words; the trace's reasons stay as recorded).
        relevant, graded: the question's labels, when it is a labeled one (the grid's label column).

    Returns:
        The HTML document, with no script and every trace value escaped.
    """
    lang = _lang(lang)
    parts = [f"<p><b>{_e(_l('question', lang))}:</b> {_e(trace.get('question'))}</p>",
             f"<p><b>{_e(_l('tier', lang))}:</b> <span class=\"tier\">{_e(trace.get('tier'))}</span></p>"]
    if trace.get("tier_reason"):
        parts.append(f"<p class=\"muted\">{_e(_l('tier_reason', lang))}: {_e(trace['tier_reason'])}</p>")
    parts.append(_answer(trace, lang))
    rows = grid.grid_rows(trace, relevant, graded)
    parts.append(f"<h2>{_e(_l('grid', lang))}</h2><p class=\"muted\">{_e(_l('grid_note', lang))}</p>")
    parts.append(_grid_table(rows, lang, relevant is not None))
    parts.append(f"<h2>{_e(_l('provenance', lang))}</h2>")
    for item in trace.get("final") or []:
        parts.append(_provenance(trace, item["chunk_id"], lang, relevant, graded))
    parts.append(_dropped(trace, lang, relevant, graded))
    return _page(_l("question_title", lang), lang, "".join(parts))


def _answer(trace: Mapping[str, Any], lang: str) -> str:
    ans = trace.get("answer") or {}
    out = [f"<h2>{_e(_l('answer', lang))}</h2>"]
    if ans.get("abstained"):
        out.append(f"<div class=\"answer\"><b>{_e(_l('abstained', lang))}</b> {_e(ans.get('text'))}</div>")
        return "".join(out)
    out.append(f"<div class=\"answer\">{_e(ans.get('text'))}</div>")
    number = {item["chunk_id"]: i for i, item in enumerate(trace.get("final") or [], start=1)}
    cited = [item for item in trace.get("final") or [] if item["chunk_id"] in set(ans.get("citations") or [])]
    if cited:
        out.append(f"<h3>{_e(_l('citations', lang))}</h3><ol>")
        for item in cited:
            out.append(f"<li value=\"{number[item['chunk_id']]}\"><code>{_e(item['chunk_id'])}</code> "
                       f"({_e(_l('parent', lang))} <code>{_e(item['parent_id'])}</code>)<br>{_e(item.get('text'))}</li>")
        out.append("</ol>")
    return "".join(out)


def _fate(row: Mapping[str, Any], lang: str) -> str:
    words = _FATES.get(row["fate"], (row["fate"], row["fate"]))[1 if lang == "pt" else 0]
    detail = row.get("fate_detail") or {}
    if row["fate"] == "dedup" and detail.get("kept"):
        words += f" ({_l('parent', lang)}: {detail['kept']})"
    elif row["fate"] == "top_k" and detail.get("top_k"):
        words += f" ({detail['top_k']})"
    elif row["fate"] == "gate" and detail.get("reason"):
        words += f": {detail['reason']}"
    elif row["fate"] == "gate" and detail.get("value") is not None:
        words += f" ({detail.get('kind')} {detail['value']:.3f} < {detail.get('threshold')})"
    return _e(words)


def _grid_table(rows: Sequence[Mapping[str, Any]], lang: str, labeled: bool) -> str:
    marks = {"relevant": "✓", "partial": "~", "not labeled": "·"}
    keys = ["final", "chunk", "parent"] + (["label"] if labeled else []) + [
        "bm25_rank", "bm25", "dense_rank", "cosine", "fused_rank", "rrf", "rerank_rank", "rerank", "move", "fate"]
    body = []
    for r in rows:
        move = r["move"]
        cells = [(_num(r["final"]), True), (f"<code>{_e(r['chunk_id'])}</code>", False),
                 (f"<code>{_e(r['parent_id'])}</code>", False)]
        if labeled:
            cells.append((_e(marks.get(r["relevance"] or "", "")), False))
        cells += [(_num(r["bm25_rank"]), True), (_num(r["bm25"], ".3f"), True), (_num(r["dense_rank"]), True),
                  (_num(r["cosine"], ".3f"), True), (_num(r["fused_rank"]), True), (_num(r["rrf"], ".5f"), True),
                  (_num(r["rerank_rank"]), True), (_num(r["rerank"], ".3f"), True),
                  ("" if move is None else ("=" if move == 0 else f"↑{move}" if move > 0 else f"↓{-move}"), False),
                  (_fate(r, lang), False)]
        body.append(cells)
    return _table([_e(_l(k, lang)) for k in keys], body)


def _provenance(trace: Mapping[str, Any], chunk_id: str, lang: str, relevant: Sequence[str] | None,
                graded: Mapping[str, int] | None) -> str:
    card = grid.provenance(trace, chunk_id, relevant, graded)
    row = card["row"]
    out = [f"<h3>#{_num(row['final'])} <code>{_e(chunk_id)}</code> · {_e(_l('parent', lang))} "
           f"<code>{_e(row['parent_id'])}</code></h3>"]
    bm25 = card["bm25"]
    if bm25:
        out.append(f"<p>BM25 #{bm25['rank']} · {_num(bm25['score'], '.3f')}</p>")
        if bm25["terms"]:
            out.append(_table([_e(_l("term", lang)), _e(_l("contribution", lang))],
                              [[(f"<code>{_e(term)}</code>", False), (_num(value, ".3f"), True)]
                               for term, value in bm25["terms"]]))
    else:
        out.append(f"<p>BM25: {_e(_l('not_in', lang))}</p>")
    dense = card["dense"]
    out.append(f"<p>{_e(_l('dense_line', lang))}: {_num(dense['cosine'], '.3f') or '—'}"
               + (f" · dense #{dense['rank']}" if dense["rank"] else "") + "</p>")
    fusion = card["fusion"]
    if fusion:
        terms = " + ".join(f"{_e(t['ranker'])} {_num(t['weight'], 'g')}/({t['k']} + {t['rank']})"
                           if t["value"] is not None else f"{_e(t['ranker'])} {_num(t['recorded'], '.5f')}"
                           for t in fusion["terms"])
        out.append(f"<p>{_e(_l('rrf_terms', lang))}: {terms} = {_num(fusion['score'], '.5f')} "
                   f"(#{fusion['rank']})</p>")
    rerank = card["rerank"]
    if rerank:
        out.append(f"<p>{_e(_l('rerank_score', lang))} ({_e(rerank['score_kind'])}): {_num(rerank['score'], '.3f')}"
                   f" · #{rerank['rank']}</p>")
        if rerank["features"]:
            rows = [[(f"<code>{_e(name)}</code>", False), (_num(value, "+.4f"), True)]
                    for name, value in rerank["features"]]
            if rerank["bias"] is not None:
                rows.append([(_e(_l("bias", lang)), False), (_num(rerank["bias"], "+.4f"), True)])
            out.append(f"<p>{_e(_l('features', lang))}</p>"
                       + _table([_e(_l("feature", lang)), _e(_l("contribution", lang))], rows))
    return "".join(out)


def _dropped(trace: Mapping[str, Any], lang: str, relevant: Sequence[str] | None,
             graded: Mapping[str, int] | None) -> str:
    out = [f"<h2>{_e(_l('dropped', lang))}</h2>"]
    if not (trace.get("reranked") or {}).get("items"):
        reason = ((trace.get("reranked") or {}).get("note") or trace.get("tier_reason") or "")
        out.append(f"<p class=\"muted\">{_e(reason)}</p>")
        return "".join(out)
    rows = lost_rows(trace, relevant, graded)
    if not rows:
        out.append(f"<p>{_e(_l('dropped_none', lang))}</p>")
        return "".join(out)
    body = []
    for r in rows:
        after = r["reranked_rank"]
        mark = f"<span class=\"lost\">{_e(r['relevance'])}</span>" if r["relevance"] == "relevant" else _e(
            r["relevance"] or "")
        body.append([(f"<code>{_e(r['chunk_id'])}</code>", False), (f"<code>{_e(r['parent_id'])}</code>", False),
                     (f"#{r['fused_rank']} → " + (f"#{after}" if after is not None else "—"), False), (mark, False)])
    out.append(_table([_e(_l(k, lang)) for k in ("chunk", "parent", "fused_to", "relevance")], body))
    return "".join(out)


# -- an evaluation -------------------------------------------------------------------------------------------
def evaluation_report(report: Mapping[str, Any], lang: str = "en") -> str:
    """A self-contained HTML report of an evaluation (:func:`retrieval.offline.evaluation.evaluate_configs`'s dict).

    Returns:
        The HTML document: the decision and its caveats, the metrics by configuration with judged@k beside
        nDCG@k (and as HTML bars), the comparison against the baseline, and each configuration's per-question
        table with its unjudged parents. No script; every value escaped.
    """
    lang = _lang(lang)
    configs = report["configs"]
    kmax = report["k"][-1]
    ndcg, judged = f"ndcg@{kmax}", f"judged@{kmax}"
    decision = choose(report)
    parts = [f"<p class=\"muted\">{_e(_l('run_line', lang, corpus=report.get('corpus'), n=report.get('questions'), split=report.get('split'), k=', '.join(map(str, report['k']))))}</p>",
             f"<h2>{_e(_l('decision', lang))}</h2>",
             f"<p><b>{_e(_l('choice', lang))}:</b> <code>{_e(decision['choice'])}</code> — {_e(decision['why'])}</p>"]
    caveats = _caveats(report, lang, kmax)
    if caveats:
        parts.append(f"<h3>{_e(_l('caveats', lang))}</h3>" + "".join(f"<div class=\"warn\">{_e(c)}</div>"
                                                                       for c in caveats))
    if report.get("hypothesis"):
        parts.append(f"<h3>{_e(_l('hypothesis', lang))}</h3><p>{_e(report['hypothesis'])}</p>")
    headline = [ndcg, judged, f"recall@{kmax}", f"mrr@{kmax}", f"hit_rate@{kmax}", f"precision@{kmax}",
                "abstention_accuracy"]
    names = {judged: _l("judged_name", lang, k=kmax)}
    parts.append(f"<h2>{_e(_l('metrics', lang))}</h2>")
    parts.append(_table([_e(_l("config", lang)), _e(_l("tier", lang))] + [_e(names.get(m, m)) for m in headline],
                        [[(f"<code>{_e(name)}</code>", False), (_e(cfg.get("tier")), False)]
                         + [(_num(cfg["overall"].get(m)), True) for m in headline]
                         for name, cfg in configs.items()]))
    parts.append(f"<h3>{_e(_l('chart', lang, k=kmax))}</h3>" + _bars(configs, ndcg, judged))
    rows = [r for r in comparison_rows(report, None) if r["metric"] in headline]
    if rows:
        keys = ("config", "metric", "value", "baseline", "delta", "p_value", "improved", "worsened", "lost_relevant")
        parts.append(f"<h2>{_e(_l('comparison', lang))}</h2>")
        parts.append(_table([_e(_l(k, lang)) for k in keys],
                            [[(_num(r.get(k)) if r.get(k) is not None else "—",
                               k in {"value", "delta", "p_value", "improved", "worsened", "lost_relevant"})
                              for k in keys] for r in rows]))
    for name, cfg in configs.items():
        parts.append(f"<h2>{_e(_l('per_question', lang, c=name))}</h2>")
        body = []
        for q in cfg.get("questions") or []:
            unjudged = (q.get("judged") or {}).get("unjudged") or []
            ranked = " ".join(f"{_e(p)}?" if p in unjudged else _e(p) for p in (q.get("ranked") or [])[:kmax])
            result = "ok" if q.get("layer") == "ok" else f"{q.get('layer')} ({q.get('stage')})"
            body.append([(f"<code>{_e(q['id'])}</code>", False), (_e(q.get("group")), False),
                         (_e(q.get("question")), False), (_e(" ".join(q.get("relevant") or [])) or "—", False),
                         (ranked or "—", False), (_num((q.get("metrics") or {}).get(ndcg)) or "—", True),
                         (_e(" ".join(unjudged)) or "—", False), (_e(result), False)])
        parts.append(_table([_e(_l(k, lang)) for k in ("id", "group", "question", "relevant", "ranked")]
                            + [_e(ndcg), _e(_l("unjudged", lang, k=kmax)), _e(_l("result", lang))], body))
    return _page(_l("evaluation_title", lang), lang, "".join(parts))


def _bars(configs: Mapping[str, Any], ndcg: str, judged: str) -> str:
    """nDCG@k and judged@k of each configuration as two HTML bars (width = value × 100 %)."""
    rows = []
    for name, cfg in configs.items():
        cells = [(f"<code>{_e(name)}</code>", False)]
        for metric, extra in ((ndcg, ""), (judged, " j")):
            value = cfg["overall"].get(metric)
            width = 0.0 if value is None else max(0.0, min(1.0, float(value))) * 100
            cells.append((f'<span class="bar{extra}" style="width:{width:.1f}px"></span> {_num(value)}', False))
        rows.append(cells)
    return _table(["", _e(ndcg), _e(judged)], rows).replace("<table>", '<table style="min-width:360px">', 1)


def _caveats(report: Mapping[str, Any], lang: str, kmax: int) -> list[str]:
    out = []
    if str(report.get("corpus") or "").replace("\\", "/").endswith("data/lab/corpus.jsonl"):
        out.append(_l("caveat_lab", lang))
    lost: dict[str, tuple[set, set]] = {}
    for c in report.get("comparisons") or []:
        if c.get("wins_on_mean_but_lost_relevant"):
            metrics, ids = lost.setdefault(c["candidate"], (set(), set()))
            metrics.add(c["metric"])
            ids.update(x["id"] for x in c.get("lost_relevant") or [])
    for candidate, (metrics, ids) in lost.items():
        out.append(_l("caveat_lost", lang, c=candidate, m=", ".join(sorted(metrics)), n=len(ids)))
    for name, cfg in report["configs"].items():
        value = cfg["overall"].get(f"judged@{kmax}")
        if value is not None and value < 0.8:
            out.append(_l("caveat_judged", lang, k=kmax, c=name, v=f"{value:.2f}"))
    flawed = (report.get("question_problems") or {}).get("questions", 0)
    if flawed:
        out.append(_l("caveat_problems", lang, n=flawed))
    if len(report["configs"]) > 1 and (report.get("questions") or 0) < 100:
        out.append(_l("caveat_small", lang, n=report.get("questions")))
    return out
