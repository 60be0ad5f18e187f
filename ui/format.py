"""Numbers on a page, written for its language (Babel's separators: :func:`retrieval.core.locale.number`)."""

from __future__ import annotations

from retrieval.core.locale import number

from .i18n import t

__all__ = ["ms", "num", "p_value", "ranker"]


def num(value: float | int | None, spec: str = "", lang: str = "en", empty: str = "—") -> str:
    """``value`` by the Python format ``spec`` in ``lang`` (``empty`` for ``None``)."""
    return empty if value is None else number(value, spec, lang)


def ms(value: float | None, lang: str = "en", missing: str | None = None) -> str:
    """A time in milliseconds (``1,204.5 ms`` / ``1.204,5 ms``); ``missing`` (or "not measured") for ``None``."""
    if value is None:
        return missing if missing is not None else t("not_measured", lang)
    return f"{number(value, ',.1f', lang)} ms"


def p_value(p: float | None, lang: str = "en") -> str:
    """A paired test's p as :func:`retrieval.offline.evaluation.compare.p_text` writes it (``p=0.0312``,
    ``p<0.001`` for 0, ``p=n/a``), with ``lang``'s decimal separator (``p=0,0312``)."""
    if p is None:
        return "p=n/a"
    if p == 0:
        return f"p<{number(0.001, '.3f', lang)}"
    return f"p={number(p, '.4f', lang)}" if p >= 0.0001 else f"p={p:.1e}"


def ranker(name: str, lang: str = "en") -> str:
    """A generator's name as plain text on a page: ``dense`` in ``lang`` (``densa``), ``bm25`` as it is (a field
    term); a variant keeps its suffix (``densa:hyde``). In code spans and settings the name stays as written."""
    base, sep, rest = name.partition(":")
    return (t("stage_dense", lang) if base == "dense" else base) + sep + rest
