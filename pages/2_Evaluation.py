"""Evaluation and diagnosis: the lab's method as a page (``streamlit run app.py``, then "Evaluation").

Pick a labeled set and two or more configurations, write the expectation, run. The page lays out what
:func:`retrieval.offline.evaluation.evaluate_configs` returns: metrics with paired significance, per-group and
per-question tables, the failure layer of every miss, the evidence check, a top-k sweep, what-if re-fusion
on one question, manual rankings, and the exports of :mod:`retrieval.offline.report`. Nothing is scored here.
"""

from __future__ import annotations

import hashlib
import time

import altair as alt
import pandas as pd
import streamlit as st

from retrieval.core.errors import RetrievalError
from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS, PROJECT_ROOT
from retrieval.core.split import split_of
from retrieval.core.tenants import visible_questions
from retrieval.explain import compare as cmp
from retrieval.explain import links
from retrieval.offline import report_html as evaluation_html
from retrieval.explain.whatif import FIXTURE_LABEL, Edit, manual_fusion, parse_mapping, parse_ranking, what_if
from retrieval.offline import report as rep
from retrieval.offline.evaluation import NAMED_CONFIGS, evaluate_configs, resolve_configs
from retrieval.offline.evaluation import select_split as select
from retrieval.offline.evaluation.runner import progress_position
from retrieval.serving import roots
from retrieval.stages.rerank import RerankerSpec
from ui import lang as ui_lang
from ui import layout, resources
from ui.access import gate
from ui.escape import code, md, md_text
from ui.i18n import t
from ui.layout import table
from ui.reasons import reason
from ui.tune_panel import tune_panel

st.set_page_config(page_title="Evaluation · hybrid retrieval workbench", page_icon="📊", layout="wide")
ss = st.session_state
BASE = resources.base_settings()
# under an access policy: only the questions of the user's tenants are evaluated
ACCESS = gate(BASE, ui_lang.first_language(ss, st.query_params))
FAQUAD = resources.faquad_dir()
resources.warm_metrics()  # ranx compiles on first use: start that now, not after the click
LANG_NAMES = ui_lang.LANG_NAMES
# The interface language: the link's lang=, else the one chosen on the main page (kept there as _kept_lang).
if ss.get("lang") not in links.LANGUAGES:
    ss.lang = ui_lang.first_language(ss, st.query_params)
with st.sidebar:
    lang = ss.lang
    layout.nav_links(t("nav_ask", lang), t("nav_eval", lang))
    st.radio(t("language", lang), list(LANG_NAMES), key="lang", format_func=LANG_NAMES.get, horizontal=True)
lang = ss.lang
ss._kept_lang = lang
if lang != "en":
    st.query_params["lang"] = lang
elif "lang" in st.query_params:
    del st.query_params["lang"]
SETS = {"lab": t("ev_set_lab", lang), "faquad": t("ev_set_faquad", lang), "custom": t("ev_set_custom", lang)}
if FAQUAD is None:  # offer only what exists on this machine
    SETS.pop("faquad")
# The app's rerankers (README, "Data roots"): a list, never a path typed on the page. The bi-encoder first.
_LTR, _OFF, _READER, _BI, *_CROSS = links.app_rerankers(BASE)
RERANKERS = {_BI: t("ev_rr_bi", lang, name=_BI), _OFF: t("none", lang), _LTR: t("ev_rr_ltr", lang, name=_LTR),
             _READER: t("ev_rr_reader", lang, name=_READER),
             **{name: t("ev_rr_cross", lang, name=name) for name in _CROSS}}

st.title(t("ev_title", lang))
st.caption(t("ev_caption", lang))

