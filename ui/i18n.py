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

# -- the rest of the main page (ui/layout.py, app.py): one language per view --
TEXTS.update({
    "not_measured": {"en": "not measured", "pt": "não medido"},
    "kind_bm25": {"en": "BM25 (unbounded, higher is better)", "pt": "BM25 (sem limite, maior é melhor)"},
    "kind_cosine": {"en": "cosine similarity in [-1, 1]", "pt": "similaridade de cosseno em [-1, 1]"},
    "kind_rrf": {"en": "RRF score Σ 1/(k + rank)", "pt": "nota RRF Σ 1/(k + posição)"},
    "kind_none": {"en": "no score", "pt": "sem nota"},
    "score": {"en": "score", "pt": "nota"},
    "tier_full_ltr": {"en": "Answered with the learned ranker over BM25 + dense",
                      "pt": "Respondido com o ranqueador aprendido sobre BM25 + denso"},
    "tier_full_cross": {"en": "Answered with a cross-encoder over BM25 + dense",
                        "pt": "Respondido com um cross-encoder sobre BM25 + denso"},
    "tier_full": {"en": "Answered with a reranker over BM25 + dense",
                  "pt": "Respondido com um reranqueador sobre BM25 + denso"},
    "tier_rrf_only": {"en": "Answered with BM25 + dense fused by RRF, without a reranker",
                      "pt": "Respondido com BM25 + denso fundidos por RRF, sem reranqueador"},
    "tier_dense_only": {"en": "Answered with the dense search alone", "pt": "Respondido só com a busca densa"},
    "tier_lexical_only": {"en": "Answered with BM25 alone (no dense search)",
                          "pt": "Respondido só com o BM25 (sem busca densa)"},
    "tier_refusal": {"en": "No answer: no evidence passed the gate",
                     "pt": "Sem resposta: nenhuma evidência passou o portão"},
    "tier_other": {"en": "Tier {tier}", "pt": "Nível {tier}"},
    "tier_reason": {"en": "Why this tier", "pt": "Por que este nível"},
    # the reader that could not load, in one line (ui.reasons.reader_line): the stage that lost it, what is
    # missing, what the page falls back to
    "reader_line_reader": {"en": "Reader unavailable — {missing}; the page falls back to {fallback}.",
                           "pt": "Leitor indisponível — {missing}; a página recorre {fallback}."},
    "reader_line_ltr": {"en": "Learned ranker unavailable — it reads the reader, and {missing}; the page falls "
                              "back to {fallback}.",
                        "pt": "Ranqueador aprendido indisponível — ele lê o leitor, e {missing}; a página recorre "
                              "{fallback}."},
    "reader_line_judge": {"en": "Learned support gate unavailable — it reads the reader, and {missing}; the cosine "
                                "and code gates alone decide whether the page answers.",
                          "pt": "Portão de suporte aprendido indisponível — ele lê o leitor, e {missing}; só os "
                                "portões de cosseno e de códigos decidem se a página responde."},
    "reader_missing_package": {"en": "the {name} package with its e5 weights is not installed",
                               "pt": "o pacote {name}, com os pesos e5 dele, não está instalado"},
    "reader_missing_file": {"en": "the reader's weights file is missing or unreadable",
                            "pt": "o arquivo de pesos do leitor falta ou não pode ser lido"},
    "reader_missing_read": {"en": "the reader's weights could not be read ({name})",
                            "pt": "os pesos do leitor não puderam ser lidos ({name})"},
    "reader_missing_unknown": {"en": "the reader's weights could not be read",
                               "pt": "os pesos do leitor não puderam ser lidos"},
    "reader_missing_failed": {"en": "the reader failed while scoring ({name})",
                              "pt": "o leitor falhou ao pontuar ({name})"},
    "reader_fallback_rrf_only": {"en": "BM25 + dense fused by RRF, without a reranker",
                                 "pt": "a BM25 + denso fundidos por RRF, sem reranqueador"},
    "reader_fallback_other": {"en": "the {tier} tier", "pt": "ao nível {tier}"},
    "not_loaded": {"en": "not loaded", "pt": "não carregado"},
    "off": {"en": "off", "pt": "desligado"},
    "loaded": {"en": "loaded", "pt": "carregado"},
    "models_line": {"en": "Embedder {embedder} ({status}) · reranker {reranker} · BM25 {bm25} · store {store} · "
                          "answer {answer}",
                    "pt": "Embeddings {embedder} ({status}) · reranqueador {reranker} · BM25 {bm25} · repositório "
                          "{store} · resposta {answer}"},
    "dropped_citations": {"en": "Dropped citations (not in the context sent): ",
                          "pt": "Citações descartadas (fora do contexto enviado): "},
    "citation_line": {"en": "parent {parent} · final rank {rank} · cosine to question {cos}",
                      "pt": "pai {parent} · posição final {rank} · cosseno com a pergunta {cos}"},
    "rel_relevant": {"en": "relevant", "pt": "relevante"},
    "rel_partial": {"en": "partial", "pt": "parcial"},
    "rel_none": {"en": "not labeled", "pt": "sem rótulo"},
    "list_lexical": {"en": "Lexical (BM25)", "pt": "Léxica (BM25)"},
    "list_dense": {"en": "Dense (cosine)", "pt": "Densa (cosseno)"},
    "list_fused": {"en": "Fused (RRF)", "pt": "Fusão (RRF)"},
    "list_reranked": {"en": "Reranked", "pt": "Reranqueada"},
    "list_count": {"en": "{n} item(s) · score: {kind}", "pt": "{n} item(ns) · nota: {kind}"},
    "empty": {"en": "Empty", "pt": "Vazia"},
    "reranked_empty": {"en": "Reranked: empty", "pt": "Reranqueada: vazia"},
    "only_in_list": {"en": "only {name}", "pt": "só {name}"},
    "parent": {"en": "parent", "pt": "pai"},
    "why_moved": {"en": "Why it moved (learned ranker)", "pt": "Por que mudou de posição (ranqueador aprendido)"},
    "axis_ltr_contribution": {"en": "contribution (raw LambdaMART score)",
                              "pt": "contribuição (nota LambdaMART bruta)"},
    "ltr_sum": {"en": "score {score} = the sum of every feature's contribution plus a bias of {bias}",
                "pt": "nota {score} = a soma das contribuições de cada característica mais um viés de {bias}"},
    "bm25_per_term": {"en": "BM25 per term", "pt": "BM25 por termo"},
    "more_in_csv": {"en": "+{n} more in the CSV download (rows per panel: {rows}).",
                    "pt": "+{n} no download CSV (linhas por painel: {rows})."},
    "axis_rrf_contribution": {"en": "RRF contribution", "pt": "contribuição ao RRF"},
    "rank_movement": {"en": "Rank movement", "pt": "Movimento de posições"},
    "nothing_moved": {"en": "Nothing moved: ", "pt": "Nada se moveu: "},
    "axis_rank": {"en": "rank (1 = top)", "pt": "posição (1 = topo)"},
    "movement_caption": {"en": "Raw fused rank → reranked rank for the {n} candidates the reranker saw. Colour: in or "
                               "out of the final list the answer used (dedup by {dedup}, top_k = {top_k}, the gate), "
                               "against the fused list deduplicated and cut the same way; a chunk whose parent has a "
                               "better-ranked chunk is out whatever its rank. Red lines fell out of the context.",
                         "pt": "Posição na fusão → posição no rerank dos {n} candidatos que o reranqueador viu. Cor: "
                               "dentro ou fora da lista final usada pela resposta (dedup por {dedup}, top_k = {top_k}, "
                               "o portão), comparada à fusão deduplicada e cortada do mesmo modo; um trecho cujo pai "
                               "tem outro trecho mais bem posicionado fica fora qualquer que seja a posição. Linhas "
                               "vermelhas saíram do contexto."},
    "legend_for_answering": {"en": "for answering", "pt": "a favor de responder"},
    "legend_against_answering": {"en": "against answering", "pt": "contra responder"},
    "legend_baseline": {"en": "baseline", "pt": "base"},
    "status_fell_out": {"en": "fell out", "pt": "saiu"},
    "status_moved_in": {"en": "moved in", "pt": "entrou"},
    "status_stayed_in": {"en": "stayed in", "pt": "ficou dentro"},
    "status_stayed_out": {"en": "stayed out", "pt": "ficou fora"},
    "reader_score": {"en": "reader", "pt": "leitor"},
    "lost_title": {"en": "Evidence lost by the reranker", "pt": "Evidência perdida pelo reranqueador"},
    "nothing_lost": {"en": "Nothing lost: ", "pt": "Nada perdido: "},
    "dropped_nothing": {"en": "The reranker dropped nothing from the fused top_k.",
                        "pt": "O reranqueador não tirou nada do top_k da fusão."},
    "not_reranked": {"en": "not reranked", "pt": "não reranqueado"},
    "lost_relevant": {"en": "LOST RELEVANT", "pt": "RELEVANTE PERDIDO"},
    "queries": {"en": "Queries", "pt": "Consultas"},
    "queries_caption": {"en": "Every query searched the same filters. A transform that lost a code, a negation or a "
                              "condition is flagged and, by default, searched the original query instead. HyDE text "
                              "is a search hint only: it never enters the context, the answer or the citations.",
                        "pt": "Toda consulta buscou com os mesmos filtros. Uma transformação que perdeu um código, uma "
                              "negação ou uma condição é marcada e, por padrão, buscou-se a consulta original no "
                              "lugar. O texto HyDE é só uma pista de busca: nunca entra no contexto, na resposta nem "
                              "nas citações."},
    "query_lost": {"en": "{kind} lost: {flags}", "pt": "{kind} perdeu: {flags}"},
    "cost_per_technique": {"en": "**Cost per technique** (extra retrieval calls, LLM calls, tokens, wall time in ms)",
                           "pt": "**Custo por técnica** (buscas extras, chamadas ao LLM, tokens, tempo em ms)"},
    "variant_lists": {"en": "Candidate lists of the {n} extra queries", "pt": "Listas de candidatos das {n} consultas extras"},
    "hypothesis_only": {"en": " (hypothesis only)", "pt": " (só hipótese)"},
    "timings_per_stage": {"en": "Timings per stage", "pt": "Tempos por etapa"},
    "outside_stages": {"en": "outside any stage (e.g. model loading)", "pt": "fora de qualquer etapa (ex.: carregar modelos)"},
    "costs": {"en": "Costs", "pt": "Custos"},
    "h_value": {"en": "value", "pt": "valor"},
    "same_final": {"en": "same final list", "pt": "mesma lista final"},
    "yes": {"en": "yes", "pt": "sim"},
    "no": {"en": "no", "pt": "não"},
    "compare_times": {"en": "total {total} · outside any stage {outside}",
                      "pt": "total {total} · fora de qualquer etapa {outside}"},
    "final_empty": {"en": "Final list empty: ", "pt": "Lista final vazia: "},
    "only_here": {"en": "only here", "pt": "só aqui"},
    "movement_ab": {"en": "Rank movement A → B:", "pt": "Movimento de posições A → B:"},
    "same_lists": {"en": "Both configurations return the same final list, in the same order.",
                   "pt": "As duas configurações devolvem a mesma lista final, na mesma ordem."},
    "grade": {"en": "Grade", "pt": "Nota"},
    "grade_help": {"en": "0 not relevant · 1 marginal · 2 relevant · 3 answers the question",
                   "pt": "0 irrelevante · 1 marginal · 2 relevante · 3 responde à pergunta"},
    "not_judged": {"en": "not judged", "pt": "sem nota"},
    "w_head": {"en": "**{chunk}** (parent {parent}; window {window})", "pt": "**{chunk}** (pai {parent}; janela {window})"},
    "w_in_list": {"en": "rank {rank}, score {score}", "pt": "posição {rank}, nota {score}"},
    "w_exact": {"en": " (exact cosine rank {rank})", "pt": " (posição exata pelo cosseno {rank})"},
    "w_exact_unknown": {"en": " (exact cosine rank unknown: {note})", "pt": " (posição exata pelo cosseno desconhecida: {note})"},
    "w_filtered": {"en": "removed by the filter {field}: the chunk has {value}, the request allows {allowed}",
                   "pt": "removido pelo filtro {field}: o trecho tem {value}, o pedido aceita {allowed}"},
    "w_no_token": {"en": "no question token in its text — question tokens: {q} · chunk tokens: {c}",
                   "pt": "nenhum token da pergunta no texto — tokens da pergunta: {q} · tokens do trecho: {c}"},
    "w_beyond": {"en": "ranked after the store's nearest {beyond}, outside the window of {window} (cosine {score})",
                 "pt": "depois dos {beyond} mais próximos do repositório, fora da janela de {window} (cosseno {score})"},
    "w_outside": {"en": "ranked {rank}, outside the window of {window} (score {score})",
                  "pt": "posição {rank}, fora da janela de {window} (nota {score})"},
    "w_hnsw": {"en": "not returned by the HNSW search, although its exact cosine {cos} would rank it {rank}",
               "pt": "não devolvido pela busca HNSW, embora seu cosseno exato {cos} o pusesse em {rank}"},
    "w_absent": {"en": "absent", "pt": "ausente"},
    "w_rrf": {"en": "- **RRF would give** {parts} = **{score}**", "pt": "- **o RRF daria** {parts} = **{score}**"},
    "w_fused_rank": {"en": ", fused rank {rank}", "pt": ", posição na fusão {rank}"},
    "w_rerank": {"en": "- **the reranker would give** {score}", "pt": "- **o reranqueador daria** {score}"},
    "w_reader": {"en": "- **the reader scores it** {score} (its question tokens' best matches in the chunk, "
                       "from 0 to 1)",
                 "pt": "- **o leitor lhe dá** {score} (os melhores casamentos dos tokens da pergunta no trecho, "
                       "de 0 a 1)"},
    "w_rerank_rank": {"en": " (rank {rank} among the reranked)", "pt": " (posição {rank} entre os reranqueados)"},
    "w_no_reranker": {"en": "- **reranker**: none configured for this request",
                      "pt": "- **reranqueador**: nenhum configurado para este pedido"},
    "w_gate_passes": {"en": "- **gate**: cosine {cos} passes the threshold {threshold}",
                      "pt": "- **portão**: cosseno {cos} passa o limiar {threshold}"},
    "w_gate_fails": {"en": "- **gate**: cosine {cos} fails the threshold {threshold}",
                     "pt": "- **portão**: cosseno {cos} não passa o limiar {threshold}"},
    "w_gate_none": {"en": "- **gate**: no cosine (filtered or no vector)", "pt": "- **portão**: sem cosseno (filtrado ou sem vetor)"},
    "w_codes": {"en": "; codes named by the question {codes}: {state}", "pt": "; códigos citados pela pergunta {codes}: {state}"},
    "w_missing": {"en": "missing {codes}", "pt": "faltam {codes}"},
    "w_all_present": {"en": "all present", "pt": "todos presentes"},
    "w_learned": {"en": "; learned support gate: P {p} vs {threshold}, it {verdict}{read}",
                  "pt": "; portão de suporte aprendido: P {p} contra {threshold}, ele {verdict}{read}"},
    "w_answers": {"en": "answers", "pt": "responde"},
    "w_abstains": {"en": "abstains for the whole request", "pt": "se abstém para o pedido todo"},
})

