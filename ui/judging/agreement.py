"""The raters' agreement (Cohen's kappa per pair of raters, Fleiss' kappa over the pairs all graded), the queue of
the pairs they disagree on, and the consensus judgments as a question set to evaluate with: all of them over the
ratings of the page's question set the user may see (:meth:`ui.judging.page.JudgingPage.ratings`), each
record of the download carrying its question's key (``_key``, a note the evaluation ignores)."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from retrieval.core.errors import CorpusError
from retrieval.offline.raters import agreement, consensus

from ..format import num
from ..i18n import t
from ..reasons import reason
from ..widgets import table
from .page import JudgingPage


def panel(page: JudgingPage) -> None:
    lang = page.lang
    st.subheader(t("jd_agreement", lang))
    if page.ratings_path is None:
        return
    try:  # the ratings of this set's questions the user may see, by key: never another tenant's or set's q1
        ratings = page.ratings()
    except CorpusError as exc:
        st.error(reason(str(exc), lang))
        return
    found = agreement(ratings)
    def counted(key: str, n: int) -> str:
        return t(f"{key}_one", lang) if n == 1 else t(f"{key}_many", lang, n=n)

    st.caption(t("jd_agreement_caption", lang, raters=counted("jd_raters", len(found["raters"])),
                 pairs=counted("jd_grades", len(ratings))))
    if found["cohen"]:
        table(pd.DataFrame([{"rater_a": c["a"], "rater_b": c["b"], "pairs": c["pairs"], "kappa": c["kappa"]}
                            for c in found["cohen"]]), lang)
    if found["fleiss"]:
        st.caption(t("jd_fleiss", lang, kappa=num(found["fleiss"]["kappa"], ".3f", lang), pairs=found["fleiss"]["pairs"]))
    st.markdown(t("jd_queue", lang, n=len(found["disagreements"])))
    if found["disagreements"]:
        table(pd.DataFrame([{"question": d["qid"], "parent": d["parent"], "spread": d["spread"],
                             "grades": ", ".join(f"{r} {g}" for r, g in d["grades"].items()),
                             "notes": " · ".join(f"{r}: {n}" for r, n in d["notes"].items())}
                            for d in found["disagreements"]]), lang)
    merged = consensus(ratings)
    lines = [json.dumps({"id": qid, "question": e["question"], "group": "judged", "filters": e["filters"],
                         "graded": e["graded"], "relevant": sorted(p for p, g in e["graded"].items() if g > 0),
                         "raters": e["raters"], "_key": e["key"]}, ensure_ascii=False) for qid, e in merged.items()]
    st.download_button(t("jd_download", lang), "\n".join(lines) + ("\n" if lines else ""), "consensus.jsonl",
                       "application/json", on_click="ignore", disabled=not lines, help=t("jd_download_help", lang))
