"""One question and one chunk at a time: the chunk's text with the question's terms marked, a grade 0-3 and a
note, saved with the rater and the question's key (set, id, tenant); the next chunk, or the next question when its
pool is done."""

from __future__ import annotations

import hashlib
import json

import streamlit as st

from retrieval.core.errors import CorpusError, RetrievalError
from retrieval.explain import tables
from retrieval.ingest.location import location_label
from retrieval.offline.raters import Rating, latest, save_ratings

from ..escape import code, md
from ..i18n import t
from ..reasons import reason
from ..widgets import highlighted
from .page import JudgingPage

GRADES = (0, 1, 2, 3)


def panel(page: JudgingPage) -> None:
    ss, lang = st.session_state, page.lang
    if not page.questions:
        st.info(t("jd_no_questions", lang))
        return
    if not page.rater:
        st.info(t("jd_need_rater", lang))
        return
    qi = min(ss.get("jd_q", 0), len(page.questions) - 1)
    question = page.questions[qi]
    try:
        pooled = page.pooled(question)
    except RetrievalError as exc:   # e.g. a question with no tenant on a multi-tenant corpus: one line, move on
        st.markdown(f"**{md(question.question)}** · {code(question.id)}")
        st.error(t("jd_cannot_pool", lang, error=reason(str(exc), lang)))
        _moves(page, qi, 0, 0)
        return
    ci = min(ss.get("jd_c", 0), max(0, len(pooled) - 1))
    key = page.key(question)  # (set, id, tenant): another set's or tenant's q1 is another question
    try:
        mine = {item: by[page.rater] for item, by in latest(page.ratings()).items() if page.rater in by}
    except CorpusError as exc:
        st.error(reason(str(exc), lang))
        mine = {}
    done = sum((key, p["parent_id"]) in mine for p in pooled)
    st.progress((qi + done / max(1, len(pooled))) / len(page.questions),
                text=t("jd_progress", lang, q=qi + 1, qs=len(page.questions), c=ci + 1, cs=len(pooled), done=done))
    st.subheader(t("jd_question", lang))
    st.markdown(f"**{md(question.question)}** · {code(question.id)}")
    if not pooled:
        st.info(t("jd_empty_pool", lang))
        _moves(page, qi, ci, 0)
        return
    item = pooled[ci]
    pair = (key, item["parent_id"])
    with st.container(border=True):
        st.markdown(" · ".join([code(item["parent_id"])] + [md(part) for part in (
            item["title"], location_label(item.get("where") or {}, lang)) if part]))
        terms = tables.query_terms(question.question)
        text, before, after = tables.snippet(item["text"], terms, width=1200)
        st.markdown(("… " if before else "") + highlighted(text, terms) + (" …" if after else ""))
    earlier = mine.get(pair)
    # the widgets' keys name the question's key, so a grade typed for one set's q1 is never offered for another's
    tag = hashlib.sha1(json.dumps([*key, item["parent_id"]], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    grade_key, note_key = f"jd_grade_{tag.hexdigest()[:12]}", f"jd_note_{tag.hexdigest()[:12]}"
    if grade_key not in ss:
        ss[grade_key] = earlier.grade if earlier else None
    st.radio(t("jd_grade", lang), GRADES, key=grade_key, horizontal=True, help=t("grade_help", lang))
    if note_key not in ss:
        ss[note_key] = earlier.note if earlier else ""
    st.text_area(t("jd_note", lang), key=note_key, height=68)
    if st.button(t("jd_save_next", lang), type="primary", disabled=page.ratings_path is None or ss[grade_key] is None):
        try:
            save_ratings(page.ratings_path, [Rating(question.id, question.question, item["parent_id"],
                                                    int(ss[grade_key]), page.rater, ss[note_key].strip(),
                                                    dict(question.filters), question_set=key[0], tenant=key[2])])
            ss.jd_saved = t("jd_saved", lang, parent=code(item["parent_id"]), grade=ss[grade_key],
                            rater=code(page.rater))
            _advance(qi, ci, len(pooled), len(page.questions))
            st.rerun()
        except (ValueError, CorpusError, OSError) as exc:
            st.error(t("judgments_not_saved", lang, error=reason(str(exc), lang)))
    if ss.get("jd_saved"):
        st.success(ss.pop("jd_saved"))
    _moves(page, qi, ci, len(pooled))


def _advance(qi: int, ci: int, n_chunks: int, n_questions: int) -> None:
    ss = st.session_state
    if ci + 1 < n_chunks:
        ss.jd_c = ci + 1
    else:
        ss.jd_q, ss.jd_c = min(qi + 1, n_questions - 1), 0


def _moves(page: JudgingPage, qi: int, ci: int, n_chunks: int) -> None:
    ss, lang = st.session_state, page.lang
    a, b, c = st.columns(3)
    if a.button(t("jd_back", lang), disabled=qi == 0 and ci == 0):
        ss.jd_q, ss.jd_c = (qi, ci - 1) if ci > 0 else (qi - 1, 0)
        st.rerun()
    if b.button(t("jd_skip", lang)):
        _advance(qi, ci, n_chunks, len(page.questions))
        st.rerun()
    if c.button(t("jd_next_question", lang), disabled=qi + 1 >= len(page.questions)):
        ss.jd_q, ss.jd_c = qi + 1, 0
        st.rerun()
