"""The main page's sidebar: the language, the corpus and its question set, the tenant and the metadata filters, the
ranking settings (top_k, over-fetch, rrf_k, the fusion method, the gate, the reranker, dense-only), the query
transforms and MMR. Every bound is the settings model's (:func:`retrieval.settings.bounds`); every method and
reranker is a declared one."""

from __future__ import annotations

import time
from typing import Any, Mapping

import streamlit as st

from retrieval.backends.base import DAMAGED, StoreStatusError
from retrieval.core.errors import CorpusError, PathRefused
from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS
from retrieval.core.tenants import visible_questions, visible_tenants
from retrieval.core.timing import Eta
from retrieval.explain import links
from retrieval.ingest.location import PAGE_END_KEY
from retrieval.pipeline.view import Said
from retrieval.serving import roots
from retrieval.settings import bounds
from retrieval.stages.fusion import METHODS
from retrieval.stages.transforms import TRANSFORMS

from .. import resources
from ..escape import code, md
from ..format import num
from ..i18n import t
from ..intake import intake_panel
from ..reasons import as_reason, reason
from ..widgets import pages_and_language
from . import compare
from . import uploads as my_uploads
from .page import DEFAULT_JUDGMENTS, NO_TENANT, AskPage, Choices, Corpus


def panel(page: AskPage) -> Choices:
    """Draw the sidebar; returns what it chose (the corpus, the link's parameters, the filters)."""
    ss, lang = st.session_state, page.lang
    with st.sidebar:
        pages_and_language(lang, t("language_help", lang))
        corpus = corpus_panel(page)
        filters = filters_panel(page, corpus)
        ranking_panel(page)
        transforms_panel(page)
    reranker = page.rerankers.spec(ss.rerank_mode, ss.get("rerank_cross", ""))
    compare.b_follows_a(reranker)  # B's settings still at their default follow A's
    params = links.ViewParams(
        q=ss.question.strip(), corpus=my_uploads.MINE if ss.get("corpus_source") == "mine" else ss.active_corpus, questions=ss.questions_input.strip(),
        tenant=ss.get("tenant", NO_TENANT), filters={k: tuple(str(v) for v in vs) for k, vs in filters.items() if vs},
        top_k=int(ss.top_k), overfetch=int(ss.overfetch), rrf_k=int(ss.rrf_k), reranker=reranker,
        dense_only=bool(ss.dense_only), min_similarity=round(float(ss.min_similarity), 2), ab=bool(ss.ab),
        rows=int(ss.rows), transforms=tuple(ss.transforms), mmr=round(float(ss.mmr_lambda), 2) if ss.mmr_on else None,
        lang=lang, judgments="" if ss.judgments_path == str(DEFAULT_JUDGMENTS) else ss.judgments_path,
        fusion=ss.fusion, fusion_weights=ss.fusion_weights.strip(),
        tab=ss.get("_view_tab_id", "tab_grid").removeprefix("tab_"), **compare.b_fields(reranker))
    return Choices(corpus, params, filters)


# -- the corpus and its questions ------------------------------------------------------------------------------
def _normalize_corpus(page: AskPage, raw: str) -> str:
    """'' for the lab corpus, else the real path inside the data roots (so one corpus has one cache entry).

    Raises:
        PathRefused: outside the data roots, not a file or folder, or over the input size limit.
    """
    raw = raw.strip()
    if not raw:
        return ""
    path = str(roots.confine_input(raw, page.base))
    return "" if path == str(LAB_CORPUS.resolve()) else path


def embedding_bar(lang: str) -> Any:
    """A progress bar (chunks embedded of the chunks to embed) and the callback that moves it; the bar shows once
    the first batch is embedded (reading and chunking come before, and an index in step embeds none)."""
    slot = st.empty()
    eta = Eta()

    def moved(done: int, total: int) -> None:
        left = eta.update(done, total)
        text = t("embedding_progress", lang, done=num(done, ",d", lang), total=num(total, ",d", lang))
        if left is not None and done < total:
            text += t("eta_left", lang, s=num(left, ".0f", lang))
        slot.progress(min(1.0, done / max(1, total)), text=text)

    return moved


