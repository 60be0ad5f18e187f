"""Hybrid retrieval workbench: why did this chunk rank where it did? (``streamlit run app.py``)

The page collects a question and settings (all mirrored in the URL), calls ``Workbench.ask`` and lays out
the trace it returns: the four ranked lists, fusion contributions, rank movement, lost evidence, the tier,
the answer and a hybrid vs dense-only comparison. Nothing is re-scored here.
"""

from __future__ import annotations

import dataclasses
import json
import time
import unicodedata

STARTED = time.perf_counter()

import streamlit as st  # noqa: E402

from retrieval.core.errors import CorpusError, PathRefused, RetrievalError  # noqa: E402
from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS  # noqa: E402
from retrieval.core.tenants import may_open, visible_questions, visible_tenants
from retrieval.explain import links, report_html, tables
from retrieval.explain import where as explain
from retrieval.offline import judgments  # noqa: E402
from retrieval.serving import roots
from retrieval.stages.transforms import TECHNIQUES  # noqa: E402
from ui import lang as ui_lang  # noqa: E402
from ui import layout, resources  # noqa: E402
from ui.access import gate  # noqa: E402
from ui.escape import code, md  # noqa: E402
from ui.grid import analyst_view  # noqa: E402
from ui.i18n import t  # noqa: E402
from ui.keep import keep, remember, restore  # noqa: E402
from ui.reasons import reason  # noqa: E402

st.set_page_config(page_title="Hybrid retrieval workbench", page_icon="🔎", layout="wide")
ss = st.session_state

BASE = resources.base_settings()
# Who may see what (README, "Deploying for several users"): under an access policy, only the user's tenants;
# a request without a user, or whose user may open none, ends here with one line.
ACCESS = gate(BASE, ui_lang.first_language(ss, st.query_params))
DEFAULTS = links.ViewParams(top_k=BASE.top_k, overfetch=min(BASE.overfetch, 20), rrf_k=BASE.rrf_k,
                            reranker=links.canonical_reranker(BASE.reranker_model),
                            dense_only=not BASE.hybrid_enabled, min_similarity=BASE.min_similarity)
# The app's rerankers are a list (README, "Data roots"): the learned ranker, off, the reader, the bi-encoder
# and the cross-encoders the deployer configured. No link or box names a model path.
LTR_SPEC, _, READER_SPEC, BI_SPEC, *CROSS_SPECS = links.app_rerankers(BASE)
RERANK_MODES = ["ltr", "off", "reader", "bi"] + (["cross"] if CROSS_SPECS else [])  # labels: t("rr_<mode>")
NO_TENANT = ""
DEFAULT_JUDGMENTS = roots.JUDGMENTS_DIR / "judgments.jsonl"
LANG_NAMES = ui_lang.LANG_NAMES


def reranker_mode(spec: str) -> tuple[str, str]:
    """(mode of the Reranker radio, cross-encoder name) of one of the app's rerankers."""
    spec = links.canonical_reranker(spec)
    if spec == links.RERANKER_OFF:
        return "off", ""
    if spec == LTR_SPEC:
        return "ltr", ""
    if spec == READER_SPEC:
        return "reader", ""
    if spec == BI_SPEC:
        return "bi", ""
    return "cross", spec


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def normalize_corpus(raw: str) -> str:
    """'' for the lab corpus, else the real path inside the data roots (so one corpus has one cache entry).

    Raises:
        PathRefused: outside the data roots, not a file or folder, or over the input size limit.
    """
    raw = raw.strip()
    if not raw:
        return ""
    path = str(roots.confine_input(raw, BASE))
    return "" if path == str(LAB_CORPUS.resolve()) else path


def confined_url_path(name: str, raw: str, check) -> str:
    """``raw`` when ``check`` accepts it, else '' with the refusal in the URL problems (one line)."""
    if not raw.strip():
        return raw
    try:
        check(raw.strip())
        return raw
    except PathRefused as exc:
        ss.url_problems.append(f"{name}: {exc}")
        return ""


