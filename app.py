"""Hybrid retrieval workbench: why did this chunk rank where it did? (``streamlit run app.py``)

The page collects a question and settings (all mirrored in the URL), calls ``Workbench.ask`` and lays out
the trace it returns: the four ranked lists, fusion contributions, rank movement, lost evidence, the tier,
the answer and a hybrid vs dense-only comparison. Nothing is re-scored here.
"""

from __future__ import annotations

import json
import time
import unicodedata

STARTED = time.perf_counter()

import streamlit as st  # noqa: E402

from retrieval import access, explain, judgments, roots, views  # noqa: E402
from retrieval.errors import CorpusError, PathRefused, RetrievalError  # noqa: E402
from retrieval.settings import LAB_CORPUS, LAB_QUESTIONS  # noqa: E402
from retrieval.transforms import TECHNIQUES  # noqa: E402
from ui import layout, resources  # noqa: E402
from ui.access import gate  # noqa: E402
from ui.escape import code, md  # noqa: E402
from ui.grid import analyst_view  # noqa: E402
from ui.i18n import t  # noqa: E402

st.set_page_config(page_title="Hybrid retrieval workbench", page_icon="🔎", layout="wide")
ss = st.session_state

BASE = resources.base_settings()
# Who may see what (README, "Deploying for several users"): under an access policy, only the user's tenants;
# a request without a user, or whose user may open none, ends here with one line.
ACCESS = gate(BASE)
DEFAULTS = views.ViewParams(top_k=BASE.top_k, overfetch=min(BASE.overfetch, 20), rrf_k=BASE.rrf_k,
                            reranker=views.canonical_reranker(BASE.reranker_model),
                            dense_only=not BASE.hybrid_enabled, min_similarity=BASE.min_similarity)
# The app's rerankers are a list (README, "Data roots"): the learned ranker, off, the bi-encoder and the
# cross-encoders the deployer configured. No link or box names a model path.
LTR_SPEC, _, BI_SPEC, *CROSS_SPECS = views.app_rerankers(BASE)
RERANK_MODES = {"ltr": "Learned ranker (LambdaMART over BM25, dense and coverage features)", "off": "Off",
                "bi": f"Bi-encoder rescoring ({BI_SPEC.split(':', 1)[1]}, offline)"}
if CROSS_SPECS:
    RERANK_MODES["cross"] = "Cross-encoder (configured on this server)"
NO_TENANT = ""
DEFAULT_JUDGMENTS = roots.JUDGMENTS_DIR / "judgments.jsonl"
LANG_NAMES = {"en": "English", "pt": "Português"}


def reranker_mode(spec: str) -> tuple[str, str]:
    """(mode of the Reranker radio, cross-encoder name) of one of the app's rerankers."""
    spec = views.canonical_reranker(spec)
    if spec == views.RERANKER_OFF:
        return "off", ""
    if spec == LTR_SPEC:
        return "ltr", ""
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
    params, problems = views.params_from_query({k: st.query_params.get_all(k) for k in st.query_params}, DEFAULTS)
    ss._seeded, ss.url_problems, ss.pending_filters = True, problems, dict(params.filters)
    # Paths in the link pass the data roots before anything reads them; a refused one is dropped here.
    ss.corpus_input = confined_url_path("corpus", params.corpus, lambda raw: roots.confine_input(raw, BASE))
    ss.questions_input = confined_url_path("questions", params.questions,
                                           lambda raw: roots.confine_input(raw, BASE))
    ss.judgments_path = confined_url_path("judgments", params.judgments,
                                          lambda raw: roots.confine_output(raw, BASE)) or str(DEFAULT_JUDGMENTS)
    ss.question, ss.tenant = params.q, params.tenant
    if params.tenant and not access.may_open(params.tenant, ACCESS.allowed):
        # The same words whether or not the tenant exists: the page never confirms another tenant's name.
        ss.url_problems.append("tenant: not one of the tenants you may open")
        ss.tenant = NO_TENANT
    ss.top_k, ss.overfetch, ss.rrf_k = params.top_k, params.overfetch, params.rrf_k
    ss.min_similarity, ss.dense_only, ss.ab, ss.rows = params.min_similarity, params.dense_only, params.ab, params.rows
    wanted_reranker = views.canonical_reranker(params.reranker)
    if wanted_reranker not in views.app_rerankers(BASE):
        ss.url_problems.append(f"reranker={params.reranker[:80]!r} is not one of this app's rerankers "
                               f"({', '.join(views.app_rerankers(BASE))}); using {DEFAULTS.reranker}")
        wanted_reranker = DEFAULTS.reranker
    ss.rerank_mode, ss.rerank_cross = reranker_mode(wanted_reranker)
    ss.transforms, ss.mmr_on, ss.mmr_lambda = list(params.transforms), params.mmr is not None, params.mmr or 0.7
    ss.lang = params.lang
    ss.traces = {}