# -- app.py: sidebar, notices, tabs --
TEXTS.update({
    "language_help": {"en": "The interface and the answer stage's notes (the extractive answer's note, the abstention)",
                      "pt": "A interface e as notas da etapa de resposta (a nota da resposta extrativa, a abstenção)"},
    "lab_corpus": {"en": "the lab corpus", "pt": "o corpus de laboratório"},
    "indexing": {"en": "Indexing {label}…", "pt": "Indexando {label}…"},
    "embedding_progress": {"en": "Embedding chunks: {done:,} of {total:,}",
                           "pt": "Calculando os vetores dos trechos: {done} de {total}"},
    "index_sizes": {"en": ": {docs} documents, {chunks} chunks", "pt": ": {docs} documentos, {chunks} trechos"},
    "indexed": {"en": "Indexed {label}{sizes} in {s} s", "pt": "Indexado {label}{sizes} em {s} s"},
    "corpus_input": {"en": "Corpus file or folder", "pt": "Arquivo ou pasta do corpus"},
    "corpus_placeholder": {"en": "lab corpus (data/lab/corpus.jsonl)", "pt": "corpus de laboratório (data/lab/corpus.jsonl)"},
    "corpus_help": {"en": "JSONL, a folder of .md/.txt, a BEIR folder or a SQuAD JSON. Empty = the lab corpus.",
                    "pt": "JSONL, uma pasta de .md/.txt, uma pasta BEIR ou um JSON SQuAD. Vazio = o corpus de laboratório."},
    "still_using": {"en": "{error}; still using {corpus}.", "pt": "{error}; continua em uso {corpus}."},
    "corpus_not_loaded": {"en": "Could not load this corpus: {error}\n\nStill using {corpus}.",
                          "pt": "Não foi possível carregar este corpus: {error}\n\nContinua em uso {corpus}."},
    "corpus_line": {"en": "{docs} documents · {chunks} chunks · index {index} · dense store: {store}",
                    "pt": "{docs} documentos · {chunks} trechos · índice {index} · repositório denso: {store}"},
    "reindex": {"en": "Re-index (sync changes)", "pt": "Reindexar (sincronizar mudanças)"},
    "reindex_help": {"en": "Re-read the corpus and sync the vector store",
                     "pt": "Reler o corpus e sincronizar o repositório de vetores"},
    "reindexing": {"en": "Re-indexing…", "pt": "Reindexando…"},
    "reindexed": {"en": "Re-indexed: {added} added, {updated} updated, {removed} removed, {unchanged} unchanged",
                  "pt": "Reindexado: {added} novos, {updated} atualizados, {removed} removidos, {unchanged} iguais"},
    "reindexed_no_vectors": {"en": "Re-indexed: no vectors ({why})", "pt": "Reindexado: sem vetores ({why})"},
    "reindex_failed": {"en": "Re-index failed, previous index kept: {error}",
                       "pt": "A reindexação falhou, o índice anterior foi mantido: {error}"},
    "questions_input": {"en": "Question set (JSONL, BEIR or SQuAD)", "pt": "Conjunto de perguntas (JSONL, BEIR ou SQuAD)"},
    "lab_questions": {"en": "lab questions", "pt": "perguntas de laboratório"},
    "none": {"en": "none", "pt": "nenhum"},
    "questions_help": {"en": "Labeled questions for relevance marks. Empty = the lab questions on the lab corpus.",
                       "pt": "Perguntas rotuladas para as marcas de relevância. Vazio = as perguntas de laboratório "
                             "no corpus de laboratório."},
    "questions_not_loaded": {"en": "Question set not loaded: {error}", "pt": "Conjunto de perguntas não carregado: {error}"},
    "pick_labeled": {"en": "Pick a labeled question", "pt": "Escolher uma pergunta rotulada"},
    "tenant": {"en": "Tenant ({field})", "pt": "Inquilino ({field})"},
    "pick_tenant": {"en": "— pick a tenant —", "pt": "— escolha um inquilino —"},
    "tenant_help": {"en": "Every search runs inside one tenant; nothing is searched across tenants.",
                    "pt": "Toda busca roda dentro de um inquilino; nada é buscado entre inquilinos."},
    "any": {"en": "any", "pt": "qualquer"},
    "typed_values_help": {"en": "{n} values: type the ones you want, separated by commas",
                          "pt": "{n} valores: digite os que quiser, separados por vírgulas"},
    "typed_values_unknown": {"en": "No document of this tenant has {field} = {values}: not applied.",
                             "pt": "Nenhum documento deste inquilino tem {field} = {values}: não aplicado."},
    "overfetch": {"en": "over-fetch ×", "pt": "sobrebusca ×"},
    "overfetch_help": {"en": "Each ranker returns over-fetch × top_k", "pt": "Cada ranqueador devolve sobrebusca × top_k"},
    "rrf_k_help": {"en": "RRF: Σ 1/(rrf_k + rank), ranks from 1", "pt": "RRF: Σ 1/(rrf_k + posição), posições a partir de 1"},
    "rows": {"en": "rows per panel", "pt": "linhas por painel"},
    "min_similarity": {"en": "Min cosine similarity (gate)", "pt": "Similaridade de cosseno mínima (portão)"},
    "reranker": {"en": "Reranker", "pt": "Reranqueador"},
    "rr_ltr": {"en": "Learned ranker (LambdaMART over BM25, dense, coverage and reader features)",
               "pt": "Ranqueador aprendido (LambdaMART sobre características BM25, densas, de cobertura e do leitor)"},
    "rr_off": {"en": "Off", "pt": "Desligado"},
    "rr_reader": {"en": "Reader (token-level match over e5, offline)",
                  "pt": "Leitor (correspondência por token sobre o e5, offline)"},
    "rr_bi": {"en": "Bi-encoder rescoring ({bi}, offline)", "pt": "Renotação por bi-encoder ({bi}, offline)"},
    "rr_cross": {"en": "Cross-encoder (configured on this server)", "pt": "Cross-encoder (configurado neste servidor)"},
    "cross_help": {"en": "The cross-encoders this server offers (RETRIEVAL_APP_RERANKERS)",
                   "pt": "Os cross-encoders que este servidor oferece (RETRIEVAL_APP_RERANKERS)"},
    "dense_only": {"en": "Dense-only (hybrid off)", "pt": "Só denso (híbrido desligado)"},
    "dense_only_help": {"en": "Sets hybrid_enabled=False: the A/B toggle", "pt": "Define hybrid_enabled=False: a chave A/B"},
    "techniques": {"en": "Techniques (each off by default)", "pt": "Técnicas (cada uma desligada por padrão)"},
    "techniques_help": {"en": "rewrite (glossary or LLM), multi_query, hyde (search hint only, never evidence), "
                              "decompose, multi_hop, self_query (filters from the question; never widens the tenant)",
                        "pt": "rewrite (glossário ou LLM), multi_query, hyde (só pista de busca, nunca evidência), "
                              "decompose, multi_hop, self_query (filtros tirados da pergunta; nunca amplia o inquilino)"},
    "mmr": {"en": "MMR over the final candidates", "pt": "MMR sobre os candidatos finais"},
    "mmr_help": {"en": "Carbonell & Goldstein (1998); λ = 1 keeps the relevance order",
                 "pt": "Carbonell & Goldstein (1998); λ = 1 mantém a ordem de relevância"},
    "ab_toggle": {"en": "Compare: also run configuration B (tab 'Compare')",
                  "pt": "Comparar: rodar também a configuração B (aba 'Comparar')"},
    "url_ignored": {"en": "URL parameter ignored: {problem}", "pt": "Parâmetro do link ignorado: {problem}"},
    "question_placeholder": {"en": "e.g. O PX-7 não foi ativado apesar do pagamento, o que faço?",
                             "pt": "ex.: O PX-7 não foi ativado apesar do pagamento, o que faço?"},
    "render_first": {"en": "answer and panels **{ms} ms**, ", "pt": "resposta e painéis **{ms} ms**, "},
    "render_time": {"en": "Submit → page laid out: {first}whole page **{ms} ms** (measured in the app, server side). {note}",
                    "pt": "Envio → página montada: {first}página inteira **{ms} ms** (medido no app, no servidor). {note}"},
    "pipeline_total": {"en": "Pipeline total {ms} (from the trace).", "pt": "Total do pipeline {ms} (do trace)."},
    "no_tenant_here": {"en": "You may open no tenant of this corpus: choose another corpus in the sidebar.",
                       "pt": "Você não pode abrir nenhum inquilino deste corpus: escolha outro corpus na barra lateral."},
    "pick_tenant_first": {"en": "This corpus has {n} tenants ({shown}): pick a tenant in the sidebar before asking. "
                                "Nothing is searched across tenants.",
                          "pt": "Este corpus tem {n} inquilinos ({shown}): escolha um na barra lateral antes de "
                                "perguntar. Nada é buscado entre inquilinos."},
    "pick_your_tenant": {"en": "Pick a tenant in the sidebar before asking (yours here: {shown}). Nothing is searched "
                               "across tenants.",
                         "pt": "Escolha um inquilino na barra lateral antes de perguntar (os seus aqui: {shown}). "
                               "Nada é buscado entre inquilinos."},
    "invalid_settings": {"en": "Invalid settings: {error}", "pt": "Configurações inválidas: {error}"},
    "labeled_line": {"en": "Labeled question {id} ({group}) · relevant: {relevant}",
                     "pt": "Pergunta rotulada {id} ({group}) · relevantes: {relevant}"},
    "none_abstention": {"en": "none (the right answer is an abstention)", "pt": "nenhum (a resposta certa é abster-se)"},
    "downloads": {"en": "Downloads", "pt": "Downloads"},
    "dl_trace": {"en": "Trace (JSON)", "pt": "Trace (JSON)"},
    "judgments_file": {"en": "Judgments file (question-set JSONL, or TREC qrels: .qrels / .txt)",
                       "pt": "Arquivo de julgamentos (JSONL de perguntas, ou qrels TREC: .qrels / .txt)"},
    "judgments_help": {"en": "Grades are written to this question's record (relevant, graded), created if new; other "
                             "questions are kept. A qrels file keeps one line per judgment.",
                       "pt": "As notas vão para o registro desta pergunta (relevant, graded), criado se for novo; as "
                             "outras perguntas ficam. Um arquivo qrels guarda uma linha por julgamento."},
    "name_judgments_file": {"en": "Name a judgments file inside the write roots to save grades ({why}).",
                            "pt": "Indique um arquivo de julgamentos dentro das raízes de escrita para salvar as notas "
                                  "({why})."},
    "judgments_not_read": {"en": "Judgments not read: {error}", "pt": "Julgamentos não lidos: {error}"},
    "judge_blind": {"en": "Hide ranks and scores while judging (position bias)",
                    "pt": "Esconder posições e notas ao julgar (viés de posição)"},
    "only_unjudged": {"en": "Only unjudged", "pt": "Só os sem nota"},
    "saved_in_file": {"en": "saved in the file: {n}", "pt": "salvos no arquivo: {n}"},
    "saved": {"en": "Saved {n} grade(s) of question {id} to {path}.", "pt": "{n} nota(s) da pergunta {id} salvas em {path}."},
    "judgments_not_saved": {"en": "Judgments not saved: {error}", "pt": "Julgamentos não salvos: {error}"},
    "where_caption": {"en": "Pick any parent or chunk of the corpus: for each list, its rank and score, or why it is absent.",
                      "pt": "Escolha qualquer pai ou trecho do corpus: em cada lista, sua posição e nota, ou por que "
                            "está ausente."},
    "where_search": {"en": "Search by id or title", "pt": "Buscar por id ou título"},
    "where_pick": {"en": "Parent or chunk", "pt": "Pai ou trecho"},
    "config_b": {"en": "**Configuration B** (A is the sidebar's)", "pt": "**Configuração B** (A é a da barra lateral)"},
    "b_dense_only": {"en": "B: dense-only", "pt": "B: só denso"},
    "b_reranker": {"en": "B: reranker", "pt": "B: reranqueador"},
    "b_overfetch": {"en": "B: over-fetch ×", "pt": "B: sobrebusca ×"},
    "b_min_cos": {"en": "B: min cosine", "pt": "B: cosseno mínimo"},
    "running_ab": {"en": "Running A and B, both warm…", "pt": "Rodando A e B, ambos aquecidos…"},
    "a_sidebar": {"en": "A (sidebar)", "pt": "A (barra lateral)"},
    "warm_note": {"en": "Both measured warm (models loaded, query vector cached): the first request of A on this page "
                        "took {cold}, of which {embed} embedding the question and {outside} outside any stage.",
                  "pt": "Ambos medidos aquecidos (modelos carregados, vetor da consulta em cache): o primeiro pedido de "
                        "A nesta página levou {cold}, dos quais {embed} para o vetor da pergunta e {outside} fora de "
                        "qualquer etapa."},
    "b_failed": {"en": "Configuration B did not run: {error}", "pt": "A configuração B não rodou: {error}"},
    "turn_on_ab": {"en": "Turn on 'Compare: also run configuration B' in the sidebar.",
                   "pt": "Ligue 'Comparar: rodar também a configuração B' na barra lateral."},
})