# -- 1. seed the widgets from the URL, once per session -----------------------------------------------------
if "_seeded" not in ss:
    params, problems = links.params_from_query({k: st.query_params.get_all(k) for k in st.query_params}, DEFAULTS)
    ss._seeded, ss.url_problems, ss.pending_filters = True, problems, dict(params.filters)
    # Paths in the link pass the data roots before anything reads them; a refused one is dropped here.
    ss.corpus_input = confined_url_path("corpus", params.corpus, lambda raw: roots.confine_input(raw, BASE))
    ss.questions_input = confined_url_path("questions", params.questions,
                                           lambda raw: roots.confine_input(raw, BASE))
    ss.judgments_path = confined_url_path("judgments", params.judgments,
                                          lambda raw: roots.confine_output(raw, BASE)) or str(DEFAULT_JUDGMENTS)
    ss.question, ss.tenant = params.q, params.tenant
    if params.tenant and not may_open(params.tenant, ACCESS.allowed):
        # The same words whether or not the tenant exists: the page never confirms another tenant's name.
        ss.url_problems.append("tenant: not one of the tenants you may open")
        ss.tenant = NO_TENANT
    ss.top_k, ss.overfetch, ss.rrf_k = params.top_k, params.overfetch, params.rrf_k
    ss.min_similarity, ss.dense_only, ss.ab, ss.rows = params.min_similarity, params.dense_only, params.ab, params.rows
    # Configuration B of the Compare tab, from its b_… parameters (unset: A's values, dense-only flipped).
    ss.cmp_dense_only = (not params.dense_only) if params.b_dense_only is None else params.b_dense_only
    ss.cmp_top_k = params.b_top_k or params.top_k
    ss.cmp_rrf_k = params.b_rrf_k or params.rrf_k
    ss.cmp_overfetch = params.b_overfetch or params.overfetch
    ss.cmp_min_similarity = (params.min_similarity if params.b_min_similarity is None
                             else params.b_min_similarity)
    wanted_reranker = links.canonical_reranker(params.reranker)
    if wanted_reranker not in links.app_rerankers(BASE):
        ss.url_problems.append(f"reranker={params.reranker[:80]!r} is not one of this app's rerankers "
                               f"({', '.join(links.app_rerankers(BASE))}); using {DEFAULTS.reranker}")
        wanted_reranker = DEFAULTS.reranker
    ss.rerank_mode, ss.rerank_cross = reranker_mode(wanted_reranker)
    b_reranker = links.canonical_reranker(params.b_reranker) if params.b_reranker else wanted_reranker
    if b_reranker not in links.app_rerankers(BASE):
        ss.url_problems.append(f"b_reranker={params.b_reranker[:80]!r} is not one of this app's rerankers "
                               f"({', '.join(links.app_rerankers(BASE))}); using {wanted_reranker}")
        b_reranker = wanted_reranker
    ss.cmp_reranker = b_reranker
    ss.transforms, ss.mmr_on, ss.mmr_lambda = list(params.transforms), params.mmr is not None, params.mmr or 0.7
    ss.lang = params.lang
    ss._view_tab_id = f"tab_{params.tab}"
    ss.traces = {}
# Streamlit drops a widget's state on any run that does not draw it: on another page (the Evaluation page),
# or for boxes this corpus does not need. Each widget's value is also kept under its own key, restored when
# the widget's key is gone, so coming back to this page finds the question and the settings as they were.
# (The tenant box is drawn only on a multi-tenant corpus, the judgments file only once a question ran.)
KEPT = ("question", "corpus_input", "questions_input", "tenant", "top_k", "overfetch", "rrf_k", "min_similarity",
        "dense_only", "ab", "rows", "rerank_mode", "rerank_cross", "transforms", "mmr_on", "mmr_lambda", "lang",
        "judgments_path", "cmp_dense_only", "cmp_reranker", "cmp_top_k", "cmp_rrf_k", "cmp_overfetch",
        "cmp_min_similarity")
# Configuration B and the judgments file are drawn only while their tab is open: their kept copies are written
# by their own changes (ui/keep.py) and are their values here.
IN_TABS = {"judgments_path", "cmp_dense_only", "cmp_reranker", "cmp_top_k", "cmp_rrf_k", "cmp_overfetch",
           "cmp_min_similarity"}
for key in KEPT:
    if (key not in ss or key in IN_TABS) and f"_kept_{key}" in ss:
        ss[key] = ss[f"_kept_{key}"]
    if key in ss:
        ss[f"_kept_{key}"] = ss[key]
lang = ss.lang if ss.get("lang") in links.LANGUAGES else "en"

st.markdown("<style>code{white-space:nowrap}</style>", unsafe_allow_html=True)  # ids never wrap mid-id
st.title(t("title", lang))
st.caption(t("caption", lang))

# -- 2. sidebar: corpus, question set, filters, settings -----------------------------------------------------
index_key = resources.index_key(BASE)


def embedding_bar():
    """A progress bar (chunks embedded of the chunks to embed) and the callback that moves it; the bar shows
    once the first batch is embedded (reading and chunking come before, and an index in step embeds none)."""
    slot = st.empty()

    def moved(done: int, total: int) -> None:
        slot.progress(min(1.0, done / max(1, total)), text=t("embedding_progress", lang, done=done, total=total))

    return moved


