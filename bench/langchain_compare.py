"""LangChain's ``EnsembleRetriever`` side by side with our pipeline on the same corpus and questions
(``requirements-bench.txt``)."""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from retrieval.settings import Settings

from .stats import pct as _pct


def _langchain(bench: Any, s: Settings, state: Any, questions: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """LangChain ``EnsembleRetriever`` (``BM25Retriever`` per tenant + ``Chroma`` over our own collections, the
    same embedder wrapped as LangChain ``Embeddings``, k = our window, equal weights, c = rrf_k) on the same
    questions, against our ``rrf_only`` pipeline. Both pay the same query embedding: reported apart."""
    try:
        from langchain_chroma import Chroma
        from langchain_classic.retrievers import EnsembleRetriever
        with warnings.catch_warnings():  # langchain-community announces its sunset on import
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_community.retrievers import BM25Retriever
        from langchain_core.documents import Document as LCDocument
        from langchain_core.embeddings import Embeddings
    except ImportError as exc:
        return {"skipped": f"LangChain not installed ({exc.name}): pip install -r requirements-bench.txt"}
    from retrieval.core.text import tokenize

    embedder = bench.embedder
    spent: list[float] = []

    class WrappedEmbeddings(Embeddings):
        """Our embedder as LangChain ``Embeddings`` (timed, so the query embedding can be reported apart)."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_passages(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            t = time.perf_counter()
            vec = embedder.embed_queries([text])[0].tolist()
            spent.append((time.perf_counter() - t) * 1000)
            return vec

    window, top_k, field = s.window, s.top_k, s.tenant_field
    started = time.perf_counter()
    groups: dict[Any, list[Any]] = {}
    for c in state.chunks:
        groups.setdefault(c.metadata.get(field), []).append(
            LCDocument(page_content=c.indexed_text, metadata={"parent": c.parent_id, "chunk": c.chunk_id}))
    bm25 = {t: BM25Retriever.from_documents(docs, k=window, preprocess_func=tokenize) for t, docs in groups.items()}
    # Over our own collections, in our layout (retrieval.backends.chroma.DenseLayout): a tenant's collection, and a
    # tenant filter only where a collection holds several tenants.
    layout, client, stores = state.store.layout, bench._client_or_reason()[0], {}
    for tenant in groups:
        name = layout.name_for(tenant) if layout.multi_tenant else state.store.name
        if name not in stores:
            stores[name] = Chroma(client=client, collection_name=name, embedding_function=WrappedEmbeddings())
    setup_s = time.perf_counter() - started
    ours_total, ours_model, ours_end_to_end, theirs_total, theirs_model, jaccards = [], [], [], [], [], []
    ts = s.with_overrides(reranker_model="none")
    for question, filters in questions:
        bench.encoder.clear()
        trace = bench.ask(question, filters, settings=ts)
        tm = trace.timings_ms
        ours_model.append(tm.get("embed_query") or 0.0)
        ours_total.append(ours_model[-1] + sum(tm.get(k) or 0.0 for k in ("lexical", "dense", "fusion", "dedup")))
        ours_end_to_end.append(tm["total"])
        ours = list(dict.fromkeys(i.parent_id for i in trace.fused.items))[:top_k]
        tenant = filters.get(field)
        kwargs: dict[str, Any] = {"k": window}
        if tenant is not None and not layout.isolated:
            kwargs["filter"] = {field: tenant}
        store = stores[layout.name_for(tenant) if layout.multi_tenant else state.store.name]
        ensemble = EnsembleRetriever(retrievers=[bm25[tenant], store.as_retriever(search_kwargs=kwargs)],
                                     weights=[0.5, 0.5], c=s.rrf_k)
        before = len(spent)
        t = time.perf_counter()
        docs = ensemble.invoke(question)
        theirs_total.append((time.perf_counter() - t) * 1000)
        theirs_model.append(sum(spent[before:]))
        theirs = list(dict.fromkeys(str(d.metadata.get("parent", d.metadata.get("rw_parent"))) for d in docs))[:top_k]
        union = set(ours) | set(theirs)
        jaccards.append(len(set(ours) & set(theirs)) / len(union) if union else 1.0)
    ours_ret = [a - b for a, b in zip(ours_total, ours_model)]
    theirs_ret = [a - b for a, b in zip(theirs_total, theirs_model)]
    return {
        "k": top_k, "window": window, "setup_s": round(setup_s, 2),
        "ours_total_p50": _pct(ours_total, 0.5), "langchain_total_p50": _pct(theirs_total, 0.5),
        "ours_retrieval_p50": _pct(ours_ret, 0.5), "langchain_retrieval_p50": _pct(theirs_ret, 0.5),
        "query_embedding_p50": _pct(ours_model, 0.5), "langchain_query_embedding_p50": _pct(theirs_model, 0.5),
        "speedup_total_p50": round(_pct(theirs_total, 0.5) / _pct(ours_total, 0.5), 2),
        "speedup_retrieval_p50": round(_pct(theirs_ret, 0.5) / max(_pct(ours_ret, 0.5), 1e-9), 2),
        "jaccard_at_k_mean": round(float(np.mean(jaccards)), 3),
        "ours_end_to_end_p50": _pct(ours_end_to_end, 0.5),
        "note": "ours = the rrf_only pipeline's embed_query + lexical + dense + fusion + dedup stages (the "
                "retrieval that EnsembleRetriever.invoke does; our gate and answer are in ours_end_to_end); "
                "retrieval = total minus the query embedding; Jaccard over the top-k parent ids",
    }
