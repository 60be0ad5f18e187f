"""The Evaluation page's state, as its panels read it: who asks and in which language, which sets and rerankers
the server offers (:class:`EvalPage`), and one evaluation run (:class:`Evaluated`); and the page's first steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import streamlit as st

from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS
from retrieval.core.types import Question
from retrieval.explain import links
from retrieval.offline.evaluation import metrics
from retrieval.serving import roots
from retrieval.settings import Settings
from retrieval.stages.rerank import KINDS, RerankerSpec

from .. import lang as ui_lang
from .. import resources
from ..access import Access, gate
from ..i18n import t
from ..widgets import pages_and_language


@dataclass(frozen=True)
class EvalPage:
    """Who is asking, in which language, and what the server offers them."""

    lang: str
    base: Settings
    access: Access
    sets: dict[str, str]        # the question sets offered: key → label
    rerankers: dict[str, str]   # the rerankers offered: spec → label (the kinds' declarations)
    faquad: Any                 # FaQuAD's folder, or None where it is not on this machine

    def chosen_paths(self) -> tuple[str, str, str | None]:
        """(corpus, questions, qrels) of the chosen set; '' corpus = the lab corpus (the app's cache key).

        My set's paths are real paths inside the data roots (:func:`retrieval.serving.roots.confine_input`).

        Raises:
            PathRefused: a My set path outside the data roots, not a file or folder, or over the size limit.
        """
        ss = st.session_state
        if ss.ev_set == "lab":
            return "", str(LAB_QUESTIONS), None
        if ss.ev_set == "faquad":
            return str((self.faquad / "corpus.jsonl").resolve()), str(self.faquad / "questions.jsonl"), None
        corpus = ss.ev_corpus.strip()
        corpus = str(roots.confine_input(corpus, self.base)) if corpus else ""
        corpus = "" if corpus == str(LAB_CORPUS.resolve()) else corpus
        questions = ss.ev_questions.strip()
        questions = str(roots.confine_input(questions, self.base)) if questions else ""
        qrels = ss.ev_qrels.strip()
        return corpus, questions, str(roots.confine_input(qrels, self.base, want="file")) if qrels else None


def open_bench(corpus: str) -> Callable[[Settings], Any]:
    """A Workbench factory for one corpus (one cached Workbench per index-level settings)."""
    return lambda settings: resources.open_workbench_cached(corpus, resources.index_key(settings))


@dataclass(frozen=True)
class Evaluated:
    """One evaluation run: the report and what the later panels need to run one more thing on its set."""

    page: EvalPage
    report: Mapping[str, Any]
    questions: Mapping[str, Question]
    base: Settings
    corpus: str

    @property
    def lang(self) -> str:
        return self.page.lang

    @property
    def names(self) -> list[str]:
        return list(self.report["configs"])

    @property
    def kmax(self) -> int:
        return self.report["k"][-1]

    @property
    def headline(self) -> list[str]:
        """The declared headline metrics at the largest k, then abstention accuracy."""
        return metrics.headline(self.kmax) + ["abstention_accuracy"]


def start() -> EvalPage:
    """The page's first steps: the access gate, the language (the link's, else the main page's), the offered sets
    and rerankers, the title."""
    ss = st.session_state
    base = resources.base_settings()
    # under an access policy: only the questions of the user's tenants are evaluated
    access = gate(base, ui_lang.first_language(ss, st.query_params))
    faquad = resources.faquad_dir()
    resources.warm_metrics()  # ranx compiles on first use: start that now, not after the click
    # The interface language: the link's lang=, else the one chosen on the main page (kept there as _kept_lang).
    if ss.get("lang") not in links.LANGUAGES:
        ss.lang = ui_lang.first_language(ss, st.query_params)
    with st.sidebar:
        lang = ss.lang
        pages_and_language(lang)
    lang = ss.lang
    ss._kept_lang = lang
    if lang != "en":
        st.query_params["lang"] = lang
    elif "lang" in st.query_params:
        del st.query_params["lang"]
    sets = {"lab": t("ev_set_lab", lang), "faquad": t("ev_set_faquad", lang), "custom": t("ev_set_custom", lang)}
    if faquad is None:  # offer only what exists on this machine
        sets.pop("faquad")
    # The app's rerankers: a list, never a path typed on the page; each in its kind's words.
    rerankers = {spec: KINDS.get(RerankerSpec.parse(spec).kind).described(lang).format(name=spec)
                 for spec in links.app_rerankers(base)}
    st.title(t("ev_title", lang))
    st.caption(t("ev_caption", lang))
    return EvalPage(lang, base, access, sets, rerankers, faquad)
