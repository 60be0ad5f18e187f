"""Interface texts in English and Portuguese: ``t(key, lang)``, one catalogue split by page and panel (each module
holds one panel's texts; a key is declared in one of them only).

The pipeline's reasons are not here: they are declared with their templates beside the code that records them
(:mod:`retrieval.core.reasons`) and rendered by :mod:`ui.reasons`; a declared kind's name on a page (a fusion
method, a reranker, a tier) is its declaration's own. Values shown from traces (ids, settings, stage names) are
not translated; the answer stage's own notes follow ``lang`` through the answer adapter.
"""

from __future__ import annotations

from . import access, ask, evaluation, grid, intake, judging, tabs, tune, uploads
from .headers import HEADERS, header

__all__ = ["HEADERS", "TEXTS", "header", "t"]


def _merged(*parts: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for part in parts:
        twice = set(out) & set(part)
        if twice:
            raise ValueError(f"interface text(s) declared twice: {', '.join(sorted(twice))}")
        out.update(part)
    return out


#: Every interface text, by key.
TEXTS: dict[str, dict[str, str]] = _merged(ask.TEXTS, grid.TEXTS, tabs.TEXTS, evaluation.TEXTS, tune.TEXTS,
                                           access.TEXTS, judging.TEXTS, intake.TEXTS, uploads.TEXTS)


def t(key: str, lang: str = "en", **values: object) -> str:
    """The text of ``key`` in ``lang`` (English when missing), formatted with ``values``."""
    entry = TEXTS[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text
