"""The benchmark: speed and scale figures of the pipeline (``python -m retrieval bench``).

* :mod:`.run`: one subprocess per corpus, per-stage latency per tier, index build, HNSW recall, the table.
* :mod:`.synthetic`: synthetic corpora and their embedder (labelled SYNTHETIC everywhere).
* :mod:`.memory_store`: an in-memory HNSW store behind the pipeline's dense-store protocol.
* :mod:`.langchain_compare`: LangChain's ``EnsembleRetriever`` on the same corpus and questions.
"""