# -- inputs -------------------------------------------------------------------------------------------------
with st.form("eval_form"):
    c1, c2, c3 = st.columns([2, 1, 1])
    c1.radio(t("ev_question_set", lang), list(SETS), format_func=SETS.get, key="ev_set", horizontal=True)
    if FAQUAD is None:
        c1.caption(t("ev_no_faquad", lang, hint=code(str(resources.FAQUAD_HINT))))
    c2.selectbox(t("ev_split", lang), ["all", "dev", "heldout"], key="ev_split", help=t("ev_split_help", lang),
                 format_func=lambda v: t(f"ev_split_{v}", lang))
    c3.text_input(t("ev_k", lang), "1,3,5,10", key="ev_k")
    p1, p2, p3 = st.columns(3)
    p1.text_input(t("ev_corpus", lang), key="ev_corpus", placeholder=t("ev_corpus_ph", lang))
    p2.text_input(t("ev_questions", lang), key="ev_questions", placeholder=t("ev_questions_ph", lang))
    p3.text_input(t("ev_qrels", lang), key="ev_qrels", placeholder=t("ev_qrels_ph", lang))
    c4, c5 = st.columns([3, 1])
    c4.multiselect(t("ev_configs", lang), list(NAMED_CONFIGS), default=["dense", "hybrid"], key="ev_configs")
    c5.selectbox(t("ev_reranker", lang), list(RERANKERS), format_func=RERANKERS.get, key="ev_reranker")
    st.text_area(t("ev_hypothesis", lang), key="ev_hypothesis", height=68, placeholder=t("ev_hypothesis_ph", lang))
    run_clicked = st.form_submit_button(t("ev_run", lang), type="primary")


def chosen_paths() -> tuple[str, str, str | None]:
    """(corpus, questions, qrels) of the chosen set; '' corpus = the lab corpus (the app's cache key).

    My set's paths are real paths inside the data roots (:func:`retrieval.serving.roots.confine_input`).

    Raises:
        PathRefused: a My set path outside the data roots, not a file or folder, or over the size limit.
    """
    if ss.ev_set == "lab":
        return "", str(LAB_QUESTIONS), None
    if ss.ev_set == "faquad":
        return str((FAQUAD / "corpus.jsonl").resolve()), str(FAQUAD / "questions.jsonl"), None
    corpus = ss.ev_corpus.strip()
    corpus = str(roots.confine_input(corpus, BASE)) if corpus else ""
    corpus = "" if corpus == str(LAB_CORPUS.resolve()) else corpus
    questions = ss.ev_questions.strip()
    questions = str(roots.confine_input(questions, BASE)) if questions else ""
    qrels = ss.ev_qrels.strip()
    return corpus, questions, str(roots.confine_input(qrels, BASE, want="file")) if qrels else None


def open_bench(corpus: str):
    return lambda settings: resources.open_workbench_cached(corpus, resources.index_key(settings))


if run_clicked:
    try:
        corpus, questions_path, qrels = chosen_paths()
        ks = [int(x) for x in ss.ev_k.split(",") if x.strip()]
        if not questions_path:
            raise ValueError(t("ev_need_questions", lang))
        if len(ss.ev_configs) < 1:
            raise ValueError(t("ev_need_config", lang))
        from retrieval.backends.corpus import load_questions

        questions = load_questions(questions_path, qrels=qrels)
        base = BASE.with_overrides(reranker_model=ss.ev_reranker)
        if ACCESS.restricted:  # the questions of the user's tenants only (a tenantless corpus keeps them all)
            tenants_here = open_bench(corpus)(base).state.tenants
            questions = visible_questions(questions, base.tenant_field, ACCESS.allowed, bool(tenants_here))
            if not questions:
                raise ValueError(t("ev_no_tenant_questions", lang))
        configs = resolve_configs(ss.ev_configs, base)
        status = st.status(t("ev_evaluating", lang), expanded=True)
        bar = status.progress(0.0, text=t("ev_loading", lang))
        phases = {"index and models": 0.0, "requests": 0.0, "metrics and significance (ranx)": 0.0}
        clock = {"t": time.perf_counter(), "first": None, "last": None}
        names_order = [c.name for c in configs]
        opener = open_bench(corpus)

        def timed_open(settings):
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
                                  ss.ev_hypothesis.strip() or None, tenants=ACCESS.allowed)
        ended = time.perf_counter()
        if clock["last"]:
            phases["requests"] = clock["last"] - started - phases["index and models"]
            phases["metrics and significance (ranx)"] = ended - clock["last"]
        phases = {k: round(v, 1) for k, v in phases.items()}
        phases["click to result"] = round(ended - started, 1)
        status.update(label=t("ev_evaluated", lang) + " · ".join(f"{t('ph_' + k, lang)} {v:.1f} s"
                                                                  for k, v in phases.items()),
                      state="complete", expanded=False)
        ss.ev_phases = phases
        ss.ev_report, ss.ev_corpus_key, ss.ev_base = report, corpus, base
        ss.ev_questions_by_id = {q.id: q for q in questions}
        ss.pop("ev_sweep", None)
    except (RetrievalError, ValueError) as exc:
        st.error(t("ev_failed", lang, error=reason(str(exc), lang)))

