"""Hybrid retrieval workbench: BM25 + dense + RRF + rerank with degradation tiers and one trace.

Importing this package is light: models, torch and chromadb load inside factories.
"""

__version__ = "0.1.0"
