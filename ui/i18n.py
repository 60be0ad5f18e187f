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
    "tab_grid": {"en": "Rank grid", "pt": "Grade de posições"},
    "tab_lists": {"en": "Lists as cards", "pt": "Listas em cartões"},
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
    # -- the analyst's page: rank grid, provenance card, why A above B (ui/grid.py) --
    "grid_title": {"en": "Rank grid", "pt": "Grade de posições"},
    "grid_caption": {"en": "One row per chunk found by any list (BM25, dense, fused, reranked), by final position, "
                           "then fused rank. An empty cell: that list does not hold the chunk. Select a row to open "
                           "its card below.",
                     "pt": "Uma linha por trecho encontrado por alguma lista (BM25, denso, fusão, reranqueada), pela "
                           "posição final e depois pela posição na fusão. Célula vazia: a lista não tem o trecho. "
                           "Selecione uma linha para abrir o cartão abaixo."},
    "grid_empty": {"en": "No list holds a chunk for this question.",
                   "pt": "Nenhuma lista tem trecho para esta pergunta."},
    "grid_count": {"en": "{n} chunks · {f} in the final list · stage of the final order: {stage}",
                   "pt": "{n} trechos · {f} na lista final · etapa da ordem final: {stage}"},
    "col_final": {"en": "final", "pt": "final"},
    "col_final_help": {"en": "Position in the final list the answer used (after dedup, top_k or MMR, and the gate)",
                       "pt": "Posição na lista final usada pela resposta (após dedup, top_k ou MMR e o portão)"},
    "col_chunk": {"en": "chunk", "pt": "trecho"},
    "col_label": {"en": "label", "pt": "rótulo"},
    "col_label_help": {"en": "The question's labels: ✓ relevant, ~ partial (grade 1-2), · not labeled",
                       "pt": "Rótulos da pergunta: ✓ relevante, ~ parcial (nota 1-2), · sem rótulo"},
    "col_bm25_rank": {"en": "BM25 #", "pt": "BM25 #"},
    "col_bm25": {"en": "BM25", "pt": "BM25"},
    "col_bm25_help": {"en": "BM25 score (unbounded, higher is better)", "pt": "Nota BM25 (sem limite, maior é melhor)"},
    "col_dense_rank": {"en": "dense #", "pt": "denso #"},
    "col_cosine": {"en": "cos", "pt": "cos"},
    "col_cosine_help": {"en": "Cosine similarity to the question, in [-1, 1] (from the dense list, else the gate's "
                              "read)",
                        "pt": "Similaridade de cosseno com a pergunta, em [-1, 1] (da lista densa, senão a leitura do "
                              "portão)"},
    "col_fused_rank": {"en": "fused #", "pt": "fusão #"},
    "col_rrf": {"en": "RRF", "pt": "RRF"},
    "col_rrf_help": {"en": "Fused score: Σ 1/(rrf_k + rank) over the lists (ranks from 1)",
                     "pt": "Nota da fusão: Σ 1/(rrf_k + posição) nas listas (posições a partir de 1)"},
    "col_share": {"en": "BM25 share", "pt": "parte BM25"},
    "col_share_help": {"en": "The BM25 lists' share of the fused score (the rest is dense); every list's share is "
                             "in the card", "pt": "A parte das listas BM25 na nota da fusão (o resto é denso); a "
                             "parte de cada lista está no cartão"},
    "col_rerank_rank": {"en": "rerank #", "pt": "rerank #"},
    "col_rerank": {"en": "rerank", "pt": "rerank"},
    "col_rerank_help": {"en": "The reranker's score, on its own scale (the learned ranker: raw LambdaMART score)",
                        "pt": "A nota do reranqueador, na sua própria escala (o ranqueador aprendido: nota LambdaMART "
                              "bruta)"},
    "col_move": {"en": "move", "pt": "mov."},
    "col_move_help": {"en": "Fused rank → reranked rank: ↑ moved up, ↓ moved down, = stayed",
                      "pt": "Posição na fusão → no rerank: ↑ subiu, ↓ desceu, = ficou"},
    "col_fate": {"en": "why out", "pt": "por que saiu"},
    "fate_dedup": {"en": "dedup (parent kept: {kept})", "pt": "dedup (pai mantido: {kept})"},
    "fate_top_k": {"en": "top_k ({top_k})", "pt": "top_k ({top_k})"},
    "fate_mmr": {"en": "MMR did not pick it", "pt": "o MMR não o escolheu"},
    "fate_gate": {"en": "gate ({kind} {value} < {threshold})", "pt": "portão ({kind} {value} < {threshold})"},
    "fate_gate_request": {"en": "gate refused the request: {reason}", "pt": "o portão recusou o pedido: {reason}"},
    "fate_window": {"en": "outside rerank window (top {max_input})",
                    "pt": "fora da janela do rerank (top {max_input})"},
    "fate_not_fused": {"en": "not fused (its list was left out)", "pt": "não fundido (sua lista ficou de fora)"},
    "card_title": {"en": "Provenance card", "pt": "Cartão de proveniência"},
    "card_pick": {"en": "Chunk (or select a row of the grid)", "pt": "Trecho (ou selecione uma linha da grade)"},
    "card_head": {"en": "{chunk} · parent {parent} · {where}", "pt": "{chunk} · pai {parent} · {where}"},
    "card_final": {"en": "final #{n}", "pt": "final #{n}"},
    "card_text": {"en": "Text (the question's terms marked)", "pt": "Texto (termos da pergunta marcados)"},
    "card_bm25": {"en": "BM25 #{rank} · score {score} (sum of the terms below)",
                  "pt": "BM25 #{rank} · nota {score} (soma dos termos abaixo)"},
    "card_no_bm25": {"en": "Not in the BM25 list: {why}", "pt": "Fora da lista BM25: {why}"},
    "card_no_bm25_any": {"en": "no term of the question in its text, or ranked below the window",
                         "pt": "nenhum termo da pergunta no texto, ou abaixo da janela"},
    "card_term": {"en": "term", "pt": "termo"},
    "card_contribution": {"en": "contribution", "pt": "contribuição"},
    "card_dense": {"en": "Dense: cosine {cos} · dense #{rank}", "pt": "Denso: cosseno {cos} · denso #{rank}"},
    "card_dense_gate": {"en": "Dense: cosine {cos} (read by the gate; not in the dense list)",
                        "pt": "Denso: cosseno {cos} (lido pelo portão; fora da lista densa)"},
    "card_no_dense": {"en": "Dense: not in the dense list, cosine unknown",
                      "pt": "Denso: fora da lista densa, cosseno desconhecido"},
    "card_rrf": {"en": "Fused #{rank}: {formula}", "pt": "Fusão #{rank}: {formula}"},
    "card_rrf_k": {"en": "k = rrf_k = {k} of this request, ranks from 1; shares: {shares}",
                   "pt": "k = rrf_k = {k} deste pedido, posições a partir de 1; partes: {shares}"},
    "card_combsum": {"en": "Fused #{rank} (CombSUM over min-max normalized scores): {formula}",
                     "pt": "Fusão #{rank} (CombSUM de notas normalizadas min-max): {formula}"},
    "card_no_fused": {"en": "Not in the fused list.", "pt": "Fora da lista da fusão."},
    "card_rerank": {"en": "Reranker ({kind}) #{rank} · score {score} · fused #{fused} → #{rank} ({move})",
                    "pt": "Reranqueador ({kind}) #{rank} · nota {score} · fusão #{fused} → #{rank} ({move})"},
    "card_rerank_unit": {"en": "Unit: raw LambdaMART score (not a probability). The feature contributions plus "
                               "the bias ({bias}) sum to the score.",
                         "pt": "Unidade: nota LambdaMART bruta (não é probabilidade). As contribuições das "
                               "características mais o viés ({bias}) somam a nota."},
    "card_rerank_scale": {"en": "Score scale: {kind}", "pt": "Escala da nota: {kind}"},
    "card_no_rerank": {"en": "Not reranked: {why}", "pt": "Não reranqueado: {why}"},
    "card_feature": {"en": "feature", "pt": "característica"},
    "card_feature_id": {"en": "id", "pt": "id"},
    "card_gate_passed": {"en": "Gate: passed ({kind} {value} ≥ {threshold})",
                         "pt": "Portão: passou ({kind} {value} ≥ {threshold})"},
    "card_gate_refused": {"en": "Gate: refused ({kind} {value} < {threshold})",
                          "pt": "Portão: recusado ({kind} {value} < {threshold})"},
    "card_gate_request": {"en": "Gate: the whole request was refused: {reason}",
                          "pt": "Portão: o pedido todo foi recusado: {reason}"},
    "card_gate_not_read": {"en": "Gate: not read (cut before it: {why})",
                           "pt": "Portão: não lido (cortado antes: {why})"},
    "card_support": {"en": "Learned support gate (whole request): P {p} {op} {threshold}, it {verdict}{read}",
                     "pt": "Portão de suporte aprendido (pedido todo): P {p} {op} {threshold}, ele {verdict}{read}"},
    "card_support_answers": {"en": "answers", "pt": "responde"},
    "card_support_abstains": {"en": "abstains", "pt": "se abstém"},
    "card_support_read": {"en": " (it read this chunk)", "pt": " (leu este trecho)"},
    "unknown": {"en": "unknown", "pt": "desconhecido"},
    "why_title": {"en": "Why A above B", "pt": "Por que A acima de B"},
    "why_a": {"en": "A", "pt": "A"},
    "why_b": {"en": "B", "pt": "B"},
    "why_same": {"en": "Pick two different chunks.", "pt": "Escolha dois trechos diferentes."},
    "why_few": {"en": "The grid has fewer than two chunks.", "pt": "A grade tem menos de dois trechos."},
    "why_feature": {"en": "{upper} ranks above {lower} in the reranked list. Decided by **{signal}**: {diff} raw "
                          "LambdaMART score in its favour, the largest feature difference in that direction.",
                    "pt": "{upper} fica acima de {lower} na lista reranqueada. Decidiu **{signal}**: {diff} de nota "
                          "LambdaMART bruta a seu favor, a maior diferença de característica nessa direção."},
    "why_score": {"en": "{upper} ranks above {lower} in the reranked list: the reranker scored it {diff} higher "
                        "(it gives no per-feature split).",
                  "pt": "{upper} fica acima de {lower} na lista reranqueada: o reranqueador lhe deu {diff} a mais "
                        "(ele não separa por característica)."},
    "why_rrf": {"en": "{upper} ranks above {lower} in the fused list (no rerank ran). Decided by the **{signal}** "
                      "list's RRF term: {diff} in its favour, the largest per-list difference.",
                "pt": "{upper} fica acima de {lower} na lista da fusão (sem rerank). Decidiu o termo RRF da lista "
                      "**{signal}**: {diff} a seu favor, a maior diferença por lista."},
    "why_tie": {"en": "{upper} and {lower} have equal {stage} scores: the tie-break ({signal}) put {upper} first.",
                "pt": "{upper} e {lower} têm notas iguais em {stage}: o desempate ({signal}) pôs {upper} primeiro."},
    "why_absent": {"en": "{lower} is not in the {stage} list ({signal}): {upper} is above it.",
                   "pt": "{lower} não está na lista {stage} ({signal}): {upper} fica acima dele."},
    "why_mmr": {"en": "MMR reordered {upper} and {lower} in the final list (diversity, λ = {lam}): no score decided.",
                "pt": "O MMR reordenou {upper} e {lower} na lista final (diversidade, λ = {lam}): nenhuma nota "
                      "decidiu."},
    "why_unranked": {"en": "Neither is in the {stage} list: the grid orders them by fused rank, then the "
                           "generators' ranks.",
                     "pt": "Nenhum está na lista {stage}: a grade os ordena pela fusão e depois pelas listas de "
                           "origem."},
    "why_group": {"en": "signal", "pt": "sinal"},
    "why_signal": {"en": "what", "pt": "o quê"},
    "why_upper": {"en": "above: {id}", "pt": "acima: {id}"},
    "why_lower": {"en": "below: {id}", "pt": "abaixo: {id}"},
    "why_diff": {"en": "difference", "pt": "diferença"},
    "why_only": {"en": "only in", "pt": "só em"},
    "why_only_upper": {"en": "above", "pt": "acima"},
    "why_only_lower": {"en": "below", "pt": "abaixo"},
    "why_decided": {"en": "decided", "pt": "decidiu"},
    "grp_bm25": {"en": "BM25 term", "pt": "termo BM25"},
    "grp_bm25_score": {"en": "BM25 score", "pt": "nota BM25"},
    "grp_dense": {"en": "cosine", "pt": "cosseno"},
    "grp_rrf": {"en": "RRF term", "pt": "termo RRF"},
    "grp_share": {"en": "RRF share", "pt": "parte do RRF"},
    "grp_rerank": {"en": "reranker feature", "pt": "característica do reranqueador"},
    "grp_rerank_score": {"en": "reranker score", "pt": "nota do reranqueador"},
    "stage_reranked": {"en": "reranked", "pt": "reranqueada"},
    "stage_fused": {"en": "fused", "pt": "fusão"},
    "signal_fused_rank": {"en": "fused rank", "pt": "posição na fusão"},
    "signal_best_single_rank": {"en": "best rank in one list, then chunk id",
                                "pt": "melhor posição numa lista, depois o id do trecho"},
}