def load_workbench(corpus: str):
    if resources.is_loaded(corpus, index_key):
        return resources.open_workbench_cached(corpus, index_key)
    label = code(corpus) if corpus else t("lab_corpus", lang)
    with st.status(t("indexing", lang, label=label), expanded=True) as status:
        started = time.perf_counter()
        bench = resources.open_workbench_cached(corpus, index_key, embedding_bar())
        state = bench.state
        sizes = "" if ACCESS.restricted else t("index_sizes", lang, docs=len(state.documents), chunks=len(state.chunks))
        status.update(label=t("indexed", lang, label=label, sizes=sizes, s=f"{time.perf_counter() - started:.1f}"),
                      state="complete", expanded=False)
    return bench


with st.sidebar:
    layout.nav_links(t("nav_ask", lang), t("nav_eval", lang))
    st.radio(t("language", lang), list(LANG_NAMES), key="lang", format_func=LANG_NAMES.get, horizontal=True,
             help=t("language_help", lang))
    st.header(t("corpus", lang))
    st.text_input(t("corpus_input", lang), key="corpus_input", placeholder=t("corpus_placeholder", lang),
                  help=t("corpus_help", lang))
    active = ss.get("active_corpus", "")
    still = code(active) if active else t("lab_corpus", lang)
    try:
        requested = normalize_corpus(ss.corpus_input)
    except PathRefused as exc:
        st.error(t("still_using", lang, error=reason(str(exc), lang), corpus=still))
        requested = active
    try:
        wb = load_workbench(requested)
        ss.active_corpus = requested
    except CorpusError as exc:
        st.error(t("corpus_not_loaded", lang, error=reason(str(exc), lang), corpus=still))
        wb = load_workbench(active if active != requested else "")
        ss.active_corpus = active if active != requested else ""
    state = wb.state
    # Under a policy the sizes are those of the user's tenants: the page says nothing of the others.
    n_docs, n_chunks = resources.corpus_size(state, visible_tenants(state.tenants, ACCESS.allowed)
                                             if ACCESS.restricted and state.tenants else None)
    st.caption(t("corpus_line", lang, docs=n_docs, chunks=n_chunks, index=code(state.index_id),
                 store=reason(state.store_reason, lang)))
    if st.button(t("reindex", lang), help=t("reindex_help", lang)):
        with st.status(t("reindexing", lang)) as status:
            try:
                if ss.active_corpus:  # read again: it passes the roots and the size limit again
                    roots.confine_input(ss.active_corpus, BASE)
                state = wb.load_corpus(ss.active_corpus or None, on_progress=embedding_bar())
                r = state.sync
                status.update(label=(t("reindexed", lang, added=r.added, updated=r.updated, removed=r.removed,
                                       unchanged=r.unchanged) if r else
                                     t("reindexed_no_vectors", lang, why=reason(state.store_reason, lang))),
                              state="complete")
            except (CorpusError, PathRefused) as exc:
                status.update(label=t("reindex_failed", lang, error=reason(str(exc), lang)), state="error")
        state = wb.state

    on_lab = ss.active_corpus == ""
    st.text_input(t("questions_input", lang), key="questions_input",
                  placeholder=t("lab_questions", lang) if on_lab else t("none", lang),
                  help=t("questions_help", lang))
    questions_path = str(LAB_QUESTIONS) if on_lab else ""
    if ss.questions_input.strip():
        try:
            questions_path = str(roots.confine_input(ss.questions_input.strip(), BASE))
        except PathRefused as exc:
            st.error(reason(str(exc), lang))
            questions_path = ""
    questions = []
    if questions_path:
        try:
            questions = resources.get_questions(questions_path, resources.file_mtime(questions_path))
        except CorpusError as exc:
            st.error(t("questions_not_loaded", lang, error=reason(str(exc), lang)))
    tenant_field = BASE.tenant_field
    multi_tenant = bool(state.tenants)
    # The corpus' tenants this user may open (all of them in single-user mode), as the corpus writes them.
    tenant_values = visible_tenants(state.tenants, ACCESS.allowed)
    tenants = [str(t) for t in tenant_values]
    questions = visible_questions(questions, tenant_field, ACCESS.allowed, multi_tenant)
    by_id = {q.id: q for q in questions}

    def pick_question() -> None:
        picked = by_id.get(ss.picked)
        if picked is not None:
            ss.question = picked.question
            if picked.filters.get(tenant_field) is not None:
                ss.tenant = str(picked.filters[tenant_field])

    if questions:
        if ss.get("picked") not in by_id:
            ss.picked = ""
        st.selectbox(t("pick_labeled", lang), [""] + list(by_id), key="picked", on_change=pick_question,
                     format_func=lambda qid: "—" if not qid else f"{qid} · {by_id[qid].group} · {by_id[qid].question[:70]}")

    st.header(t("filters", lang))
    if multi_tenant and ss.get("tenant", NO_TENANT) not in tenants:
        ss.tenant = NO_TENANT
    if tenants:
        st.selectbox(t("tenant", lang, field=md(tenant_field)), [NO_TENANT] + tenants, key="tenant",
                     format_func=lambda v: t("pick_tenant", lang) if v == NO_TENANT else v,
                     help=t("tenant_help", lang))
    # The pickers list the values of the chosen tenant (before one is chosen, of the tenants this user may
    # open): never a value that exists only in another tenant.
    chosen_tenant = [v for v in tenant_values if str(v) == ss.get("tenant", NO_TENANT)]
    values = state.filter_values((chosen_tenant or tenant_values) if multi_tenant else None)
    if (chosen_tenant or not multi_tenant) and not ss.get("_link_filters_checked"):
        # The link's filters, once its tenant is known: a field or value this tenant lacks is said, not dropped.
        ss.pending_filters, problems = links.link_filter_problems(ss.pending_filters, values, chosen_tenant,
                                                                  state.field_types, tenant_field,
                                                                  state.field_types_of)
        ss.url_problems.extend(problems)
        ss._link_filters_checked = True
    chosen_filters: dict[str, list] = {}
    for name, options in values.items():
        if name == tenant_field:
            continue
        if len(options) > links.PICKER_MAX_VALUES:  # too many for a picker: typed, and checked against the tenant's
            key = f"flt_text_{name}"
            if key not in ss:
                ss[key] = ", ".join(ss.pending_filters.get(name, ()))
            st.text_input(md(name), key=key, placeholder=t("any", lang),
                          help=t("typed_values_help", lang, n=len(options)))
            chosen_filters[name], unknown = links.typed_filter_values(ss[key], options)
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
        chosen_filters[name] = list(ss[key])

    st.header(t("ranking", lang))
    c1, c2 = st.columns(2)
    c1.number_input("top_k", 1, 50, key="top_k")
    c2.number_input(t("overfetch", lang), 1, 20, key="overfetch", help=t("overfetch_help", lang))
    c1.number_input("rrf_k", 1, 1000, key="rrf_k", help=t("rrf_k_help", lang))
    c2.number_input(t("rows", lang), 1, 100, key="rows")
    st.slider(t("min_similarity", lang), -1.0, 1.0, step=0.01, key="min_similarity")
    if ss.get("rerank_mode") not in RERANK_MODES:
        ss.rerank_mode = reranker_mode(DEFAULTS.reranker)[0]
    st.radio(t("reranker", lang), RERANK_MODES, key="rerank_mode",
             format_func=lambda mode: t(f"rr_{mode}", lang, bi=BI_SPEC.split(":", 1)[1]))
    if ss.rerank_mode == "cross":
        if ss.get("rerank_cross") not in CROSS_SPECS:
            ss.rerank_cross = CROSS_SPECS[0]
        st.selectbox("Cross-encoder", CROSS_SPECS, key="rerank_cross", help=t("cross_help", lang))
    st.toggle(t("dense_only", lang), key="dense_only", help=t("dense_only_help", lang))

    st.header(t("transforms", lang))
    st.multiselect(t("techniques", lang), list(TECHNIQUES), key="transforms", help=t("techniques_help", lang))
    st.toggle(t("mmr", lang), key="mmr_on", help=t("mmr_help", lang))
    if ss.mmr_on:
        st.slider("MMR λ", 0.0, 1.0, step=0.05, key="mmr_lambda")
    st.toggle(t("ab_toggle", lang), key="ab")