def waiting_line(lang: str) -> Any:
    """One line, kept up to date, while another process writes this corpus' vectors: which process, what, since
    when and how far (the lock holder's own report)."""
    slot = st.empty()

    def waiting(holder: Mapping[str, Any]) -> None:
        done, total = holder.get("embedded"), holder.get("total")
        since = holder.get("since")
        slot.info(t("waiting_for", lang, pid=code(str(holder.get("pid", "?"))), what=code(str(holder.get("what", ""))),
                    s=num(time.time() - since, ".0f", lang) if isinstance(since, (int, float)) else "?",
                    progress=t("waiting_progress", lang, done=num(done, ",d", lang), total=num(total, ",d", lang))
                    if isinstance(done, int) and isinstance(total, int) else ""))

    return waiting


def load_workbench(page: AskPage, corpus: str) -> Any:
    """The Workbench of ``corpus`` (indexed on first use, with its progress)."""
    index_key, lang = resources.index_key(page.base), page.lang
    if resources.is_loaded(corpus, index_key):
        return resources.open_workbench_cached(corpus, index_key)
    label = code(corpus) if corpus else t("lab_corpus", lang)
    with st.status(t("indexing", lang, label=label), expanded=True) as status:
        started = time.perf_counter()
        bench = resources.open_workbench_cached(corpus, index_key, embedding_bar(lang), waiting_line(lang))
        state = bench.state
        sizes = "" if page.access.restricted else t("index_sizes", lang, docs=num(len(state.documents), ",d", lang),
                                                    chunks=num(len(state.chunks), ",d", lang))
        status.update(label=t("indexed", lang, label=label, sizes=sizes, s=num(time.perf_counter() - started, ".1f",
                                                                               lang)),
                      state="complete", expanded=False)
    return bench


def states_line(now: Any, lang: str) -> None:
    """Where the reader's background pass over the corpus stands (``now``: the Workbench's
    :meth:`~retrieval.pipeline.workbench.Workbench.background_states`, as of this run of the page), if one ran."""
    if now.running and not now.total:
        return  # the pass is counting what the store lacks: "0 of 0 passages" said nothing true
    if now.running:
        eta = t("states_eta", lang, s=num(now.eta_s, ".0f", lang)) if now.eta_s == now.eta_s and now.done else ""
        st.caption(t("states_running", lang, done=num(now.done, ",d", lang), total=num(now.total, ",d", lang),
                     eta=eta))
    elif now.error:
        st.caption(t("states_failed", lang, error=reason(now.error, lang)))
    elif now.passages:
        st.caption(t("states_done", lang, stored=num(now.stored, ",d", lang), passages=num(now.passages, ",d", lang),
                     codec=code(now.codec)))


def corpus_panel(page: AskPage) -> Corpus:
    ss, lang, base, access = st.session_state, page.lang, page.base, page.access
    st.header(t("corpus", lang))
    if ss.pop("_to_mine", False):  # an upload just landed: the page asks over the collection
        ss.corpus_source = "mine"
    if ss.get("corpus_source") not in SOURCES:
        ss.corpus_source = "path"
    mine = my_uploads.documents(page)
    st.radio(t("corpus_source", lang), SOURCES, key="corpus_source",
             format_func=lambda v: t("source_mine", lang, n=num(len(mine), ",d", lang)) if v == "mine"
             else t("source_path", lang))
    waiting = waiting_line(lang)
    if ss.corpus_source == "mine":
        bench = _my_collection(page, mine, waiting)
    else:
        st.text_input(t("corpus_input", lang), key="corpus_input", placeholder=t("corpus_placeholder", lang),
                      help=t("corpus_help", lang))
        bench = _typed_corpus(page)
        my_uploads.upload_panel(page, waiting)
        my_uploads.notes(lang)
    state = bench.state
    # Under a policy the sizes are those of the user's tenants: the page says nothing of the others.
    n_docs, n_chunks = resources.corpus_size(state, visible_tenants(state.tenants, access.allowed)
                                             if access.restricted and state.tenants else None)
    st.caption(t("corpus_line", lang, docs=num(n_docs, ",d", lang), chunks=num(n_chunks, ",d", lang),
                 index=code(state.index_id), store=reason(state.store_reason, lang)))
    states_line(bench.background_states(), lang)
    if not access.restricted or ss.corpus_source == "mine":  # file names: one user's whole corpus, or their own
        intake_panel(state.intake, lang)
    if ss.corpus_source != "mine" and st.button(t("reindex", lang), help=t("reindex_help", lang)):
        with st.status(t("reindexing", lang)) as status:
            try:
                if ss.active_corpus:  # read again: it passes the roots and the size limit again
                    roots.confine_input(ss.active_corpus, base)
                state = bench.load_corpus(ss.active_corpus or None, on_progress=embedding_bar(lang))
                resources.store_states_later(bench)   # the changed chunks read by the reader, in the background
                r = state.sync
                status.update(label=(t("reindexed", lang, added=r.added, updated=r.updated, removed=r.removed,
                                       unchanged=r.unchanged) if r else
                                     t("reindexed_no_vectors", lang, why=reason(state.store_reason, lang))),
                              state="complete")
            except (CorpusError, PathRefused) as exc:
                status.update(label=t("reindex_failed", lang, error=reason(str(exc), lang)), state="error")
        state = bench.state
    if store_damaged(state.store_reason, ss.get("traces")):
        state = rebuild_button(page, bench, state)
    questions = _questions(page, state)
    multi_tenant = bool(state.tenants)
    # The corpus' tenants this user may open (all of them in single-user mode), as the corpus writes them.
    tenant_values = visible_tenants(state.tenants, access.allowed)
    questions = visible_questions(questions, base.tenant_field, access.allowed, multi_tenant)
    corpus = Corpus(bench, state, questions, tenant_values, multi_tenant)
    _pick_question(page, corpus)
    return corpus


