"""The Evaluation page's "Tune to this question set" panel: :func:`retrieval.offline.tune.tune` on the
page's chosen set (a coordinate search on its dev split, the best once on held-out against the default, a
decision), its report, the configuration as a download, and adoption as this corpus' default through
:mod:`retrieval.offline.tuned` (only when the decision recommends it). Off under an access policy, like training.
"""

from __future__ import annotations

import json
import time
from typing import Any, Mapping

import pandas as pd
import streamlit as st

from retrieval.core.errors import RetrievalError
from retrieval.core.paths import LAB_CORPUS
from retrieval.offline import tuned
from retrieval.offline.evaluation.compare import p_reason
from retrieval.offline.evaluation.metrics import brief
from retrieval.settings import Settings

from ..escape import code, md
from ..format import num
from ..i18n import t
from ..reasons import reason
from ..widgets import table
from .page import EvalPage, open_bench

#: The budget input's bounds and default, in seconds (the dev search stops before passing it).
BUDGET_MIN, BUDGET_MAX, BUDGET_DEFAULT = 1, 3600, 120


def decision_sentence(record: Mapping[str, Any], lang: str) -> str:
    """The tuner's decision (:func:`retrieval.offline.tune.decide`) in ``lang``, from the record's figures."""
    best = record["best"]
    row = record.get("comparison")
    metric = record["metric"]
    search = record.get("search") or {}
    if search.get("stopped_by_budget"):  # a search cut short concludes nothing: said so, never "the best"
        return t("tu_kept_budget", lang, evaluated=search["evaluated"], planned=search["planned"],
                 budget=num(record["budget_s"], ".0f", lang), needs=num(search.get("estimate_s") or 0, ".0f", lang))
    if not best["overrides"]:
        return t("tu_kept_dev", lang)
    if not row:
        return t("tu_kept_no_heldout", lang)
    delta, p, lost = row["delta"], row["p_value"], row["lost_relevant"]
    if record["recommended"]:
        return t("tu_recommended", lang, metric=metric, delta=num(delta, "+.4f", lang), p=reason(p_reason(p), lang))
    reasons = []
    if delta <= 0:
        reasons.append(t("tu_no_gain", lang, metric=metric, delta=num(delta, "+.4f", lang)))
    elif p is None or p >= 0.05:
        reasons.append(t("tu_not_significant", lang, metric=metric, delta=num(delta, "+.4f", lang), p=reason(p_reason(p), lang)))
    if lost:
        reasons.append(t("tu_loses", lang, n=len(lost)) + ", ".join(code(x["id"]) for x in lost[:5]))
    return t("tu_kept", lang, why="; ".join(reasons))


def _configs_json(record: Mapping[str, Any]) -> str:
    """``configs.json`` of the CLI: the default and the best dev candidate (``eval --config-file``)."""
    return json.dumps([{"name": "default", "settings": {}},
                       {"name": "tuned", "settings": dict(record["best"]["overrides"])}], indent=2) + "\n"


def panel(page: EvalPage) -> None:
    """The panel, in an expander, on the page's chosen set (off under an access policy, as training is; the
    search starts from the app's settings, and adoption is keyed by them)."""
    ss = st.session_state
    lang, base, restricted = page.lang, page.base, page.access.restricted
    set_label = page.sets.get(ss.get("ev_set"), page.sets["lab"])
    with st.expander(t("tu_title", lang), expanded=False):
        st.caption(t("tu_caption", lang))
        if restricted:  # the tuner reads every question of the set, whatever its tenant
            st.caption(t("tu_off", lang))
            return
        st.caption(t("tu_set", lang, name=md(set_label)))
        c1, c2 = st.columns([1, 2])
        budget = c1.number_input(t("tu_budget", lang), BUDGET_MIN, BUDGET_MAX, BUDGET_DEFAULT, step=10,
                                 key="tu_budget", help=t("tu_budget_help", lang))
        no_templates = c2.checkbox(t("tu_no_templates", lang), value=True, key="tu_no_templates",
                                   help=t("tu_no_templates_help", lang))
        try:
            corpus, questions_path, qrels = page.chosen_paths()
            refused = None
        except RetrievalError as exc:
            corpus, questions_path, qrels, refused = "", "", None, str(exc)
        target = corpus or str(LAB_CORPUS)
        if st.button(t("tu_run", lang), key="tu_run"):
            if refused:
                st.error(reason(refused, lang))
            elif not questions_path:
                st.error(t("ev_need_questions", lang))
            else:
                _run(lang, base, corpus, questions_path, qrels, float(budget), not no_templates)
        result = ss.get("tu_result")
        if result and result["corpus"] == target:
            _report(lang, base, result["record"], target)
        try:
            stored = tuned.tuned_path(base, target).is_file()
        except OSError:
            stored = False
        if stored and not refused:
            st.caption(t("tu_stored", lang))
            if st.button(t("tu_remove", lang), key="tu_remove"):
                try:
                    tuned.remove(base, target)
                    st.success(t("tu_removed", lang))
                except OSError as exc:
                    st.error(t("tu_failed", lang, error=md(exc.strerror or exc.__class__.__name__)))


