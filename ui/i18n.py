"""Interface texts in English and Portuguese: ``t(key, lang)``. Values shown from traces (ids, settings,
stage names) are not translated; the answer stage's own notes follow ``lang`` through the answer adapter."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "title": {"en": "Hybrid retrieval workbench", "pt": "Bancada de recuperação híbrida"},
    "caption": {"en": "BM25 + dense + RRF (+ rerank) on one question: every list, score and stage comes from the trace.",
                "pt": "BM25 + denso + RRF (+ reranqueamento) numa pergunta: cada lista, nota e etapa vem do trace."},
    "language": {"en": "Interface language", "pt": "Idioma da interface"},
    "nav_ask": {"en": "Ask and inspect", "pt": "Perguntar e inspecionar"},
    "nav_eval": {"en": "Evaluation", "pt": "Avaliação"},
    "corpus": {"en": "Corpus", "pt": "Corpus"},
    "filters": {"en": "Filters", "pt": "Filtros"},
    "ranking": {"en": "Ranking", "pt": "Ranqueamento"},
    "transforms": {"en": "Query transforms", "pt": "Transformações da consulta"},
    "question": {"en": "Question", "pt": "Pergunta"},
    "ask": {"en": "Ask", "pt": "Perguntar"},
    "type_question": {"en": "Type a question (or pick a labeled one in the sidebar) and press **Ask**.",
                      "pt": "Digite uma pergunta (ou escolha uma rotulada na barra lateral) e clique em **Perguntar**."},
    "answer": {"en": "Answer", "pt": "Resposta"},
    "abstained": {"en": "Abstained.", "pt": "Abstenção."},
    "why_in_tier": {"en": "The reason is in the tier line above.", "pt": "O motivo está na linha do nível acima."},
    "tab_lists": {"en": "Ranked lists", "pt": "Listas ranqueadas"},
    "tab_movement": {"en": "Movement and losses", "pt": "Movimento e perdas"},
    "tab_compare": {"en": "Compare two configurations", "pt": "Comparar duas configurações"},
    "tab_judge": {"en": "Judge", "pt": "Julgar"},
    "tab_where": {"en": "Where is my document?", "pt": "Onde está meu documento?"},
    "tab_timings": {"en": "Timings, costs, downloads", "pt": "Tempos, custos, downloads"},
    "searching": {"en": "Searching…", "pt": "Buscando…"},
    "answered_by": {"en": "Answered by", "pt": "Respondido por"},
    "context_sent": {"en": "Context sent to the answer stage: {n} chunk(s), numbered by final rank.",
                     "pt": "Contexto enviado à etapa de resposta: {n} trecho(s), numerados pela posição final."},
    "judged": {"en": "Judged {n} of {m} pooled", "pt": "Julgados {n} de {m} do pool"},
    "save_judgments": {"en": "Save judgments", "pt": "Salvar julgamentos"},
    "support_gate": {"en": "Support gate: why it answered or abstained",
                     "pt": "Portão de suporte: por que respondeu ou se absteve"},
    "support_axis": {"en": "contribution to the log-odds of support", "pt": "contribuição ao log-odds de suporte"},
    "support_caption": {"en": "Each coloured bar is one feature of the selected chunks, against its training average; "
                               "the grey bar is the model's baseline. All bars sum to the log-odds of support "
                               "(hover for the value and what the feature measures).",
                        "pt": "Cada barra colorida é uma característica dos trechos selecionados, comparada à média do "
                              "treino; a barra cinza é a base do modelo. Todas somam o log-odds de suporte (passe o "
                              "mouse para o valor e o que a característica mede)."},
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """The text of ``key`` in ``lang`` (English when missing), formatted with ``values``."""
    entry = TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text
