"""The tabs under the answer. Only the open tab is drawn (a hidden tab used to be laid out on every run: the four
card columns, every grade control, Compare's two extra requests); switching tabs re-runs this panel alone, on the
trace drawn above. The link names the open tab (``tab=lists``)."""

from __future__ import annotations

import time
from typing import Any, Callable

import streamlit as st

from retrieval.explain.links import VIEW_TABS

from ..format import ms, num
from ..i18n import t
from . import compare, grid, judge, lists, movement, timings, where
from .page import Asked

#: The tabs, by their label's key in ui/i18n (``tab_<name>``); ``view_tab`` holds the open one's label.
TABS = tuple(f"tab_{name}" for name in VIEW_TABS)
TAB_KEY = "view_tab"


class Clock:
    """The page's own time, submit → laid out, written into the Timings tab's first line."""

    def __init__(self, started: float) -> None:
        self.started, self.main_ms, self.slot = started, None, None

    def finish(self, asked: Asked) -> None:
        lang = asked.lang
        elapsed = (time.perf_counter() - self.started) * 1000
        first = t("render_first", lang, ms=num(self.main_ms, ",.0f", lang)) if self.main_ms is not None else ""
        note = t("pipeline_total", lang, ms=ms(asked.trace.timings_ms.get("total"), lang))
        st.session_state._timing_line = t("render_time", lang, first=first, ms=num(elapsed, ",.0f", lang), note=note)
        if self.slot is not None:
            self.slot.caption(st.session_state._timing_line)


@st.fragment
def panel(asked: Asked, clock: Clock) -> None:
    """The open tab of the question asked (see the module docstring)."""
    ss, lang = st.session_state, asked.lang
    labels = [t(k, lang) for k in TABS]
    if ss.get(TAB_KEY) not in labels:  # the first run, another language, or the state dropped on another page
        ss[TAB_KEY] = t(ss.get("_view_tab_id", TABS[0]), lang)
    tabs = dict(zip(TABS, st.tabs(labels, key=TAB_KEY, on_change="rerun")))
    ss._view_tab_id = TABS[labels.index(ss[TAB_KEY])]
    opened = ss._view_tab_id
    link_tab = opened.removeprefix("tab_")  # the link names the open tab (a switch re-runs this panel alone)
    if st.query_params.get("tab", asked.page.defaults.tab) != link_tab:
        if link_tab == asked.page.defaults.tab:
            del st.query_params["tab"]
        else:
            st.query_params["tab"] = link_tab
    # The panels with their own controls (a row picked in the grid, a grade, a search in "Where is my document?",
    # B's settings) are fragments too: a click there re-runs that panel alone.
    with tabs["tab_timings"]:
        clock.slot = st.empty()
        clock.slot.caption(ss.get("_timing_line", ""))  # the last full run's line, until the clock writes anew
        if opened == "tab_timings":
            timings.panel(asked)
    panels: dict[str, Callable[[Asked], Any]] = {
        "tab_grid": grid.panel, "tab_lists": lists.panel, "tab_movement": movement.panel,
        "tab_where": where.panel, "tab_judge": lambda a: judge.panel(a, ss.judgments_path)}
    with tabs[opened]:
        if opened == "tab_compare":  # its extra requests run only here, once the panels above are drawn
            clock.main_ms = (time.perf_counter() - clock.started) * 1000
            compare.panel(asked)
        elif opened in panels:
            panels[opened](asked)