# -- the Evaluation page (pages/2_Evaluation.py) --
TEXTS.update({
    "ev_title": {"en": "Evaluation and diagnosis", "pt": "Avaliação e diagnóstico"},
    "ev_caption": {"en": "Label first, then compare: metrics from ranx, paired Fisher randomization tests against the "
                         "first configuration (the baseline), and the layer — coverage, ordering or generation — of "
                         "every failure.",
                   "pt": "Primeiro rotule, depois compare: métricas do ranx, testes de aleatorização de Fisher "
                         "pareados contra a primeira configuração (a referência) e a camada — cobertura, ordenação ou "
                         "geração — de cada falha."},
    "ev_set_lab": {"en": "Lab set (fictitious fixture, 44 questions)",
                   "pt": "Conjunto de laboratório (fictício, 44 perguntas)"},
    "ev_set_faquad": {"en": "FaQuAD (real, 249 docs / 900 questions)", "pt": "FaQuAD (real, 249 docs / 900 perguntas)"},
    "ev_set_custom": {"en": "My set (corpus + questions, or TREC topics + qrels)",
                      "pt": "Meu conjunto (corpus + perguntas, ou tópicos TREC + qrels)"},
    "ev_rr_bi": {"en": "{name} (offline rescoring, not a cross-encoder)",
                 "pt": "{name} (renotação offline, não é cross-encoder)"},
    "ev_rr_ltr": {"en": "{name} (the learned ranker, as hybrid+ltr)", "pt": "{name} (o ranqueador aprendido, como hybrid+ltr)"},
    "ev_rr_reader": {"en": "{name} (late interaction over e5, offline, as hybrid+reader)",
                     "pt": "{name} (interação tardia sobre o e5, offline, como hybrid+reader)"},
    "ev_rr_cross": {"en": "{name} (cross-encoder)", "pt": "{name} (cross-encoder)"},
    "ev_question_set": {"en": "Question set", "pt": "Conjunto de perguntas"},
    "ev_no_faquad": {"en": "FaQuAD is not on this machine. To use it, put its `corpus.jsonl` and `questions.jsonl` in "
                           "{hint}, or choose **My set** with any SQuAD JSON, BEIR folder or corpus + questions JSONL.",
                     "pt": "O FaQuAD não está nesta máquina. Para usá-lo, ponha `corpus.jsonl` e `questions.jsonl` em "
                           "{hint}, ou escolha **Meu conjunto** com qualquer JSON SQuAD, pasta BEIR ou JSONL de corpus "
                           "e perguntas."},
    "ev_split": {"en": "Split", "pt": "Partição"},
    "ev_split_help": {"en": "A fixed hash of the question id: 70 % dev, 30 % held-out. 'all' reports both.",
                      "pt": "Um hash fixo do id da pergunta: 70 % dev, 30 % reservada. 'todas' mostra as duas."},
    "ev_split_all": {"en": "all", "pt": "todas"},
    "ev_split_dev": {"en": "dev", "pt": "dev"},
    "ev_split_heldout": {"en": "heldout", "pt": "reservada"},
    "ev_k": {"en": "k (cut-offs)", "pt": "k (cortes)"},
    "ev_corpus": {"en": "Corpus (My set)", "pt": "Corpus (Meu conjunto)"},
    "ev_corpus_ph": {"en": "path to JSONL, folder, BEIR folder or SQuAD JSON",
                     "pt": "caminho de JSONL, pasta, pasta BEIR ou JSON SQuAD"},
    "ev_questions": {"en": "Questions (My set)", "pt": "Perguntas (Meu conjunto)"},
    "ev_questions_ph": {"en": "JSONL, BEIR folder, SQuAD JSON or TREC topics",
                        "pt": "JSONL, pasta BEIR, JSON SQuAD ou tópicos TREC"},
    "ev_qrels": {"en": "TREC qrels (optional)", "pt": "qrels TREC (opcional)"},
    "ev_qrels_ph": {"en": "qid 0 docno relevance", "pt": "qid 0 docno relevância"},
    "ev_configs": {"en": "Configurations (the first is the baseline)", "pt": "Configurações (a primeira é a referência)"},
    "ev_reranker": {"en": "Reranker of hybrid+rerank", "pt": "Reranqueador de hybrid+rerank"},
    "ev_hypothesis": {"en": "Expectation, written before the run (hypothesis)",
                      "pt": "Expectativa, escrita antes de rodar (hipótese)"},
    "ev_hypothesis_ph": {"en": "e.g. hybrid recovers exact codes that dense misses, without losing paraphrases",
                         "pt": "ex.: o híbrido recupera códigos exatos que o denso perde, sem perder paráfrases"},
    "ev_run": {"en": "Run the evaluation", "pt": "Rodar a avaliação"},
    "ev_need_questions": {"en": "name a questions file for 'My set'", "pt": "indique um arquivo de perguntas para 'Meu conjunto'"},
    "ev_need_config": {"en": "choose at least one configuration", "pt": "escolha pelo menos uma configuração"},
    "ev_no_tenant_questions": {"en": "none of this set's questions is in a tenant you may open",
                               "pt": "nenhuma pergunta deste conjunto está num inquilino que você pode abrir"},
    "ev_evaluating": {"en": "Evaluating…", "pt": "Avaliando…"},
    "ev_loading": {"en": "Loading the index and models (indexing only the first time)…",
                   "pt": "Carregando o índice e os modelos (indexa só na primeira vez)…"},
    "ev_progress": {"en": "configuration {number}/{n} `{name}` · question {q}/{per} · {done}/{total} requests",
                    "pt": "configuração {number}/{n} `{name}` · pergunta {q}/{per} · {done}/{total} pedidos"},
    "ev_all_done": {"en": "All requests done: computing metrics and significance tests (ranx)…",
                    "pt": "Pedidos concluídos: calculando métricas e testes de significância (ranx)…"},
    "ev_evaluated": {"en": "Evaluated: ", "pt": "Avaliado: "},
    "ph_index and models": {"en": "index and models", "pt": "índice e modelos"},
    "ph_requests": {"en": "requests", "pt": "pedidos"},
    "ph_metrics and significance (ranx)": {"en": "metrics and significance (ranx)",
                                           "pt": "métricas e significância (ranx)"},
    "ph_click to result": {"en": "click to result", "pt": "do clique ao resultado"},
    "ev_failed": {"en": "The evaluation did not run: {error}", "pt": "A avaliação não rodou: {error}"},
    "wi_change": {"en": "Change", "pt": "Mudança"},
    "wi_none": {"en": "no change", "pt": "nenhuma"},
    "wi_drop": {"en": "drop a document", "pt": "tirar um documento"},
    "wi_inject": {"en": "inject a document", "pt": "injetar um documento"},
    "wi_in_list": {"en": "In the list of", "pt": "Na lista de"},
    "wi_document": {"en": "Document", "pt": "Documento"},
    "wi_doc_id": {"en": "Document id (e.g. one missing from both lists)",
                  "pt": "Id do documento (ex.: um ausente das duas listas)"},
    "wi_at_rank": {"en": "at rank", "pt": "na posição"},
    "wi_moved": {"en": "{n} items changed rank. RRF never invents a document: one absent from every list only enters "
                       "when injected — a coverage problem, not an ordering one.",
                 "pt": "{n} itens mudaram de posição. O RRF nunca inventa um documento: um ausente de todas as listas "
                       "só entra se injetado — problema de cobertura, não de ordenação."},
    "mn_title": {"en": "Manual rankings (fixture mode): type ranked lists and fuse them",
                 "pt": "Rankings manuais (modo fixture): digite listas ordenadas e funda-as"},
    "mn_label": {"en": "Output labelled as {label}.", "pt": "Saída rotulada como {label}."},
    "mn_lex": {"en": "Lexical ranking", "pt": "Ranking léxico"},
    "mn_den": {"en": "Semantic ranking", "pt": "Ranking semântico"},
    "mn_map": {"en": "doc → tenant (optional)", "pt": "doc → inquilino (opcional)"},
    "mn_tenant": {"en": "keep tenant", "pt": "manter inquilino"},
    "mn_weights": {"en": "Per-ranker weights (optional: weighted RRF)", "pt": "Pesos por ranqueador (opcional: RRF ponderado)"},
    "mn_weighted": {"en": "weighted RRF", "pt": "RRF ponderado"},
    "mn_fused": {"en": "**Fused ({kind}, k = {k}, ranks from 1)** — score = Σ w / (k + rank)",
                 "pt": "**Fusão ({kind}, k = {k}, posições a partir de 1)** — nota = Σ w / (k + posição)"},
    "mn_removed": {"en": "Removed by the filter inside each list, before the fusion: ",
                   "pt": "Removidos pelo filtro dentro de cada lista, antes da fusão: "},
    "mn_what_if": {"en": "**What if** (on the filtered lists)", "pt": "**E se** (nas listas filtradas)"},
    "tr_title": {"en": "Train a learned ranker on this question set (your judgments)",
                 "pt": "Treinar um ranqueador aprendido neste conjunto (seus julgamentos)"},
    "tr_caption": {"en": "Trains the learned judge (LambdaMART reranker, support gate, evidence sentences) on the chosen "
                         "set, split by parent document, then compares the current default with the new ranker on the "
                         "set's held-out part: paired significance test and the relevant documents lost. The new folder "
                         "is not adopted by itself; use it with RETRIEVAL_JUDGE_PATH or reranker ltr:FOLDER once it "
                         "measures better.",
                   "pt": "Treina o juiz aprendido (reranqueador LambdaMART, portão de suporte, frases de evidência) no "
                         "conjunto escolhido, separado por documento pai, e compara o padrão atual com o novo "
                         "ranqueador na parte reservada: teste de significância pareado e documentos relevantes "
                         "perdidos. A nova pasta não é adotada sozinha; use-a com RETRIEVAL_JUDGE_PATH ou reranker "
                         "ltr:PASTA quando medir melhor."},
    "tr_off": {"en": "Training is off under an access policy (RETRIEVAL_ACCESS_POLICY): it reads every question of the "
                     "set, whatever its tenant. Train with the command line (`python -m retrieval train`).",
               "pt": "O treino fica desligado sob uma política de acesso (RETRIEVAL_ACCESS_POLICY): ele lê todas as "
                     "perguntas do conjunto, de qualquer inquilino. Treine pela linha de comando "
                     "(`python -m retrieval train`)."},
    "tr_button": {"en": "Train on these judgments", "pt": "Treinar com estes julgamentos"},
    "tr_minimum": {"en": "Needs at least {needed} answerable judged questions in the training part (dev questions "
                         "whose relevant documents no held-out question shares); this set has {answerable_train} "
                         "({answerable} answerable of {questions} questions in all).",
                   "pt": "Precisa de pelo menos {needed} perguntas julgadas com resposta na parte de treino (perguntas "
                         "de dev cujos documentos relevantes nenhuma pergunta reservada compartilha); este conjunto "
                         "tem {answerable_train} ({answerable} com resposta de {questions} perguntas no total)."},
    "tr_jsonl": {"en": "Training reads a question set in JSONL (relevant / graded): the lab set, FaQuAD or My set.",
                 "pt": "O treino lê um conjunto de perguntas em JSONL (relevant / graded): o de laboratório, o FaQuAD "
                       "ou Meu conjunto."},
    "tr_status": {"en": "Training on the set, then comparing on its held-out part…",
                  "pt": "Treinando no conjunto, depois comparando na parte reservada…"},
    "tr_fitting": {"en": "Tracing and fitting (minutes on 2 cores)…", "pt": "Rodando e ajustando (minutos em 2 núcleos)…"},
    "tr_comparing": {"en": "Comparing on the held-out part: {done}/{total} ({name})",
                     "pt": "Comparando na parte reservada: {done}/{total} ({name})"},
    "tr_done": {"en": "Trained and compared", "pt": "Treinado e comparado"},
    "tr_failed": {"en": "Training failed: {error}", "pt": "O treino falhou: {error}"},
    "tr_new": {"en": "New model folder {folder} (trained in {s} s).", "pt": "Nova pasta de modelo {folder} (treinada em {s} s)."},
    "tr_note": {"en": "Baseline `default` = the app's current settings; candidate `trained` = the same settings with "
                      "the new folder's ranker, on the held-out part only (never trained on).",
                "pt": "Referência `default` = as configurações atuais do app; candidata `trained` = as mesmas com o "
                      "ranqueador da nova pasta, só na parte reservada (nunca usada no treino)."},
    # -- the tune panel (ui/tune_panel.py) --
    "tu_title": {"en": "Tune to this question set", "pt": "Ajustar a este conjunto de perguntas"},
    "tu_caption": {"en": "Searches the settings that change rankings on the set's dev part (one setting at a time, "
                         "from the app's defaults, within the budget), runs the best once on the held-out part beside "
                         "the default (paired significance test, relevant documents lost) and recommends it only on "
                         "evidence, as `python -m retrieval tune` does.",
                   "pt": "Procura as configurações que mudam os rankings na parte de desenvolvimento do conjunto (uma "
                         "por vez, a partir do padrão do app, dentro do orçamento), roda a melhor uma vez na parte "
                         "reservada ao lado do padrão (teste de significância pareado, documentos relevantes perdidos) "
                         "e só a recomenda com evidência, como `python -m retrieval tune`."},
    "tu_off": {"en": "Tuning is off under an access policy (RETRIEVAL_ACCESS_POLICY): it reads every question of the "
                     "set, whatever its tenant. Tune with the command line (`python -m retrieval tune`).",
               "pt": "O ajuste fica desligado sob uma política de acesso (RETRIEVAL_ACCESS_POLICY): ele lê todas as "
                     "perguntas do conjunto, de qualquer inquilino. Ajuste pela linha de comando "
                     "(`python -m retrieval tune`)."},
    "tu_set": {"en": "Set: **{name}** (the one chosen above, as last run).",
               "pt": "Conjunto: **{name}** (o escolhido acima, na última execução)."},
    "tu_budget": {"en": "Budget of the dev search (s)", "pt": "Orçamento da busca em desenvolvimento (s)"},
    "tu_budget_help": {"en": "The search stops before a candidate that would pass it; the held-out check runs after, "
                             "outside the budget.",
                       "pt": "A busca para antes de uma candidata que o passaria; a verificação na parte reservada "
                             "roda depois, fora do orçamento."},
    "tu_no_templates": {"en": "Leave out the passage templates (`--no-templates`)",
                        "pt": "Deixar de fora os modelos de passagem (`--no-templates`)"},
    "tu_no_templates_help": {"en": "A passage template is index-level: trying one embeds the corpus again, into its "
                                   "own collection (once).",
                             "pt": "Um modelo de passagem é do índice: testá-lo gera de novo os vetores do corpus, "
                                   "numa coleção própria (uma vez)."},
    "tu_run": {"en": "Run the tuner", "pt": "Rodar o ajuste"},
    "tu_status": {"en": "Tuning: dev search, then the held-out check…",
                  "pt": "Ajustando: busca em desenvolvimento, depois a verificação na parte reservada…"},
    "tu_loading": {"en": "Loading the index and models…", "pt": "Carregando o índice e os modelos…"},
    "tu_progress": {"en": "Dev requests {done}/{total} ({name})", "pt": "Pedidos em desenvolvimento {done}/{total} ({name})"},
    "tu_done": {"en": "Tuned in {s} s", "pt": "Ajustado em {s} s"},
    "tu_failed": {"en": "Tuning failed: {error}", "pt": "O ajuste falhou: {error}"},
    "tu_searched": {"en": "Searched **{evaluated} of {planned}** candidates on {dev} dev questions in {s} s "
                          "(budget {budget} s)",
                    "pt": "Busca em **{evaluated} de {planned}** candidatas sobre {dev} perguntas de desenvolvimento "
                          "em {s} s (orçamento {budget} s)"},
    "tu_stopped": {"en": "; **stopped by the budget**.", "pt": "; **parada pelo orçamento**."},
    "tu_top": {"en": "**Top candidates on dev** (by {metric})", "pt": "**Melhores candidatas em desenvolvimento** (por {metric})"},
    "tu_marginal": {"en": "Time per request on dev is marginal: a candidate reuses the query vectors and generator "
                          "windows of the ones before it.",
                    "pt": "O tempo por pedido em desenvolvimento é marginal: uma candidata reutiliza os vetores das "
                          "consultas e as janelas dos geradores das anteriores."},
    "tu_heldout": {"en": "**Held-out check**", "pt": "**Verificação na parte reservada**"},
    "tu_heldout_none": {"en": "Not run: the default was the best configuration on dev.",
                        "pt": "Não rodou: o padrão foi a melhor configuração em desenvolvimento."},
    "tu_compared": {"en": "tuned vs default, {metric}: {delta} ({p}, paired Fisher randomization test); {improved} "
                          "improved, {worsened} worsened, a relevant document lost in {lost}.",
                    "pt": "ajustada contra o padrão, {metric}: {delta} ({p}, teste de aleatorização pareado de "
                          "Fisher); {improved} melhoraram, {worsened} pioraram, documento relevante perdido em {lost}."},
    "tu_kept_dev": {"en": "Default kept: the default was the best configuration on dev, nothing to confirm on held-out.",
                    "pt": "Padrão mantido: o padrão foi a melhor configuração em desenvolvimento, nada a confirmar na "
                          "parte reservada."},
    "tu_kept_no_heldout": {"en": "Default kept: no answerable question in the held-out split to check it on.",
                           "pt": "Padrão mantido: nenhuma pergunta respondível na parte reservada onde verificá-la."},
    "tu_recommended": {"en": "Recommended: held-out {metric} {delta} ({p}), no relevant document lost.",
                       "pt": "Recomendada: {metric} na parte reservada {delta} ({p}), nenhum documento relevante "
                             "perdido."},
    "tu_kept": {"en": "Default kept: {why}.", "pt": "Padrão mantido: {why}."},
    "tu_no_gain": {"en": "held-out {metric} does not improve ({delta})",
                   "pt": "{metric} na parte reservada não melhora ({delta})"},
    "tu_not_significant": {"en": "held-out {metric} {delta} is not significant ({p}; needs p < 0.05)",
                           "pt": "{metric} na parte reservada {delta} não é significativo ({p}; exige p < 0,05)"},
    "tu_loses": {"en": "it loses a relevant document the default had in its top 10 in {n} held-out question(s): ",
                 "pt": "perde um documento relevante que o padrão tinha no top 10 em {n} pergunta(s) reservada(s): "},
    "tu_download": {"en": "Configuration (JSON)", "pt": "Configuração (JSON)"},
    "tu_download_help": {"en": "The default and the best dev candidate, for `python -m retrieval eval --config-file`.",
                         "pt": "O padrão e a melhor candidata em desenvolvimento, para "
                               "`python -m retrieval eval --config-file`."},
    "tu_adopt": {"en": "Adopt for this corpus", "pt": "Adotar neste corpus"},
    "tu_adopt_help": {"en": "Enabled only when the held-out check recommends the change; stored beside the index "
                            "(`.retrieval/tuned/`), read by ask, eval and the app.",
                      "pt": "Ativo só quando a verificação na parte reservada recomenda a mudança; guardado ao lado do "
                            "índice (`.retrieval/tuned/`), lido por ask, eval e o app."},
    "tu_adopted": {"en": "Adopted for this corpus: {path}.", "pt": "Adotada neste corpus: {path}."},
    "tu_stored": {"en": "This corpus has an adopted configuration.", "pt": "Este corpus tem uma configuração adotada."},
    "tu_remove": {"en": "Remove the adopted configuration", "pt": "Remover a configuração adotada"},
    "tu_removed": {"en": "Removed: this corpus uses the default settings again.",
                   "pt": "Removida: este corpus volta ao padrão."},
    "ev_choose": {"en": "Choose a set and configurations, write the expectation, and press **Run the evaluation**.",
                  "pt": "Escolha um conjunto e configurações, escreva a expectativa e clique em **Rodar a avaliação**."},
    "ev_decision": {"en": "Decision", "pt": "Decisão"},
    "ev_choice": {"en": "Provisional choice: **{choice}** — {why}.", "pt": "Escolha provisória: **{choice}** — {why}."},
    "ev_fictitious": {"en": "The lab set is fictitious: these figures demonstrate the method, not a benchmark of real data.",
                      "pt": "O conjunto de laboratório é fictício: estes números demonstram o método, não são um "
                            "benchmark de dados reais."},
    "ev_default_caveat": {"en": "The app's default is {default}, and this run's provisional choice is {choice}: the "
                                "choice moves away from the baseline only on a significant gain (p < 0.05 on {metric}, "
                                "nothing lost on held-out). With {n} questions a small difference is not evidence; "
                                "change the default only on a real set that shows it.",
                          "pt": "O padrão do app é {default}, e a escolha provisória desta rodada é {choice}: a escolha "
                                "só se afasta da referência com ganho significativo (p < 0,05 em {metric}, nada perdido "
                                "na parte reservada). Com {n} perguntas uma diferença pequena não é evidência; mude o "
                                "padrão só com um conjunto real que a mostre."},
    "ev_lost_caveat": {"en": "{candidate} wins on the mean of {metrics} but loses a relevant document the baseline had "
                             "in {n} question(s): ",
                       "pt": "{candidate} ganha na média de {metrics} mas perde um documento relevante que a "
                             "referência tinha em {n} pergunta(s): "},
    "ev_time_went": {"en": "Where the time went: ", "pt": "Para onde foi o tempo: "},
    "ev_record": {"en": "Decision record (Markdown source)", "pt": "Registro da decisão (fonte Markdown)"},
    "ev_run_line": {"en": "Corpus {corpus} · {n} questions · split {split} · k = {k} · every question ran once per "
                          "configuration with top_k = {kmax}.",
                    "pt": "Corpus {corpus} · {n} perguntas · partição {split} · k = {k} · cada pergunta rodou uma vez "
                          "por configuração com top_k = {kmax}."},
    "ev_metrics": {"en": "Metrics by configuration", "pt": "Métricas por configuração"},
    "ev_metrics_caption": {"en": "judged@{k}: the share of each question's top-{k} parents that carry a judgment "
                                 "(relevant or graded), averaged; a low value means nDCG@{k} scores unjudged items as "
                                 "not relevant. Configurations after the first reuse the BM25 and dense lists already "
                                 "computed for the same question, filters and window; 'alone, est.' adds back the "
                                 "generator time they saved.",
                           "pt": "julgados@{k}: a fração dos pais do top-{k} de cada pergunta que têm julgamento "
                                 "(relevante ou com nota), na média; um valor baixo quer dizer que o nDCG@{k} conta "
                                 "itens sem julgamento como irrelevantes. As configurações depois da primeira "
                                 "reaproveitam as listas BM25 e densa já calculadas para a mesma pergunta, filtros e "
                                 "janela; 'sozinha, estim.' soma de volta o tempo de geração poupado."},
    "ev_comparison": {"en": "Comparison against the baseline", "pt": "Comparação com a referência"},
    "ev_figures_of": {"en": "Figures of", "pt": "Números de"},
    "ev_evaluated_set": {"en": "evaluated set", "pt": "conjunto avaliado"},
    "ev_expected": {"en": "**Expected (written before the run)**", "pt": "**Esperado (escrito antes de rodar)**"},
    "ev_no_expectation": {"en": "No expectation was written for this run.", "pt": "Nenhuma expectativa foi escrita para esta rodada."},
    "ev_observed": {"en": "**Observed**", "pt": "**Observado**"},
    "ev_single": {"en": "A single configuration: nothing to compare.", "pt": "Uma só configuração: nada a comparar."},
    "ev_two": {"en": "Two configurations, question by question", "pt": "Duas configurações, pergunta por pergunta"},
    "ev_metric": {"en": "Metric", "pt": "Métrica"},
    "ev_two_line": {"en": "Mean {metric}: {a} **{ma}** → {b} **{mb}** (Δ {d}) · improved {improved} · worsened "
                          "{worsened} · tied {tied}",
                    "pt": "Média de {metric}: {a} **{ma}** → {b} **{mb}** (Δ {d}) · melhorou {improved} · piorou "
                          "{worsened} · empatou {tied}"},
    "ev_two_need": {"en": "Run two or more configurations to compare them question by question.",
                    "pt": "Rode duas ou mais configurações para compará-las pergunta por pergunta."},
    "ev_by_group": {"en": "By group", "pt": "Por grupo"},
    "ev_layers": {"en": "Failure layers", "pt": "Camadas de falha"},
    "ev_layers_caption": {"en": "coverage: no relevant chunk among any generator's candidates (query, representation or "
                                "index) · ordering: a candidate that fell out at fusion, reranker or gate · generation: "
                                "in the context but not cited, or an abstention; for an unanswerable question, an answer.",
                          "pt": "cobertura: nenhum trecho relevante entre os candidatos de algum gerador (consulta, "
                                "representação ou índice) · ordenação: um candidato que caiu na fusão, no "
                                "reranqueador ou no portão · geração: no contexto mas não citado, ou uma abstenção; "
                                "para uma pergunta sem resposta, uma resposta."},
    "ev_all_groups": {"en": "(all)", "pt": "(todos)"},
    "ev_axis_questions": {"en": "questions", "pt": "perguntas"},
    "ev_axis_config": {"en": "configuration", "pt": "configuração"},
    "ev_axis_layer": {"en": "layer:stage", "pt": "camada:etapa"},
    "ev_evidence": {"en": "Evidence check", "pt": "Verificação de evidência"},
    "ev_evidence_caption": {"en": "{checked} gold spans of {questions} questions: {whole} survive whole inside a "
                                  "subchunk of their relevant parent, {cut} are cut by the chunking (coverage failures "
                                  "no search can fix), {elsewhere} are not in the relevant parent.",
                            "pt": "{checked} trechos-ouro de {questions} perguntas: {whole} sobrevivem inteiros num "
                                  "subtrecho do pai relevante, {cut} são cortados pela divisão em trechos (falhas de "
                                  "cobertura que nenhuma busca conserta), {elsewhere} não estão no pai relevante."},
    "ev_per_question": {"en": "Per question", "pt": "Por pergunta"},
    "ev_configuration": {"en": "Configuration", "pt": "Configuração"},
    "ev_failures_only": {"en": "Failures only", "pt": "Só falhas"},
    "ev_unjudged_caption": {"en": "Unjudged in top {k}: the parents of the top {k} that carry no judgment for the "
                                  "question (neither relevant nor graded); nDCG counts them as not relevant.",
                            "pt": "Sem julgamento no top {k}: os pais do top {k} sem julgamento para a pergunta (nem "
                                  "relevantes nem com nota); o nDCG os conta como irrelevantes."},
    "ev_lost_line": {"en": "{candidate} lost a relevant document {baseline} had in its top {k}: ",
                     "pt": "{candidate} perdeu um documento relevante que {baseline} tinha no top {k}: "},
    "ev_sweep": {"en": "Top-k sweep", "pt": "Varredura de top-k"},
    "ev_sweep_caption": {"en": "Retrieval top-k is how many chunks reach the answer; it is not a generation sampling "
                               "parameter (an LLM's top-k / top-p), which this workbench never sets. The sweep runs "
                               "with dedup = `chunk` so repeated evidence shows: an item is redundant when an earlier one "
                               "has the same parent or a cosine of stored vectors ≥ 0.95 (token Jaccard ≥ 0.8 when no "
                               "vector is stored).",
                         "pt": "O top-k da busca é quantos trechos chegam à resposta; não é um parâmetro de amostragem "
                               "da geração (top-k / top-p de um LLM), que esta bancada nunca define. A varredura roda "
                               "com dedup = `chunk` para mostrar evidência repetida: um item é redundante quando um "
                               "anterior tem o mesmo pai ou cosseno dos vetores guardados ≥ 0,95 (Jaccard de tokens ≥ "
                               "0,8 quando não há vetor)."},
    "ev_sweep_run": {"en": "Run the sweep (k = 1…20)", "pt": "Rodar a varredura (k = 1…20)"},
    "ev_sweeping": {"en": "Sweeping…", "pt": "Varrendo…"},
    "ev_axis_topk": {"en": "retrieval top-k", "pt": "top-k da busca"},
    "ev_sweep_line": {"en": "{config}: {n} questions; near duplicate = {dup}.",
                      "pt": "{config}: {n} perguntas; quase duplicata = {dup}."},
    "ev_what_if": {"en": "What if, on one question", "pt": "E se, numa pergunta"},
    "ev_what_if_caption": {"en": "Take one question's BM25 and dense windows, drop a document from one list or inject "
                                 "one missing from both, and re-fuse with RRF (same k). Nothing is searched again.",
                           "pt": "Pegue as janelas BM25 e densa de uma pergunta, tire um documento de uma lista ou "
                                 "injete um ausente das duas, e refunda com RRF (mesmo k). Nada é buscado de novo."},
    "ev_wi_line": {"en": "Relevant: {relevant} · split {split} · rrf_k {k}",
                   "pt": "Relevantes: {relevant} · partição {split} · rrf_k {k}"},
    "ev_wi_none": {"en": "This configuration ran no generator list for the question.",
                   "pt": "Esta configuração não gerou lista para a pergunta."},
    "ev_exports": {"en": "Exports", "pt": "Exportações"},
    "ex_comparison": {"en": "Comparison (CSV)", "pt": "Comparação (CSV)"},
    "ex_report": {"en": "Report (JSON)", "pt": "Relatório (JSON)"},
    "ex_record": {"en": "Decision record (Markdown)", "pt": "Registro da decisão (Markdown)"},
    "ex_per_question": {"en": "Per question, {config} (CSV)", "pt": "Por pergunta, {config} (CSV)"},
    "ex_trec": {"en": "TREC run: {name}", "pt": "Execução TREC: {name}"},
    "dl_report": {"en": "Download this question's report (HTML)", "pt": "Baixar o relatório desta pergunta (HTML)"},
    "ex_html": {"en": "Report to hand over (HTML)", "pt": "Relatório para entregar (HTML)"},
    "ex_html_help": {"en": "One self-contained HTML file: opens offline in any browser, no script.",
                     "pt": "Um arquivo HTML autocontido: abre offline em qualquer navegador, sem script."},
})

