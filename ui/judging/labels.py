"""How many labels the chosen corpus has for a learned ranker (the question set, the Ask page's judgments, this
page's ratings), and what its last training gained (:mod:`retrieval.offline.learn`). Not shown under an access
policy: the counts would read every tenant's questions."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from retrieval.core.errors import RetrievalError
from retrieval.core.paths import LAB_CORPUS
from retrieval.offline import learn, tuned
from retrieval.offline.evaluation.compare import p_text
from retrieval.serving import roots

from ..format import num
from ..i18n import t
from .page import JudgingPage


def panel(page: JudgingPage) -> None:
    lang = page.lang
    if page.access.restricted or not page.questions_path:
        return
    corpus = page.corpus or str(LAB_CORPUS)
    files = [page.questions_path, str(roots.DEFAULT_JUDGMENTS), *([str(page.ratings_path)] if page.ratings_path else [])]
    try:
        labels = learn.read_label_files([f for f in dict.fromkeys(files) if Path(f).is_file()],
                                        max_question_chars=page.base.max_question_chars)
    except (RetrievalError, OSError, ValueError):
        return  # the question set's own error is on the page already
    ready = learn.readiness(labels)
    st.caption(t("jd_labels", lang, **ready))
    last = learn.last_training(page.base, corpus)
    if last is None:
        st.caption(t("jd_no_training", lang))
        return
    held, row = last.get("heldout") or {}, last.get("comparison") or {}
    adopted = tuned.load_adopted(page.base, corpus)
    in_use = adopted is not None and adopted.overrides.get("reranker_model") == f"ltr:{last['folder']}"
    st.caption(t("jd_last_training", lang, at=last["trained_at"], train=last["labels"]["train"],
                 before=num((held.get("default") or {}).get("ndcg@10"), ".3f", lang),
                 after=num((held.get("learned") or {}).get("ndcg@10"), ".3f", lang),
                 delta=num(row.get("delta"), "+.4f", lang), p=p_text(row.get("p_value"), lang),
                 state=t("jd_training_adopted" if in_use else ("jd_training_recommended" if last["recommended"]
                                                              else "jd_training_kept"), lang)))
