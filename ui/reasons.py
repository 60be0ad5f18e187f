"""The pipeline's reasons in the interface language: a recorded code and its parameters, rendered from the
catalogue of :mod:`retrieval.core.reasons` (each declared with its English and Portuguese templates).

A reason arrives as a :class:`~retrieval.core.reasons.Reason`, as the ``{"code", "params"}`` a trace recorded, or as
text (an error's message, an older trace): text is shown as recorded, in a code span, labeled as the trace's own
words, so a Portuguese page never passes an English sentence off as its own. Values a reader may copy (ids,
models, paths) are code spans; other parameters are escaped Markdown. Nothing here parses a sentence.
"""

from __future__ import annotations

from typing import Any, Mapping

from retrieval.core.reasons import Reason
from retrieval.stages.judge import READER_FAILED, READER_UNAVAILABLE
from retrieval.stages.rerank.learned import LEARNED
from retrieval.stages.rerank.reader import COULD_NOT_LOAD as READER_COULD_NOT_LOAD
from retrieval.stages.rerank.reader import FILE_ERRORS, NOT_INSTALLED

from .escape import code, md
from .i18n import TEXTS, t


def as_reason(value: Any) -> Reason | None:
    """``value`` as a reason: itself, the reason a trace dict recorded, or ``None`` (text, nothing)."""
    if isinstance(value, Reason):
        return value
    return Reason.from_dict(value) if isinstance(value, Mapping) else None


def reason(value: Any, lang: str) -> str:
    """Markdown of a reason in ``lang`` (see the module docstring)."""
    found = as_reason(value)
    if found is not None:
        return found.text(lang, quote=code, escape=md)
    text = str(value or "").strip()
    if not text:
        return ""
    return md(text) if lang == "en" else t("recorded_as", lang, text=code(text))


def plain(value: Any, lang: str) -> str:
    """A reason as plain text in ``lang`` (a table cell, a chart's tooltip): no Markdown, ids in quotes."""
    found = as_reason(value)
    return found.text(lang) if found is not None else str(value or "")


def recorded(data: Mapping[str, Any], key: str, lang: str) -> str:
    """The reason a trace dict holds under ``key`` (its ``<key>_code``, else its text), in ``lang``."""
    return reason(data.get(f"{key}_code") or data.get(key), lang)


# -- the reader that could not load, in one plain line --------------------------------------------------------
def reader_cause(value: Any) -> tuple[str, str, str] | None:
    """``(who, cause, name)`` when a reason says the reader could not load or failed: ``who`` is the stage that
    lost it (``reader`` the reranker, ``ltr`` the learned ranker, ``judge`` the learned gate's features),
    ``cause`` one of ``package`` / ``file`` / ``read`` / ``failed`` / ``unknown``, ``name`` the missing package or
    the error's class; ``None`` for any other reason. Read from the codes, never from a sentence."""
    found = as_reason(value)
    if found is None:
        return None
    who = "reader"
    if LEARNED.matches(found):
        who, found = "ltr", found.params.get("why")
        found = as_reason(found)
    if READER_UNAVAILABLE.matches(found):
        who, found = ("ltr" if who == "ltr" else "judge"), as_reason(found.params.get("why"))
    elif READER_FAILED.matches(found):
        who = "ltr" if who == "ltr" else "judge"
        return who, "failed", _error_class(found.params.get("error"))
    if found is None or not READER_COULD_NOT_LOAD.matches(found):
        return None
    error = as_reason(found.params.get("error"))
    if NOT_INSTALLED.matches(error):
        return who, "package", str(error.params.get("package"))
    name = _error_class(error)
    if not name:
        return who, "unknown", ""
    return who, ("file" if name in FILE_ERRORS else "read"), name


def _error_class(value: Any) -> str:
    error = as_reason(value)
    text = str(error.params.get("text", "")) if error is not None else ""
    head, sep, _ = text.partition(":")
    return head if sep and head.isidentifier() else ""


def reader_line(value: Any, tier: str, lang: str) -> str | None:
    """The reader's absence in one plain line in ``lang`` (what is missing, what the page falls back to), or
    ``None`` when ``value`` is not about the reader (:func:`reader_cause`)."""
    cause = reader_cause(value)
    if cause is None:
        return None
    who, kind, name = cause
    fallback = (t(f"reader_fallback_{tier}", lang) if f"reader_fallback_{tier}" in TEXTS
                else t("reader_fallback_other", lang, tier=md(tier)))
    return t(f"reader_line_{who}", lang, missing=t(f"reader_missing_{kind}", lang, name=code(name)),
             fallback=fallback)
