"""The learned parts: the judge (:mod:`.judge`: features, LambdaMART reranker, support gate, evidence model) and
the reader (:mod:`.reader`: MaxSim over e5 token states). Each sub-package declares its own public names."""

__all__ = ["judge", "reader"]
