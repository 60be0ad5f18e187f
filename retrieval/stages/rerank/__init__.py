"""Rerankers: one kind a module, each declared once in :data:`KINDS`, in the order they are imported here (the
order the app offers them in)."""

# isort: off
from . import learned, off, reader, bi_encoder, cross_encoder  # noqa: F401 - each module declares its kind
# isort: on
from .base import (KINDS, OFF, LoadContext, Reranker, RerankerKind, RerankerSpec, RerankInput, canonical, load_reranker,
                   offered, reranker_key, run, score_passages)

__all__ = ["KINDS", "OFF", "LoadContext", "Reranker", "RerankerKind", "RerankerSpec", "RerankInput", "canonical",
           "load_reranker", "offered", "reranker_key", "run", "score_passages", "learned", "reader"]
