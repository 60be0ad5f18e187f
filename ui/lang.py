"""The interface language of a page run, before its widgets are drawn (the access gate speaks first)."""

from __future__ import annotations

from typing import Any, Mapping

from retrieval.explain.links import LANGUAGES

LANG_NAMES = {"en": "English", "pt": "Português"}


def first_language(state: Mapping[str, Any], query: Mapping[str, Any]) -> str:
    """The language radio's value when this session has one, else the link's ``lang=``, else the one kept
    from the other page (``_kept_lang``), else English."""
    if state.get("lang") in LANGUAGES:
        return state["lang"]
    wanted = query.get("lang")
    if wanted in LANGUAGES:
        return wanted
    kept = state.get("_kept_lang")
    return kept if kept in LANGUAGES else "en"
