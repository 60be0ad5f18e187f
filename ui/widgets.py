"""What both pages' panels draw with: tables with readable headers, charts built once, highlighted text,
relevance badges and the links between the pages. Layout only; every value comes from the trace or a report."""

from __future__ import annotations

import json
from typing import Any, Iterable

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from retrieval.explain import tables
from retrieval.stages.tiers import TIERS

from .escape import code, md_text
from .format import num
from .i18n import header, t
from .lang import LANG_NAMES

RANKER_COLORS = {"bm25": "#e8833a", "dense": "#4c78a8"}
RELEVANCE_KEYS = {"relevant": ("green", "✓ ", "rel_relevant"), "partial": ("orange", "~ ", "rel_partial"),
                  "not labeled": ("gray", "", "rel_none")}
LIST_KEYS = {"lexical": "list_lexical", "dense": "list_dense", "fused": "list_fused", "reranked": "list_reranked"}

__all__ = ["chart", "code", "dashed", "highlighted", "list_title", "md_escape", "nav_links", "relevance_badge",
           "table", "tier_color"]


def tier_color(tier: str) -> str:
    """A tier's badge colour (its declaration's), grey for a name no tier declares."""
    return TIERS.get(tier).color if tier in TIERS else "gray"


def relevance_badge(mark: str | None, lang: str = "en") -> str:
    """A relevance mark (``tables.relevance_of``) as a coloured badge in ``lang``; '' for none."""
    if not mark or mark not in RELEVANCE_KEYS:
        return ""
    color, sign, key = RELEVANCE_KEYS[mark]
    return f":{color}-badge[{sign}{t(key, lang)}]"


def list_title(name: str, lang: str = "en") -> str:
    return t(LIST_KEYS[name], lang)


def md_escape(text: str) -> str:
    """Backslash-escape Markdown, HTML, Streamlit directive and LaTeX characters, keeping line breaks
    (:func:`ui.escape.md_text`)."""
    return md_text(text)


def highlighted(text: str, terms: Iterable[str]) -> str:
    """Markdown of ``text`` with the question's terms on a yellow background."""
    parts = []
    for segment, hit in tables.highlight_segments(text, terms):
        parts.append(f":orange-background[**{md_escape(segment)}**]" if hit else md_escape(segment))
    return "".join(parts)


def table(frame: pd.DataFrame, lang: str = "en", dash: bool = True, **kwargs: Any) -> Any:
    """``st.dataframe`` with readable headers in ``lang`` (:func:`ui.i18n.header`; the frame keeps its column
    names) and, with ``dash``, "—" in the empty cells instead of None."""
    if dash and not frame.empty:
        frame = dashed(frame, lang)
    config = {c: st.column_config.Column(header(str(c), lang)) for c in frame.columns}
    return st.dataframe(frame, hide_index=True, width="stretch", column_config=config, **kwargs)


def dashed(frame: pd.DataFrame, lang: str = "en") -> pd.DataFrame:
    """``frame`` for reading: a column with empty cells becomes text ("—" for the empty ones, numbers written in
    ``lang``), yes / no for booleans in ``lang``; full numeric columns stay numbers."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        is_bool = values.map(lambda v: isinstance(v, bool)).any()
        if not values.isna().any() and not is_bool:
            continue
        out[column] = [("—" if v is None or (isinstance(v, float) and v != v) else
                        (t("yes", lang) if v else t("no", lang)) if isinstance(v, bool) else
                        num(v, ".4g", lang) if isinstance(v, float) else str(v)) for v in values]
    return out


@st.cache_data(show_spinner=False, max_entries=512)
def _vega_spec(key: str, _build: Any) -> dict[str, Any]:
    """The Vega-Lite spec of the Altair chart ``_build()`` returns, once per ``key`` (Altair validates every
    encoding against its schema on each build: most of a warm rerun's server time went there)."""
    spec = _build().to_dict()
    view = (spec.get("config") or {}).get("view") or {}
    for name in ("continuousWidth", "continuousHeight"):  # Altair's default theme; Streamlit draws without it
        view.pop(name, None)
    if not view:
        (spec.get("config") or {}).pop("view", None)
    if not spec.get("config", True):
        spec.pop("config")
    return spec


def chart(key: Any, build: Any, **kwargs: Any) -> Any:
    """``st.vega_lite_chart`` of the Altair chart ``build()`` returns, built once per ``key`` (everything the
    chart shows: its rows and labels, the language); ``kwargs`` as for ``st.altair_chart``."""
    return st.vega_lite_chart(_vega_spec(json.dumps(key, sort_keys=True, default=str), build), **kwargs)


def pages_and_language(lang: str, help_text: str | None = None) -> None:
    """The top of every page's sidebar: the links to the three pages and the interface language's radio
    (``lang`` in the session state), named in ``lang``."""
    nav_links(t("nav_ask", lang), t("nav_eval", lang), t("nav_judging", lang))
    st.radio(t("language", lang), list(LANG_NAMES), key="lang", format_func=LANG_NAMES.get, horizontal=True,
             help=help_text)


def nav_links(ask_label: str, eval_label: str, judging_label: str | None = None) -> None:
    """Sidebar links to the pages, named (the built-in navigation would call the main page "app").

    A page run on its own (e.g. under AppTest) has no multipage context: the links are then left out."""
    try:
        st.page_link("app.py", label=ask_label, icon=":material/search:")
        st.page_link("pages/2_Evaluation.py", label=eval_label, icon=":material/bar_chart:")
        if judging_label:
            st.page_link("pages/3_Judging.py", label=judging_label, icon=":material/rule:")
    except StreamlitAPIException:
        pass