report = ss.get("ev_report")


# -- manual rankings (works without a run) --------------------------------------------------------------------
def edit_controls(lists: dict[str, list[str]], key: str) -> list[Edit]:
    """Drop / inject controls over ``lists``; returns the chosen edits (none when 'no change')."""
    a, b, c, d = st.columns([1, 1, 2, 1])
    action = a.selectbox(t("wi_change", lang), ["none", "drop", "inject"], key=f"{key}_action",
                         format_func=lambda v: t(f"wi_{v}", lang))
    ranker = b.selectbox(t("wi_in_list", lang), list(lists), key=f"{key}_ranker")
    if action == "drop":
        doc = c.selectbox(t("wi_document", lang), lists.get(ranker) or [""], key=f"{key}_drop")
        return [Edit("drop", ranker, doc)] if doc else []
    if action == "inject":
        doc = c.text_input(t("wi_doc_id", lang), key=f"{key}_inject")
        rank = d.number_input(t("wi_at_rank", lang), 1, 1000, 1, key=f"{key}_rank")
        return [Edit("inject", ranker, doc.strip(), int(rank))] if doc.strip() else []
    return []


def what_if_block(lists: dict[str, list[str]], k: int, relevant: set[str], parents: dict[str, str] | None,
                  key: str) -> None:
    edits = edit_controls(lists, key)
    try:
        result = what_if(lists, edits, k=k, parents=parents)
    except ValueError as exc:
        st.error(reason(str(exc), lang))
        return
    frame = pd.DataFrame(result["rows"])
    if relevant:
        frame.insert(1, "relevant", [(parents or {}).get(i, i) in relevant for i in frame["id"]])
    table(frame, lang, dash=False)
    if edits:
        moved = [r for r in result["rows"] if r["rank_before"] != r["rank_after"]]
        st.caption(t("wi_moved", lang, n=len(moved)))


with st.expander(t("mn_title", lang), expanded=report is None):
    st.caption(t("mn_label", lang, label=code(FIXTURE_LABEL)))
    m1, m2 = st.columns(2)
    lex_text = m1.text_input(t("mn_lex", lang), "d1,d3,d2", key="mn_lex")
    den_text = m2.text_input(t("mn_den", lang), "d2,d1,d4", key="mn_den")
    m3, m4, m5, m6 = st.columns(4)
    mk = int(m3.number_input("rrf_k", 1, 1000, 60, key="mn_k"))
    mtop = int(m4.number_input("top_k", 1, 100, 10, key="mn_top"))
    mapping_text = m5.text_input(t("mn_map", lang), "", key="mn_map", placeholder="d1=A,d2=A,d3=B,d4=A")
    tenant = m6.text_input(t("mn_tenant", lang), "", key="mn_tenant", placeholder="A")
    weights_text = st.text_input(t("mn_weights", lang), "", key="mn_w", placeholder="lexical=1.0,semantic=0.5")
    try:
        from retrieval.stages.fusion import parse_weights

        lists = {"lexical": parse_ranking(lex_text), "semantic": parse_ranking(den_text)}
        mapping = parse_mapping(mapping_text)
        fused = manual_fusion(lists, k=mk, top_k=mtop, weights=parse_weights(weights_text) or None,
                              doc_values=mapping, allowed=tenant.strip() or None)
        st.markdown(t("mn_fused", lang, kind=t("mn_weighted", lang) if weights_text.strip() else "RRF", k=mk))
        table(pd.DataFrame(fused["rows"]), lang, dash=False)
        removed = {r: ids for r, ids in fused["removed"].items() if ids}
        if removed:
            st.caption(t("mn_removed", lang)
                       + "; ".join(f"{r}: {', '.join(map(md, ids))}" for r, ids in removed.items()))
        st.markdown(t("mn_what_if", lang))
        what_if_block(fused["filtered"], mk, set(), None, "mn_wi")
    except ValueError as exc:
        st.error(reason(str(exc), lang))