# -- ui/access.py: who may see what --
TEXTS.update({
    "acc_invalid": {"en": "Not authorised: this workbench's access policy (RETRIEVAL_ACCESS_POLICY) is not valid; the "
                          "server log says why.",
                    "pt": "Acesso negado: a política de acesso desta bancada (RETRIEVAL_ACCESS_POLICY) é inválida; o "
                          "log do servidor diz por quê."},
    "acc_single_user": {"en": "**Single-user mode**: no access policy is set (`RETRIEVAL_ACCESS_POLICY`), so anyone who "
                              "can open this URL sees every tenant.",
                        "pt": "**Modo de usuário único**: nenhuma política de acesso definida "
                              "(`RETRIEVAL_ACCESS_POLICY`), então quem abrir este endereço vê todos os inquilinos."},
    "acc_sign_in": {"en": "Not authorised: sign in to use this workbench.",
                    "pt": "Acesso negado: entre com sua conta para usar esta bancada."},
    "acc_log_in": {"en": "Log in", "pt": "Entrar"},
    "acc_no_tenant": {"en": "Not authorised: {user} may open no tenant of this workbench.",
                      "pt": "Acesso negado: {user} não pode abrir nenhum inquilino desta bancada."},
    "acc_signed_in": {"en": "Signed in as {user}", "pt": "Conectado como {user}"},
    "acc_log_out": {"en": "Log out", "pt": "Sair"},
})