#: Where the corpus comes from: a file or folder typed (the lab corpus when empty), or the user's own uploads.
SOURCES = ["path", "mine"]


def store_damaged(store_reason: Any, traces: Mapping[str, Any] | None) -> bool:
    """Whether the loaded corpus' store reason, or the latest request's tier reason, says the store is damaged
    (:data:`retrieval.backends.base.DAMAGED`, read from the codes)."""
    latest = list(traces.values())[-1] if traces else None
    why = Said.read(latest, "tier_reason").code if isinstance(latest, Mapping) else None
    return any(found is not None and found.mentions(DAMAGED.code)
               for found in (as_reason(store_reason), as_reason(why)))


def rebuild_button(page: AskPage, bench: Any, state: Any) -> Any:
    """"Rebuild the index" (``index --rebuild``): the damaged store moved aside, the corpus indexed again; returns
    the state in use (the previous one when the rebuild failed)."""
    ss, lang = st.session_state, page.lang
    if not st.button(t("rebuild", lang), help=t("rebuild_help", lang), type="primary"):
        return state
    with st.status(t("rebuilding", lang)) as status:
        try:
            target = str(state.corpus_path) if ss.corpus_source == "mine" else ss.active_corpus or None
            if ss.corpus_source != "mine" and ss.active_corpus:
                roots.confine_input(ss.active_corpus, page.base)
            moved, fresh = bench.rebuild(target, on_progress=embedding_bar(lang))
            resources.store_states_later(bench)
            added = num(fresh.sync.added if fresh.sync else 0, ",d", lang)
            if fresh.sync is None:
                status.update(label=t("reindexed_no_vectors", lang, why=reason(fresh.store_reason, lang)),
                              state="error")
            else:
                status.update(label=t("rebuilt", lang, moved=code(str(moved)), added=added) if moved is not None
                              else t("rebuilt_whole", lang, added=added), state="complete")
            ss.traces = {}   # answers given on the damaged store are not shown again as current
        except (CorpusError, PathRefused, StoreStatusError) as exc:
            status.update(label=t("rebuild_failed", lang, error=reason(str(exc), lang)), state="error")
    return bench.state


def _typed_corpus(page: AskPage) -> Any:
    """The Workbench of the corpus typed in the box (the lab corpus when empty); a path refused or a corpus that
    cannot load keeps the one in use, said in one line."""
    ss, lang = st.session_state, page.lang
    active = ss.get("active_corpus", "")
    if active and roots_of_uploads(page, active):
        active = ""   # the collection was open: the typed corpus starts from the lab corpus
    still = code(active) if active else t("lab_corpus", lang)
    try:
        requested = _normalize_corpus(page, ss.corpus_input)
    except PathRefused as exc:
        st.error(t("still_using", lang, error=reason(str(exc), lang), corpus=still))
        requested = active
    try:
        bench = load_workbench(page, requested)
        ss.active_corpus = requested
    except CorpusError as exc:
        st.error(t("corpus_not_loaded", lang, error=reason(str(exc), lang), corpus=still))
        bench = load_workbench(page, active if active != requested else "")
        ss.active_corpus = active if active != requested else ""
    return bench


def roots_of_uploads(page: AskPage, corpus: str) -> bool:
    """Whether ``corpus`` is an uploaded collection's folder."""
    try:
        uploads_folder = str(roots.uploads_root(page.base))
    except PathRefused:
        return False
    return corpus == uploads_folder or corpus.startswith(uploads_folder + "/")


