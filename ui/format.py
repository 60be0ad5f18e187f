"""Numbers on a page, written for its language (Babel's separators: :func:`retrieval.core.locale.number`)."""

from __future__ import annotations

from retrieval.core.locale import number

from .i18n import TEXTS, t

__all__ = ["ms", "num", "ranker", "stage"]


def num(value: float | int | None, spec: str = "", lang: str = "en", empty: str = "—") -> str:
    """``value`` by the Python format ``spec`` in ``lang`` (``empty`` for ``None``)."""
    return empty if value is None else number(value, spec, lang)


def ms(value: float | None, lang: str = "en", missing: str | None = None) -> str:
    """A time in milliseconds (``1,204.5 ms`` / ``1.204,5 ms``); ``missing`` (or "not measured") for ``None``."""
    if value is None:
        return missing if missing is not None else t("not_measured", lang)
    return f"{number(value, ',.1f', lang)} ms"


def stage(name: str, lang: str = "en") -> str:
    """A pipeline stage's name (a list's, a note's) in ``lang`` where the interface names it; a stage a later
    version records, as it is named."""
    return t(f"stage_{name}", lang) if f"stage_{name}" in TEXTS else name


def ranker(name: str, lang: str = "en") -> str:
    """A generator's name as plain text on a page: ``dense`` in ``lang`` (``densa``), ``bm25`` as it is (a field
    term); a variant keeps its suffix (``densa:hyde``). In code spans and settings the name stays as written."""
    base, sep, rest = name.partition(":")
    return (stage(base, lang) if base == "dense" else base) + sep + rest
