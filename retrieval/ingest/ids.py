"""Ids as the files may write them (a document, question or relevant id): a non-empty string or an integer, with
no control or invisible format character (:func:`id_problem`); shown escaped in an error."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from ..core.errors import CorpusError
from .records import _json_kind


#: Unicode categories an id may not hold: control characters (NUL, a line break, a tab, DEL, the C1 controls),
#: format characters (zero-width space U+200B, zero-width joiner, soft hyphen, BOM, bidirectional controls: all
#: invisible), line and paragraph separators (U+2028, U+2029), and lone surrogates.
_REFUSED_IN_IDS = {"Cc": "a control character", "Cf": "an invisible format character",
                   "Zl": "a line separator", "Zp": "a paragraph separator", "Cs": "a lone surrogate"}


def _shown_id(value: str, limit: int = 80) -> str:
    """An id as one line of an error: Python's escaped quoting (``'a\\u200bb'``, ``'a\\x00'``), cut at ``limit``."""
    return repr(value[:limit]) + ("…" if len(value) > limit else "")


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be an id (a document, question or relevant id), or ``None``.

    An id holding a control character, a format character or a line/paragraph separator
    (:data:`_REFUSED_IN_IDS`) is refused rather than normalised: ``doc\u200b1`` and ``doc1`` print alike but are
    two ids, and a NUL or a line break corrupts every line-based export (TREC runs, qrels, logs). Spaces are
    allowed (the TREC exports skip such ids, naming them).
    """
    for ch in value:
        kind = unicodedata.category(ch)
        if kind in _REFUSED_IN_IDS:
            name = unicodedata.name(ch, "") if kind != "Cs" else ""
            return f"holds U+{ord(ch):04X}{f' ({name})' if name else ''}, {_REFUSED_IN_IDS[kind]}"
    return None


def _check_id(value: Any, where: str, what: str = "'id'") -> str:
    """An id as the files may write it: a non-empty string, or an integer (its digits); a boolean, a fraction,
    null or a container is refused in one line (``true`` must not become the id ``'True'``), and so is a string
    holding a control or format character (:func:`id_problem`), the id shown escaped."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        shown = json.dumps(value)[:40] if isinstance(value, (bool, float, type(None))) else _json_kind(value)
        raise CorpusError(f"{where}: {what} must be a string (or an integer), not {_json_kind(value)} ({shown})")
    if not str(value).strip():
        raise CorpusError(f"{where}: missing or empty {what}")
    problem = id_problem(str(value))
    if problem is not None:
        raise CorpusError(f"{where}: {what} {_shown_id(str(value))} {problem}; ids may not hold control or "
                          "invisible format characters (two ids that print alike would be two documents)")
    return str(value)