# Streamlit drops a widget's state on any run that does not draw it: on another page (the Evaluation page),
# or for boxes this corpus does not need. Each widget's value is also kept under its own key, restored when
# the widget's key is gone, so coming back to this page finds the question and the settings as they were.
# (The tenant box is drawn only on a multi-tenant corpus, the judgments file only once a question ran.)
KEPT = ("question", "corpus_input", "questions_input", "tenant", "top_k", "overfetch", "rrf_k", "min_similarity",
        "dense_only", "ab", "rows", "rerank_mode", "rerank_cross", "transforms", "mmr_on", "mmr_lambda", "lang",
        "judgments_path")
for key in KEPT:
    if key not in ss and f"_kept_{key}" in ss:
        ss[key] = ss[f"_kept_{key}"]
    if key in ss:
        ss[f"_kept_{key}"] = ss[key]
lang = ss.lang if ss.get("lang") in views.LANGUAGES else "en"

st.markdown("<style>code{white-space:nowrap}</style>", unsafe_allow_html=True)  # ids never wrap mid-id
st.title(t("title", lang))
st.caption(t("caption", lang))
render_time = st.empty()

# -- 2. sidebar: corpus, question set, filters, settings -----------------------------------------------------
index_key = resources.index_key(BASE)


def load_workbench(corpus: str):
    if resources.is_loaded(corpus, index_key):
        return resources.open_workbench_cached(corpus, index_key)
    label = code(corpus) if corpus else "the lab corpus"
    with st.status(f"Indexing {label}…", expanded=False) as status:
        started = time.perf_counter()
        bench = resources.open_workbench_cached(corpus, index_key)
        state = bench.state
        sizes = "" if ACCESS.restricted else f": {len(state.documents)} documents, {len(state.chunks)} chunks"
        status.update(label=f"Indexed {label}{sizes} in {time.perf_counter() - started:.1f} s", state="complete")
    return bench