reranker_spec = ({"off": links.RERANKER_OFF, "bi": BI_SPEC, "ltr": LTR_SPEC, "reader": READER_SPEC}.get(ss.rerank_mode)
                 or ss.rerank_cross)


def b_defaults() -> dict:
    """Configuration B's default, A's values (dense-only flipped), by B's widget key."""
    return {"cmp_dense_only": not bool(ss.dense_only), "cmp_reranker": reranker_spec, "cmp_top_k": int(ss.top_k),
            "cmp_rrf_k": int(ss.rrf_k), "cmp_overfetch": int(ss.overfetch),
            "cmp_min_similarity": round(float(ss.min_similarity), 2)}


def b_follows_a() -> None:
    """A setting of B still at its default follows A's change (A's reranker changed: B's too, as the link says,
    which writes B only where it differs from that default); a setting B was given stays."""
    now, before = b_defaults(), ss.get("_b_defaults")
    for key, value in (before or {}).items():
        b = round(float(ss[key]), 2) if key == "cmp_min_similarity" and key in ss else ss.get(key)
        if key in ss and now[key] != value and b == value:
            remember(key, now[key])
    ss._b_defaults = now


b_follows_a()


def b_fields() -> dict:
    """Configuration B's link fields: set only where B differs from its default (A's values, dense-only
    flipped)."""
    return dict(
        b_dense_only=None if bool(ss.cmp_dense_only) == (not ss.dense_only) else bool(ss.cmp_dense_only),
        b_reranker=None if ss.cmp_reranker == reranker_spec else ss.cmp_reranker,
        b_top_k=None if int(ss.cmp_top_k) == int(ss.top_k) else int(ss.cmp_top_k),
        b_rrf_k=None if int(ss.cmp_rrf_k) == int(ss.rrf_k) else int(ss.cmp_rrf_k),
        b_overfetch=None if int(ss.cmp_overfetch) == int(ss.overfetch) else int(ss.cmp_overfetch),
        b_min_similarity=(None if round(float(ss.cmp_min_similarity), 2) == round(float(ss.min_similarity), 2)
                          else round(float(ss.cmp_min_similarity), 2)))


