"""The judge's feature set: one registry of named, documented features of (question, candidate) and of
(question, context sentence), computed from a frozen :class:`JudgeInput` that holds only what the request
already has (the generators' lists, the query vector, the stored chunk vectors, the tokenizer and the
tenant's BM25 statistics). No feature re-runs a search or an embedding.

The features describe the *match* (how much of the question a passage covers, what it misses, whether codes,
negations and conditions line up, how the rankers placed it), never a corpus' vocabulary, so a model trained
on one corpus can carry over to another. Models record :func:`feature_set_version` and the feature names;
a model whose list differs is refused at load (see :mod:`retrieval.learned.judge.models`).

Conventions: "content tokens" are :func:`retrieval.core.text.tokenize` tokens of the question (stopwords removed,
negation and condition words kept), unique, in order. IDF is Lucene's BM25 IDF over the tenant's subchunks,
``ln(1 + (N − n + 0.5) / (n + 0.5))``; a token absent from the index gets ``n = 0`` (the largest IDF).
"IDF-weighted coverage" of a token set S by a passage P is ``Σ_{t∈S∩P} idf(t) / Σ_{t∈S} idf(t)`` in [0, 1].

The registry is split by job: :mod:`.declaration` (the :class:`Feature` declaration), :mod:`.view` (tenant
statistics, text views, :class:`JudgeInput`), :mod:`.words` (word forms), :mod:`.terms` (the question's terms,
focus and the match measures), :mod:`.candidate`, :mod:`.sentence` and :mod:`.gate` (each group's declarations,
context and rows). This module gathers them: the feature set's version, the features by name and their labels.
"""

from __future__ import annotations

from functools import lru_cache

from ...core.kinds import Text
from .candidate import CANDIDATE_FEATURES, CANDIDATE_NAMES, CandidateRows, _Window, candidate_features
from .declaration import Feature
from .fingerprint import fingerprint
from .gate import GATE_FEATURES, GATE_NAMES, GATE_SIGNS, _GateContext, focus_missing_words, gate_features
from .sentence import SENTENCE_FEATURES, SENTENCE_NAMES, SentenceRows, _SentenceTable, sentence_features
from .terms import ENGLISH_FUNCTION_WORDS, QUESTION_WORDS, Focus, QuestionTerms, focus_of, question_terms
from .view import JudgeInput, TenantStats, TextView, stats_without, tenant_stats
from .words import holds, word_forms

__all__ = [
    "BIAS_DOC", "BIAS_LABEL", "CANDIDATE_FEATURES", "CANDIDATE_NAMES", "CandidateRows", "ENGLISH_FUNCTION_WORDS",
    "FEATURE_DOCS", "Feature", "Focus", "GATE_FEATURES", "GATE_NAMES", "GATE_SIGNS", "JudgeInput", "QUESTION_WORDS",
    "QuestionTerms", "SENTENCE_FEATURES", "SENTENCE_NAMES", "SentenceRows", "TenantStats", "TextView",
    "candidate_features", "feature_label", "feature_set_version", "focus_missing_words", "focus_of", "gate_features",
    "holds", "question_terms", "sentence_features", "stats_without", "tenant_stats", "word_forms",
]


def _feature_set_version() -> str:
    """A digest of every declaration (group, order, name, range, text, sign) **and of the code that computes
    each feature** (its function, the group's context class, every project function they reach:
    :mod:`.fingerprint`): adding, removing, reordering, re-describing or recomputing a feature changes it, so a
    model trained on another set is refused at load."""
    return "judge-features-" + fingerprint("_f", (
        ("candidate", CANDIDATE_FEATURES, _Window), ("sentence", SENTENCE_FEATURES, _SentenceTable),
        ("gate", GATE_FEATURES, _GateContext)))


@lru_cache(maxsize=1)
def feature_set_version() -> str:
    """The feature set's version (:func:`_feature_set_version`), recorded by every model and checked at load;
    computed once per process, on first use."""
    return _feature_set_version()


FEATURE_DOCS: dict[str, Feature] = {f.name: f for f in (*CANDIDATE_FEATURES, *SENTENCE_FEATURES, *GATE_FEATURES)}
#: The model's baseline term of an explanation (what every contribution is measured from).
BIAS_LABEL = Text("model baseline (bias)", "base do modelo (viés)")
BIAS_DOC = "the log-odds with every feature at its training average"


def feature_label(name: str, lang: str = "en") -> str:
    """A feature (or the ``bias``) in plain words in ``lang``; its id where it has no label."""
    if name == "bias":
        return BIAS_LABEL(lang)
    feature = FEATURE_DOCS.get(name)
    return feature.label(lang) if feature is not None and feature.label is not None else name
