"""The Judge tab: a grade 0-3 for every pooled candidate of every list, saved to a question set or a TREC qrels
file inside the write roots (other questions' judgments kept; saves locked and merged). A record is the one of
this question's key, (question set, id, tenant) (:mod:`retrieval.offline.judgments`): another tenant's or
another set's question with the same id is never read, shown or overwritten."""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

import streamlit as st

from retrieval.core.errors import CorpusError, PathRefused
from retrieval.core.paths import LAB_QUESTIONS
from retrieval.explain import tables
from retrieval.ingest.location import location_label
from retrieval.offline import judgments
from retrieval.serving import roots

from ..escape import code, md
from ..format import stage
from ..i18n import t
from ..keep import keep, kept, restore
from ..reasons import reason
from ..widgets import highlighted
from .page import DEFAULT_JUDGMENTS, Asked

GRADE_OPTIONS = ("not judged", 0, 1, 2, 3)


@st.fragment
def panel(asked: Asked, page_jpath: str) -> None:
    """The grade controls, the counter and Save: a grade click re-runs this panel only.

    Args:
        page_jpath: the judgments file of the page's last full run (a file typed here re-runs the whole page, so
            the link and the other panels follow it).
    """
    ss, lang, base = st.session_state, asked.lang, asked.page.base
    corpus, question = asked.choices.corpus, asked.question
    if ss.get("corpus_source") == "mine":  # the shared judgments file would carry the user's own documents' ids
        st.info(t("judge_mine", lang))
        return
    restore("judgments_path")
    st.text_input(t("judgments_file", lang), key="judgments_path", help=t("judgments_help", lang), on_change=keep,
                  args=("judgments_path",))
    if ss.judgments_path != page_jpath:  # another file: the link and the rest of the page follow it
        st.rerun(scope="app")
    jpath = ss.judgments_path.strip() or str(DEFAULT_JUDGMENTS)
    stored: dict[str, int] = {}
    try:
        if jpath == str(DEFAULT_JUDGMENTS) and roots.JUDGMENTS_DIR in roots.write_roots(base):
            roots.JUDGMENTS_DIR.mkdir(exist_ok=True)  # the project's judgments/ folder, a write root
        jfile = roots.confine_output(jpath, base)  # read and rewritten: only inside the write roots
    except (PathRefused, OSError) as exc:
        if jpath == str(DEFAULT_JUDGMENTS):  # the deployer's roots leave out judgments/: not the user's mistake
            st.info(t("name_judgments_file", lang, why=reason(str(exc), lang)))
        else:
            st.error(reason(str(exc), lang))
        jfile = None
    # Whose judgment: (question set, id, tenant). Another tenant's or another set's record with the same id is
    # never read, shown or overwritten; the user's tenants are checked again at every read and write.
    qid = asked.labeled.id if asked.labeled else None
    filters = asked.judge_filters
    whose = {"question_set": question_set(base) if asked.labeled else "",
             "tenant": judgments.tenant_of(filters, base.tenant_field), "allowed": asked.page.access.allowed}
    try:
        stored = judgments.load(jfile, question, filters, qid, **whose) if jfile is not None else {}
    except CorpusError as exc:
        st.error(t("judgments_not_read", lang, error=reason(str(exc), lang)))
        jfile = None  # a file this question's judgments cannot be read from is not written either
    j1, j2 = st.columns(2)
    restore("judge_blind"), restore("judge_unjudged")
    blind = j1.toggle(t("judge_blind", lang), key="judge_blind", on_change=keep, args=("judge_blind",))
    only_unjudged = j2.toggle(t("only_unjudged", lang), key="judge_unjudged", on_change=keep, args=("judge_unjudged",))
    prefix = "jg_" + hashlib.sha1(f"{corpus.state.index_id}|{question}|{jpath}|{whose['question_set']}|{qid}|"
                                  f"{whose['tenant']}".encode("utf-8", "surrogatepass")).hexdigest()[:8] + "_"
    counter = st.empty()
    pooled = judgments.pool(asked.trace)
    grades = judge_block(pooled, corpus.titles, corpus.chunk_text, asked.terms, prefix, blind, only_unjudged, stored,
                         lang)
    judged_n, pooled_n = judgments.counter(pooled, grades)
    in_file = len([p for p in pooled if p["parent_id"] in stored])
    counter.markdown(f"**{t('judged', lang, n=judged_n, m=pooled_n)}** · " + t("saved_in_file", lang, n=in_file))
    if st.button(t("save_judgments", lang), type="primary", key="judge_save", disabled=jfile is None):
        others = {k: v for k, v in stored.items() if k not in {p["parent_id"] for p in pooled}}
        try:
            saved_id = judgments.save(jfile, question, {**others, **grades}, filters, qid, **whose)
            # the counter above says what the file holds now, not what it held before the click
            in_file = len([p for p in pooled if p["parent_id"] in grades])
            counter.markdown(f"**{t('judged', lang, n=judged_n, m=pooled_n)}** · " + t("saved_in_file", lang, n=in_file))
            st.success(t("saved", lang, n=len(grades), id=code(saved_id), path=code(jpath)))
        except (CorpusError, ValueError, OSError) as exc:
            st.error(t("judgments_not_saved", lang, error=reason(str(exc), lang)))


