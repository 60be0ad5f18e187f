"""The Evaluation page's form: the question set, split, cut-offs, configurations, reranker and the expectation
written before the run; the run itself with its progress per configuration and question, and where its time
went."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import streamlit as st

from retrieval.ingest.corpus import load_questions
from retrieval.core.errors import CorpusError, RetrievalError
from retrieval.core.tenants import visible_questions
from retrieval.offline.evaluation import evaluate_configs, named_configs, resolve_configs
from retrieval.offline.evaluation.runner import progress_position
from retrieval.offline.runs import load_run

from .. import resources
from ..escape import code
from ..format import num
from ..i18n import t
from ..reasons import reason
from .page import EvalPage, Evaluated, open_bench

#: Where a run's time went, in the order the run spends it.
PHASES = ("index and models", "requests", "metrics and significance (ranx)")


def panel(page: EvalPage) -> None:
    """The form, and the run when it is submitted (its report kept in the session)."""
    lang = page.lang
    with st.form("eval_form"):
        c1, c2, c3 = st.columns([2, 1, 1])
        c1.radio(t("ev_question_set", lang), list(page.sets), format_func=page.sets.get, key="ev_set", horizontal=True)
        if page.faquad is None:
            c1.caption(t("ev_no_faquad", lang, hint=code(str(resources.FAQUAD_HINT))))
        c2.selectbox(t("ev_split", lang), ["all", "dev", "heldout"], key="ev_split", help=t("ev_split_help", lang),
                     format_func=lambda v: t(f"ev_split_{v}", lang))
        c3.text_input(t("ev_k", lang), "1,3,5,10", key="ev_k")
        p1, p2, p3 = st.columns(3)
        p1.text_input(t("ev_corpus", lang), key="ev_corpus", placeholder=t("ev_corpus_ph", lang))
        p2.text_input(t("ev_questions", lang), key="ev_questions", placeholder=t("ev_questions_ph", lang))
        p3.text_input(t("ev_qrels", lang), key="ev_qrels", placeholder=t("ev_qrels_ph", lang))
        c4, c5 = st.columns([3, 1])
        c4.multiselect(t("ev_configs", lang), list(named_configs()), default=["dense", "hybrid"], key="ev_configs")
        c5.selectbox(t("ev_reranker", lang), list(page.rerankers), format_func=page.rerankers.get, key="ev_reranker")
        st.file_uploader(t("ev_runs", lang), type=["trec", "run", "txt", "tsv", "jsonl"], accept_multiple_files=True,
                         key="ev_runs", help=t("ev_runs_help", lang))
        st.text_area(t("ev_hypothesis", lang), key="ev_hypothesis", height=68, placeholder=t("ev_hypothesis_ph", lang))
        run_clicked = st.form_submit_button(t("ev_run", lang), type="primary")
    if run_clicked:
        try:
            run(page)
        except (RetrievalError, ValueError) as exc:
            st.error(t("ev_failed", lang, error=reason(str(exc), lang)))


def run(page: EvalPage) -> None:
    """Evaluate the chosen set with the chosen configurations (the report kept in the session)."""
    ss, lang, access = st.session_state, page.lang, page.access
    corpus, questions_path, qrels = page.chosen_paths()
    ks = [int(x) for x in ss.ev_k.split(",") if x.strip()]
    if not questions_path:
        raise ValueError(t("ev_need_questions", lang))
    if len(ss.ev_configs) < 1:
        raise ValueError(t("ev_need_config", lang))
    questions = load_questions(questions_path, qrels=qrels, max_question_chars=page.base.max_question_chars)
    base = page.base.with_overrides(reranker_model=ss.ev_reranker)
    if access.restricted:  # the questions of the user's tenants only (a tenantless corpus keeps them all)
        tenants_here = open_bench(corpus)(base).state.tenants
        questions = visible_questions(questions, base.tenant_field, access.allowed, bool(tenants_here))
        if not questions:
            raise ValueError(t("ev_no_tenant_questions", lang))
    configs = resolve_configs(ss.ev_configs, base)
    imported = [load_run(upload.name, Path(upload.name).stem, _text(upload)) for upload in ss.get("ev_runs") or []]
    status = st.status(t("ev_evaluating", lang), expanded=True)
    bar = status.progress(0.0, text=t("ev_loading", lang))
    phases = dict.fromkeys(PHASES, 0.0)
    clock: dict[str, Any] = {"first": None, "last": None}
    names_order = [c.name for c in configs]
    opener = open_bench(corpus)

    def timed_open(settings: Any) -> Any:
        started = time.perf_counter()
        bench = opener(settings)
        phases["index and models"] += time.perf_counter() - started
        return bench

    def progress(done: int, total: int, name: str) -> None:
        now = time.perf_counter()
        clock["first"] = clock["first"] or now
        clock["last"] = now
        at = progress_position(done, total, name, names_order)  # clamped, question × configuration
        bar.progress(at["done"] / max(1, at["total"]), text=t("ev_progress", lang, name=name, **at))
        if done == total:
            bar.progress(1.0, text=t("ev_all_done", lang))

    started = time.perf_counter()
    # under a policy the report's label checks read the user's tenants' documents only
    report = evaluate_configs(timed_open, base, questions, configs, ks, ss.ev_split, progress,
                              ss.ev_hypothesis.strip() or None, tenants=access.allowed, imported=imported)
    ended = time.perf_counter()
    if clock["last"]:
        phases["requests"] = clock["last"] - started - phases["index and models"]
        phases["metrics and significance (ranx)"] = ended - clock["last"]
    phases = {k: round(v, 1) for k, v in phases.items()}
    phases["click to result"] = round(ended - started, 1)
    status.update(label=t("ev_evaluated", lang) + " · ".join(f"{t('ph_' + k, lang)} {num(v, '.1f', lang)} s"
                                                              for k, v in phases.items()),
                  state="complete", expanded=False)
    ss.ev_phases = phases
    ss.ev_report, ss.ev_corpus_key, ss.ev_base = report, corpus, base
    ss.ev_questions_by_id = {q.id: q for q in questions}
    ss.pop("ev_sweep", None)


def _text(upload: Any) -> str:
    """An uploaded run's text (UTF-8), or a one-line refusal naming the file."""
    try:
        return upload.getvalue().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{upload.name}: not UTF-8 text (byte {exc.start})") from None


def evaluated(page: EvalPage) -> Evaluated | None:
    """The session's last run, or ``None`` before the first."""
    ss = st.session_state
    report = ss.get("ev_report")
    if report is None:
        return None
    return Evaluated(page, report, ss.ev_questions_by_id, ss.ev_base, ss.ev_corpus_key)
