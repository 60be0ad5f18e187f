"""Evaluation and diagnosis: the lab's method as a page (``streamlit run app.py``, then "Evaluation").

Pick a labeled set and two or more configurations, write the expectation, run. The page lays out what
:func:`retrieval.evaluation.evaluate_configs` returns: metrics with paired significance, per-group and
per-question tables, the failure layer of every miss, the evidence check, a top-k sweep, what-if re-fusion
on one question, manual rankings, and the exports of :mod:`retrieval.report`. Nothing is scored here.
"""

from __future__ import annotations

import hashlib
import time

import altair as alt
import pandas as pd
import streamlit as st

from retrieval import compare as cmp
from retrieval import report as rep
from retrieval import access, roots, views
from retrieval.errors import RetrievalError
from retrieval.rerank import RerankerSpec
from retrieval.evaluation import NAMED_CONFIGS, evaluate_configs, resolve_configs, split_of
from retrieval.evaluation import select_split as select
from retrieval.settings import LAB_CORPUS, LAB_QUESTIONS, PROJECT_ROOT
from retrieval.whatif import FIXTURE_LABEL, Edit, manual_fusion, parse_mapping, parse_ranking, what_if
from ui import layout, resources
from ui.access import gate
from ui.escape import code, md, md_text


st.set_page_config(page_title="Evaluation · hybrid retrieval workbench", page_icon="📊", layout="wide")
ss = st.session_state
BASE = resources.base_settings()
ACCESS = gate(BASE)  # under an access policy: only the questions of the user's tenants are evaluated
FAQUAD = resources.faquad_dir()
resources.warm_metrics()  # ranx compiles on first use: start that now, not after the click
SETS = {"lab": "Lab set (fictitious fixture, 44 questions)", "faquad": "FaQuAD (real, 249 docs / 900 questions)",
        "custom": "My set (corpus + questions, or TREC topics + qrels)"}
if FAQUAD is None:  # offer only what exists on this machine
    SETS.pop("faquad")
with st.sidebar:
    layout.nav_links("Ask and inspect", "Evaluation")
# The app's rerankers (README, "Data roots"): a list, never a path typed on the page. The bi-encoder first.
_LTR, _OFF, _BI, *_CROSS = views.app_rerankers(BASE)
RERANKERS = {_BI: f"{_BI} (offline rescoring, not a cross-encoder)", _OFF: "none",
             _LTR: f"{_LTR} (the learned ranker, as hybrid+ltr)", **{name: f"{name} (cross-encoder)" for name in _CROSS}}

st.title("Evaluation and diagnosis")
st.caption("Label first, then compare: metrics from ranx, paired Fisher randomization tests against the first "
           "configuration (the baseline), and the layer — coverage, ordering or generation — of every failure.")

# -- inputs -------------------------------------------------------------------------------------------------
with st.form("eval_form"):
    c1, c2, c3 = st.columns([2, 1, 1])
    c1.radio("Question set", list(SETS), format_func=SETS.get, key="ev_set", horizontal=True)
    if FAQUAD is None:
        c1.caption("FaQuAD is not on this machine. To use it, put its `corpus.jsonl` and `questions.jsonl` in "
                   f"`{resources.FAQUAD_HINT}`, or choose **My set** with any SQuAD JSON, BEIR folder or "
                   "corpus + questions JSONL.")
    c2.selectbox("Split", ["all", "dev", "heldout"], key="ev_split",
                 help="A fixed hash of the question id: 70 % dev, 30 % held-out. 'all' reports both.")
    c3.text_input("k (cut-offs)", "1,3,5,10", key="ev_k")
    p1, p2, p3 = st.columns(3)
    p1.text_input("Corpus (My set)", key="ev_corpus", placeholder="path to JSONL, folder, BEIR folder or SQuAD JSON")
    p2.text_input("Questions (My set)", key="ev_questions", placeholder="JSONL, BEIR folder, SQuAD JSON or TREC topics")
    p3.text_input("TREC qrels (optional)", key="ev_qrels", placeholder="qid 0 docno relevance")
    c4, c5 = st.columns([3, 1])
    c4.multiselect("Configurations (the first is the baseline)", list(NAMED_CONFIGS), default=["dense", "hybrid"],
                   key="ev_configs")
    c5.selectbox("Reranker of hybrid+rerank", list(RERANKERS), format_func=RERANKERS.get, key="ev_reranker")
    st.text_area("Expectation, written before the run (hypothesis)", key="ev_hypothesis", height=68,
                 placeholder="e.g. hybrid recovers exact codes that dense misses, without losing paraphrases")
    run_clicked = st.form_submit_button("Run the evaluation", type="primary")


