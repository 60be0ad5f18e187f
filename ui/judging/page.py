"""The Team judging page's state: who rates, in which language, which question set and ratings file, and the
pooled candidates of the current question; and the page's first steps.

Every rating the page reads or writes is keyed by (question set, question id, tenant): the page shows and
counts only the ratings of the set's questions the user may see (:meth:`JudgingPage.ratings`), so another
tenant's raters, grades and notes, or another set's ``q1``, never reach it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import streamlit as st

from retrieval.core.errors import PathRefused, RetrievalError
from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS
from retrieval.core.tenants import visible_questions
from retrieval.core.types import Question
from retrieval.explain import links
from retrieval.offline import judgments, raters
from retrieval.pipeline.view import TraceView
from retrieval.serving import roots
from retrieval.settings import Settings

from .. import lang as ui_lang
from .. import resources
from ..access import Access, gate
from ..escape import code
from ..i18n import t
from ..reasons import reason
from ..widgets import pages_and_language

#: The ratings file when none is named: beside the page's own judgments.
DEFAULT_RATINGS = roots.DEFAULT_RATINGS


@dataclass(frozen=True)
class JudgingPage:
    """Who rates, in which language, on which questions, into which file."""

    lang: str
    base: Settings
    access: Access
    rater: str
    questions: Sequence[Question]
    ratings_path: Any  # the confined ratings file, or None when the name given was refused
    question_set: str = ""  # the set's name in a rating's key (retrieval.offline.judgments.set_name)
    corpus: str = ""  # the corpus the candidates are pooled from ('' = the lab corpus: the app's cache key)
    questions_path: str = ""  # the question set's file

    def key(self, question: Question) -> raters.QuestionKey:
        """The question's key in a rating: this set, its id, its tenant (two sets' ``q1`` are two questions)."""
        return raters.key_of(question, self.question_set, self.base.tenant_field)

    def ratings(self) -> list[raters.Rating]:
        """The ratings file's ratings of this page's questions only (:func:`retrieval.offline.raters.ratings_for`:
        by key; never another set's or tenant's question with the same id), each with its question's key.

        Raises:
            CorpusError: the file cannot be read.
        """
        if self.ratings_path is None:
            return []
        return raters.ratings_for(raters.load_ratings(self.ratings_path), self.questions, self.question_set,
                                  self.base.tenant_field, self.access.allowed)

    def bench(self) -> Any:
        """The chosen corpus' Workbench (the one the Ask page opens for it)."""
        return resources.open_workbench_cached(self.corpus, resources.index_key(self.base))

    def pooled(self, question: Question) -> list[dict[str, Any]]:
        """The question's pooled parents (every list's, best rank first), asked with the app's settings on the
        chosen corpus' Workbench, and their texts.

        Raises:
            RetrievalError: the question's request is refused (no tenant on a multi-tenant corpus, a filter on
                a field the corpus does not have): one line.
        """
        bench = self.bench()
        trace = TraceView.from_dict(bench.ask(question.question, question.filters, settings=self.base).to_dict())
        texts = {c.chunk_id: c.text for c in bench.state.chunks}
        titles = {d.id: d.title for d in bench.state.documents}
        return [{**p, "text": texts.get(p["chunk_ids"][0], ""), "title": titles.get(p["parent_id"], "")}
                for p in judgments.pool(trace)]


def start() -> JudgingPage:
    """The access gate, the language, the rater (the signed-in user under a policy), the question set and the
    ratings file, then the title."""
    ss = st.session_state
    base = resources.base_settings()
    access = gate(base, ui_lang.first_language(ss, st.query_params))
    if ss.get("lang") not in links.LANGUAGES:
        ss.lang = ui_lang.first_language(ss, st.query_params)
    with st.sidebar:
        lang = ss.lang
        pages_and_language(lang)
        lang = ss.lang
        if access.restricted:  # the signed-in user rates: a name typed on the page is not an identity
            rater = access.user or ""
            st.caption(t("jd_rater_is", lang, rater=code(rater)))
        else:
            rater = st.text_input(t("jd_rater", lang), key="jd_rater", help=t("jd_rater_help", lang)).strip()
        typed = st.text_input(t("jd_ratings", lang), key="jd_ratings", placeholder=str(DEFAULT_RATINGS),
                              help=t("jd_ratings_help", lang)).strip()
        raw = typed or str(DEFAULT_RATINGS)
        try:
            if raw == str(DEFAULT_RATINGS) and roots.JUDGMENTS_DIR in roots.write_roots(base):
                roots.JUDGMENTS_DIR.mkdir(exist_ok=True)
            ratings_path = roots.confine_output(raw, base)
        except (PathRefused, OSError) as exc:
            if typed:   # the user's own path: why it is refused
                st.error(reason(str(exc), lang))
            else:       # the page's default lies outside this server's write roots: ask for one, no red line
                st.info(t("jd_ratings_name_one", lang))
            ratings_path = None
        craw = st.text_input(t("jd_corpus", lang), key="jd_corpus", placeholder=t("jd_corpus_ph", lang),
                             help=t("jd_corpus_help", lang))
        qraw = st.text_input(t("jd_questions", lang), key="jd_questions", placeholder=t("jd_questions_ph", lang))
    ss._kept_lang = lang
    st.title(t("jd_title", lang))
    st.caption(t("jd_caption", lang))
    qset, corpus, qpath = "", "", ""
    try:
        corpus = str(roots.confine_input(craw.strip(), base)) if craw.strip() else ""
        corpus = "" if corpus == str(LAB_CORPUS.resolve()) else corpus
        qpath = str(roots.confine_input(qraw, base, want="file")) if qraw.strip() else str(LAB_QUESTIONS)
        questions = resources.get_questions(qpath, resources.file_mtime(qpath))
        qset = judgments.set_name(qpath)
        if access.restricted:  # only the questions of the user's tenants (a tenantless corpus keeps them all)
            tenants_here = resources.open_workbench_cached(corpus, resources.index_key(base)).state.tenants
            questions = visible_questions(questions, base.tenant_field, access.allowed, bool(tenants_here))
    except (PathRefused, RetrievalError, OSError) as exc:
        st.error(reason(str(exc), lang))
        questions = []
    return JudgingPage(lang, base, access, rater, [q for q in questions if q.question.strip()], ratings_path, qset,
                       corpus, qpath)