with st.sidebar:
    layout.nav_links(t("nav_ask", lang), t("nav_eval", lang))
    st.radio(t("language", lang), list(LANG_NAMES), key="lang", format_func=LANG_NAMES.get, horizontal=True,
             help="The interface and the answer stage's notes (the extractive answer's note, the abstention)")
    st.header(t("corpus", lang))
    st.text_input("Corpus file or folder", key="corpus_input", placeholder="lab corpus (data/lab/corpus.jsonl)",
                  help="JSONL, a folder of .md/.txt, a BEIR folder or a SQuAD JSON. Empty = the lab corpus.")
    active = ss.get("active_corpus", "")
    try:
        requested = normalize_corpus(ss.corpus_input)
    except PathRefused as exc:
        st.error(f"{md(exc)}; still using {code(active) if active else 'the lab corpus'}.")
        requested = active
    try:
        wb = load_workbench(requested)
        ss.active_corpus = requested
    except CorpusError as exc:
        st.error(f"Could not load this corpus: {md(exc)}\n\nStill using {code(active) if active else 'the lab corpus'}.")
        wb = load_workbench(active if active != requested else "")
        ss.active_corpus = active if active != requested else ""
    state = wb.state
    # Under a policy the sizes are those of the user's tenants: the page says nothing of the others.
    n_docs, n_chunks = resources.corpus_size(state, access.visible_tenants(state.tenants, ACCESS.allowed)
                                             if ACCESS.restricted and state.tenants else None)
    st.caption(f"{n_docs} documents · {n_chunks} chunks · index {code(state.index_id)} · "
               f"dense store: {md(state.store_reason)}")
    if st.button("Re-index (sync changes)", help="Re-read the corpus and sync the vector store"):
        with st.status("Re-indexing…") as status:
            try:
                if ss.active_corpus:  # read again: it passes the roots and the size limit again
                    roots.confine_input(ss.active_corpus, BASE)
                state = wb.load_corpus(ss.active_corpus or None)
                r = state.sync
                status.update(label=("Re-indexed: " + (f"{r.added} added, {r.updated} updated, {r.removed} removed, "
                                                        f"{r.unchanged} unchanged" if r else
                                                        f"no vectors ({md(state.store_reason)})")), state="complete")
            except (CorpusError, PathRefused) as exc:
                status.update(label=f"Re-index failed, previous index kept: {md(exc)}", state="error")
        state = wb.state

    on_lab = ss.active_corpus == ""
    st.text_input("Question set (JSONL, BEIR or SQuAD)", key="questions_input",
                  placeholder="lab questions" if on_lab else "none",
                  help="Labeled questions for relevance marks. Empty = the lab questions on the lab corpus.")
    questions_path = str(LAB_QUESTIONS) if on_lab else ""
    if ss.questions_input.strip():
        try:
            questions_path = str(roots.confine_input(ss.questions_input.strip(), BASE))
        except PathRefused as exc:
            st.error(md(exc))
            questions_path = ""
    questions = []
    if questions_path:
        try:
            questions = resources.get_questions(questions_path, resources.file_mtime(questions_path))
        except CorpusError as exc:
            st.error(f"Question set not loaded: {md(exc)}")
    tenant_field = BASE.tenant_field
    multi_tenant = bool(state.tenants)
    # The corpus' tenants this user may open (all of them in single-user mode), as the corpus writes them.
    tenant_values = access.visible_tenants(state.tenants, ACCESS.allowed)
    tenants = [str(t) for t in tenant_values]
    questions = access.visible_questions(questions, tenant_field, ACCESS.allowed, multi_tenant)
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
        st.selectbox("Pick a labeled question", [""] + list(by_id), key="picked", on_change=pick_question,
                     format_func=lambda qid: "—" if not qid else f"{qid} · {by_id[qid].group} · {by_id[qid].question[:70]}")

    st.header(t("filters", lang))
    if multi_tenant and ss.get("tenant", NO_TENANT) not in tenants:
        ss.tenant = NO_TENANT
    if tenants:
        st.selectbox(f"Tenant ({md(tenant_field)})", [NO_TENANT] + tenants, key="tenant",
                     format_func=lambda v: "— pick a tenant —" if v == NO_TENANT else v,
                     help="Every search runs inside one tenant; nothing is searched across tenants.")
    # The pickers list the values of the chosen tenant (before one is chosen, of the tenants this user may
    # open): never a value that exists only in another tenant.
    chosen_tenant = [v for v in tenant_values if str(v) == ss.get("tenant", NO_TENANT)]
    values = state.filter_values((chosen_tenant or tenant_values) if multi_tenant else None)
    chosen_filters: dict[str, list] = {}
    for name, options in values.items():
        if name == tenant_field or len(options) > 200:
            continue
        key = f"flt_{name}"
        if key not in ss:
            wanted = set(ss.pending_filters.get(name, ()))
            ss[key] = [v for v in options if str(v) in wanted]
        else:
            ss[key] = [v for v in ss[key] if v in options]
        st.multiselect(md(name), options, key=key, placeholder="any")
        chosen_filters[name] = list(ss[key])

    st.header(t("ranking", lang))
    c1, c2 = st.columns(2)
    c1.number_input("top_k", 1, 50, key="top_k")
    c2.number_input("over-fetch ×", 1, 20, key="overfetch", help="Each ranker returns over-fetch × top_k")
    c1.number_input("rrf_k", 1, 1000, key="rrf_k", help="RRF: Σ 1/(rrf_k + rank), ranks from 1")
    c2.number_input("rows per panel", 1, 100, key="rows")
    st.slider("Min cosine similarity (gate)", -1.0, 1.0, step=0.01, key="min_similarity")
    if ss.get("rerank_mode") not in RERANK_MODES:
        ss.rerank_mode = reranker_mode(DEFAULTS.reranker)[0]
    st.radio("Reranker", list(RERANK_MODES), key="rerank_mode", format_func=RERANK_MODES.get)
    if ss.rerank_mode == "cross":
        if ss.get("rerank_cross") not in CROSS_SPECS:
            ss.rerank_cross = CROSS_SPECS[0]
        st.selectbox("Cross-encoder", CROSS_SPECS, key="rerank_cross",
                     help="The cross-encoders this server offers (RETRIEVAL_APP_RERANKERS)")
    st.toggle("Dense-only (hybrid off)", key="dense_only", help="Sets hybrid_enabled=False: the A/B toggle")

    st.header(t("transforms", lang))
    st.multiselect("Techniques (each off by default)", list(TECHNIQUES), key="transforms",
                   help="rewrite (glossary or LLM), multi_query, hyde (search hint only, never evidence), "
                        "decompose, multi_hop, self_query (filters from the question; never widens the tenant)")
    st.toggle("MMR over the final candidates", key="mmr_on", help="Carbonell & Goldstein (1998); λ = 1 keeps "
              "the relevance order")
    if ss.mmr_on:
        st.slider("MMR λ", 0.0, 1.0, step=0.05, key="mmr_lambda")
    st.toggle("Compare: also run configuration B (tab 'Compare')", key="ab")

