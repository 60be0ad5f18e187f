"""What a request passes through, each kind declared once: fusion methods, reranker kinds, the gate, tiers, query
transforms, the answer. Generation, selection, MMR and the judge's inputs are the pipeline's own steps."""

__all__ = ["answer", "fusion", "gate", "judge", "rerank", "tiers", "transforms"]
