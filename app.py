"""Hybrid retrieval workbench: why did this chunk rank where it did? (``streamlit run app.py``)

The page wires its panels (:mod:`ui.ask`): the sidebar's settings (all mirrored in the URL), the question, the
answer with its tier, then the tabs over the trace ``Workbench.ask`` returned. Nothing is re-scored here.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import streamlit as st  # noqa: E402

from ui.ask import answer, page, sidebar, tabs  # noqa: E402
from ui.i18n import t  # noqa: E402

st.set_page_config(page_title="Hybrid retrieval workbench", page_icon=":material/search:", layout="wide")

ask_page = page.start()
st.markdown("<style>code{white-space:nowrap}</style>", unsafe_allow_html=True)  # ids never wrap mid-id
st.title(t("title", ask_page.lang))
st.caption(t("caption", ask_page.lang))

choices = sidebar.panel(ask_page)
page.mirror_url(ask_page, choices.params)
page.link_problems(ask_page)
page.question_form(ask_page)
asked = page.ask(ask_page, choices)  # ends the run, in one line, when there is nothing to ask yet

answer.panel(asked)
clock = tabs.Clock(STARTED)
tabs.panel(asked, clock)
clock.finish(asked)