#: Plain-word labels of the learned ranker's candidate features (``retrieval.judge.features.CANDIDATE_FEATURES``)
#: for the provenance card and "Why A above B"; the trace keeps the ids.
FEATURE_LABELS: dict[str, dict[str, str]] = {
    "bm25_norm": {"en": "BM25 score vs the best", "pt": "nota BM25 relativa à melhor"},
    "bm25_rank_recip": {"en": "BM25 rank (1/rank)", "pt": "posição no BM25 (1/posição)"},
    "dense_cos": {"en": "cosine to the question", "pt": "cosseno com a pergunta"},
    "dense_gap": {"en": "cosine gap to the best candidate", "pt": "distância do cosseno ao melhor candidato"},
    "dense_rank_recip": {"en": "dense rank (1/rank)", "pt": "posição no denso (1/posição)"},
    "cos_rank_norm": {"en": "cosine's place in the window", "pt": "lugar do cosseno na janela"},
    "rrf_norm": {"en": "RRF score vs the best", "pt": "nota RRF relativa à melhor"},
    "fused_rank_recip": {"en": "fused rank (1/rank)", "pt": "posição na fusão (1/posição)"},
    "in_both": {"en": "found by both BM25 and dense", "pt": "encontrado pelo BM25 e pelo denso"},
    "cov_chunk": {"en": "question covered by the chunk", "pt": "pergunta coberta pelo trecho"},
    "cov_chunk_count": {"en": "share of question words in the chunk",
                        "pt": "fração das palavras da pergunta no trecho"},
    "cov_parent": {"en": "question covered by the whole document", "pt": "pergunta coberta pelo documento inteiro"},
    "cov_title": {"en": "question covered by the title", "pt": "pergunta coberta pelo título"},
    "focus_missing": {"en": "rarest question word the chunk lacks",
                      "pt": "palavra mais rara da pergunta ausente do trecho"},
    "bigram_cov": {"en": "question word pairs kept together", "pt": "pares de palavras da pergunta juntos"},
    "proximity": {"en": "question words close together", "pt": "palavras da pergunta próximas"},
    "chunk_len_log": {"en": "chunk length", "pt": "tamanho do trecho"},
    "parent_share": {"en": "window's share from the same document", "pt": "fração da janela do mesmo documento"},
    "code_match": {"en": "question's codes found", "pt": "códigos da pergunta encontrados"},
    "code_conflict": {"en": "another code of the same prefix", "pt": "outro código do mesmo prefixo"},
    "neg_align": {"en": "negation lines up", "pt": "negação alinhada"},
    "cond_align": {"en": "condition lines up", "pt": "condição alinhada"},
    "q_has_code": {"en": "question names a code", "pt": "a pergunta cita um código"},
    "q_len": {"en": "question length", "pt": "tamanho da pergunta"},
    "q_unseen_index": {"en": "question words unseen in the index", "pt": "palavras da pergunta ausentes do índice"},
    "q_missing_window": {"en": "question words in no candidate", "pt": "palavras da pergunta em nenhum candidato"},
    "q_missing_window_max": {"en": "rarest question word in no candidate",
                             "pt": "palavra mais rara da pergunta em nenhum candidato"},
    "best_cov_window": {"en": "best coverage in the window", "pt": "melhor cobertura na janela"},
    "cov_gap": {"en": "coverage gap to the best candidate", "pt": "distância de cobertura ao melhor candidato"},
    "bias": {"en": "model baseline (bias)", "pt": "base do modelo (viés)"},
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """The text of ``key`` in ``lang`` (English when missing), formatted with ``values``."""
    entry = TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text


def feature_label(name: str, lang: str = "en") -> str:
    """The plain-word label of a learned-ranker feature in ``lang`` (the id itself when it has none)."""
    entry = FEATURE_LABELS.get(name)
    return (entry.get(lang) or entry["en"]) if entry else name