current = links.ViewParams(
    q=ss.question.strip(), corpus=ss.active_corpus, questions=ss.questions_input.strip(),
    tenant=ss.get("tenant", NO_TENANT),
    filters={k: tuple(str(v) for v in vs) for k, vs in chosen_filters.items() if vs},
    top_k=int(ss.top_k), overfetch=int(ss.overfetch), rrf_k=int(ss.rrf_k), reranker=reranker_spec,
    dense_only=bool(ss.dense_only), min_similarity=round(float(ss.min_similarity), 2), ab=bool(ss.ab),
    rows=int(ss.rows), transforms=tuple(ss.transforms),
    mmr=round(float(ss.mmr_lambda), 2) if ss.mmr_on else None, lang=lang,
    judgments="" if ss.judgments_path == str(DEFAULT_JUDGMENTS) else ss.judgments_path,
    tab=ss.get("_view_tab_id", "tab_grid").removeprefix("tab_"), **b_fields())


# -- 3. the URL mirrors the view ----------------------------------------------------------------------------
def mirror_url(params: links.ViewParams) -> None:
    wanted_query = links.params_to_query(params, DEFAULTS)
    present = {k: (st.query_params.get_all(k) if len(st.query_params.get_all(k)) > 1 else st.query_params[k])
               for k in st.query_params}
    if present != wanted_query:
        st.query_params.from_dict(wanted_query)


mirror_url(current)

for problem in ss.url_problems:
    st.warning(t("url_ignored", lang, problem=md(problem) if lang == "en" else code(problem)))

# -- 4. the question ----------------------------------------------------------------------------------------
with st.form("ask_form", border=False):
    q_col, b_col = st.columns([8, 1], vertical_alignment="bottom")
    q_col.text_input(t("question", lang), key="question",
                     placeholder=t("question_placeholder", lang))
    b_col.form_submit_button(t("ask", lang), type="primary", width="stretch")


def finish(note: str, main_ms: float | None = None) -> None:
    """Show the submit → laid-out time, measured in this script run (server side)."""
    elapsed = (time.perf_counter() - STARTED) * 1000
    first = t("render_first", lang, ms=f"{main_ms:,.0f}") if main_ms is not None else ""
    ss._timing_line = t("render_time", lang, first=first, ms=f"{elapsed:,.0f}", note=note)
    timing_slot.caption(ss._timing_line)


question = current.q
if not question:  # nothing was submitted: no timing line either
    st.info(t("type_question", lang))
    st.stop()
if multi_tenant and not tenants:  # a policy's user none of whose tenants is in this corpus
    st.warning(t("no_tenant_here", lang))
    st.stop()
if multi_tenant and current.tenant == NO_TENANT:
    shown = ", ".join(md(name) for name in tenants)
    st.warning(t("pick_tenant_first", lang, n=len(tenants), shown=shown) if not ACCESS.restricted else
               t("pick_your_tenant", lang, shown=shown))
    st.stop()

filters: list[tuple[str, object]] = []
if multi_tenant:
    filters.append((tenant_field, current.tenant))
for name, chosen in chosen_filters.items():
    filters.extend((name, value) for value in chosen)

try:
    request = BASE.with_overrides(top_k=current.top_k, overfetch=current.overfetch, rrf_k=current.rrf_k,
                                  reranker_model=current.reranker, hybrid_enabled=not current.dense_only,
                                  min_similarity=current.min_similarity, transforms=current.transforms,
                                  mmr_lambda=current.mmr, answer_language=lang)
except ValueError as exc:
    st.error(t("invalid_settings", lang, error=reason(str(exc), lang)))
    st.stop()
# The corpus' adopted configuration (python -m retrieval tune --adopt), under the sidebar's own choices.
from retrieval.offline import tuned  # noqa: E402

try:
    request, tuned_note = tuned.apply_adopted(request, BASE, tuned.load_adopted(BASE, state.corpus_path), wb.settings)
except (RetrievalError, ValueError) as exc:
    st.warning(md(exc))
    tuned_note = None