# -- from judgments to a learned ranker ------------------------------------------------------------------------
def training_readiness() -> dict | None:
    """What the chosen set offers the trainer, known before the click (None: no JSONL set to read)."""
    from retrieval.offline.training import training_readiness as readiness

    try:
        _, questions_path, qrels = chosen_paths()
        if qrels or not questions_path.endswith(".jsonl"):
            return None
        return readiness(resources.get_questions(questions_path, resources.file_mtime(questions_path)))
    except (RetrievalError, OSError):
        return None  # the click says why (the same paths are read again there)


# Kept open once a model was trained, so its result stays in view.
with st.expander(t("tr_title", lang), expanded="ev_trained" in ss):
    st.caption(t("tr_caption", lang))
    ready = None if ACCESS.restricted else training_readiness()
    if ready is not None:  # the minimum, stated before the click
        (st.caption if ready["enough"] else st.warning)(t("tr_minimum", lang, **ready))
    if ACCESS.restricted:  # training reads every question of the file and its relevant documents, any tenant's
        st.caption(t("tr_off", lang))
    elif st.button(t("tr_button", lang), key="ev_train", disabled=ready is not None and not ready["enough"]):
        try:
            corpus, questions_path, qrels = chosen_paths()
            refused = None
        except RetrievalError as exc:
            corpus, questions_path, qrels, refused = "", "", None, str(exc)
        if refused:
            st.error(reason(refused, lang))
        elif qrels or not questions_path.endswith(".jsonl"):
            st.error(t("tr_jsonl", lang))
        else:
            from retrieval.offline.training import train_and_compare

            digest = hashlib.sha1(f"{corpus}|{questions_path}".encode()).hexdigest()[:10]
            folder = PROJECT_ROOT / ".retrieval" / "judge-trained" / digest
            with st.status(t("tr_status", lang), expanded=True) as status:
                bar = status.progress(0.0, text=t("tr_fitting", lang))
                try:
                    ss.ev_trained = train_and_compare(
                        corpus or str(LAB_CORPUS), questions_path, folder, BASE, open_bench(corpus),
                        progress=lambda done, total, name: bar.progress(
                            done / total, text=t("tr_comparing", lang, done=done, total=total, name=name)))
                    status.update(label=t("tr_done", lang), state="complete")
                except (RetrievalError, ValueError, OSError) as exc:
                    status.update(label=t("tr_failed", lang, error=reason(str(exc), lang)), state="error")
                    ss.pop("ev_trained", None)
    trained = ss.get("ev_trained")
    if trained:
        st.success(t("tr_new", lang, folder=code(trained["folder"]), s=f"{trained['seconds']:.0f}"))
        rows = [r for r in rep.comparison_rows(trained["report"], None) if r["metric"].startswith("ndcg@")]
        table(pd.DataFrame(rows).dropna(axis=1, how="all"), lang)
        st.caption(t("tr_note", lang))

# -- tune the settings to the chosen set (retrieval.offline.tune; off under an access policy) --------------
tune_panel(lang, BASE, chosen_paths, open_bench, ACCESS.restricted, SETS.get(ss.get("ev_set"), SETS["lab"]))

if report is None:
    st.info(t("ev_choose", lang))
    st.stop()

configs = report["configs"]
names = list(configs)
kmax = report["k"][-1]
headline = [f"ndcg@{kmax}", f"recall@{kmax}", f"mrr@{kmax}", f"hit_rate@{kmax}", f"precision@{kmax}",
            "abstention_accuracy"]

# -- the decision, its evidence and its caveats first --------------------------------------------------------
st.subheader(t("ev_decision", lang))
decision = rep.choose(report)
st.success(t("ev_choice", lang, choice=md(decision["choice"]), why=reason(decision["why"], lang)))
evidence = [r for r in rep.comparison_rows(report, None) if r["metric"] == decision["metric"]]
if evidence:
    table(pd.DataFrame(evidence).dropna(axis=1, how="all"), lang)
caveats = []
if str(report.get("corpus")) == str(LAB_CORPUS.resolve()):
    caveats.append(t("ev_fictitious", lang))