reranker_spec = {"off": views.RERANKER_OFF, "bi": BI_SPEC, "ltr": LTR_SPEC}.get(ss.rerank_mode) or ss.rerank_cross
current = views.ViewParams(
    q=ss.question.strip(), corpus=ss.active_corpus, questions=ss.questions_input.strip(),
    tenant=ss.get("tenant", NO_TENANT),
    filters={k: tuple(str(v) for v in vs) for k, vs in chosen_filters.items() if vs},
    top_k=int(ss.top_k), overfetch=int(ss.overfetch), rrf_k=int(ss.rrf_k), reranker=reranker_spec,
    dense_only=bool(ss.dense_only), min_similarity=round(float(ss.min_similarity), 2), ab=bool(ss.ab),
    rows=int(ss.rows), transforms=tuple(ss.transforms),
    mmr=round(float(ss.mmr_lambda), 2) if ss.mmr_on else None, lang=lang,
    judgments="" if ss.judgments_path == str(DEFAULT_JUDGMENTS) else ss.judgments_path)

# -- 3. the URL mirrors the view ----------------------------------------------------------------------------
wanted_query = views.params_to_query(current, DEFAULTS)
present = {k: (st.query_params.get_all(k) if len(st.query_params.get_all(k)) > 1 else st.query_params[k])
           for k in st.query_params}
if present != wanted_query:
    st.query_params.from_dict(wanted_query)

for problem in ss.url_problems:
    st.warning(f"URL parameter ignored: {md(problem)}")

# -- 4. the question ----------------------------------------------------------------------------------------
with st.form("ask_form", border=False):
    q_col, b_col = st.columns([8, 1], vertical_alignment="bottom")
    q_col.text_input(t("question", lang), key="question",
                     placeholder="e.g. O PX-7 não foi ativado apesar do pagamento, o que faço?")
    submitted = b_col.form_submit_button(t("ask", lang), type="primary", width="stretch")


def finish(note: str, main_ms: float | None = None) -> None:
    """Show the submit → laid-out time, measured in this script run (server side)."""
    elapsed = (time.perf_counter() - STARTED) * 1000
    first = f"answer and panels **{main_ms:,.0f} ms**, " if main_ms is not None else ""
    render_time.caption(f"Submit → page laid out: {first}whole page **{elapsed:,.0f} ms** "
                        f"(measured in the app, server side). {note}")


