"""The Team judging page (:mod:`ui.judging`)."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "nav_judging": {"en": "Team judging", "pt": "Julgamento em equipe"},
    "jd_title": {"en": "Team judging", "pt": "Julgamento em equipe"},
    "jd_caption": {"en": "One question and one candidate at a time: grade it 0-3, add a note if you like, save. Each "
                         "grade is kept with its rater; below, how far the raters agree and where they do not.",
                   "pt": "Uma pergunta e um candidato de cada vez: dê uma nota de 0 a 3, anote se quiser, salve. Cada "
                         "nota fica com quem a deu; abaixo, quanto os avaliadores concordam e onde não."},
    "jd_rater": {"en": "Your name (rater)", "pt": "Seu nome (avaliador)"},
    "jd_rater_help": {"en": "Kept with every grade you save. Under an access policy the signed-in user is the rater.",
                      "pt": "Guardado com cada nota salva. Com uma política de acesso, quem rateia é o usuário logado."},
    "jd_rater_is": {"en": "Rating as {rater} (the signed-in user).", "pt": "Avaliando como {rater} (o usuário logado)."},
    "jd_ratings": {"en": "Ratings file (JSONL)", "pt": "Arquivo de avaliações (JSONL)"},
    "jd_ratings_help": {"en": "One line per question, candidate and rater, kept with the question set, the "
                              "question's id and its tenant: another set's or tenant's q1 is another question. "
                              "Inside the write roots.",
                        "pt": "Uma linha por pergunta, candidato e avaliador, guardada com o conjunto, o id da "
                              "pergunta e seu inquilino: o q1 de outro conjunto ou inquilino é outra pergunta. Dentro "
                              "das pastas de escrita."},
    "jd_ratings_name_one": {"en": "Name a ratings file inside the write roots to save grades.",
                            "pt": "Indique um arquivo de avaliações dentro das pastas de escrita para salvar notas."},
    "jd_questions": {"en": "Question set (JSONL, BEIR or SQuAD)", "pt": "Conjunto de perguntas (JSONL, BEIR ou SQuAD)"},
    "jd_questions_ph": {"en": "the lab questions", "pt": "as perguntas do laboratório"},
    "jd_corpus": {"en": "Corpus file or folder", "pt": "Arquivo ou pasta do corpus"},
    "jd_corpus_ph": {"en": "the lab corpus", "pt": "o corpus do laboratório"},
    "jd_corpus_help": {"en": "The candidates are pooled from this corpus, as the Ask page searches it (inside the "
                             "data roots).",
                       "pt": "Os candidatos vêm deste corpus, como a página Perguntar o busca (dentro das pastas de "
                             "dados)."},
    "jd_cannot_pool": {"en": "This question cannot be pooled on this corpus: {error}",
                       "pt": "Esta pergunta não pode ser buscada neste corpus: {error}"},
    "jd_no_questions": {"en": "No question to judge in this set.", "pt": "Nenhuma pergunta para julgar neste conjunto."},
    "jd_need_rater": {"en": "Type your name in the sidebar: every grade is saved with its rater.",
                      "pt": "Escreva seu nome na barra lateral: cada nota é salva com quem a deu."},
    "jd_progress": {"en": "Question {q} of {qs} · candidate {c} of {cs} · {done} of them graded by you",
                    "pt": "Pergunta {q} de {qs} · candidato {c} de {cs} · {done} deles avaliados por você"},
    "jd_question": {"en": "Question", "pt": "Pergunta"},
    "jd_empty_pool": {"en": "No list found a candidate for this question.",
                      "pt": "Nenhuma lista achou um candidato para esta pergunta."},
    "jd_grade": {"en": "Grade (0 = not relevant, 3 = answers it)", "pt": "Nota (0 = não relevante, 3 = responde)"},
    "jd_note": {"en": "Note (optional)", "pt": "Anotação (opcional)"},
    "jd_save_next": {"en": "Save and next", "pt": "Salvar e seguir"},
    "jd_saved": {"en": "Saved: {parent} graded {grade} by {rater}.", "pt": "Salvo: {parent} com nota {grade} de {rater}."},
    "jd_back": {"en": "Back", "pt": "Voltar"},
    "jd_skip": {"en": "Skip this candidate", "pt": "Pular este candidato"},
    "jd_next_question": {"en": "Next question", "pt": "Próxima pergunta"},
    "jd_agreement": {"en": "Agreement between raters", "pt": "Concordância entre avaliadores"},
    "jd_raters_one": {"en": "1 rater", "pt": "1 avaliador"},
    "jd_raters_many": {"en": "{n} raters", "pt": "{n} avaliadores"},
    "jd_grades_one": {"en": "1 grade", "pt": "1 nota"},
    "jd_grades_many": {"en": "{n} grades", "pt": "{n} notas"},
    "jd_agreement_caption": {"en": "{raters}, {pairs}. Cohen's kappa for each two raters over the "
                                   "candidates both graded (1 = always the same grade, 0 = as often as chance). "
                                   "Only the grades of this set's questions you may see are counted.",
                             "pt": "{raters}, {pairs}. Kappa de Cohen para cada dupla sobre os "
                                   "candidatos que ambos avaliaram (1 = sempre a mesma nota, 0 = tanto quanto o "
                                   "acaso). Contam só as notas das perguntas deste conjunto que você pode ver."},
    "jd_fleiss": {"en": "Fleiss' kappa over the {pairs} candidates every rater graded: {kappa}.",
                  "pt": "Kappa de Fleiss sobre os {pairs} candidatos que todos avaliaram: {kappa}."},
    "jd_queue": {"en": "**To settle**: {n} candidates the raters graded differently, the widest gap first.",
                 "pt": "**A resolver**: {n} candidatos com notas diferentes, a maior diferença primeiro."},
    "jd_download": {"en": "Consensus judgments (JSONL question set)", "pt": "Julgamentos de consenso (conjunto JSONL)"},
    "jd_download_help": {"en": "Each candidate's median grade, with its raters: a question set the Evaluation page and "
                               "`eval --questions` read.",
                         "pt": "A nota mediana de cada candidato, com seus avaliadores: um conjunto que a página de "
                               "Avaliação e `eval --questions` leem."},
    "jd_labels": {"en": "Labels for a learned ranker on this corpus (the question set, the Ask page's judgments and "
                        "these ratings): {questions} questions, {answerable} answerable, {judged_pairs} judged pairs; "
                        "{train} in the training part (at least {needed} needed), {heldout} held out to check on. "
                        "Train on the Evaluation page or with `python -m retrieval tune --learn-ranker`.",
                  "pt": "Rótulos para um ranqueador aprendido neste corpus (o conjunto de perguntas, os julgamentos da "
                        "página Perguntar e estas avaliações): {questions} perguntas, {answerable} com resposta, "
                        "{judged_pairs} pares julgados; {train} na parte de treino (pelo menos {needed}), {heldout} "
                        "reservadas para a verificação. Treine na página Avaliação ou com "
                        "`python -m retrieval tune --learn-ranker`."},
    "jd_no_training": {"en": "No ranker has been learned from this corpus' labels yet.",
                       "pt": "Nenhum ranqueador foi aprendido com os rótulos deste corpus ainda."},
    "jd_last_training": {"en": "Last training ({at}, {train} questions): held-out nDCG@10 {before} → {after} ({delta}, "
                               "{p}); {state}.",
                         "pt": "Último treino ({at}, {train} perguntas): nDCG@10 reservado {before} → {after} ({delta}, "
                               "{p}); {state}."},
    "jd_training_adopted": {"en": "in use for this corpus", "pt": "em uso neste corpus"},
    "jd_training_recommended": {"en": "recommended, not adopted yet", "pt": "recomendado, ainda não adotado"},
    "jd_training_kept": {"en": "not recommended: the default is kept", "pt": "não recomendado: o padrão é mantido"},
}
