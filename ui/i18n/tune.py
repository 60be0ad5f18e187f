"""The Evaluation page's "Tune to this question set" panel (:mod:`ui.evaluation.tune`)."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
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
    "tu_kept_budget": {"en": "Nothing recommended: the budget of {budget} s covered {evaluated} of {planned} candidates; "
                             "the whole search needs about {needs} s. Raise the budget and run it again.",
                       "pt": "Nada recomendado: o orçamento de {budget} s cobriu {evaluated} de {planned} candidatas; a "
                             "busca inteira precisa de cerca de {needs} s. Aumente o orçamento e rode de novo."},
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
    "tu_abst_recommended": {"en": "Abstention thresholds calibrated on dev (cosine gate {cos}, support threshold {sup}): "
                                  "held-out abstention accuracy {cur} → {new} ({gained} gained, {lost} lost; {p}). "
                                  "Adopting stores them too.",
                            "pt": "Limiares de abstenção calibrados em desenvolvimento (portão de cosseno {cos}, limiar de suporte "
                                  "{sup}): acurácia de abstenção na parte reservada {cur} → {new} ({gained} ganhas, {lost} "
                                  "perdidas; {p}). Adotar guarda-os também."},
    "tu_abst_kept": {"en": "Abstention thresholds kept: calibrated on dev (cosine gate {cos}, support threshold {sup}), "
                           "held-out abstention accuracy {cur} → {new} ({gained} gained, {lost} lost; {p}): not enough "
                           "to change them.",
                     "pt": "Limiares de abstenção mantidos: calibrados em desenvolvimento (portão de cosseno {cos}, limiar de "
                           "suporte {sup}), acurácia de abstenção na parte reservada {cur} → {new} ({gained} ganhas, {lost} "
                           "perdidas; {p}): não basta para mudá-los."},
    "tu_abst_none": {"en": "Abstention thresholds not calibrated: the question set needs unanswerable questions (empty "
                           "'relevant') and answerable ones in both splits.",
                     "pt": "Limiares de abstenção não calibrados: o conjunto precisa de perguntas sem resposta "
                           "('relevant' vazio) e com resposta nas duas partes."},
    "tu_adopt_help": {"en": "Enabled only when the held-out check recommends the change; stored beside the index "
                            "(`.retrieval/tuned/`), read by ask, eval and the app.",
                      "pt": "Ativo só quando a verificação na parte reservada recomenda a mudança; guardado ao lado do "
                            "índice (`.retrieval/tuned/`), lido por ask, eval e o app."},
    "tu_adopted": {"en": "Adopted for this corpus: {path}.", "pt": "Adotada neste corpus: {path}."},
    "tu_stored": {"en": "This corpus has an adopted configuration.", "pt": "Este corpus tem uma configuração adotada."},
    "tu_remove": {"en": "Remove the adopted configuration", "pt": "Remover a configuração adotada"},
    "tu_removed": {"en": "Removed: this corpus uses the default settings again.",
                   "pt": "Removida: este corpus volta ao padrão."},
}
