"""The question as the features read it: its content tokens with their IDF, codes and negation, condition and
quantity flags (:class:`QuestionTerms`), its focus (:class:`Focus`), and how much of them a passage holds
(coverage, missing focus, word pairs, proximity, alignment of negations, conditions and codes)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ...core.codes import CONDITIONS, NEGATIONS, codes
from ...core.text import KEPT_WORDS, fold, tokenize
from .view import TenantStats
from .words import _WORD_FORM_RE, _forms

_NEG_WORDS = frozenset(fold(w) for w in NEGATIONS)
_COND_WORDS = frozenset(fold(w) for w in CONDITIONS if " " not in w)
_COND_PHRASES = tuple(fold(w) for w in CONDITIONS if " " in w)
_WH_NUMBER_RE = re.compile(r"\b(quant[oa]s?|quando|how many|how much|when)\b")


@dataclass(frozen=True)
class QuestionTerms:
    """The question's content tokens with their IDF, codes and negation/condition flags."""

    tokens: tuple[str, ...]
    idf: tuple[float, ...]
    max_idf: float
    codes: tuple[str, ...]
    has_neg: bool
    has_cond: bool
    wh_number: bool

    @property
    def total(self) -> float:
        return sum(self.idf)


def question_terms(question: str, stats: TenantStats) -> QuestionTerms:
    tokens = tuple(dict.fromkeys(tokenize(question)))
    folded = fold(question)
    words = set(re.findall(r"[0-9a-z]+", folded))
    return QuestionTerms(tokens, tuple(stats.idf(t) for t in tokens), stats.max_idf,
                         tuple(c.casefold() for c in codes(question)),
                         bool(words & _NEG_WORDS), bool(words & _COND_WORDS) or any(p in folded for p in _COND_PHRASES),
                         bool(_WH_NUMBER_RE.search(folded)))


def _coverage(q: QuestionTerms, present: frozenset[str] | set[str]) -> float:
    total = q.total
    return sum(w for t, w in zip(q.tokens, q.idf) if t in present) / total if total > 0 else 0.0


def _count_cov(q: QuestionTerms, present: frozenset[str] | set[str]) -> float:
    return sum(1 for t in q.tokens if t in present) / len(q.tokens) if q.tokens else 0.0


def _focus_missing(q: QuestionTerms, present: frozenset[str] | set[str]) -> float:
    missing = [w for t, w in zip(q.tokens, q.idf) if t not in present]
    return max(missing) / q.max_idf if missing and q.max_idf > 0 else 0.0


def _bigram_cov(q: QuestionTerms, seq: Sequence[str]) -> float:
    pairs = list(zip(q.tokens, q.tokens[1:]))
    if not pairs:
        return 0.0
    where: dict[str, list[int]] = {}
    for i, t in enumerate(seq):
        where.setdefault(t, []).append(i)
    hit = 0
    for a, b in pairs:
        pa, pb = where.get(a), where.get(b)
        if pa and pb and any(abs(i - j) <= 2 for i in pa for j in pb):
            hit += 1
    return hit / len(pairs)


def _proximity(q: QuestionTerms, seq: Sequence[str]) -> float:
    """Covered distinct tokens / shortest span holding them all (minimum window over the sequence)."""
    wanted = set(q.tokens)
    positions = [(i, t) for i, t in enumerate(seq) if t in wanted]
    need = len({t for _, t in positions})
    if need < 2:
        return 0.0
    counts: dict[str, int] = {}
    have, best, left = 0, len(seq) + 1, 0
    for right in range(len(positions)):
        t = positions[right][1]
        counts[t] = counts.get(t, 0) + 1
        if counts[t] == 1:
            have += 1
        while have == need:
            span = positions[right][0] - positions[left][0] + 1
            best = min(best, span)
            lt = positions[left][1]
            counts[lt] -= 1
            if counts[lt] == 0:
                have -= 1
            left += 1
    return need / best


def _align(question_has: bool, words: frozenset[str] | set[str], vocab: frozenset[str],
           folded: str = "", phrases: tuple[str, ...] = ()) -> float:
    if not question_has:
        return 0.0
    return 1.0 if (words & vocab or any(p in folded for p in phrases)) else -1.0


def _code_features(q: QuestionTerms, text_codes: Sequence[str], folded: str) -> tuple[float, float]:
    if not q.codes:
        return 0.0, 0.0
    present = [c for c in q.codes if re.search(rf"(?<![\w-]){re.escape(fold(c))}(?![\w-])", folded)]
    conflict = 0.0
    prefixes = {c.split("-", 1)[0] for c in q.codes if c not in present}
    if prefixes and any(tc.split("-", 1)[0] in prefixes and tc not in q.codes for tc in text_codes):
        conflict = 1.0
    return len(present) / len(q.codes), conflict


#: Question and auxiliary words (folded): part of how a question is asked, not of what it is about.
QUESTION_WORDS = frozenset(
    "qual quais quanto quanta quantos quantas como onde porque quem posso pode podem podemos consigo "
    "faco fazer faz quero queria preciso devo tenho ter ser sao existe existem ha vai vou significa leva levam "
    "demora demoram "
    "what which how where who whom why can could do does did get".split())

#: English function words (a short list: the stop-words package's English list holds 1,300 words, among
#: them "area", "face", "site", "zero" and "e", which are content words in a Portuguese question).
ENGLISH_FUNCTION_WORDS = frozenset(
    "a an the of to in on at by for from with about into over under and or but is are was were be been being "
    "am do does did done have has had having i me my mine we us our you your he him his she her it its they "
    "them their this that these those there here what which who whom whose how why where when whether can "
    "could would should will shall may might must any some all each every other than then so as also just "
    "very too not no yes if after before during since until while long much many take takes taken need "
    "needs want please tell know".split())


@dataclass(frozen=True)
class Focus:
    """The question's focus tokens (content tokens that are not question words), their IDF and forms."""

    tokens: tuple[str, ...]
    idf: tuple[float, ...]
    forms: tuple[tuple[str, ...], ...]

    @property
    def total(self) -> float:
        return sum(self.idf)


def focus_of(question: str, q: QuestionTerms) -> Focus:
    """The focus tokens of ``question`` (see :data:`GATE_FEATURES`)."""

    drop = QUESTION_WORDS | (ENGLISH_FUNCTION_WORDS - KEPT_WORDS)
    raw: dict[str, str] = {}
    for word in _WORD_FORM_RE.findall(question.casefold()):
        raw.setdefault(fold(word), word)
    toks, idf, forms = [], [], []
    for t, w in zip(q.tokens, q.idf):
        if t in drop or "-" in t and all(p in drop for p in t.split("-")):
            continue
        toks.append(t)
        idf.append(w)
        word = raw.get(t)
        forms.append(tuple(f for f in ((t,) + (_forms(word)[1:] if word else ())) if f))
    return Focus(tuple(toks), tuple(idf), tuple(forms))
