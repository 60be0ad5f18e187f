"""Numbers on a page, written for its language (Babel's separators: :func:`retrieval.core.locale.number`)."""

from __future__ import annotations

from retrieval.core.locale import number

from .i18n import t

__all__ = ["ms", "num"]


def num(value: float | int | None, spec: str = "", lang: str = "en", empty: str = "—") -> str:
    """``value`` by the Python format ``spec`` in ``lang`` (``empty`` for ``None``)."""
    return empty if value is None else number(value, spec, lang)


def ms(value: float | None, lang: str = "en", missing: str | None = None) -> str:
    """A time in milliseconds (``1,204.5 ms`` / ``1.204,5 ms``); ``missing`` (or "not measured") for ``None``."""
    if value is None:
        return missing if missing is not None else t("not_measured", lang)
    return f"{number(value, ',.1f', lang)} ms"