question = current.q
if not question:  # nothing was submitted: no timing line either
    st.info(t("type_question", lang))
    st.stop()
if multi_tenant and not tenants:  # a policy's user none of whose tenants is in this corpus
    st.warning("You may open no tenant of this corpus: choose another corpus in the sidebar.")
    st.stop()
if multi_tenant and current.tenant == NO_TENANT:
    shown = ", ".join(md(name) for name in tenants)
    st.warning(f"This corpus has {len(tenants)} tenants ({shown}): pick a tenant in the sidebar before asking. "
               "Nothing is searched across tenants." if not ACCESS.restricted else
               f"Pick a tenant in the sidebar before asking (yours here: {shown}). Nothing is searched across "
               "tenants.")
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
    st.error(f"Invalid settings: {md(exc)}")
    st.stop()
# The corpus' adopted configuration (python -m retrieval tune --adopt), under the sidebar's own choices.
from retrieval import tuned  # noqa: E402

try:
    request, tuned_note = tuned.apply_adopted(request, BASE, tuned.load_adopted(BASE, state.corpus_path), wb.settings)
except (RetrievalError, ValueError) as exc:
    st.warning(md(exc))
    tuned_note = None



def run(settings, tag: str = "", fresh: bool = False) -> dict:
    """Ask once per (index, question, filters, settings, tag) per session; Ask (or ``fresh``) forces a run."""
    sig = json.dumps([state.index_id, question, [[k, str(v)] for k, v in filters], settings.public_dict(),
                      lang, tag], sort_keys=True, default=str)
    if submitted or fresh or sig not in ss.traces:
        ss.traces = {k: v for k, v in list(ss.traces.items())[-11:]}
        ss.traces[sig] = wb.ask(question, filters, settings=settings).to_dict()
    return ss.traces[sig]


try:
    with st.spinner(t("searching", lang)):
        trace = tuned.trace_note(run(request), tuned_note)  # the tuned note under the tier line
except RetrievalError as exc:
    st.error(md(exc))
    st.stop()

labeled = next((q for q in questions if nfc(q.question) == nfc(question)
                and str(q.filters.get(tenant_field, current.tenant)) == str(current.tenant)), None)
relevant = list(labeled.relevant) if labeled else None
graded = dict(labeled.graded or {}) if labeled else None
terms = views.query_terms(question)
chunk_text = {cid: chunk.text for cid, chunk in state.chunk_by_id.items()}

# -- 5. the trace -------------------------------------------------------------------------------------------
layout.tier_badge(trace)
layout.models_line(trace)
if labeled:
    st.caption(f"Labeled question {code(labeled.id)} ({md(labeled.group)}) · relevant: "
               + (", ".join(code(r) for r in labeled.relevant) or "none (the right answer is an abstention)"))

layout.answer_block(trace, terms, lang)
layout.support_block(trace, lang)
if len(trace.get("queries") or []) > 1:
    layout.queries_block(trace)

tab_grid, tab_lists, tab_move, tab_cmp, tab_judge, tab_where, tab_time = st.tabs(
    [t(k, lang) for k in ("tab_grid", "tab_lists", "tab_movement", "tab_compare", "tab_judge", "tab_where",
                          "tab_timings")])

with tab_grid:  # the rank grid, one chunk's provenance card, why A above B (ui/grid.py)
    analyst_view(trace, chunk_text, terms, relevant, graded, lang)

with tab_lists:
    shown = [name for name in views.LISTS if name != "reranked" or (trace.get("reranked") or {}).get("items")]
    if "reranked" not in shown:  # an empty Reranked column would take a quarter of the width for one line
        st.caption(f"Reranked: empty — {md(views.empty_reason(trace, 'reranked'))}")
    panels = st.columns(len(shown), gap="medium")
    for column, name in zip(panels, shown):
        with column:
            layout.list_panel(trace, name, chunk_text, terms, current.rows, relevant, graded)

