"""The main page's state, as its panels read it: who asks and in which language (:class:`AskPage`), what the
sidebar chose (:class:`Choices`), and one question asked (:class:`Asked`); and the page's own steps: the first
run's seeding from the link, the widgets kept across pages, the link mirrored, the question box, the request.

Every setting of the page is in the URL (:mod:`retrieval.explain.links`), held to the settings' own bounds.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import streamlit as st

from retrieval.backends.state import IndexState
from retrieval.core.errors import PathRefused, RetrievalError
from retrieval.core.reasons import raw
from retrieval.core.tenants import may_open
from retrieval.core.types import Question
from retrieval.explain import links, tables
from retrieval.offline import tuned
from retrieval.pipeline.view import TraceView
from retrieval.serving import roots
from retrieval.settings import Settings
from retrieval.stages.rerank import KINDS, RerankerSpec

from .. import lang as ui_lang
from .. import resources
from ..access import Access, gate
from ..escape import md
from ..i18n import t
from ..reasons import reason

NO_TENANT = ""
#: The corpus a link names for the signed-in user's own uploaded collection (never a path).
MINE = "@mine"
DEFAULT_JUDGMENTS = roots.DEFAULT_JUDGMENTS
#: Widgets whose values are kept across pages and runs that do not draw them (:mod:`ui.keep`).
KEPT = ("question", "corpus_source", "corpus_input", "questions_input", "tenant", "top_k", "overfetch", "rrf_k", "min_similarity",
        "dense_only", "ab", "rows", "rerank_mode", "rerank_cross", "fusion", "fusion_weights", "transforms", "mmr_on",
        "mmr_lambda", "lang", "judgments_path", "cmp_dense_only", "cmp_reranker", "cmp_top_k", "cmp_rrf_k",
        "cmp_overfetch", "cmp_min_similarity")
#: Configuration B and the judgments file are drawn only while their tab is open: their kept copies are written by
#: their own changes (ui/keep.py) and are their values here.
IN_TABS = {"judgments_path", "cmp_dense_only", "cmp_reranker", "cmp_top_k", "cmp_rrf_k", "cmp_overfetch",
           "cmp_min_similarity"}


@dataclass(frozen=True)
class Rerankers:
    """The rerankers this app offers (:func:`retrieval.explain.links.app_rerankers`), by kind: the picker's modes
    are the kinds offered (their declarations' labels), the kind with several specs (the cross-encoders) gets a
    box of them."""

    specs: tuple[str, ...]

    @property
    def modes(self) -> list[str]:
        return list(dict.fromkeys(RerankerSpec.parse(s).kind for s in self.specs))

    def of(self, mode: str) -> list[str]:
        return [s for s in self.specs if RerankerSpec.parse(s).kind == mode]

    @staticmethod
    def named(mode: str) -> bool:
        """The mode's specs are the deployer's names (the cross-encoders): the page offers a box of them."""
        return KINDS.get(mode).extra_offers is not None

    def mode(self, spec: str) -> tuple[str, str]:
        """``(mode, the spec when its mode's specs are named)`` of one of the app's rerankers."""
        kind = RerankerSpec.parse(links.canonical_reranker(spec)).kind
        return kind, (spec if self.named(kind) else "")

    def spec(self, mode: str, chosen: str) -> str:
        offered = self.of(mode)
        return chosen if chosen in offered else offered[0]

    def label(self, mode: str, lang: str) -> str:
        offered = self.of(mode)
        name = RerankerSpec.parse(offered[0]).name if offered else ""
        return KINDS.get(mode).label(lang).format(name=name)


@dataclass(frozen=True)
class AskPage:
    """Who is asking, in which language, and what the server offers them."""

    lang: str
    base: Settings
    access: Access
    defaults: links.ViewParams
    rerankers: Rerankers


@dataclass(frozen=True)
class Corpus:
    """The corpus the sidebar opened, and what of it this user may see."""

    bench: Any
    state: IndexState
    questions: list[Question]
    tenant_values: list[Any]
    multi_tenant: bool

    @property
    def tenants(self) -> list[str]:
        return [str(v) for v in self.tenant_values]

    @property
    def chunk_text(self) -> dict[str, str]:
        return {cid: chunk.text for cid, chunk in self.state.chunk_by_id.items()}

    def chunk_title(self, chunk_id: str) -> str:
        """The title of the document a chunk comes from (``""`` for a chunk not in the corpus, or untitled). A
        chunk's page and section are in its trace items (:func:`retrieval.ingest.location.location`)."""
        chunk = self.state.chunk_by_id.get(chunk_id)
        return chunk.title if chunk is not None else ""

    @property
    def chunk_code(self) -> dict[str, str]:
        """The code blocks of each chunk that holds some (indexed, never quoted by an answer), by chunk id."""
        return {cid: chunk.code for cid, chunk in self.state.chunk_by_id.items() if chunk.code}

    @property
    def titles(self) -> dict[str, str]:
        return {d.id: d.title for d in self.state.documents}


@dataclass(frozen=True)
class Choices:
    """What the sidebar chose: the corpus, the link's parameters as they stand, and the metadata filters."""

    corpus: Corpus
    params: links.ViewParams
    filters: Mapping[str, list[Any]]


@dataclass(frozen=True)
class Asked:
    """One question asked: what every panel under the question reads. ``trace`` is its trace, read once into its
    typed view (the dict the session keeps is ``trace.raw``)."""

    page: AskPage
    choices: Choices
    question: str
    filters: list[tuple[str, Any]]
    request: Settings
    trace: TraceView
    labeled: Question | None = None
    run: Callable[[Settings, str], dict[str, Any]] = field(default=lambda settings, tag: {}, repr=False)

    @property
    def lang(self) -> str:
        return self.page.lang

    @property
    def relevant(self) -> list[str] | None:
        return list(self.labeled.relevant) if self.labeled else None

    @property
    def graded(self) -> dict[str, int] | None:
        return dict(self.labeled.graded or {}) if self.labeled else None

    @property
    def terms(self) -> frozenset[str]:
        return tables.query_terms(self.question)

    @property
    def judge_filters(self) -> dict[str, Any]:
        """The request's filters as a question set writes them (one value, or a list for IN)."""
        grouped: dict[str, list[Any]] = {}
        for name, value in self.filters:
            grouped.setdefault(name, []).append(value)
        return {k: (v[0] if len(v) == 1 else v) for k, v in grouped.items()}


def start() -> AskPage:
    """The page's first steps on every run: the access gate, the link's values on a session's first run, and
    the widgets kept across pages. Ends the run (one line) for a user who may open nothing."""
    ss = st.session_state
    base = resources.base_settings()
    # Who may see what (docs, "Deploying for several users"): under an access policy, only the user's tenants;
    # a request without a user, or whose user may open none, ends here with one line.
    access = gate(base, ui_lang.first_language(ss, st.query_params))
    defaults = links.ViewParams(top_k=base.top_k, overfetch=base.overfetch, rrf_k=base.rrf_k,
                                reranker=links.canonical_reranker(base.reranker_model),
                                dense_only=not base.hybrid_enabled, min_similarity=base.min_similarity,
                                fusion=base.fusion, fusion_weights=base.fusion_weights)
    rerankers = Rerankers(links.app_rerankers(base))
    if "_seeded" not in ss:
        _seed(base, access, defaults, rerankers)
    for key in KEPT:
        if (key not in ss or key in IN_TABS) and f"_kept_{key}" in ss:
            ss[key] = ss[f"_kept_{key}"]
        if key in ss:
            ss[f"_kept_{key}"] = ss[key]
    lang = ss.lang if ss.get("lang") in links.LANGUAGES else "en"
    return AskPage(lang, base, access, defaults, rerankers)


def _confined(name: str, value: str, check: Callable[[str], Any]) -> str:
    """``value`` when ``check`` accepts it, else '' with the refusal among the link's problems (one line)."""
    if not value.strip():
        return value
    try:
        check(value.strip())
        return value
    except PathRefused as exc:
        st.session_state.url_problems.append(links.REFUSED(key=name, why=raw(str(exc))))
        return ""


def _seed(base: Settings, access: Access, defaults: links.ViewParams, rerankers: Rerankers) -> None:
    """The widgets' values from the link, once per session; what the link could not use is said."""
    ss = st.session_state
    params, problems = links.params_from_query({k: st.query_params.get_all(k) for k in st.query_params}, defaults)
    ss._seeded, ss.url_problems, ss.pending_filters = True, problems, dict(params.filters)
    # Paths in the link pass the data roots before anything reads them; a refused one is dropped here.
    # "@mine": the signed-in user's own uploaded collection (each user who opens the link gets their own).
    ss.corpus_source = "mine" if params.corpus == MINE else "path"
    ss.corpus_input = "" if params.corpus == MINE else _confined("corpus", params.corpus,
                                                                  lambda path: roots.confine_input(path, base))
    ss.questions_input = _confined("questions", params.questions, lambda path: roots.confine_input(path, base))
    ss.judgments_path = _confined("judgments", params.judgments,
                                  lambda path: roots.confine_output(path, base)) or str(DEFAULT_JUDGMENTS)
    ss.question, ss.tenant = params.q, params.tenant
    if params.tenant and not may_open(params.tenant, access.allowed):
        # The same words whether or not the tenant exists: the page never confirms another tenant's name.
        ss.url_problems.append(links.TENANT_NOT_YOURS())
        ss.tenant = NO_TENANT
    ss.top_k, ss.overfetch, ss.rrf_k = params.top_k, params.overfetch, params.rrf_k
    ss.min_similarity, ss.dense_only, ss.ab, ss.rows = params.min_similarity, params.dense_only, params.ab, params.rows
    ss.fusion, ss.fusion_weights = params.fusion, params.fusion_weights
    # Configuration B of the Compare tab, from its b_… parameters (unset: A's values, dense-only flipped).
    ss.cmp_dense_only = (not params.dense_only) if params.b_dense_only is None else params.b_dense_only
    ss.cmp_top_k = params.b_top_k or params.top_k
    ss.cmp_rrf_k = params.b_rrf_k or params.rrf_k
    ss.cmp_overfetch = params.b_overfetch or params.overfetch
    ss.cmp_min_similarity = params.min_similarity if params.b_min_similarity is None else params.b_min_similarity
    wanted, problem = links.offered_reranker("reranker", params.reranker, base, defaults.reranker)
    ss.url_problems += [problem] if problem else []
    ss.rerank_mode, ss.rerank_cross = rerankers.mode(wanted)
    b_reranker, problem = (links.offered_reranker("b_reranker", params.b_reranker, base, wanted)
                           if params.b_reranker else (wanted, None))
    ss.url_problems += [problem] if problem else []
    ss.cmp_reranker = b_reranker
    ss.transforms, ss.mmr_on, ss.mmr_lambda = list(params.transforms), params.mmr is not None, params.mmr or 0.7
    ss.lang = params.lang
    ss._view_tab_id = f"tab_{params.tab}"
    ss.traces = {}


def mirror_url(page: AskPage, params: links.ViewParams) -> None:
    """The link says what the page shows (only the values that differ from the defaults)."""
    wanted = links.params_to_query(params, page.defaults)
    present = {k: (st.query_params.get_all(k) if len(st.query_params.get_all(k)) > 1 else st.query_params[k])
               for k in st.query_params}
    if present != wanted:
        st.query_params.from_dict(wanted)


def link_problems(page: AskPage) -> None:
    """What the link could not use, each in one line of the page's language."""
    for problem in st.session_state.url_problems:
        st.warning(t("url_ignored", page.lang, problem=reason(problem, page.lang)))


def question_form(page: AskPage) -> Any:
    """The question box and its Ask button; returns the slot the page's own time is written into."""
    with st.form("ask_form", border=False):
        q_col, b_col = st.columns([5, 2], vertical_alignment="bottom")  # "Perguntar" whole
        q_col.text_input(t("question", page.lang), key="question", placeholder=t("question_placeholder", page.lang))
        b_col.form_submit_button(t("ask", page.lang), type="primary", width="stretch")


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def ask(page: AskPage, choices: Choices) -> Asked:
    """The question of the box, asked with the sidebar's settings (once per session for the same inputs). Ends
    the run with one line when there is nothing to ask yet (no question, no tenant) or the request is refused."""
    lang, corpus, current = page.lang, choices.corpus, choices.params
    question = current.q
    if not question:  # nothing was submitted: no timing line either
        st.info(t("type_question", lang))
        st.stop()
    if corpus.multi_tenant and not corpus.tenants:  # a policy's user none of whose tenants is in this corpus
        st.warning(t("no_tenant_here", lang))
        st.stop()
    if corpus.multi_tenant and current.tenant == NO_TENANT:
        shown = ", ".join(md(name) for name in corpus.tenants)
        st.warning(t("pick_tenant_first", lang, n=len(corpus.tenants), shown=shown) if not page.access.restricted
                   else t("pick_your_tenant", lang, shown=shown))
        st.stop()
    filters: list[tuple[str, Any]] = [(page.base.tenant_field, current.tenant)] if corpus.multi_tenant else []
    for name, chosen in choices.filters.items():
        filters.extend((name, value) for value in chosen)
    try:
        request = page.base.with_overrides(
            top_k=current.top_k, overfetch=current.overfetch, rrf_k=current.rrf_k, reranker_model=current.reranker,
            hybrid_enabled=not current.dense_only, min_similarity=current.min_similarity,
            transforms=current.transforms, mmr_lambda=current.mmr, answer_language=lang, fusion=current.fusion,
            fusion_weights=current.fusion_weights)
    except ValueError as exc:
        st.error(t("invalid_settings", lang, error=reason(str(exc), lang)))
        st.stop()
    # The corpus' adopted configuration (python -m retrieval tune --adopt), under the sidebar's own choices.
    try:
        request, tuned_note = tuned.apply_adopted(request, page.base, tuned.load_adopted(page.base,
                                                                                         corpus.state.corpus_path),
                                                  corpus.bench.settings)
    except (RetrievalError, ValueError) as exc:
        st.warning(md(exc))
        tuned_note = None
    state = corpus.state

    def run(settings: Settings, tag: str = "", fresh: bool = False) -> dict[str, Any]:
        """Ask once per (index, question, filters, settings, tag) per session (``fresh`` forces a run): a rerun
        with the same inputs, Ask pressed again included, lays out the trace it has (the last 12 are kept)."""
        ss = st.session_state
        sig = json.dumps([state.index_id, question, [[k, str(v)] for k, v in filters], settings.public_dict(),
                          lang, tag], sort_keys=True, default=str)
        if fresh or sig not in ss.traces:
            ss.traces = {k: v for k, v in list(ss.traces.items())[-11:]}
            queue = st.empty()

            def waiting(ahead: int) -> None:  # this process is at its limit: the page says where it stands
                queue.info(t("queue_wait", lang, ahead=ahead + 1, running=gate.running))

            gate = resources.admission(page.base.max_concurrent_requests)
            with gate.enter(waiting):
                queue.empty()
                ss.traces[sig] = corpus.bench.ask(question, filters, settings=settings).to_dict()
        else:
            ss.traces[sig] = ss.traces.pop(sig)  # the most recent last: the one kept longest
        return ss.traces[sig]

    try:
        with st.spinner(t("searching", lang)):
            trace = tuned.trace_note(run(request), tuned_note)  # the tuned note under the tier line
    except RetrievalError as exc:
        st.error(reason(str(exc), lang))
        st.stop()
    tenant_field = page.base.tenant_field
    labeled = next((q for q in corpus.questions if _nfc(q.question) == _nfc(question)
                    and str(q.filters.get(tenant_field, current.tenant)) == str(current.tenant)), None)
    return Asked(page, choices, question, filters, request, TraceView.from_dict(trace), labeled, run)
