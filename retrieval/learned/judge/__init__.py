"""The learned, explainable judge: a LambdaMART reranker (kind ``ltr``), a support gate P(support) and an
evidence-sentence model, over one registry of named features (:mod:`retrieval.learned.judge.features`).

Nothing here is imported by ``import retrieval``; LightGBM is imported only when a model is trained or read.
"""

from .features import CANDIDATE_NAMES, SENTENCE_NAMES, feature_label, feature_set_version

__all__ = ["CANDIDATE_NAMES", "feature_label", "feature_set_version", "SENTENCE_NAMES"]
