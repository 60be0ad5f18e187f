"""The Evaluation page: its form, manual rankings, training, the decision, metrics, diagnosis, the sweep,
what-if and the exports."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
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
    "tr_title": {"en": "Learn a ranker from this corpus' labels",
                 "pt": "Aprender um ranqueador com os rótulos deste corpus"},
    "tr_caption": {"en": "Trains the learned ranker (LambdaMART) on the chosen question set and the judgments made on "
                         "the Ask and Team judging pages, with the shipped training data, on the training part only "
                         "(split by parent document); the support gate and the evidence model stay the shipped ones. "
                         "Then compares the corpus' current default with the new ranker on the held-out part (paired "
                         "significance test, relevant documents lost). It is adopted for this corpus only when that "
                         "check recommends it, and only by the Adopt button.",
                   "pt": "Treina o ranqueador aprendido (LambdaMART) no conjunto de perguntas escolhido e nos "
                         "julgamentos feitos nas páginas Perguntar e Julgamento em equipe, com os dados de treino "
                         "distribuídos, só na parte de treino (separada por documento pai); o portão de suporte e o "
                         "modelo de evidências continuam os distribuídos. Depois compara o padrão atual do corpus com "
                         "o novo ranqueador na parte reservada (teste de significância pareado, documentos relevantes "
                         "perdidos). Ele é adotado para este corpus só quando essa verificação o recomenda, e só pelo "
                         "botão Adotar."},
    "tr_off": {"en": "Training is off under an access policy (RETRIEVAL_ACCESS_POLICY): it reads every question of the "
                     "files, whatever its tenant. Train with the command line (`python -m retrieval tune "
                     "--learn-ranker`).",
               "pt": "O treino fica desligado sob uma política de acesso (RETRIEVAL_ACCESS_POLICY): ele lê todas as "
                     "perguntas dos arquivos, de qualquer inquilino. Treine pela linha de comando "
                     "(`python -m retrieval tune --learn-ranker`)."},
    "tr_on": {"en": "Labels of the corpus {corpus}: {files} (judgments of other corpora are left out when training).",
              "pt": "Rótulos do corpus {corpus}: {files} (julgamentos de outros corpora ficam de fora no treino)."},
    "tr_file_questions": {"en": "{file} ({n} questions)", "pt": "{file} ({n} perguntas)"},
    "tr_file_question": {"en": "{file} (1 question)", "pt": "{file} (1 pergunta)"},
    "tr_other_set": {"en": "The last ranker was trained for another corpus ({corpus}); choose it again to see its result.",
                     "pt": "O último ranqueador foi treinado para outro corpus ({corpus}); escolha-o de novo para ver o "
                           "resultado."},
    "tr_button": {"en": "Learn a ranker from these labels", "pt": "Aprender um ranqueador com estes rótulos"},
    "tr_minimum": {"en": "Needs at least {needed} answerable labeled questions in the training part (dev questions "
                         "whose relevant documents no held-out question shares); these labels have {train} "
                         "({answerable} answerable of {questions} questions, {judged_pairs} judged pairs; {heldout} "
                         "answerable held-out questions to check on).",
                   "pt": "Precisa de pelo menos {needed} perguntas rotuladas com resposta na parte de treino (perguntas "
                         "de dev cujos documentos relevantes nenhuma pergunta reservada compartilha); estes rótulos "
                         "têm {train} ({answerable} com resposta de {questions} perguntas, {judged_pairs} pares "
                         "julgados; {heldout} perguntas reservadas com resposta para a verificação)."},
    "tr_jsonl": {"en": "Training reads a question set in JSONL (relevant / graded): the lab set, FaQuAD or My set.",
                 "pt": "O treino lê um conjunto de perguntas em JSONL (relevant / graded): o de laboratório, o FaQuAD "
                       "ou Meu conjunto."},
    "tr_status": {"en": "Learning a ranker, then checking it on the held-out part…",
                  "pt": "Aprendendo um ranqueador, depois verificando-o na parte reservada…"},
    "tr_fitting": {"en": "Tracing the labeled questions (minutes on 2 cores)…",
                   "pt": "Rodando as perguntas rotuladas (minutos em 2 núcleos)…"},
    "tr_progress": {"en": "{done}/{total}: {name}", "pt": "{done}/{total}: {name}"},
    "tr_done": {"en": "Trained and checked", "pt": "Treinado e verificado"},
    "tr_failed": {"en": "Training failed: {error}", "pt": "O treino falhou: {error}"},
    "tr_new": {"en": "New ranker folder {folder}: trained on {train} labeled questions (+ {shipped} shipped), checked "
                     "on {heldout} held-out questions, in {s} s (its model_card.md says on what).",
               "pt": "Nova pasta de ranqueador {folder}: treinada com {train} perguntas rotuladas (+ {shipped} "
                     "distribuídas), verificada em {heldout} perguntas reservadas, em {s} s (o model_card.md diz com o "
                     "quê)."},
    "tr_decision_yes": {"en": "Recommended: held-out nDCG@10 {delta} ({p}), no relevant document lost.",
                        "pt": "Recomendado: nDCG@10 reservado {delta} ({p}), nenhum documento relevante perdido."},
    "tr_decision_no": {"en": "Not recommended: held-out nDCG@10 {delta} ({p}); {lost}. Adoption needs a gain with "
                             "p < 0.05 and no relevant document lost.",
                       "pt": "Não recomendado: nDCG@10 reservado {delta} ({p}); {lost}. A adoção exige um ganho com "
                             "p < 0,05 e nenhum documento relevante perdido."},
    "tr_lost_none": {"en": "no relevant document lost", "pt": "nenhum documento relevante perdido"},
    "tr_lost_one": {"en": "a relevant document lost in 1 question", "pt": "documento relevante perdido em 1 pergunta"},
    "tr_lost_many": {"en": "a relevant document lost in {n} questions",
                     "pt": "documento relevante perdido em {n} perguntas"},
    "tr_note": {"en": "default = the corpus' current default (with what tune adopted for it); learned = the same "
                      "with the new ranker; held-out part only (never trained on).",
                "pt": "padrão = o padrão atual do corpus (com o que o tune adotou para ele); aprendido = o mesmo com "
                      "o novo ranqueador; só a parte reservada (nunca usada no treino)."},
    "tr_row_default": {"en": "default", "pt": "padrão"},
    "tr_row_learned": {"en": "learned", "pt": "aprendido"},
    "tr_adopt": {"en": "Adopt this ranker for this corpus", "pt": "Adotar este ranqueador para este corpus"},
    "tr_adopted": {"en": "Adopted: {path} (the Ask page, `eval` and `ask` read it; remove with `tune --remove`).",
                   "pt": "Adotado: {path} (a página Perguntar, `eval` e `ask` o leem; remova com `tune --remove`)."},
    "ev_runs": {"en": "Runs of another engine (TREC run or JSONL of rankings)",
                "pt": "Resultados de outro mecanismo (arquivo TREC ou JSONL de rankings)"},
    "ev_runs_help": {"en": "Each file is evaluated beside the configurations with the same metrics and tests: a TREC "
                           "run (`qid Q0 docno rank score tag`) or one JSON line per question holding its `id` and its "
                           "`ranking` (a list of ids). Ids may name parents or chunks (`parent#n`).",
                     "pt": "Cada arquivo é avaliado ao lado das configurações com as mesmas métricas e testes: um "
                           "arquivo TREC (`qid Q0 docno rank score tag`) ou uma linha JSON por pergunta com seu `id` e "
                           "seu `ranking` (uma lista de ids). Os ids podem nomear pais ou trechos (`pai#n`)."},
    "ev_run_named": {"en": "Run {name}: {ids} ids not in the corpus (in {questions} questions, scored as not "
                           "relevant), {unanswered} questions it does not answer (scored as empty lists).",
                     "pt": "Resultados {name}: {ids} ids fora do corpus (em {questions} perguntas, contados como não "
                           "relevantes), {unanswered} perguntas sem resposta nesses resultados (contadas como listas vazias)."},
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
    "ev_abstention_accuracy": {"en": "abstention accuracy", "pt": "acurácia da abstenção"},
    "ev_abstention_accuracy_help": {"en": "the share of questions where the pipeline abstained exactly when the "
                                          "question had no relevant document (answered the answerable ones)",
                                    "pt": "a fração das perguntas em que o pipeline se absteve exatamente quando a "
                                          "pergunta não tinha documento relevante (respondeu às respondíveis)"},
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
                                "in the context but not cited, or an abstention; for an unanswerable question, an answer; "
                                "with labelled answer spans, a cited right document whose answer holds none of them "
                                "(span). The last column: answers holding a labelled span.",
                          "pt": "cobertura: nenhum trecho relevante entre os candidatos de algum gerador (consulta, "
                                "representação ou índice) · ordenação: um candidato que caiu na fusão, no "
                                "reranqueador ou no portão · geração: no contexto mas não citado, ou uma abstenção; "
                                "para uma pergunta sem resposta, uma resposta; com trechos de resposta rotulados, o "
                                "documento certo citado numa resposta que não traz nenhum deles (span). A última "
                                "coluna: respostas que trazem um trecho rotulado."},
    "ev_spans_held": {"en": "answers holding a span", "pt": "respostas com o trecho"},
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
}
