"""Team judging: one question and one chunk at a time for subject-matter experts, each grade saved with its rater
and note, the raters' agreement and the pairs they disagree on (``streamlit run app.py``, then "Team judging")."""

from __future__ import annotations

import streamlit as st

from ui.judging import agreement, judge, labels, page

st.set_page_config(page_title="Team judging · hybrid retrieval workbench", page_icon=":material/rule:", layout="wide")

judging = page.start()
judge.panel(judging)
agreement.panel(judging)
labels.panel(judging)
