"""Readable table headers: the frames keep their column names (CSV, tests), the page shows these."""

from __future__ import annotations

HEADERS: dict[str, tuple[str, str]] = {
    "rater_a": ("rater", "avaliador"), "rater_b": ("and rater", "e avaliador"), "pairs": ("candidates in common",
    "candidatos em comum"), "kappa": ("Cohen's kappa", "kappa de Cohen"), "spread": ("gap", "diferença"),
    "grades": ("grades", "notas"), "notes": ("notes", "anotações"),
    "id": ("id", "id"), "rank": ("rank", "posição"), "score": ("score", "nota"), "kind": ("kind", "tipo"),
    "query": ("query", "consulta"), "hypothesis_only": ("hypothesis only", "só hipótese"),
    "flags": ("lost", "perdeu"), "filters_added": ("filters added", "filtros adicionados"),
    "rankers": ("lists", "listas"), "technique": ("technique", "técnica"),
    "retrieval_calls": ("retrieval calls", "buscas"), "llm_calls": ("LLM calls", "chamadas ao LLM"),
    "tokens": ("tokens", "tokens"), "ms": ("ms", "ms"),
    "split": ("split", "partição"), "config": ("configuration", "configuração"), "tier": ("tier", "nível"),
    "metric": ("metric", "métrica"), "value": ("value", "valor"), "baseline": ("baseline", "referência"),
    "delta": ("Δ vs baseline", "Δ sobre a referência"), "p_value": ("p-value", "valor-p"),
    "p_holm": ("p (Holm, over the candidates)", "p (Holm, entre os candidatos)"),
    "significant": ("significant (p < 0.05)", "significativo (p < 0,05)"), "improved": ("improved", "melhorou"),
    "worsened": ("worsened", "piorou"), "lost_relevant": ("relevant lost", "relevantes perdidos"),
    "wins_on_mean_but_lost_relevant": ("wins on mean, loses a relevant", "ganha na média, perde um relevante"),
    "group": ("group", "grupo"), "question": ("question", "pergunta"), "relevant": ("relevant", "relevantes"),
    "bm25 ranks": ("BM25 ranks", "posições BM25"), "dense ranks": ("dense ranks", "posições densas"),
    "fused ranks": ("fused ranks", "posições na fusão"), "reranked ranks": ("reranked ranks", "posições no rerank"),
    "final (parents)": ("final (parents)", "final (pais)"), "evidence sent": ("evidence sent", "evidência enviada"),
    "citations": ("citations", "citações"), "first relevant rank": ("first relevant rank", "primeira posição relevante"),
    "abstained": ("abstained", "absteve-se"), "result": ("result", "resultado"),
    "evidence cut": ("evidence cut", "evidência cortada"), "unjudged": ("unjudged in top 10", "sem julgamento no top 10"),
    "a": ("A", "A"), "b": ("B", "B"), "result_a": ("result A", "resultado A"), "result_b": ("result B", "resultado B"),
    "rank_a": ("rank A", "posição A"), "rank_b": ("rank B", "posição B"),
    "rank_before": ("rank before", "posição antes"), "rank_after": ("rank after", "posição depois"),
    "score_before": ("score before", "nota antes"), "score_after": ("score after", "nota depois"),
    "worsened ids": ("worsened ids", "ids que pioraram"), "candidate": ("candidate", "candidata"),
    "step": ("step", "passo"), "ms_per_request": ("ms / request", "ms / pedido"),
    "coverage": ("coverage", "cobertura"), "ordering": ("ordering", "ordenação"), "generation": ("generation", "geração"),
    "ok": ("ok", "ok"), "where": ("layer:stage", "camada:etapa"), "questions": ("questions", "perguntas"),
    "wall time (s)": ("wall time (s)", "tempo total (s)"), "alone, est. (s)": ("alone, est. (s)", "sozinha, estim. (s)"),
    "p50 / request (ms)": ("p50 / request (ms)", "p50 / pedido (ms)"),
    "p95 / request (ms)": ("p95 / request (ms)", "p95 / pedido (ms)"),
    "LLM calls": ("LLM calls", "chamadas ao LLM"), "generator calls": ("generator calls", "chamadas aos geradores"),
    "abstention_accuracy": ("abstention accuracy", "acerto de abstenção"),
    "parent": ("parent", "pai"), "parent_id": ("parent", "pai"), "chunk_id": ("chunk", "trecho"),
    "span": ("gold span", "trecho-ouro"), "stage": ("stage", "etapa"), "time": ("time", "tempo"),
    "cost": ("cost", "custo"), "reason": ("why", "por quê"), "text": ("text", "texto"),
}


def header(name: str, lang: str = "en") -> str:
    """A table column's readable header in ``lang``: the catalogue's, a ``<ranker> rank`` / ``contribution``
    pair, a metric name as it is (``ndcg@10``), else the name with its underscores as spaces."""
    if name in HEADERS:
        return HEADERS[name][1 if lang == "pt" else 0]
    for suffix, words in ((" rank", ("rank", "posição")), (" contribution", ("contribution", "contribuição"))):
        if name.endswith(suffix):
            return f"{name[: -len(suffix)]}: {words[1 if lang == 'pt' else 0]}"
    if name.startswith("judged@"):
        return name if lang == "en" else "julgados@" + name.split("@", 1)[1]
    return name.replace("_", " ")