default_spec = RerankerSpec.parse(BASE.reranker_model)
default_mode = ("dense" if not BASE.hybrid_enabled else "hybrid+ltr" if default_spec.kind == "ltr"
                else "hybrid" if not default_spec.configured else "hybrid+rerank")
if decision["choice"] != default_mode and default_mode in configs:
    caveats.append(t("ev_default_caveat", lang, default=code(default_mode), choice=code(decision["choice"]),
                     metric=decision["metric"], n=report["questions"]))
by_candidate: dict[str, list] = {}
for c in report["comparisons"]:
    if c["wins_on_mean_but_lost_relevant"]:
        by_candidate.setdefault(c["candidate"], []).append(c)
for candidate, found in by_candidate.items():  # one warning per finding, not one per metric
    lost = {x["id"]: x["lost"] for c in found for x in c["lost_relevant"]}
    caveats.append(t("ev_lost_caveat", lang, candidate=code(candidate), metrics=", ".join(c["metric"] for c in found),
                     n=len(lost))
                   + ", ".join(f"{md(q)} ({', '.join(map(md, v))})" for q, v in list(lost.items())[:8]))
for caveat in caveats:
    st.warning(caveat)
phases = ss.get("ev_phases")
if phases:
    st.caption(t("ev_time_went", lang) + " · ".join(f"{t('ph_' + k, lang)} **{v:.1f} s**" for k, v in phases.items()))
with st.expander(t("ev_record", lang)):
    # Its source, not rendered: it quotes question ids, document ids, groups and the hypothesis as written.
    st.code(rep.decision_record(report), language="markdown", wrap_lines=True)
st.caption(t("ev_run_line", lang, corpus=code(str(report["corpus"])), n=report["questions"],
             split=code(report["split"]), k=", ".join(map(str, report["k"])), kmax=kmax))

# -- metrics and comparison ------------------------------------------------------------------------------------
st.subheader(t("ev_metrics", lang))
summary = []
for name, cfg in configs.items():
    timing = cfg["timings_ms"]
    row = {"config": name, "tier": cfg["tier"], **{m: cfg["overall"].get(m) for m in headline},
           f"judged@{kmax}": cfg["overall"].get(f"judged@{kmax}"),
           "wall time (s)": round(timing["wall_total"] / 1000, 2),
           "alone, est. (s)": (round(timing["standalone_estimate"] / 1000, 2)
                               if timing.get("standalone_estimate") else None),
           "p50 / request (ms)": timing.get("total_p50"), "p95 / request (ms)": timing.get("total_p95"),
           "LLM calls": (cfg.get("cost") or {}).get("llm_calls"),
           "generator calls": (cfg.get("cost") or {}).get("retrieval_calls")}
    summary.append(row)
table(pd.DataFrame(summary).dropna(axis=1, how="all"), lang)
st.caption(t("ev_metrics_caption", lang, k=kmax))

st.subheader(t("ev_comparison", lang))
views_split = ["evaluated set"] + (["dev", "heldout"] if report.get("comparisons_by_split") else [])
which = st.radio(t("ev_figures_of", lang), views_split, horizontal=True, key="ev_cmp_split",
                 format_func=lambda v: t("ev_evaluated_set", lang) if v == "evaluated set" else t(f"ev_split_{v}", lang))
rows = rep.comparison_rows(report, None if which == "evaluated set" else which)
frame = pd.DataFrame([r for r in rows if r["metric"] in headline])
table(frame.dropna(axis=1, how="all") if not frame.empty else frame, lang)

h1, h2 = st.columns(2)
with h1:
    st.markdown(t("ev_expected", lang))
    st.markdown(md_text(report.get("hypothesis")) if report.get("hypothesis") else t("ev_no_expectation", lang))
with h2:
    st.markdown(t("ev_observed", lang))
    if not report.get("observed"):
        st.markdown(t("ev_single", lang))
    for line in report.get("observed") or []:
        st.markdown(reason(line, lang))

