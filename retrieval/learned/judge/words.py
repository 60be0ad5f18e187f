"""Word forms: every folded token of a text, plus each word's Snowball stem (``~``) and seven-letter prefix
(``^``), so a question's word is found in a passage that writes it in another form (``ativada`` / ``ativação``)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Sequence

from ...core.text import fold, tokenize

_WORD_FORM_RE = re.compile(r"\w+")
_PREFIX = 7
_MIN_STEM = 4


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("portuguese")


@lru_cache(maxsize=200_000)  # a pure function of the word: stemming the same words on every request cost ~70 ms
def _forms(word: str) -> tuple[str, str, str]:
    """(folded word, folded stem of the accented word, seven-letter prefix marker) of one lower-cased word;
    the stem is left out (``""``) when shorter than four letters, the prefix for words under seven."""
    folded = fold(word)
    stem = fold(_stemmer().stemWord(word))
    return (folded, ("~" + stem) if len(stem) >= _MIN_STEM else "",
            ("^" + folded[:_PREFIX]) if len(folded) >= _PREFIX else "")


def word_forms(text: str) -> frozenset[str]:
    """Every folded token of ``text`` (as :func:`tokenize` gives them), plus each word's stem (``~``) and
    seven-letter prefix (``^``)."""
    out = set(tokenize(text))
    for word in _WORD_FORM_RE.findall(text.casefold()):
        out.update(f for f in _forms(word) if f)
    return frozenset(out)


def holds(forms: Sequence[str], present: frozenset[str]) -> bool:
    """A chunk's :func:`word_forms` hold a focus token when they share its token, stem or prefix."""
    return any(f in present for f in forms)