#: Readable table headers (en, pt) of the column names the tables carry (``views``, ``report``, ``compare``,
#: ``whatif``): the frames keep their names (CSV, tests), the page shows these (``ui.layout.table``).
HEADERS: dict[str, tuple[str, str]] = {
    "id": ("id", "id"), "rank": ("rank", "posição"), "score": ("score", "nota"), "kind": ("kind", "tipo"),
    "query": ("query", "consulta"), "hypothesis_only": ("hypothesis only", "só hipótese"),
    "flags": ("lost", "perdeu"), "filters_added": ("filters added", "filtros adicionados"),
    "rankers": ("lists", "listas"), "technique": ("technique", "técnica"),
    "retrieval_calls": ("retrieval calls", "buscas"), "llm_calls": ("LLM calls", "chamadas ao LLM"),
    "tokens": ("tokens", "tokens"), "ms": ("ms", "ms"),
    "split": ("split", "partição"), "config": ("configuration", "configuração"), "tier": ("tier", "nível"),
    "metric": ("metric", "métrica"), "value": ("value", "valor"), "baseline": ("baseline", "referência"),
    "delta": ("Δ vs baseline", "Δ sobre a referência"), "p_value": ("p-value", "valor-p"),
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

#: Plain-word labels of the learned ranker's candidate features (``retrieval.learned.judge.features.CANDIDATE_FEATURES``)
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
    "reader_maxsim": {"en": "reader: question tokens matched in context", "pt": "leitor: tokens da pergunta casados no contexto"},
    "reader_gap": {"en": "reader gap to the best candidate", "pt": "distância do leitor ao melhor candidato"},
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