st.subheader(t("ev_two", lang))
if len(names) >= 2:
    x1, x2, x3 = st.columns(3)
    cmp_a = x1.selectbox("A", names, index=0, key="ev_two_a")
    cmp_b = x2.selectbox("B", names, index=len(names) - 1, key="ev_two_b")
    cmp_metric = x3.selectbox(t("ev_metric", lang), [m for m in headline if m != "abstention_accuracy"],
                              key="ev_two_metric")
    two = cmp.compare_report_configs(report, cmp_a, cmp_b, cmp_metric)
    st.markdown(t("ev_two_line", lang, metric=cmp_metric, a=md(cmp_a), b=md(cmp_b), ma=f"{(two['mean_a'] or 0):.4f}",
                  mb=f"{(two['mean_b'] or 0):.4f}", d=f"{(two['mean_delta'] or 0):+.4f}", improved=two["improved"],
                  worsened=two["worsened"], tied=two["tied"]))
    table(pd.DataFrame(two["rows"]), lang)
else:
    st.caption(t("ev_two_need", lang))

st.subheader(t("ev_by_group", lang))
metric = st.selectbox(t("ev_metric", lang), headline, key="ev_group_metric")
groups = sorted({g for c in configs.values() for g in c["groups"]})
group_rows = [{"group": g, **{n: configs[n]["groups"].get(g, {}).get(metric) for n in names}} for g in groups]
table(pd.DataFrame(group_rows), lang)
gains = []
for c in report["comparisons"]:
    if c["metric"] == metric:
        for g, v in c["by_group"].items():
            gains.append({"candidate": c["candidate"], "group": g, "delta": v["delta"], "improved": len(v["improved"]),
                          "worsened": len(v["worsened"]), "worsened ids": ", ".join(v["worsened"])})
if gains:
    table(pd.DataFrame(gains), lang)

# -- diagnosis ---------------------------------------------------------------------------------------------
st.subheader(t("ev_layers", lang))
st.caption(t("ev_layers_caption", lang))
layer_rows = []
for name, cfg in configs.items():
    d = cfg["diagnosis"]
    layer_rows.append({"config": name, "group": t("ev_all_groups", lang), **d["overall"]})
    for g, counts in d["groups"].items():
        layer_rows.append({"config": name, "group": g, **counts})
table(pd.DataFrame(layer_rows), lang)
stage_rows = [{"config": n, "where": k, "questions": v} for n, c in configs.items()
              for k, v in c["diagnosis"]["stages"].items()]
if stage_rows:
    st.altair_chart(alt.Chart(pd.DataFrame(stage_rows)).mark_bar().encode(
        x=alt.X("questions:Q", title=t("ev_axis_questions", lang)), y=alt.Y("config:N", title=t("ev_axis_config", lang)),
        color=alt.Color("where:N", title=t("ev_axis_layer", lang)),
        tooltip=["config", "where", "questions"]).properties(height=40 * len(names)), width="stretch")

ev = report.get("evidence_check") or {}
st.subheader(t("ev_evidence", lang))
st.caption(t("ev_evidence_caption", lang, checked=ev.get("checked", 0), questions=ev.get("questions", 0),
             whole=ev.get("whole", 0), cut=len(ev.get("cut", [])), elsewhere=len(ev.get("not_in_parent", []))))
if ev.get("cut") or ev.get("not_in_parent"):
    table(pd.DataFrame(ev.get("cut", []) + ev.get("not_in_parent", [])), lang)

# -- per question --------------------------------------------------------------------------------------------
st.subheader(t("ev_per_question", lang))
q1, q2 = st.columns([1, 3])
table_config = q1.selectbox(t("ev_configuration", lang), names, index=len(names) - 1, key="ev_q_config")
only_failures = q2.toggle(t("ev_failures_only", lang), key="ev_q_fail")
qrows = rep.question_rows(report, table_config)
if only_failures:
    qrows = [r for r in qrows if r["result"] != "ok"]
table(pd.DataFrame(qrows), lang)
st.caption(t("ev_unjudged_caption", lang, k=kmax))
for c in report["comparisons"]:
    if c["metric"] == f"ndcg@{kmax}" and c["lost_relevant"]:
        st.caption(t("ev_lost_line", lang, candidate=code(c["candidate"]), baseline=code(c["baseline"]), k=kmax)
                   + "; ".join(f"{md(x['id'])} → {', '.join(map(md, x['lost']))}" for x in c["lost_relevant"]))

