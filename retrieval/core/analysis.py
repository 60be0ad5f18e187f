"""BM25 analysers: :func:`retrieval.core.text.tokenize`'s tokens, optionally reduced to their Snowball stems.

An analyser is an index-level setting (``bm25_analyzer``): the same one reads the documents and the queries of
an index, so their tokens cannot drift (as PyTerrier reuses the tokenization recorded at index time).

* ``fold`` (the default): the tokens of :func:`~retrieval.core.text.tokenize` as they are (NFKC, case and
  accent folding, codes kept whole and by parts, Portuguese stopwords minus negations and conditions).
* ``portuguese`` / ``english``: the same tokens, each *plain word* (ASCII letters only, after folding) replaced
  by its Snowball stem (Porter, 2001, "Snowball: A language for stemming algorithms"; the ``snowballstemmer``
  package), so ``prazo`` and ``prazos`` are one term ``praz``. Codes, numbers and identifiers stay whole: a
  token holding a digit, a hyphen or a non-ASCII letter (``px-7``, ``7``, ``8.112/90``'s parts ``8`` and
  ``112``, ``москва``) is never stemmed. A hyphenated token's letter-only parts (``guarda``, ``chuva`` of
  ``guarda-chuva``) are plain words and are stemmed; the whole token is not.

Stemming reads folded words (``rescisao``, not ``rescisão``): Snowball's Portuguese rules for ``ã`` and ``õ``
then do not apply, the same way on both sides. ``tokenize`` itself is never changed here (the learned judge's
feature-set fingerprint covers it).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Callable

from .text import tokenize

#: The analysers ``bm25_analyzer`` accepts: ``fold`` (no stemming) and the Snowball languages.
ANALYZERS = ("fold", "portuguese", "english")
DEFAULT_ANALYZER = "fold"

_local = threading.local()  # a snowballstemmer stemmer keeps its state in the object: one per thread


def _stemmer(language: str):  # noqa: ANN202 - snowballstemmer's classes are untyped
    stemmers = _local.__dict__.setdefault("stemmers", {})
    found = stemmers.get(language)
    if found is None:
        import snowballstemmer

        found = stemmers[language] = snowballstemmer.stemmer(language)
    return found


def is_plain_word(token: str) -> bool:
    """True for a token the stemmer may reduce: ASCII letters only (no digit, hyphen, dot or other script)."""
    return token.isascii() and token.isalpha()


@lru_cache(maxsize=262_144)
def stem(token: str, language: str) -> str:
    """``token``'s Snowball stem in ``language`` when it is a plain word (:func:`is_plain_word`), else
    ``token`` unchanged."""
    return _stemmer(language).stemWord(token) if is_plain_word(token) else token


def check_analyzer(name: str) -> str:
    """``name`` when it is a known analyser.

    Raises:
        ValueError: an unknown analyser (one line naming the known ones).
    """
    if name not in ANALYZERS:
        raise ValueError(f"unknown BM25 analyser {name!r} (use one of {', '.join(ANALYZERS)})")
    return name


def analyze(text: str, analyzer: str = DEFAULT_ANALYZER) -> list[str]:
    """BM25 tokens of ``text`` under ``analyzer``: :func:`~retrieval.core.text.tokenize`'s tokens, plain words
    stemmed unless ``analyzer`` is ``fold``.

    Raises:
        ValueError: an unknown analyser.
    """
    tokens = tokenize(text)
    if check_analyzer(analyzer) == "fold":
        return tokens
    return [stem(t, analyzer) for t in tokens]


def analyzer_function(analyzer: str = DEFAULT_ANALYZER) -> Callable[[str], list[str]]:
    """The one-argument function of ``analyzer`` (``tokenize`` itself for ``fold``).

    Raises:
        ValueError: an unknown analyser.
    """
    if check_analyzer(analyzer) == "fold":
        return tokenize
    return lambda text: [stem(t, analyzer) for t in tokenize(text)]


def stem_groups(text: str, analyzer: str) -> dict[str, list[str]]:
    """``stem → the folded tokens of text that reduce to it`` (in order of appearance, unique): what the
    explanation shows beside a stemmed term (``praz (prazo, prazos)``). Empty for ``fold``."""
    if check_analyzer(analyzer) == "fold":
        return {}
    groups: dict[str, list[str]] = {}
    for token in tokenize(text):
        words = groups.setdefault(stem(token, analyzer), [])
        if token not in words:
            words.append(token)
    return groups