with tab_move:
    left, right = st.columns([3, 2], gap="large")
    with left:
        layout.movement_chart(trace)
    with right:
        layout.lost_table(trace, relevant, graded)

with tab_time:
    layout.timings_and_costs(trace)
    st.markdown("**Downloads**")
    d1, d2, d3, d4, d5 = st.columns(5)
    d1.download_button("Trace (JSON)", json.dumps(trace, ensure_ascii=False, indent=2), "trace.json",
                       "application/json", on_click="ignore")
    for col, (name, text) in zip((d2, d3, d4, d5), views.lists_csv(trace, relevant, graded).items()):
        col.download_button(f"{name} (CSV)", text, f"{name}.csv", "text/csv", on_click="ignore")

judge_filters: dict = {}
for name, value in filters:
    judge_filters.setdefault(name, []).append(value)
judge_filters = {k: (v[0] if len(v) == 1 else v) for k, v in judge_filters.items()}

with tab_judge:
    pooled = judgments.pool(trace)
    st.text_input("Judgments file (question-set JSONL, or TREC qrels: .qrels / .txt)", key="judgments_path",
                  help="Grades are written to this question's record (relevant, graded), created if new; other "
                       "questions are kept. A qrels file keeps one line per judgment.")
    jpath = ss.judgments_path.strip() or str(DEFAULT_JUDGMENTS)
    qid = labeled.id if labeled else None
    stored = {}
    try:
        if jpath == str(DEFAULT_JUDGMENTS) and roots.JUDGMENTS_DIR in roots.write_roots(BASE):
            roots.JUDGMENTS_DIR.mkdir(exist_ok=True)  # the project's judgments/ folder, a write root
        jfile = roots.confine_output(jpath, BASE)  # read and rewritten: only inside the write roots
    except (PathRefused, OSError) as exc:
        if jpath == str(DEFAULT_JUDGMENTS):  # the deployer's roots leave out judgments/: not the user's mistake
            st.info(f"Name a judgments file inside the write roots to save grades ({md(exc)}).")
        else:
            st.error(md(exc))
        jfile = None
    try:
        stored = judgments.load(jfile, question, judge_filters, qid) if jfile is not None else {}
    except CorpusError as exc:
        st.error(f"Judgments not read: {md(exc)}")
    j1, j2 = st.columns(2)
    blind = j1.toggle("Hide ranks and scores while judging (position bias)", key="judge_blind")
    only_unjudged = j2.toggle("Only unjudged", key="judge_unjudged")
    prefix = "jg_" + __import__("hashlib").sha1(f"{state.index_id}|{question}|{jpath}".encode()).hexdigest()[:8] + "_"
    counter_slot = st.empty()
    titles = {d.id: d.title for d in state.documents}
    grades = layout.judge_block(trace, pooled, titles, chunk_text, terms, prefix, blind, only_unjudged, stored)
    judged_n, pooled_n = judgments.counter(pooled, grades)
    counter_slot.markdown(f"**{t('judged', lang, n=judged_n, m=pooled_n)}** · saved in the file: "
                          f"{len([p for p in pooled if p['parent_id'] in stored])}")
    if st.button(t("save_judgments", lang), type="primary", key="judge_save", disabled=jfile is None):
        keep = {k: v for k, v in stored.items() if k not in {p["parent_id"] for p in pooled}}
        try:
            saved_id = judgments.save(jfile, question, {**keep, **grades}, judge_filters, qid)
            st.success(f"Saved {len(grades)} grade(s) of question {code(saved_id)} to {code(jpath)}.")
        except (CorpusError, ValueError, OSError) as exc:
            st.error(f"Judgments not saved: {md(exc)}")