def run(settings, tag: str = "", fresh: bool = False) -> dict:
    """Ask once per (index, question, filters, settings, tag) per session (``fresh`` forces a run): a rerun
    with the same inputs, Ask pressed again included, lays out the trace it has (the last 12 are kept)."""
    sig = json.dumps([state.index_id, question, [[k, str(v)] for k, v in filters], settings.public_dict(),
                      lang, tag], sort_keys=True, default=str)
    if fresh or sig not in ss.traces:
        ss.traces = {k: v for k, v in list(ss.traces.items())[-11:]}
        ss.traces[sig] = wb.ask(question, filters, settings=settings).to_dict()
    else:
        ss.traces[sig] = ss.traces.pop(sig)  # the most recent last: the one kept longest
    return ss.traces[sig]


try:
    with st.spinner(t("searching", lang)):
        trace = tuned.trace_note(run(request), tuned_note)  # the tuned note under the tier line
except RetrievalError as exc:
    st.error(reason(str(exc), lang))
    st.stop()

labeled = next((q for q in questions if nfc(q.question) == nfc(question)
                and str(q.filters.get(tenant_field, current.tenant)) == str(current.tenant)), None)
relevant = list(labeled.relevant) if labeled else None
graded = dict(labeled.graded or {}) if labeled else None
terms = tables.query_terms(question)
chunk_text = {cid: chunk.text for cid, chunk in state.chunk_by_id.items()}

# -- 5. the trace -------------------------------------------------------------------------------------------
layout.tier_badge(trace, lang)
if labeled:
    st.caption(t("labeled_line", lang, id=code(labeled.id), group=md(labeled.group),
                 relevant=", ".join(code(r) for r in labeled.relevant) or t("none_abstention", lang)))

layout.answer_block(trace, terms, lang)
# The report to hand over: one self-contained HTML file of this question (retrieval/report_html.py).
st.download_button(t("dl_report", lang), report_html.question_report(trace, lang, relevant, graded),
                   "question-report.html", "text/html", on_click="ignore", help=t("ex_html_help", lang),
                   icon=":material/download:")
layout.support_block(trace, lang)
if len(trace.get("queries") or []) > 1:
    layout.queries_block(trace, lang)

judge_filters: dict = {}
for name, value in filters:
    judge_filters.setdefault(name, []).append(value)
judge_filters = {k: (v[0] if len(v) == 1 else v) for k, v in judge_filters.items()}


@st.fragment
def judge_panel(pooled: list, qid: str | None, titles: dict, page_jpath: str) -> None:
    """The grade controls, the counter and Save: a grade click re-runs this panel only."""
    restore("judgments_path")
    st.text_input(t("judgments_file", lang), key="judgments_path", help=t("judgments_help", lang), on_change=keep,
                  args=("judgments_path",))
    if ss.judgments_path != page_jpath:  # another file: the link and the rest of the page follow it
        st.rerun(scope="app")
    jpath = ss.judgments_path.strip() or str(DEFAULT_JUDGMENTS)
    stored = {}
    try:
        if jpath == str(DEFAULT_JUDGMENTS) and roots.JUDGMENTS_DIR in roots.write_roots(BASE):
            roots.JUDGMENTS_DIR.mkdir(exist_ok=True)  # the project's judgments/ folder, a write root
        jfile = roots.confine_output(jpath, BASE)  # read and rewritten: only inside the write roots
    except (PathRefused, OSError) as exc:
        if jpath == str(DEFAULT_JUDGMENTS):  # the deployer's roots leave out judgments/: not the user's mistake
            st.info(t("name_judgments_file", lang, why=reason(str(exc), lang)))
        else:
            st.error(reason(str(exc), lang))
        jfile = None
    try:
        stored = judgments.load(jfile, question, judge_filters, qid) if jfile is not None else {}
    except CorpusError as exc:
        st.error(t("judgments_not_read", lang, error=reason(str(exc), lang)))
    j1, j2 = st.columns(2)
    restore("judge_blind"), restore("judge_unjudged")
    blind = j1.toggle(t("judge_blind", lang), key="judge_blind", on_change=keep, args=("judge_blind",))
    only_unjudged = j2.toggle(t("only_unjudged", lang), key="judge_unjudged", on_change=keep,
                              args=("judge_unjudged",))
    prefix = "jg_" + __import__("hashlib").sha1(f"{state.index_id}|{question}|{jpath}".encode()).hexdigest()[:8] + "_"
    counter_slot = st.empty()
    grades = layout.judge_block(trace, pooled, titles, chunk_text, terms, prefix, blind, only_unjudged, stored,
                                lang)
    judged_n, pooled_n = judgments.counter(pooled, grades)
    counter_slot.markdown(f"**{t('judged', lang, n=judged_n, m=pooled_n)}** · "
                          + t("saved_in_file", lang, n=len([p for p in pooled if p["parent_id"] in stored])))
    if st.button(t("save_judgments", lang), type="primary", key="judge_save", disabled=jfile is None):
        others = {k: v for k, v in stored.items() if k not in {p["parent_id"] for p in pooled}}
        try:
            saved_id = judgments.save(jfile, question, {**others, **grades}, judge_filters, qid)
            st.success(t("saved", lang, n=len(grades), id=code(saved_id), path=code(jpath)))
        except (CorpusError, ValueError, OSError) as exc:
            st.error(t("judgments_not_saved", lang, error=reason(str(exc), lang)))