def _my_collection(page: AskPage, mine: list[Any], waiting: Any) -> Any:
    """The Workbench of this user's collection, indexed again where another session or worker changed it since
    this process loaded it; the uploader and the documents list. An empty collection ends the run with one line
    (the uploader above it)."""
    ss, lang = st.session_state, page.lang
    folder = my_uploads.folder(page)
    my_uploads.upload_panel(page, waiting)
    my_uploads.notes(lang)   # what the last upload did, under the uploader
    note = ss.pop("removed_note", None)
    if note:
        st.success(note)
    if folder is None or not mine:
        st.info(t("mine_empty", lang))
        st.stop()
    corpus = str(folder)
    try:
        bench = load_workbench(page, corpus)
        intake = bench.state.intake
        generation = str(my_uploads.generation(page))
        if intake is not None and intake.version != generation:  # changed by another session or worker
            with st.spinner(t("mine_refresh", lang)):
                bench.load_corpus(corpus, on_progress=embedding_bar(lang), on_wait=waiting)
    except CorpusError as exc:
        st.error(t("corpus_not_loaded", lang, error=reason(str(exc), lang), corpus=t("lab_corpus", lang)))
        ss.corpus_source = "path"
        return load_workbench(page, "")
    ss.active_corpus = corpus
    with st.expander(t("mine_list", lang, n=num(len(mine), ",d", lang)), expanded=False):
        my_uploads.documents_list(page, mine, bench.state, waiting)
    return bench


def _questions(page: AskPage, state: Any) -> list[Any]:
    ss, lang = st.session_state, page.lang
    on_lab = ss.active_corpus == ""
    st.text_input(t("questions_input", lang), key="questions_input",
                  placeholder=t("lab_questions", lang) if on_lab else t("none", lang), help=t("questions_help", lang))
    questions_path = str(LAB_QUESTIONS) if on_lab else ""
    if ss.questions_input.strip():
        try:
            questions_path = str(roots.confine_input(ss.questions_input.strip(), page.base))
        except PathRefused as exc:
            st.error(reason(str(exc), lang))
            questions_path = ""
    if not questions_path:
        return []
    try:
        return resources.get_questions(questions_path, resources.file_mtime(questions_path))
    except CorpusError as exc:
        st.error(t("questions_not_loaded", lang, error=reason(str(exc), lang)))
        return []


def _pick_question(page: AskPage, corpus: Corpus) -> None:
    ss, lang, tenant_field = st.session_state, page.lang, page.base.tenant_field
    by_id = {q.id: q for q in corpus.questions}

    def pick() -> None:
        picked = by_id.get(ss.picked)
        if picked is not None:
            ss.question = picked.question
            if picked.filters.get(tenant_field) is not None:
                ss.tenant = str(picked.filters[tenant_field])

    if by_id:
        if ss.get("picked") not in by_id:
            ss.picked = ""
        st.selectbox(t("pick_labeled", lang), [""] + list(by_id), key="picked", on_change=pick,
                     format_func=lambda qid: "—" if not qid else f"{qid} · {by_id[qid].group} · {by_id[qid].question[:70]}")