def _run(lang: str, base: Settings, corpus: str, questions_path: str, qrels: str | None, budget: float,
         templates: bool) -> None:
    from retrieval.ingest.corpus import load_questions
    from retrieval.offline.tune import tune

    ss = st.session_state
    with st.status(t("tu_status", lang), expanded=True) as status:
        bar = status.progress(0.0, text=t("tu_loading", lang))

        def progress(done: int, total: int, name: str) -> None:
            bar.progress(min(1.0, done / max(total, done, 1)),
                         text=t("tu_progress", lang, done=done, total=max(total, done), name=md(name)))

        started = time.perf_counter()
        try:
            questions = load_questions(questions_path, qrels=qrels, max_question_chars=base.max_question_chars)
            record = tune(open_bench(corpus), base, questions, budget_s=budget, templates=templates,
                          progress=progress)
        except (RetrievalError, ValueError, OSError) as exc:
            status.update(label=t("tu_failed", lang, error=reason(str(exc), lang)), state="error")
            ss.pop("tu_result", None)
            return
        bar.progress(1.0, text=t("tu_done", lang, s=num(time.perf_counter() - started, ".0f", lang)))
        status.update(label=t("tu_done", lang, s=num(time.perf_counter() - started, ".0f", lang)), state="complete",
                      expanded=False)
    ss.tu_result = {"corpus": corpus or str(LAB_CORPUS), "record": record}


def abstention_sentence(record: Mapping[str, Any], lang: str) -> str | None:
    """The abstention thresholds' calibration in one sentence of ``lang`` (``None``: the search stopped first)."""
    ab = record.get("abstention")
    if not ab:
        return None
    if "heldout" not in ab:
        return t("tu_abst_none", lang)
    sup = (ab.get("support") or {}).get("chosen")
    held = ab["heldout"]
    return t("tu_abst_recommended" if ab["recommended"] else "tu_abst_kept", lang,
             cos=num(ab["cosine"]["chosen"], ".4f", lang), sup="—" if sup is None else num(sup, ".4f", lang),
             cur=num(held["current"], ".3f", lang), new=num(held["chosen"], ".3f", lang), gained=held["gained"],
             lost=held["lost"], p=reason(p_reason(held["p_value"]), lang))


def _report(lang: str, base: Settings, record: Mapping[str, Any], target: str) -> None:
    from retrieval.offline.tune import adoptable, adoption_record, ranked

    s = record["search"]
    st.markdown(t("tu_searched", lang, evaluated=s["evaluated"], planned=s["planned"],
                  dev=record["questions"]["dev"], s=num(s["seconds"], ".0f", lang), budget=num(record["budget_s"], ".0f", lang))
                + (t("tu_stopped", lang) if s["stopped_by_budget"] else ""))
    st.markdown(t("tu_top", lang, metric=record["metric"]))
    rows = [{"candidate": c["name"], "step": c["step"], **{m: c["dev"].get(m) for m in brief(10)},
             "ms_per_request": c["ms_per_request"]} for c in ranked(s["candidates"], record["metric"])[:8]]
    table(pd.DataFrame(rows), lang)
    st.caption(t("tu_marginal", lang))
    st.markdown(t("tu_heldout", lang))
    held = record.get("heldout")
    if held is None:
        st.caption(t("tu_heldout_none", lang))
    else:
        rows = [{"config": name, **{m: entry["overall"].get(m) for m in brief(10)},
                 "ms_per_request": entry["ms_per_request"]} for name, entry in held["configs"].items()]
        table(pd.DataFrame(rows), lang)
        row = record.get("comparison")
        if row:
            st.caption(t("tu_compared", lang, metric=record["metric"], delta=num(row["delta"], "+.4f", lang),
                         p=reason(p_reason(row["p_value"]), lang), improved=len(row["improved"]), worsened=len(row["worsened"]),
                         lost=len(row["lost_relevant"])))
    sentence = decision_sentence(record, lang)
    (st.success if record["recommended"] else st.info)(sentence)
    abstention = abstention_sentence(record, lang)
    if abstention:
        (st.success if (record.get("abstention") or {}).get("recommended") else st.caption)(abstention)
    d1, d2 = st.columns(2)
    d1.download_button(t("tu_download", lang), _configs_json(record), "configs.json", "application/json",
                       on_click="ignore", key="tu_download", help=t("tu_download_help", lang))
    if d2.button(t("tu_adopt", lang), key="tu_adopt", disabled=not adoptable(record),
                 help=t("tu_adopt_help", lang)):
        try:
            path = tuned.adopt(base, target, adoption_record(record))
            st.success(t("tu_adopted", lang, path=code(str(path))))
        except OSError as exc:
            st.error(t("tu_failed", lang, error=md(exc.strerror or exc.__class__.__name__)))
