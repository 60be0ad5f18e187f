"""Codes (``PX-7``, ``E-42``, ``NF-e``), negation and condition words: the invariants that carry a support
question's meaning, read the same way by the transforms, the gate, the judge's features and the index.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Collection, Iterable

from .text import fold, plain_codes

#: A code candidate: letters, a hyphen, then letters/digits (``PX-7``, ``E-42``, ``NF-e``, but also ``E-mail``).
#: Being a candidate is not evidence; :func:`codes` decides.
_CODE_RE = re.compile(r"(?<![\w-])([A-Za-z]{1,6}-[0-9][0-9A-Za-z]*|[A-Z]{1,6}-[A-Za-z][0-9A-Za-z]*)(?![\w-])")


#: Letters-only codes without a corpus to ask: at least two capitals before the hyphen (``NF-e``, ``USB-C``),
#: so a capitalised word (``E-mail``, ``T-shirt``, ``K-pop``) is not a code.
_LETTER_CODE_RE = re.compile(r"[A-Z]{2,6}-[A-Za-z]+")


NEGATIONS = ("não", "nunca", "nem", "sem", "apesar")  # "apesar" covers apesar de / do / da


CONDITIONS = ("exceto", "salvo", "a menos que", "desde que", "caso", "quando")


def codes(text: str, known: Collection[str] | None = None) -> list[str]:
    """Codes in ``text`` in their original spelling (NFC), in order (``PX-7``, ``E-42``, ``NF-e``).

    A hyphenated word is a code only with evidence of being one: a digit (``PX-7``, ``E-42``); or, for a
    letters-only word, an acronym before the hyphen (two or more capitals: ``NF-e``, ``USB-C``) or being one
    of the corpus' own codes (``known``, case-insensitive, from :func:`corpus_codes`). A capital and a hyphen
    are not evidence: ``E-mail``, ``T-shirt`` and ``K-pop`` are words, not codes.
    """
    folded = {k.casefold() for k in known or ()}
    out = []
    # NFC first: in NFD a combining accent is not a word character, so "ÀA-0" would show a code "A-0".
    for match in _CODE_RE.finditer(unicodedata.normalize("NFC", text)):
        candidate = match.group(1)
        if any(ch.isdigit() for ch in candidate) or _LETTER_CODE_RE.fullmatch(candidate) \
                or candidate.casefold() in folded:
            out.append(candidate)
    return list(dict.fromkeys(out))


def corpus_codes(texts: Iterable[str]) -> frozenset[str]:
    """The corpus' own letters-only codes (case-folded): hyphenated words it writes with a capital before the
    hyphen (``NF-e``) and never in lower case (a corpus that also writes ``e-mail`` shows ``E-mail`` is a word
    capitalised at a sentence start). Codes with digits need no such evidence."""
    capital: set[str] = set()
    lower: set[str] = set()
    for text in texts:
        text = unicodedata.normalize("NFC", text)
        for match in _CODE_RE.finditer(text):
            candidate = match.group(1)
            if not any(ch.isdigit() for ch in candidate):
                capital.add(candidate.casefold())
        lower.update(m.group(0) for m in re.finditer(r"(?<![\w-])[a-z]{1,6}-[a-z][0-9a-z]*(?![\w-])", text))
    return frozenset(capital - lower)


def _has_phrase(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(fold(phrase))}(?![\w-])", fold(text)) is not None


def invariant_flags(original: str, transformed: str) -> tuple[str, ...]:
    """What ``transformed`` lost of ``original``: ``code:PX-7``, ``negation:não``, ``condition:exceto``.

    Codes compare exactly (case-insensitive, whole token), so ``PX-7`` → ``PX-17`` is a loss.
    """
    lost = []
    kept_codes = {c.casefold() for c in codes(transformed)}
    lost += [f"code:{c}" for c in codes(original) if c.casefold() not in kept_codes]
    lost += [f"negation:{w}" for w in NEGATIONS if _has_phrase(original, w) and not _has_phrase(transformed, w)]
    lost += [f"condition:{w}" for w in CONDITIONS if _has_phrase(original, w) and not _has_phrase(transformed, w)]
    return tuple(lost)


def new_codes(texts: Iterable[str], seen: Iterable[str]) -> list[str]:
    """Codes in ``texts`` that are not in ``seen`` (case-insensitive), in order of appearance."""
    known = {c.casefold() for c in seen}
    out = []
    for text in texts:
        for code in codes(text):
            if code.casefold() not in known:
                known.add(code.casefold())
                out.append(code)
    return out


def has_code(text: str, code: str) -> bool:
    """``code`` appears in ``text`` as a whole token, case-insensitively (``PX-7`` is not in ``PX-17``)."""
    text, code = (plain_codes(unicodedata.normalize("NFC", t)) for t in (text, code))
    return re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", text, re.IGNORECASE) is not None
