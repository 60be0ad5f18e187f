"""From labels to a learned ranker for this corpus: train on the chosen question set and the pages' judgments (the
training part only, with the shipped training data), check it on the held-out part beside the corpus' default,
and adopt it for the corpus where that check recommends it (:mod:`retrieval.offline.learn`). Off under an access
policy."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from retrieval.core.errors import RetrievalError
from retrieval.core.paths import LAB_CORPUS
from retrieval.offline import learn
from retrieval.offline.evaluation.compare import p_text
from retrieval.offline.evaluation.metrics import brief
from retrieval.serving import roots

from ..escape import code
from ..format import num
from ..i18n import t
from ..reasons import reason
from ..widgets import table
from .page import EvalPage, open_bench


def label_files(questions_path: str) -> list[str]:
    """The chosen set, then the Ask page's judgments and Team judging's ratings where they exist."""
    return [questions_path, *(str(p) for p in (roots.DEFAULT_JUDGMENTS, roots.DEFAULT_RATINGS) if p.is_file())]


def labels_of(page: EvalPage) -> tuple[str, learn.Labels] | None:
    """``(corpus, labels)`` of the chosen set (None: no JSONL set to read; the click says why)."""
    try:
        corpus, questions_path, qrels = page.chosen_paths()
        if qrels or not questions_path.endswith(".jsonl"):
            return None
        return corpus, learn.read_label_files(label_files(questions_path),
                                              max_question_chars=page.base.max_question_chars)
    except (RetrievalError, OSError, ValueError):
        return None


def panel(page: EvalPage) -> None:
    ss, lang = st.session_state, page.lang
    # Kept open once a ranker was trained, so its result stays in view.
    with st.expander(t("tr_title", lang), expanded="ev_trained" in ss):
        st.caption(t("tr_caption", lang))
        if page.access.restricted:  # training reads every question of the files and their relevant documents
            st.caption(t("tr_off", lang))
            return
        found, ready = labels_of(page), None
        if found is not None:  # what the button trains on and the minimum, named before the click
            corpus, labels = found
            st.caption(t("tr_on", lang, corpus=code(corpus or str(LAB_CORPUS)), files=", ".join(
                t("tr_file_question", lang, file=code(path)) if n == 1 else
                t("tr_file_questions", lang, file=code(path), n=n) for path, n in labels.sources)))
            ready = learn.readiness(labels)
            (st.caption if ready["enough"] else st.warning)(t("tr_minimum", lang, **ready))
        if st.button(t("tr_button", lang), key="ev_train", disabled=ready is not None and not ready["enough"]):
            train(page)
        trained = ss.get("ev_trained")
        if trained and found is not None and trained["corpus"] != str(Path(found[0] or LAB_CORPUS).resolve()):
            st.caption(t("tr_other_set", lang, corpus=code(trained["corpus"])))
            trained = None  # the result of another corpus is not shown as this one's
        if trained:
            show(page, trained)


def show(page: EvalPage, record: dict) -> None:
    """The held-out figures side by side, the decision, and Adopt where the check recommends it."""
    lang = page.lang
    st.caption(t("tr_new", lang, folder=code(record["folder"]), s=num(record["seconds"], ".0f", lang),
                 train=record["labels"]["train"], heldout=record["labels"]["heldout"],
                 shipped=sum(s["questions"] for s in record.get("shipped") or [])))
    held = record.get("heldout") or {}
    # numbers written in the page's language (text cells: two rows, nothing to sort)
    rows = [{"config": t(f"tr_row_{name}", lang), **{m: num(held[name].get(m), ".4f", lang) for m in brief(10)}}
            for name in ("default", "learned") if name in held]
    if rows:
        table(pd.DataFrame(rows), lang)
    row = record.get("comparison") or {}
    (st.success if record["recommended"] else st.info)(t(
        "tr_decision_yes" if record["recommended"] else "tr_decision_no", lang,
        delta=num(row.get("delta", 0.0), "+.4f", lang), p=p_text(row.get("p_value"), lang),
        lost=lost_text(len(row.get("lost_relevant") or []), lang)))
    st.caption(t("tr_note", lang))
    if record["recommended"] and st.button(t("tr_adopt", lang), key="ev_train_adopt"):
        corpus = record["corpus"]
        try:
            stored = learn.adopt_ranker(page.base, corpus, record)
        except (ValueError, OSError) as exc:
            st.error(reason(str(exc), lang))
            return
        st.success(t("tr_adopted", lang, path=code(str(stored))))


def lost_text(n: int, lang: str) -> str:
    """How many held-out questions lost a relevant document, in words."""
    return t("tr_lost_none", lang) if n == 0 else t("tr_lost_one", lang) if n == 1 else t("tr_lost_many", lang, n=n)


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
    path = corpus or str(LAB_CORPUS)

    def open_corpus(c, s):
        return open_bench("" if str(c) == str(LAB_CORPUS.resolve()) else str(c))(s)

    with st.status(t("tr_status", lang), expanded=True) as status:
        bar = status.progress(0.0, text=t("tr_fitting", lang))
        try:
            labels = learn.read_label_files(label_files(questions_path), max_question_chars=page.base.max_question_chars)
            ss.ev_trained = learn.learn_ranker(
                open_corpus, page.base, path, labels,
                progress=lambda done, total, name: bar.progress(
                    min(1.0, done / max(total, 1)), text=t("tr_progress", lang, done=done, total=total, name=name)))
            status.update(label=t("tr_done", lang), state="complete")
        except (RetrievalError, ValueError, OSError) as exc:
            status.update(label=t("tr_failed", lang, error=reason(str(exc), lang)), state="error")
            ss.pop("ev_trained", None)
