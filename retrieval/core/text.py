"""Normalization and tokenization shared by documents and queries (the same function on both sides).

Rules (docs/pipeline.md, "Tokenizer"):

* Unicode NFKC, then case folding and accent folding: NFC and NFD spellings give identical tokens.
* A hyphenated token (a code such as ``PX-7``, ``E-42``, ``NF-e``, or a Portuguese compound word) is kept
  whole (``px-7``) and also indexed by its parts (``px``, ``7``), so "PX 7" still matches, while a ``PX-7``
  query ranks PX-7 documents above PX-17 ones (they share only the part ``px``).
* Punctuation is stripped except inside such tokens. Letters of every script are tokens (``Москва``,
  ``Αθήνα``); Han and kana runs, written without spaces, are indexed by character bigrams; Thai, Lao, Myanmar and
  Khmer runs are split into words by ICU's dictionaries (icu4py) before folding.
* Portuguese stopwords come from the ``stop-words`` package, minus negation and condition words, which are
  never removed.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: Words never removed: negations and conditions carry the meaning of support questions.
KEPT_WORDS = frozenset(
    {
        "nao", "nem", "nunca", "sem", "exceto", "excepto", "salvo", "caso", "quando", "se", "senao",
        "menos", "desde", "apesar", "contudo", "porem", "mas", "ou", "somente", "so", "apenas",
        "not", "no", "nor", "never", "without", "unless", "except", "if", "when", "only",
    }
)

#: A token is a run of letters or digits of any script (after folding, Latin ones are ASCII), hyphenated runs
#: kept whole: Cyrillic, Greek, Arabic or Devanagari words are tokens like Portuguese ones; the vowel and tone
#: marks of Thai, Lao, Myanmar and Khmer stay inside their words.
_TOKEN_RE = re.compile(r"(?:[^\W_]|[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff])+"
                       r"(?:-(?:[^\W_]|[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff])+)*")
#: Scripts written without spaces between words (Han, Hiragana, Katakana): a run of them is indexed by its
#: overlapping character bigrams (a single character by itself), as CJK analyzers of search engines do.
_CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD_RE = re.compile(r"\w", re.UNICODE)
#: Scripts written without spaces whose words a dictionary finds (Thai, Lao, Myanmar, Khmer): a run of them is split
#: into words by ICU's word break iterator (icu4py, ICU's own dictionaries) before folding, so ``ภาษาไทย`` is the
#: two tokens ``ภาษา`` and ``ไทย``, not one.
_SEGMENTED_RE = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff]+")


_ACCENTS_RE = re.compile("[\u0300-\u036f]+")  # the Combining Diacritical Marks block: Portuguese accents
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def _drop_combining(match: re.Match[str]) -> str:
    char = match.group()
    if _SEGMENTED_RE.match(char):  # a Thai, Lao, Myanmar or Khmer vowel or tone mark is part of its word
        return char
    return "" if unicodedata.combining(char) else char


def fold(text: str) -> str:
    """Return ``text`` NFKC-normalized, case-folded and without accents (every combining mark removed)."""
    decomposed = _ACCENTS_RE.sub("", unicodedata.normalize("NFKD", text.casefold()))
    if not decomposed.isascii():  # other combining marks (rare): checked one non-ASCII character at a time
        decomposed = _NON_ASCII_RE.sub(_drop_combining, decomposed)
    return unicodedata.normalize("NFKC", decomposed)


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """Portuguese stopwords from the ``stop-words`` package, accent-folded, minus :data:`KEPT_WORDS`."""
    from stop_words import get_stop_words

    return frozenset(fold(w) for w in get_stop_words("portuguese")) - KEPT_WORDS


def tokenize(text: str) -> list[str]:
    """Split ``text`` into BM25 tokens.

    Returns:
        Tokens in order of appearance; a hyphenated token is followed by its parts. Stopwords are removed
        (except when part of a hyphenated token).
    """
    stop = stopwords()
    tokens: list[str] = []
    if not text.isascii() and _SEGMENTED_RE.search(text):
        text = _SEGMENTED_RE.sub(_dictionary_words, text)
    for match in _TOKEN_RE.finditer(fold(text).replace("_", " ")):
        token = match.group()
        if not token.isascii() and _CJK_RE.search(token):
            tokens.extend(_cjk_tokens(token))
        elif "-" in token:
            tokens.append(token)
            tokens.extend(part for part in token.split("-") if part and part not in stop)
        elif token not in stop:
            tokens.append(token)
    return tokens


@lru_cache(maxsize=65536)
def _words(run: str) -> str:
    """A run of a script written without spaces, its words separated by spaces (ICU's word break iterator)."""
    from icu4py.breakers import WordBreaker

    return " ".join(word for word in WordBreaker(run, "th") if word.strip())


def _dictionary_words(match: re.Match[str]) -> str:
    return f" {_words(match.group())} "


def _cjk_tokens(token: str) -> list[str]:
    """A token holding CJK characters: its CJK runs as overlapping bigrams (a lone character as itself), the
    other runs (Latin letters, digits) as they are."""
    out: list[str] = []
    position = 0
    for run in _CJK_RE.finditer(token):
        out.extend(part for part in token[position:run.start()].split("-") if part)
        chars = run.group()
        out.extend([chars] if len(chars) == 1 else [chars[i:i + 2] for i in range(len(chars) - 1)])
        position = run.end()
    out.extend(part for part in token[position:].split("-") if part)
    return out


#: Dashes that spell the hyphen of a code in other ways (U+2010-2015, minus sign, small and full-width
#: hyphen-minus), and the full-width ASCII forms (U+FF01-FF5E): ``PX‑70``, ``PX–70`` and ``ＰＸ-７０`` are PX-70.
_CODE_SPELLINGS = {**{ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"},
                   **{cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F) if cp != 0xFF0D}}


def plain_codes(text: str) -> str:
    """``text`` with every dash written as ``-`` and full-width ASCII letters, digits and signs as ASCII, so a
    code has one spelling (questions are read this way; the code identity check reads chunks this way too)."""
    return text.translate(_CODE_SPELLINGS)


def has_words(text: str) -> bool:
    """True when ``text`` holds at least one letter or digit (not only spaces and punctuation)."""
    return bool(_WORD_RE.search(text.replace("_", "")))


#: "Art." (and "Arts.", "art.") abbreviates a law's article: "Art. 3º Fica…" is one sentence, never two.
_NOT_AN_END = r"(?<!\bArt\.)(?<!\bart\.)(?<!\bArts\.)(?<!\barts\.)"
_SENTENCE_RE = re.compile(r"(?<=[.!?;:])" + _NOT_AN_END + r"\s+(?=[^\s])|\n+")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` at sentence and clause ends (``.!?;:`` followed by space) and line breaks; drop empties.

    The chunker's units (a chunk ends between two of them). An answer quotes :func:`whole_sentences`."""
    return [s.strip() for s in _SENTENCE_RE.split(text) if s and s.strip()]


_WHOLE_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[^\s])|\n+")
#: Words that a period abbreviates rather than ends a sentence after, case and accents folded: legal references
#: (Art., inc., al., par., n., cap., fl.), titles (Sr., Dra., Prof.), and common ones (p., pp., vol., ex., cf.).
ABBREVIATIONS = frozenset({
    "art", "arts", "inc", "incs", "al", "alin", "par", "paragr", "n", "no", "nos", "num", "cap", "caps", "tit",
    "sec", "fl", "fls", "p", "pp", "pag", "pags", "vol", "vols", "ed", "obs", "cf", "ex", "v", "vs", "sr", "sra",
    "srs", "sras", "srta", "dr", "dra", "drs", "dras", "prof", "profa", "profs", "exmo", "exma", "ilmo", "ilma",
    "sto", "sta", "av", "r", "tel", "cel", "gen", "maj", "des", "eng", "adv", "lda", "ltda",
    "cia", "dec", "port", "mr", "mrs", "ms", "st", "jr", "fig", "figs", "approx", "aprox", "e.g", "i.e",
    "sec", "ref", "refs", "ibid", "op", "cit"})
_LAST_WORD_RE = re.compile(r"([^\W\d_][\w.]*|\d+|[IVXLCDM]+)\.$", re.UNICODE)
#: A list marker a period follows at a sentence's start or after ":" or ";": ``1.``, ``IV.``, ``a.`` (no end).
_MARKER_ONLY_RE = re.compile(r"(?:^|[:;]\s*)(?:\d{1,3}|[IVXLCDM]{1,6}|[a-zA-Z])\.$")


def _ends_here(piece: str) -> bool:
    """Whether the period that ends ``piece`` (the text since the last boundary) ends a sentence: not after an
    abbreviation (:data:`ABBREVIATIONS`), a single capital letter (an initial: ``J. Silva``), or a list marker
    (``1.``, ``IV.`` opening the sentence or after ``:`` / ``;``)."""
    if not piece.endswith("."):
        return True
    if _MARKER_ONLY_RE.search(piece.strip()):
        return False
    found = _LAST_WORD_RE.search(piece)
    if found is None:
        return True
    word = found.group(1)
    if len(word) == 1 and word.isupper():
        return False
    return fold(word.rstrip(".")) not in ABBREVIATIONS


def whole_sentences(text: str) -> list[str]:
    """Split ``text`` at sentence ends only (``.!?`` followed by space) and line breaks; drop empties: a
    clause after ";" or ":" stays with its sentence (an answer never quotes half of one), and a period after an
    abbreviation (``Art.``, ``inc.``, ``n.``, ``Sr.``, ``Dra.``), an initial or a list marker ends nothing
    (:func:`_ends_here`)."""
    out: list[str] = []
    start = 0   # each sentence is a slice of ``text`` (the reader finds it in the passage it read)
    for match in _WHOLE_SENTENCE_RE.finditer(text):
        piece = text[start:match.start()]
        if "\n" in match.group(0) or _ends_here(piece):
            out.append(piece)
            start = match.end()
    out.append(text[start:])
    return [s.strip() for s in out if s and s.strip()]
