"""The HTML of the reports to hand over: their words in English and Portuguese, their style sheet, and the
escaped building blocks (a table, a number, a page) that the question report and the evaluation report share.

Every value read from a trace or a report goes through :func:`esc` (:func:`html.escape`), so a chunk id holding
markup shows as text."""

from __future__ import annotations

from html import escape
from typing import Any, Iterable, Sequence

from .links import LANGUAGES

LABELS: dict[str, tuple[str, str]] = {
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
    "where": ("where (page · section)", "onde (página · seção)"),
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

CSS = """
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


def label(key: str, lang: str, **values: Any) -> str:
    text = LABELS[key][1 if lang == "pt" else 0]
    return text.format(**values) if values else text


def esc(value: Any) -> str:
    """A value as escaped HTML text ('' for None)."""
    return "" if value is None else escape(str(value), quote=True)


def num(value: Any, spec: str = ".4f") -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return esc(value)
    if isinstance(value, (int, float)):
        return format(value, spec) if isinstance(value, float) else str(value)
    return esc(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[tuple[str, bool]]]) -> str:
    """A table: ``headers`` (already escaped) and rows of ``(cell HTML, numeric)``."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="n">{c}</td>' if n else f"<td>{c}</td>" for c, n in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, lang: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="{"pt-BR" if lang == "pt" else "en"}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{esc(title)}</h1>{body}"
            f'<p class="muted">{esc(label("footer", lang_of(lang)))}</p></body></html>\n')


def lang_of(lang: str) -> str:
    return lang if lang in LANGUAGES else "en"