# -- top-k sweep -----------------------------------------------------------------------------------------------
st.subheader(t("ev_sweep", lang))
st.caption(t("ev_sweep_caption", lang))
s1, s2 = st.columns([1, 3])
sweep_config = s1.selectbox(t("ev_configuration", lang), names, key="ev_sweep_config")
if s2.button(t("ev_sweep_run", lang)):
    from retrieval.offline.evaluation.sweep import run_sweep

    overrides = dict(configs[sweep_config]["settings"])
    overrides.pop("top_k", None)
    settings = ss.ev_base.with_overrides(**overrides)
    bench = open_bench(ss.ev_corpus_key)(settings)
    chosen = select(ss.ev_questions_by_id.values(), report["split"])
    with st.spinner(t("ev_sweeping", lang)):
        ss.ev_sweep = {"config": sweep_config, **run_sweep(bench, chosen, settings, 20)}
sweep = ss.get("ev_sweep")
if sweep:
    points = pd.DataFrame(sweep["points"]).melt(id_vars=["k"], value_vars=["recall", "redundancy"],
                                                var_name="measure", value_name="value")
    st.altair_chart(alt.Chart(points).mark_line(point=True).encode(
        x=alt.X("k:Q", title=t("ev_axis_topk", lang)),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=t("h_value", lang)),
        color="measure:N", tooltip=["k", "measure", "value"]), width="stretch")
    st.caption(t("ev_sweep_line", lang, config=md(sweep["config"]), n=sweep["questions"],
                 dup=md(str(sweep["near_duplicate"]))))

# -- what-if on one question -------------------------------------------------------------------------------------
st.subheader(t("ev_what_if", lang))
st.caption(t("ev_what_if_caption", lang))
w1, w2 = st.columns([1, 3])
wi_config = w1.selectbox(t("ev_configuration", lang), names, key="ev_wi_config")
qids = [r["id"] for r in configs[wi_config]["questions"] if r["relevant"]]
wi_qid = w2.selectbox(t("question", lang), qids, key="ev_wi_q",
                      format_func=lambda i: f"{i} · {ss.ev_questions_by_id[i].question[:80]}")
if wi_qid:
    q = ss.ev_questions_by_id[wi_qid]
    overrides = dict(configs[wi_config]["settings"])
    settings = ss.ev_base.with_overrides(**overrides)
    try:
        trace = open_bench(ss.ev_corpus_key)(settings).ask(q.question, q.filters, settings=settings)
        lists = {name: lst.chunk_ids() for name, lst in (("bm25", trace.lexical), ("dense", trace.dense)) if lst.items}
        parents = {i.chunk_id: i.parent_id for lst in (trace.lexical, trace.dense) for i in lst.items}
        st.caption(t("ev_wi_line", lang, relevant=", ".join(map(code, q.relevant)), split=split_of(q.id),
                     k=settings.rrf_k))
        if lists:
            what_if_block(lists, settings.rrf_k, set(q.relevant), parents, "ev_wi")
        else:
            st.info(t("ev_wi_none", lang))
    except RetrievalError as exc:
        st.error(reason(str(exc), lang))

# -- exports ---------------------------------------------------------------------------------------------------
st.subheader(t("ev_exports", lang))
e = st.columns(4)
e[0].download_button(t("ex_comparison", lang), rep.comparison_csv(report), "comparison.csv", "text/csv",
                     on_click="ignore")
e[1].download_button(t("ex_report", lang), rep.comparison_json(report), "report.json", "application/json",
                     on_click="ignore")
e[2].download_button(t("ex_record", lang), rep.decision_record(report), "decision.md", "text/markdown",
                     on_click="ignore")
e[3].download_button(t("ex_per_question", lang, config=table_config), rep.question_csv(report, table_config),
                     f"questions-{table_config}.csv", "text/csv", on_click="ignore")
st.download_button(t("ex_html", lang), evaluation_html.evaluation_report(report, lang), "evaluation-report.html",
                   "text/html", on_click="ignore", help=t("ex_html_help", lang), icon=":material/download:")
runs = st.columns(max(1, len(names)))
for col, name in zip(runs, names):
    col.download_button(t("ex_trec", lang, name=name), rep.trec_run(report, name), f"{name}.run", "text/plain",
                        on_click="ignore")
