"""The main page's tabs under the answer: the lists as cards, movement and losses, Compare, Judge, "Where
is my document?" and the timings."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
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
    "downloads": {"en": "Downloads", "pt": "Downloads"},
    "dl_trace": {"en": "Trace (JSON)", "pt": "Registro do pedido (trace, JSON)"},
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
    "ab_lengths": {"en": "A holds {a} chunks and B {b}: Jaccard@{k} and RBO compare lists of different lengths (B's "
                         "top_k, or the gate, cut one shorter).",
                   "pt": "A tem {a} trechos e B {b}: Jaccard@{k} e RBO comparam listas de tamanhos diferentes (o top_k "
                         "de B, ou o portão, encurtou uma)."},
}