@st.fragment
def where_panel(titles: dict) -> None:
    """Where is my document?: a search or a pick re-runs this panel only."""
    st.caption(t("where_caption", lang))
    w1, w2 = st.columns([1, 2])
    restore("where_q"), restore("where_pick")  # the search shown before, when the tab is opened again
    needle = w1.text_input(t("where_search", lang), key="where_q", on_change=keep, args=("where_q",))
    options = []  # nothing listed before a search: the page never shows another tenant's ids unasked
    # Under a policy only the user's tenants' parents are found: no other tenant's ids, titles or owner.
    where_tenants = tenant_values if ACCESS.restricted and multi_tenant else None
    for pid, title in (explain.search_targets(state, needle, limit=40, tenants=where_tenants)
                       if needle.strip() else []):
        options.append(pid)
        options.extend(explain.targets(state, pid))
    options = [""] + list(dict.fromkeys(options))
    if ss.get("where_pick") not in options:
        remember("where_pick", "")
    picked_doc = w2.selectbox(t("where_pick", lang), options, key="where_pick", on_change=keep, args=("where_pick",),
                              format_func=lambda v: "—" if not v else (v if "#" in v else f"{v} · {titles.get(v, '')}"))
    if picked_doc:
        q_vec = None
        if getattr(wb, "embedder", None) is not None and state.store is not None:
            q_vec = wb.embedder.embed_queries([question])[0]
        reranker_obj = None
        if (trace.get("models") or {}).get("reranker"):
            reranker_obj = wb.reranker(current.reranker)[0]
        layout.where_block(explain.explain_many(state, trace, explain.targets(state, picked_doc),
                                                query_vector=q_vec, reranker=reranker_obj), lang)


titles = {d.id: d.title for d in state.documents}


@st.fragment
def compare_panel() -> None:
    """Configuration B against the sidebar's A: a change of B re-runs this panel (and its link) only."""
    st.markdown(t("config_b", lang))
    for key, value in b_defaults().items():
        restore(key, value)  # B as it was left (ui/keep.py), else its default
    if ss.cmp_reranker not in links.app_rerankers(BASE):
        remember("cmp_reranker", current.reranker)
    b1, b2, b3, b4, b5, b6 = st.columns(6)
    b1.toggle(t("b_dense_only", lang), key="cmp_dense_only", on_change=keep, args=("cmp_dense_only",))
    b2.selectbox(t("b_reranker", lang), list(links.app_rerankers(BASE)), key="cmp_reranker", on_change=keep,
                 args=("cmp_reranker",))
    b3.number_input("B: top_k", 1, 50, key="cmp_top_k", on_change=keep, args=("cmp_top_k",))
    b4.number_input("B: rrf_k", 1, 1000, key="cmp_rrf_k", on_change=keep, args=("cmp_rrf_k",))
    b5.number_input(t("b_overfetch", lang), 1, 20, key="cmp_overfetch", on_change=keep, args=("cmp_overfetch",))
    b6.number_input(t("b_min_cos", lang), -1.0, 1.0, step=0.01, key="cmp_min_similarity", on_change=keep,
                    args=("cmp_min_similarity",))
    mirror_url(dataclasses.replace(current, **b_fields()))  # B's link follows B within this panel's runs
    for key in ("cmp_dense_only", "cmp_reranker", "cmp_top_k", "cmp_rrf_k", "cmp_overfetch", "cmp_min_similarity"):
        ss[f"_kept_{key}"] = ss[key]  # kept as a whole run keeps them (see KEPT)
    if current.ab:
        try:
            other_settings = request.with_overrides(
                hybrid_enabled=not ss.cmp_dense_only, reranker_model=ss.cmp_reranker, top_k=int(ss.cmp_top_k),
                rrf_k=int(ss.cmp_rrf_k), overfetch=int(ss.cmp_overfetch),
                min_similarity=round(float(ss.cmp_min_similarity), 2))
            with st.spinner(t("running_ab", lang)):
                # Like with like: A and B measured after the first request above, so both reuse the loaded
                # models and the cached query vector; a reranker only B uses is loaded by one unmeasured B run.
                if ss.cmp_reranker not in (links.RERANKER_OFF, current.reranker):
                    run(other_settings, "cmp-warmup")
                warm_a = run(request, "cmp-a")
                warm_b = run(other_settings, "cmp-b")
            cold_total = (trace.get("timings_ms") or {}).get("total")
            layout.compare_block(warm_a, warm_b, t("a_sidebar", lang), "B", relevant, graded,
                                 t("warm_note", lang, cold=layout.fmt_ms(cold_total, lang),
                                   embed=layout.fmt_ms((trace.get("timings_ms") or {}).get("embed_query"), lang),
                                   outside=layout.fmt_ms(tables.unattributed_ms(trace), lang)), lang)
        except (RetrievalError, ValueError) as exc:
            st.error(t("b_failed", lang, error=reason(str(exc), lang)))
    else:
        st.info(t("turn_on_ab", lang))