def question_set(base: Any) -> str:
    """The name (:func:`retrieval.offline.judgments.set_name`) of the question set the sidebar loaded the labeled
    questions from: the questions box's file, else the lab questions on the lab corpus (as ``ui/ask/sidebar.py``
    reads them); ``""`` when it names none."""
    ss = st.session_state
    raw = str(ss.get("questions_input") or "").strip()
    try:
        if raw:
            return judgments.set_name(roots.confine_input(raw, base))
    except PathRefused:
        return ""
    return judgments.set_name(LAB_QUESTIONS) if ss.get("active_corpus", "") == "" else ""


def judge_block(pooled: Sequence[Mapping[str, Any]], titles: Mapping[str, str], texts: Mapping[str, str],
                terms: frozenset[str], key_prefix: str, blind: bool, only_unjudged: bool, stored: Mapping[str, int],
                lang: str = "en") -> dict[str, int]:
    """One grade control per pooled parent, headed by its id, title and the place of the chunk shown (``p. 4 ·
    Seção II``, where it has one); returns the grades currently chosen (parent → 0-3)."""
    order = list(pooled)
    if blind:  # a fixed shuffle per question: the order no longer tells the rank
        order.sort(key=lambda p: hashlib.sha1(f"{key_prefix}{p['parent_id']}".encode()).hexdigest())
    chosen: dict[str, int] = {}
    for entry in pooled:  # a grade given and not saved yet is kept while another tab is open (ui/keep.py)
        value = kept(f"{key_prefix}{entry['parent_id']}", stored.get(entry["parent_id"], "not judged"))
        if value != "not judged" and value is not None:
            chosen[entry["parent_id"]] = int(value)
    for entry in order:
        pid = entry["parent_id"]
        key = f"{key_prefix}{pid}"
        restore(key, stored.get(pid, "not judged"))
        if only_unjudged and pid in stored and st.session_state[key] != "not judged":
            continue
        with st.container(border=True):
            head = " · ".join([code(pid)] + [md(part) for part in (titles.get(pid, ""),
                                                                  location_label(entry.get("where") or {}, lang))
                                             if part])
            if not blind:
                head += " · " + ", ".join(f"{stage(n, lang)} #{r}" for n, r in entry["lists"].items())
            st.markdown(head)
            text, cut_before, cut_after = tables.snippet(texts.get(entry["chunk_ids"][0], ""), terms, width=320)
            st.markdown(("… " if cut_before else "") + highlighted(text, terms) + (" …" if cut_after else ""))
            st.radio(f"{t('grade', lang)} · {code(pid)}", GRADE_OPTIONS, key=key, horizontal=True,
                     help=t("grade_help", lang), on_change=keep, args=(key,),
                     format_func=lambda v: t("not_judged", lang) if v == "not judged" else str(v))
        value = st.session_state[key]
        if value == "not judged":
            chosen.pop(pid, None)
        else:
            chosen[pid] = int(value)
    return chosen
