"""Evaluation and diagnosis: the lab's method as a page (``streamlit run app.py``, then "Evaluation").

Pick a labeled set and two or more configurations, write the expectation, run. The page wires its panels
(:mod:`ui.evaluation`) over what :func:`retrieval.offline.evaluation.evaluate_configs` returns: the decision,
metrics with paired significance, the failure layer of every miss, the per-question table, a top-k sweep,
what-if re-fusion on one question and the exports. Manual rankings, training and tuning work without a run.
Nothing is scored here.
"""

from __future__ import annotations

import streamlit as st

from ui.evaluation import (decision, diagnosis, exports, form, manual, metrics, page, questions, sweep, training,
                           tune, whatif)
from ui.i18n import t

st.set_page_config(page_title="Evaluation · hybrid retrieval workbench", page_icon=":material/monitoring:",
                   layout="wide")

eval_page = page.start()
form.panel(eval_page)
run = form.evaluated(eval_page)
manual.panel(eval_page, expanded=run is None)
training.panel(eval_page)
tune.panel(eval_page)
if run is None:
    st.info(t("ev_choose", eval_page.lang))
    st.stop()

decision.panel(run)
metrics.panel(run)
diagnosis.panel(run)
question_config = questions.panel(run)
sweep.panel(run)
whatif.panel(run)
exports.panel(run, question_config)