def lists_tab() -> None:
    """The four lists as cards, side by side."""
    shown = [name for name in tables.LISTS if name != "reranked" or (trace.get("reranked") or {}).get("items")]
    if "reranked" not in shown:  # an empty Reranked column would take a quarter of the width for one line
        st.caption(f"{t('reranked_empty', lang)} — {reason(tables.empty_reason(trace, 'reranked'), lang)}")
    panels = st.columns(len(shown), gap="medium")
    for column, name in zip(panels, shown):
        with column:
            layout.list_panel(trace, name, chunk_text, terms, current.rows, relevant, graded, lang)


def movement_tab() -> None:
    left, right = st.columns([3, 2], gap="large")
    with left:
        layout.movement_chart(trace, lang)
    with right:
        layout.lost_table(trace, relevant, graded, lang)


def timings_tab() -> None:
    """The developer's lines: models, stage timings, costs, downloads."""
    layout.models_line(trace, lang)
    layout.timings_and_costs(trace, lang)
    st.markdown(f"**{t('downloads', lang)}**")
    d1, d2, d3, d4, d5 = st.columns(5)
    d1.download_button(t("dl_trace", lang), json.dumps(trace, ensure_ascii=False, indent=2), "trace.json",
                       "application/json", on_click="ignore")
    for col, (name, text) in zip((d2, d3, d4, d5), tables.lists_csv(trace, relevant, graded).items()):
        col.download_button(f"{name} (CSV)", text, f"{name}.csv", "text/csv", on_click="ignore")


#: The tabs under the answer, by their label's key in ui/i18n.py; ``view_tab`` holds the open one's label.
TABS = tuple(f"tab_{name}" for name in links.VIEW_TABS)
TAB_KEY = "view_tab"
timing_slot = main_ms = None


@st.fragment
def tabs_panel() -> None:
    """The tabs under the answer. Only the open tab is drawn (a hidden tab used to be laid out on every run:
    the four card columns, every grade control, Compare's two extra requests); switching tabs re-runs this
    panel alone, on the trace drawn above. The page's own time stays in the Timings tab, drawn or not."""
    global timing_slot, main_ms
    labels = [t(k, lang) for k in TABS]
    if ss.get(TAB_KEY) not in labels:  # the first run, another language, or the state dropped on another page
        ss[TAB_KEY] = t(ss.get("_view_tab_id", TABS[0]), lang)
    tabs = dict(zip(TABS, st.tabs(labels, key=TAB_KEY, on_change="rerun")))
    ss._view_tab_id = TABS[labels.index(ss[TAB_KEY])]
    opened = ss._view_tab_id
    link_tab = opened.removeprefix("tab_")  # the link names the open tab (a switch re-runs this panel alone)
    if st.query_params.get("tab", DEFAULTS.tab) != link_tab:
        if link_tab == DEFAULTS.tab:
            del st.query_params["tab"]
        else:
            st.query_params["tab"] = link_tab
    # The panels with their own controls (a row picked in the grid, a grade, a search in "Where is my
    # document?", B's settings) are fragments too: a click there re-runs that panel alone.
    with tabs["tab_timings"]:
        timing_slot = st.empty()
        timing_slot.caption(ss.get("_timing_line", ""))  # the last full run's line, until finish() writes anew
        if opened == "tab_timings":
            timings_tab()
    with tabs[opened]:
        if opened == "tab_grid":  # the rank grid, one chunk's provenance card, why A above B (ui/grid.py)
            st.fragment(analyst_view)(trace, chunk_text, terms, relevant, graded, lang)
        elif opened == "tab_lists":
            lists_tab()
        elif opened == "tab_movement":
            movement_tab()
        elif opened == "tab_judge":
            judge_panel(judgments.pool(trace), labeled.id if labeled else None, titles, ss.judgments_path)
        elif opened == "tab_where":
            where_panel(titles)
        elif opened == "tab_compare":  # its extra requests run only here, once the panels above are drawn
            main_ms = (time.perf_counter() - STARTED) * 1000
            compare_panel()


tabs_panel()
finish(t("pipeline_total", lang, ms=layout.fmt_ms((trace.get("timings_ms") or {}).get("total"), lang)), main_ms)
