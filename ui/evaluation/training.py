"""From judgments to a learned ranker: train the judge on the chosen question set (split by parent) into its own
folder, and compare the current default with it on the set's held-out part. Off under an access policy."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from retrieval.core.errors import RetrievalError
from retrieval.core.paths import LAB_CORPUS, PROJECT_ROOT
from retrieval.offline import report as rep
from retrieval.offline.training import train_and_compare, training_readiness

from .. import resources
from ..escape import code
from ..format import num
from ..i18n import t
from ..reasons import reason
from ..widgets import table
from .page import EvalPage, open_bench


def readiness(page: EvalPage) -> dict | None:
    """What the chosen set offers the trainer, known before the click (None: no JSONL set to read)."""
    try:
        _, questions_path, qrels = page.chosen_paths()
        if qrels or not questions_path.endswith(".jsonl"):
            return None
        return training_readiness(resources.get_questions(questions_path, resources.file_mtime(questions_path)))
    except (RetrievalError, OSError):
        return None  # the click says why (the same paths are read again there)


def panel(page: EvalPage) -> None:
    ss, lang = st.session_state, page.lang
    # Kept open once a model was trained, so its result stays in view.
    with st.expander(t("tr_title", lang), expanded="ev_trained" in ss):
        st.caption(t("tr_caption", lang))
        try:
            chosen = page.chosen_paths()
        except RetrievalError:
            chosen = None
        if chosen is not None and not page.access.restricted:  # what the button trains on, named before the click
            corpus, questions_path, _ = chosen
            st.caption(t("tr_on", lang, questions=code(questions_path), corpus=code(corpus or str(LAB_CORPUS))))
        ready = None if page.access.restricted else readiness(page)
        if ready is not None:  # the minimum, stated before the click
            (st.caption if ready["enough"] else st.warning)(t("tr_minimum", lang, **ready))
        if page.access.restricted:  # training reads every question of the file and its relevant documents
            st.caption(t("tr_off", lang))
        elif st.button(t("tr_button", lang), key="ev_train", disabled=ready is not None and not ready["enough"]):
            train(page)
        trained = ss.get("ev_trained")
        if trained and chosen is not None and trained.get("questions_path") not in (None, chosen[1]):
            st.caption(t("tr_other_set", lang, questions=code(trained["questions_path"])))
            trained = None  # the result of another set is not shown as this one's
        if trained:
            st.success(t("tr_new", lang, folder=code(trained["folder"]), s=num(trained["seconds"], ".0f", lang)))
            rows = [r for r in rep.comparison_rows(trained["report"], None) if r["metric"].startswith("ndcg@")]
            table(pd.DataFrame(rows).dropna(axis=1, how="all"), lang)
            st.caption(t("tr_note", lang))


def train(page: EvalPage) -> None:
    ss, lang = st.session_state, page.lang
    try:
        corpus, questions_path, qrels = page.chosen_paths()
    except RetrievalError as exc:
        st.error(reason(str(exc), lang))
        return
    if qrels or not questions_path.endswith(".jsonl"):
        st.error(t("tr_jsonl", lang))
        return
    digest = hashlib.sha1(f"{corpus}|{questions_path}".encode()).hexdigest()[:10]
    folder = PROJECT_ROOT / ".retrieval" / "judge-trained" / digest
    with st.status(t("tr_status", lang), expanded=True) as status:
        bar = status.progress(0.0, text=t("tr_fitting", lang))
        try:
            ss.ev_trained = {**train_and_compare(
                corpus or str(LAB_CORPUS), questions_path, folder, page.base, open_bench(corpus),
                progress=lambda done, total, name: bar.progress(
                    done / total, text=t("tr_comparing", lang, done=done, total=total, name=name))),
                "questions_path": questions_path}
            status.update(label=t("tr_done", lang), state="complete")
        except (RetrievalError, ValueError, OSError) as exc:
            status.update(label=t("tr_failed", lang, error=reason(str(exc), lang)), state="error")
            ss.pop("ev_trained", None)