# -- the tenant and the metadata filters -----------------------------------------------------------------------
def filters_panel(page: AskPage, corpus: Corpus) -> dict[str, list[Any]]:
    ss, lang, tenant_field, state = st.session_state, page.lang, page.base.tenant_field, corpus.state
    st.header(t("filters", lang))
    tenants = corpus.tenants
    if corpus.multi_tenant and ss.get("tenant", NO_TENANT) not in tenants:
        ss.tenant = NO_TENANT
    if tenants:
        st.selectbox(t("tenant", lang, field=md(tenant_field)), [NO_TENANT] + tenants, key="tenant",
                     format_func=lambda v: t("pick_tenant", lang) if v == NO_TENANT else v,
                     help=t("tenant_help", lang))
    # The pickers list the values of the chosen tenant (before one is chosen, of the tenants this user may open):
    # never a value that exists only in another tenant.
    chosen_tenant = [v for v in corpus.tenant_values if str(v) == ss.get("tenant", NO_TENANT)]
    values = state.filter_values((chosen_tenant or corpus.tenant_values) if corpus.multi_tenant else None)
    if (chosen_tenant or not corpus.multi_tenant) and not ss.get("_link_filters_checked"):
        # The link's filters, once its tenant is known: a field or value this tenant lacks is said, not dropped.
        ss.pending_filters, problems = links.link_filter_problems(ss.pending_filters, values, chosen_tenant,
                                                                  state.field_types, tenant_field,
                                                                  state.field_types_of)
        ss.url_problems.extend(problems)
        ss._link_filters_checked = True
    chosen: dict[str, list[Any]] = {}
    for name, options in values.items():
        if name in (tenant_field, PAGE_END_KEY):  # a chunk's last page: filtered by its first page, `page`
            continue
        if len(options) > links.PICKER_MAX_VALUES:  # too many for a picker: typed, and checked against the tenant's
            key = f"flt_text_{name}"
            if key not in ss:
                ss[key] = ", ".join(ss.pending_filters.get(name, ()))
            st.text_input(md(name), key=key, placeholder=t("any", lang),
                          help=t("typed_values_help", lang, n=num(len(options), ",d", lang)))
            chosen[name], unknown = links.typed_filter_values(ss[key], options)
            if unknown:
                st.warning(t("typed_values_unknown", lang, field=md(name), values=", ".join(map(code, unknown))))
            continue
        key = f"flt_{name}"
        if key not in ss:
            wanted = set(ss.pending_filters.get(name, ()))
            ss[key] = [v for v in options if str(v) in wanted]
        else:
            ss[key] = [v for v in ss[key] if v in options]
        st.multiselect(md(name), options, key=key, placeholder=t("any", lang))
        chosen[name] = list(ss[key])
    return chosen


# -- ranking ---------------------------------------------------------------------------------------------------
def number_input(label: str, setting: str, key: str, **kwargs: Any) -> Any:
    """A number box bounded by the setting's own bounds (the settings model's)."""
    low, high = bounds(setting)
    return st.number_input(label, low, high, key=key, **kwargs)


def ranking_panel(page: AskPage) -> None:
    ss, lang = st.session_state, page.lang
    st.header(t("ranking", lang))
    c1, c2 = st.columns(2)
    with c1:
        number_input("top_k", "top_k", "top_k")
    with c2:
        number_input(t("overfetch", lang), "overfetch", "overfetch", help=t("overfetch_help", lang))
    with c1:
        number_input("rrf_k", "rrf_k", "rrf_k", help=t("rrf_k_help", lang))
    c2.number_input(t("rows", lang), *links.ROWS, key="rows")
    if ss.get("fusion") not in METHODS:
        ss.fusion = page.defaults.fusion
    st.selectbox(t("fusion", lang), list(METHODS.names()), key="fusion",
                 format_func=lambda name: METHODS.get(name).label(lang), help=t("fusion_help", lang))
    st.text_input(t("fusion_weights", lang), key="fusion_weights", placeholder="bm25=1.0,dense=0.5",
                  help=t("fusion_weights_help", lang))
    low, high = bounds("min_similarity")
    st.slider(t("min_similarity", lang), float(low), float(high), step=0.01, key="min_similarity")
    modes = page.rerankers.modes
    if ss.get("rerank_mode") not in modes:
        ss.rerank_mode = page.rerankers.mode(page.defaults.reranker)[0]
    st.radio(t("reranker", lang), modes, key="rerank_mode", format_func=lambda mode: page.rerankers.label(mode, lang))
    if page.rerankers.named(ss.rerank_mode):  # the deployer's named models of this kind (cross-encoders): which
        named = page.rerankers.of(ss.rerank_mode)
        if ss.get("rerank_cross") not in named:
            ss.rerank_cross = named[0]
        st.selectbox("Cross-encoder", named, key="rerank_cross", help=t("cross_help", lang))
    st.toggle(t("dense_only", lang), key="dense_only", help=t("dense_only_help", lang))


def transforms_panel(page: AskPage) -> None:
    ss, lang = st.session_state, page.lang
    st.header(t("transforms", lang))
    st.multiselect(t("techniques", lang), list(TRANSFORMS.names()), key="transforms",
                   format_func=lambda name: TRANSFORMS.get(name).label(lang) if name in TRANSFORMS else name,
                   help=t("techniques_help", lang) + "\n\n" + "\n".join(
                       f"- **{x.label(lang)}** (`{x.name}`): {x.doc(lang)}" for x in TRANSFORMS))
    st.toggle(t("mmr", lang), key="mmr_on", help=t("mmr_help", lang))
    if ss.mmr_on:
        low, high = bounds("mmr_lambda")
        st.slider("MMR λ", float(low), float(high), step=0.05, key="mmr_lambda")
    st.toggle(t("ab_toggle", lang), key="ab")