with tab_where:
    st.caption("Pick any parent or chunk of the corpus: for each list, its rank and score, or why it is absent.")
    w1, w2 = st.columns([1, 2])
    needle = w1.text_input("Search by id or title", key="where_q")
    options = []  # nothing listed before a search: the page never shows another tenant's ids unasked
    # Under a policy only the user's tenants' parents are found: no other tenant's ids, titles or owner.
    where_tenants = tenant_values if ACCESS.restricted and multi_tenant else None
    for pid, title in (explain.search_targets(state, needle, limit=40, tenants=where_tenants)
                       if needle.strip() else []):
        options.append(pid)
        options.extend(explain.targets(state, pid))
    picked_doc = w2.selectbox("Parent or chunk", [""] + list(dict.fromkeys(options)), key="where_pick",
                              format_func=lambda v: "—" if not v else (v if "#" in v else f"{v} · {titles.get(v, '')}"))
    if picked_doc:
        q_vec = None
        if getattr(wb, "embedder", None) is not None and state.store is not None:
            q_vec = wb.embedder.embed_queries([question])[0]
        reranker_obj = None
        if (trace.get("models") or {}).get("reranker"):
            reranker_obj = wb.reranker(current.reranker)[0]
        layout.where_block(explain.explain_many(state, trace, explain.targets(state, picked_doc),
                                                query_vector=q_vec, reranker=reranker_obj))

main_ms = (time.perf_counter() - STARTED) * 1000
with tab_cmp:  # after the main view, so the extra runs never delay the answer and the panels
    st.markdown("**Configuration B** (A is the sidebar's)")
    for key, value in (("cmp_dense_only", not current.dense_only), ("cmp_reranker", current.reranker),
                       ("cmp_top_k", current.top_k), ("cmp_rrf_k", current.rrf_k),
                       ("cmp_overfetch", current.overfetch), ("cmp_min_similarity", current.min_similarity)):
        ss.setdefault(key, value)
    b1, b2, b3, b4, b5, b6 = st.columns(6)
    b1.toggle("B: dense-only", key="cmp_dense_only")
    if ss.cmp_reranker not in views.app_rerankers(BASE):
        ss.cmp_reranker = current.reranker
    b2.selectbox("B: reranker", list(views.app_rerankers(BASE)), key="cmp_reranker")
    b3.number_input("B: top_k", 1, 50, key="cmp_top_k")
    b4.number_input("B: rrf_k", 1, 1000, key="cmp_rrf_k")
    b5.number_input("B: over-fetch ×", 1, 20, key="cmp_overfetch")
    b6.number_input("B: min cosine", -1.0, 1.0, step=0.01, key="cmp_min_similarity")
    if current.ab:
        try:
            other_settings = request.with_overrides(
                hybrid_enabled=not ss.cmp_dense_only, reranker_model=ss.cmp_reranker, top_k=int(ss.cmp_top_k),
                rrf_k=int(ss.cmp_rrf_k), overfetch=int(ss.cmp_overfetch),
                min_similarity=round(float(ss.cmp_min_similarity), 2))
            with st.spinner("Running A and B, both warm…"):
                # Like with like: A and B measured after the first request above, so both reuse the loaded
                # models and the cached query vector; a reranker only B uses is loaded by one unmeasured B run.
                if ss.cmp_reranker not in (views.RERANKER_OFF, current.reranker):
                    run(other_settings, "cmp-warmup")
                warm_a = run(request, "cmp-a")
                warm_b = run(other_settings, "cmp-b")
            cold_total = (trace.get("timings_ms") or {}).get("total")
            layout.compare_block(warm_a, warm_b, "A (sidebar)", "B", relevant, graded,
                                 "Both measured warm (models loaded, query vector cached): the first request of A "
                                 f"on this page took {layout.fmt_ms(cold_total)}, of which "
                                 f"{layout.fmt_ms((trace.get('timings_ms') or {}).get('embed_query'))} embedding the "
                                 f"question and {layout.fmt_ms(views.unattributed_ms(trace))} outside any stage.")
        except (RetrievalError, ValueError) as exc:
            st.error(f"Configuration B did not run: {md(exc)}")
    else:
        st.info("Turn on 'Compare: also run configuration B' in the sidebar.")

finish(f"Pipeline total {layout.fmt_ms((trace.get('timings_ms') or {}).get('total'))} (from the trace).", main_ms)