def chosen_paths() -> tuple[str, str, str | None]:
    """(corpus, questions, qrels) of the chosen set; '' corpus = the lab corpus (the app's cache key).

    My set's paths are real paths inside the data roots (:func:`retrieval.roots.confine_input`).

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
            raise ValueError("name a questions file for 'My set'")
        if len(ss.ev_configs) < 1:
            raise ValueError("choose at least one configuration")
        from retrieval.corpus import load_questions

        questions = load_questions(questions_path, qrels=qrels)
        base = BASE.with_overrides(reranker_model=ss.ev_reranker)
        if ACCESS.restricted:  # the questions of the user's tenants only (a tenantless corpus keeps them all)
            tenants_here = open_bench(corpus)(base).state.tenants
            questions = access.visible_questions(questions, base.tenant_field, ACCESS.allowed, bool(tenants_here))
            if not questions:
                raise ValueError("none of this set's questions is in a tenant you may open")
        configs = resolve_configs(ss.ev_configs, base)
        status = st.status("Evaluating…", expanded=True)
        bar = status.progress(0.0, text="Loading the index and models (indexing only the first time)…")
        per_config = len(select(questions, ss.ev_split))
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
            number = names_order.index(name) + 1 if name in names_order else 0
            question_n = done - (number - 1) * per_config if number else done
            bar.progress(done / total, text=f"configuration {number}/{len(names_order)} `{name}` · question "
                                            f"{min(question_n, per_config)}/{per_config} · {done}/{total} requests")
            if done == total:
                bar.progress(1.0, text="All requests done: computing metrics and significance tests (ranx)…")

        started = time.perf_counter()
        report = evaluate_configs(timed_open, base, questions, configs, ks, ss.ev_split, progress,
                                  ss.ev_hypothesis.strip() or None)
        ended = time.perf_counter()
        if clock["last"]:
            phases["requests"] = clock["last"] - started - phases["index and models"]
            phases["metrics and significance (ranx)"] = ended - clock["last"]
        phases = {k: round(v, 1) for k, v in phases.items()}
        phases["click to result"] = round(ended - started, 1)
        status.update(label="Evaluated: " + " · ".join(f"{k} {v:.1f} s" for k, v in phases.items()),
                      state="complete", expanded=False)
        ss.ev_phases = phases
        ss.ev_report, ss.ev_corpus_key, ss.ev_base = report, corpus, base
        ss.ev_questions_by_id = {q.id: q for q in questions}
        ss.pop("ev_sweep", None)
    except (RetrievalError, ValueError) as exc:
        st.error(f"The evaluation did not run: {md(exc)}")

report = ss.get("ev_report")


# -- manual rankings (works without a run) --------------------------------------------------------------------
def edit_controls(lists: dict[str, list[str]], key: str) -> list[Edit]:
    """Drop / inject controls over ``lists``; returns the chosen edits (none when 'no change')."""
    a, b, c, d = st.columns([1, 1, 2, 1])
    action = a.selectbox("Change", ["none", "drop", "inject"], key=f"{key}_action",
                         format_func={"none": "no change", "drop": "drop a document", "inject": "inject a document"}.get)
    ranker = b.selectbox("In the list of", list(lists), key=f"{key}_ranker")
    if action == "drop":
        doc = c.selectbox("Document", lists.get(ranker) or [""], key=f"{key}_drop")
        return [Edit("drop", ranker, doc)] if doc else []
    if action == "inject":
        doc = c.text_input("Document id (e.g. one missing from both lists)", key=f"{key}_inject")
        rank = d.number_input("at rank", 1, 1000, 1, key=f"{key}_rank")
        return [Edit("inject", ranker, doc.strip(), int(rank))] if doc.strip() else []
    return []


def what_if_block(lists: dict[str, list[str]], k: int, relevant: set[str], parents: dict[str, str] | None,
                  key: str) -> None:
    edits = edit_controls(lists, key)
    try:
        result = what_if(lists, edits, k=k, parents=parents)
    except ValueError as exc:
        st.error(md(exc))
        return
    frame = pd.DataFrame(result["rows"])
    if relevant:
        frame.insert(1, "relevant", [(parents or {}).get(i, i) in relevant for i in frame["id"]])
    st.dataframe(frame, hide_index=True, width="stretch")
    if edits:
        moved = [r for r in result["rows"] if r["rank_before"] != r["rank_after"]]
        st.caption(f"{len(moved)} items changed rank. RRF never invents a document: one absent from every list "
                   "only enters when injected — a coverage problem, not an ordering one.")


with st.expander("Manual rankings (fixture mode): type ranked lists and fuse them", expanded=report is None):
    st.caption(f"Output labelled as {FIXTURE_LABEL}.")
    m1, m2 = st.columns(2)
    lex_text = m1.text_input("Lexical ranking", "d1,d3,d2", key="mn_lex")
    den_text = m2.text_input("Semantic ranking", "d2,d1,d4", key="mn_den")
    m3, m4, m5, m6 = st.columns(4)
    mk = int(m3.number_input("rrf_k", 1, 1000, 60, key="mn_k"))
    mtop = int(m4.number_input("top_k", 1, 100, 10, key="mn_top"))
    mapping_text = m5.text_input("doc → tenant (optional)", "", key="mn_map", placeholder="d1=A,d2=A,d3=B,d4=A")
    tenant = m6.text_input("keep tenant", "", key="mn_tenant", placeholder="A")
    weights_text = st.text_input("Per-ranker weights (optional: weighted RRF)", "", key="mn_w",
                                 placeholder="lexical=1.0,semantic=0.5")
    try:
        from retrieval.fusion import parse_weights

        lists = {"lexical": parse_ranking(lex_text), "semantic": parse_ranking(den_text)}
        mapping = parse_mapping(mapping_text)
        fused = manual_fusion(lists, k=mk, top_k=mtop, weights=parse_weights(weights_text) or None,
                              doc_values=mapping, allowed=tenant.strip() or None)
        st.markdown(f"**Fused ({'weighted RRF' if weights_text.strip() else 'RRF'}, k = {mk}, ranks from 1)** — "
                    "score = Σ w / (k + rank)")
        st.dataframe(pd.DataFrame(fused["rows"]), hide_index=True, width="stretch")
        removed = {r: ids for r, ids in fused["removed"].items() if ids}
        if removed:
            st.caption("Removed by the filter inside each list, before the fusion: "
                       + "; ".join(f"{r}: {', '.join(map(md, ids))}" for r, ids in removed.items()))
        st.markdown("**What if** (on the filtered lists)")
        what_if_block(fused["filtered"], mk, set(), None, "mn_wi")
    except ValueError as exc:
        st.error(md(exc))

# -- from judgments to a learned ranker ------------------------------------------------------------------------
with st.expander("Train a learned ranker on this question set (your judgments)", expanded=False):
    st.caption("Trains the learned judge (LambdaMART reranker, support gate, evidence sentences) on the chosen set, "
               "split by parent document, then compares the current default with the new ranker on the set's "
               "held-out part: paired significance test and the relevant documents lost. The new folder is not "
               "adopted by itself; use it with RETRIEVAL_JUDGE_PATH or reranker ltr:FOLDER once it measures better.")
    if ACCESS.restricted:  # training reads every question of the file and its relevant documents, any tenant's
        st.caption("Training is off under an access policy (RETRIEVAL_ACCESS_POLICY): it reads every question of "
                   "the set, whatever its tenant. Train with the command line (`python -m retrieval train`).")
    elif st.button("Train on these judgments", key="ev_train"):
        try:
            corpus, questions_path, qrels = chosen_paths()
            refused = None
        except RetrievalError as exc:
            corpus, questions_path, qrels, refused = "", "", None, str(exc)
        if refused:
            st.error(md(refused))
        elif qrels or not questions_path.endswith(".jsonl"):
            st.error("Training reads a question set in JSONL (relevant / graded): the lab set, FaQuAD or My set.")
        else:
            from retrieval.judge.train import train_and_compare

            digest = hashlib.sha1(f"{corpus}|{questions_path}".encode()).hexdigest()[:10]
            folder = PROJECT_ROOT / ".retrieval" / "judge-trained" / digest
            with st.status("Training on the set, then comparing on its held-out part…", expanded=True) as status:
                bar = status.progress(0.0, text="Tracing and fitting (minutes on 2 cores)…")
                try:
                    ss.ev_trained = train_and_compare(
                        corpus or str(LAB_CORPUS), questions_path, folder, BASE, open_bench(corpus),
                        progress=lambda done, total, name: bar.progress(
                            done / total, text=f"Comparing on the held-out part: {done}/{total} ({name})"))
                    status.update(label="Trained and compared", state="complete")
                except (RetrievalError, ValueError, OSError) as exc:
                    status.update(label=f"Training failed: {md(exc)}", state="error")
                    ss.pop("ev_trained", None)
    trained = ss.get("ev_trained")
    if trained:
        st.success(f"New model folder {code(trained['folder'])} (trained in {trained['seconds']:.0f} s).")
        rows = [r for r in rep.comparison_rows(trained["report"], None) if r["metric"].startswith("ndcg@")]
        st.dataframe(pd.DataFrame(rows).dropna(axis=1, how="all"), hide_index=True, width="stretch")
        st.caption("Baseline `default` = the app's current settings; candidate `trained` = the same settings with "
                   "the new folder's ranker, on the held-out part only (never trained on).")

if report is None:
    st.info("Choose a set and configurations, write the expectation, and press **Run the evaluation**.")
    st.stop()

configs = report["configs"]
names = list(configs)
kmax = report["k"][-1]
headline = [f"ndcg@{kmax}", f"recall@{kmax}", f"mrr@{kmax}", f"hit_rate@{kmax}", f"precision@{kmax}",
            "abstention_accuracy"]

# -- the decision, its evidence and its caveats first --------------------------------------------------------
st.subheader("Decision")
decision = rep.choose(report)
st.success(f"Provisional choice: **{decision['choice']}** — {decision['why']}.")
evidence = [r for r in rep.comparison_rows(report, None) if r["metric"] == decision["metric"]]
if evidence:
    st.dataframe(pd.DataFrame(evidence).dropna(axis=1, how="all"), hide_index=True, width="stretch")
caveats = []
if str(report.get("corpus")) == str(LAB_CORPUS.resolve()):
    caveats.append("The lab set is fictitious: these figures demonstrate the method, not a benchmark of real data.")
default_spec = RerankerSpec.parse(BASE.reranker_model)
default_mode = ("dense" if not BASE.hybrid_enabled else "hybrid+ltr" if default_spec.kind == "ltr"
                else "hybrid" if not default_spec.configured else "hybrid+rerank")
if decision["choice"] != default_mode and default_mode in configs:
    caveats.append(f"The app's default is `{default_mode}`, and this run's provisional choice is "
                   f"`{decision['choice']}`: the choice moves away from the baseline only on a significant gain "
                   f"(p < 0.05 on {decision['metric']}, nothing lost on held-out). With {report['questions']} "
                   "questions a small difference is not evidence; change the default only on a real set that "
                   "shows it.")
by_candidate: dict[str, list] = {}
for c in report["comparisons"]:
    if c["wins_on_mean_but_lost_relevant"]:
        by_candidate.setdefault(c["candidate"], []).append(c)
for candidate, found in by_candidate.items():  # one warning per finding, not one per metric
    lost = {x["id"]: x["lost"] for c in found for x in c["lost_relevant"]}
    caveats.append(f"`{candidate}` wins on the mean of {', '.join(c['metric'] for c in found)} but loses a relevant "
                   f"document the baseline had in {len(lost)} question(s): "
                   + ", ".join(f"{md(q)} ({', '.join(map(md, v))})" for q, v in list(lost.items())[:8]))
for caveat in caveats:
    st.warning(caveat)
phases = ss.get("ev_phases")
if phases:
    st.caption("Where the time went: " + " · ".join(f"{k} **{v:.1f} s**" for k, v in phases.items()))
with st.expander("Decision record (Markdown source)"):
    # Its source, not rendered: it quotes question ids, document ids, groups and the hypothesis as written.
    st.code(rep.decision_record(report), language="markdown", wrap_lines=True)
st.caption(f"Corpus {code(report['corpus'])} · {report['questions']} questions · split `{report['split']}` · "
           f"k = {', '.join(map(str, report['k']))} · every question ran once per configuration with top_k = {kmax}.")

# -- metrics and comparison ------------------------------------------------------------------------------------
st.subheader("Metrics by configuration")
summary = []
for name, cfg in configs.items():
    t = cfg["timings_ms"]
    row = {"config": name, "tier": cfg["tier"], **{m: cfg["overall"].get(m) for m in headline},
           "wall time (s)": round(t["wall_total"] / 1000, 2),
           "alone, est. (s)": round(t["standalone_estimate"] / 1000, 2) if t.get("standalone_estimate") else None,
           "p50 / request (ms)": t.get("total_p50"), "p95 / request (ms)": t.get("total_p95"),
           "LLM calls": (cfg.get("cost") or {}).get("llm_calls"),
           "generator calls": (cfg.get("cost") or {}).get("retrieval_calls")}
    summary.append(row)
st.dataframe(pd.DataFrame(summary).dropna(axis=1, how="all"), hide_index=True, width="stretch")
st.caption("Configurations after the first reuse the BM25 and dense lists already computed for the same "
           "question, filters and window; 'alone, est.' adds back the generator time they saved.")

st.subheader("Comparison against the baseline")
views_split = ["evaluated set"] + (["dev", "heldout"] if report.get("comparisons_by_split") else [])
which = st.radio("Figures of", views_split, horizontal=True, key="ev_cmp_split")
rows = rep.comparison_rows(report, None if which == "evaluated set" else which)
frame = pd.DataFrame([r for r in rows if r["metric"] in headline])
st.dataframe(frame.dropna(axis=1, how="all") if not frame.empty else frame, hide_index=True, width="stretch")

h1, h2 = st.columns(2)
with h1:
    st.markdown("**Expected (written before the run)**")
    st.markdown(md_text(report.get("hypothesis") or "No expectation was written for this run."))
with h2:
    st.markdown("**Observed**")
    for line in report.get("observed") or ["A single configuration: nothing to compare."]:
        st.markdown(md(line))

st.subheader("Two configurations, question by question")
if len(names) >= 2:
    x1, x2, x3 = st.columns(3)
    cmp_a = x1.selectbox("A", names, index=0, key="ev_two_a")
    cmp_b = x2.selectbox("B", names, index=len(names) - 1, key="ev_two_b")
    cmp_metric = x3.selectbox("Metric", [m for m in headline if m != "abstention_accuracy"], key="ev_two_metric")
    two = cmp.compare_report_configs(report, cmp_a, cmp_b, cmp_metric)
    st.markdown(f"Mean {cmp_metric}: {cmp_a} **{(two['mean_a'] or 0):.4f}** → {cmp_b} **{(two['mean_b'] or 0):.4f}** "
                f"(Δ {(two['mean_delta'] or 0):+.4f}) · improved {two['improved']} · worsened {two['worsened']} · "
                f"tied {two['tied']}")
    st.dataframe(pd.DataFrame(two["rows"]), hide_index=True, width="stretch")
else:
    st.caption("Run two or more configurations to compare them question by question.")

st.subheader("By group")
metric = st.selectbox("Metric", headline, key="ev_group_metric")
groups = sorted({g for c in configs.values() for g in c["groups"]})
group_rows = [{"group": g, **{n: configs[n]["groups"].get(g, {}).get(metric) for n in names}} for g in groups]
st.dataframe(pd.DataFrame(group_rows), hide_index=True, width="stretch")
gains = []
for c in report["comparisons"]:
    if c["metric"] == metric:
        for g, v in c["by_group"].items():
            gains.append({"candidate": c["candidate"], "group": g, "delta": v["delta"], "improved": len(v["improved"]),
                          "worsened": len(v["worsened"]), "worsened ids": ", ".join(v["worsened"])})
if gains:
    st.dataframe(pd.DataFrame(gains), hide_index=True, width="stretch")

# -- diagnosis ---------------------------------------------------------------------------------------------
st.subheader("Failure layers")
st.caption("coverage: no relevant chunk among any generator's candidates (query, representation or index) · "
           "ordering: a candidate that fell out at fusion, reranker or gate · generation: in the context but not "
           "cited, or an abstention; for an unanswerable question, an answer.")
layer_rows = []
for name, cfg in configs.items():
    d = cfg["diagnosis"]
    layer_rows.append({"config": name, "group": "(all)", **d["overall"]})
    for g, counts in d["groups"].items():
        layer_rows.append({"config": name, "group": g, **counts})
st.dataframe(pd.DataFrame(layer_rows), hide_index=True, width="stretch")
stage_rows = [{"config": n, "where": k, "questions": v} for n, c in configs.items()
              for k, v in c["diagnosis"]["stages"].items()]
if stage_rows:
    st.altair_chart(alt.Chart(pd.DataFrame(stage_rows)).mark_bar().encode(
        x=alt.X("questions:Q"), y=alt.Y("config:N"), color=alt.Color("where:N", title="layer:stage"),
        tooltip=["config", "where", "questions"]).properties(height=40 * len(names)), width="stretch")

ev = report.get("evidence_check") or {}
st.subheader("Evidence check")
st.caption(f"{ev.get('checked', 0)} gold spans of {ev.get('questions', 0)} questions: {ev.get('whole', 0)} survive whole "
           f"inside a subchunk of their relevant parent, {len(ev.get('cut', []))} are cut by the chunking (coverage "
           f"failures no search can fix), {len(ev.get('not_in_parent', []))} are not in the relevant parent.")
if ev.get("cut") or ev.get("not_in_parent"):
    st.dataframe(pd.DataFrame(ev.get("cut", []) + ev.get("not_in_parent", [])), hide_index=True, width="stretch")

# -- per question --------------------------------------------------------------------------------------------
st.subheader("Per question")
q1, q2 = st.columns([1, 3])
table_config = q1.selectbox("Configuration", names, index=len(names) - 1, key="ev_q_config")
only_failures = q2.toggle("Failures only", key="ev_q_fail")
qrows = rep.question_rows(report, table_config)
if only_failures:
    qrows = [r for r in qrows if r["result"] != "ok"]
st.dataframe(pd.DataFrame(qrows), hide_index=True, width="stretch")
for c in report["comparisons"]:
    if c["metric"] == f"ndcg@{kmax}" and c["lost_relevant"]:
        st.caption(f"`{c['candidate']}` lost a relevant document `{c['baseline']}` had in its top {kmax}: "
                   + "; ".join(f"{md(x['id'])} → {', '.join(map(md, x['lost']))}" for x in c["lost_relevant"]))

# -- top-k sweep -----------------------------------------------------------------------------------------------
st.subheader("Top-k sweep")
st.caption("Retrieval top-k is how many chunks reach the answer; it is not a generation sampling parameter "
           "(an LLM's top-k / top-p), which this workbench never sets. The sweep runs with dedup = chunk so "
           "repeated evidence shows: an item is redundant when an earlier one has the same parent or a cosine of "
           "stored vectors ≥ 0.95 (token Jaccard ≥ 0.8 when no vector is stored).")
s1, s2 = st.columns([1, 3])
sweep_config = s1.selectbox("Configuration", names, key="ev_sweep_config")
if s2.button("Run the sweep (k = 1…20)"):
    from retrieval.evaluation.sweep import run_sweep

    overrides = dict(configs[sweep_config]["settings"])
    overrides.pop("top_k", None)
    settings = ss.ev_base.with_overrides(**overrides)
    bench = open_bench(ss.ev_corpus_key)(settings)
    chosen = select(ss.ev_questions_by_id.values(), report["split"])
    with st.spinner("Sweeping…"):
        ss.ev_sweep = {"config": sweep_config, **run_sweep(bench, chosen, settings, 20)}
sweep = ss.get("ev_sweep")
if sweep:
    points = pd.DataFrame(sweep["points"]).melt(id_vars=["k"], value_vars=["recall", "redundancy"],
                                                var_name="measure", value_name="value")
    st.altair_chart(alt.Chart(points).mark_line(point=True).encode(
        x=alt.X("k:Q", title="retrieval top-k"), y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1])),
        color="measure:N", tooltip=["k", "measure", "value"]), width="stretch")
    st.caption(f"{sweep['config']}: {sweep['questions']} questions; near duplicate = {sweep['near_duplicate']}.")

# -- what-if on one question -------------------------------------------------------------------------------------
st.subheader("What if, on one question")
st.caption("Take one question's BM25 and dense windows, drop a document from one list or inject one missing from "
           "both, and re-fuse with RRF (same k). Nothing is searched again.")
w1, w2 = st.columns([1, 3])
wi_config = w1.selectbox("Configuration", names, key="ev_wi_config")
qids = [r["id"] for r in configs[wi_config]["questions"] if r["relevant"]]
wi_qid = w2.selectbox("Question", qids, key="ev_wi_q",
                      format_func=lambda i: f"{i} · {ss.ev_questions_by_id[i].question[:80]}")
if wi_qid:
    q = ss.ev_questions_by_id[wi_qid]
    overrides = dict(configs[wi_config]["settings"])
    settings = ss.ev_base.with_overrides(**overrides)
    try:
        trace = open_bench(ss.ev_corpus_key)(settings).ask(q.question, q.filters, settings=settings)
        lists = {name: lst.chunk_ids() for name, lst in (("bm25", trace.lexical), ("dense", trace.dense)) if lst.items}
        parents = {i.chunk_id: i.parent_id for lst in (trace.lexical, trace.dense) for i in lst.items}
        st.caption(f"Relevant: {', '.join(map(md, q.relevant))} · split {split_of(q.id)} · rrf_k {settings.rrf_k}")
        if lists:
            what_if_block(lists, settings.rrf_k, set(q.relevant), parents, "ev_wi")
        else:
            st.info("This configuration ran no generator list for the question.")
    except RetrievalError as exc:
        st.error(md(exc))

# -- exports ---------------------------------------------------------------------------------------------------
st.subheader("Exports")
e = st.columns(4)
e[0].download_button("Comparison (CSV)", rep.comparison_csv(report), "comparison.csv", "text/csv", on_click="ignore")
e[1].download_button("Report (JSON)", rep.comparison_json(report), "report.json", "application/json", on_click="ignore")
e[2].download_button("Decision record (Markdown)", rep.decision_record(report), "decision.md", "text/markdown",
                     on_click="ignore")
e[3].download_button(f"Per question, {table_config} (CSV)", rep.question_csv(report, table_config),
                     f"questions-{table_config}.csv", "text/csv", on_click="ignore")
runs = st.columns(max(1, len(names)))
for col, name in zip(runs, names):
    col.download_button(f"TREC run: {name}", rep.trec_run(report, name), f"{name}.run", "text/plain", on_click="ignore")
