"""The local backend (``backend=local``): BM25 in the app process (:mod:`.lexical`) and the vectors in Chroma,
embedded on disk (``RETRIEVAL_CHROMA_PATH``) or a Chroma server (``RETRIEVAL_CHROMA_HOST``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..core.kinds import Text
from ..core.reasons import raw
from ..core.redact import redact_text
from .base import BACKENDS, NO_EMBEDDER, OK, SYNC_FAILED, UNAVAILABLE, Backend, Opened, OpenRequest, StoreStatusError
from ..ingest.corpus import load_corpus
from .lexical import LexicalIndex
from .store import VectorStore, index_variant, open_client

log = logging.getLogger(__name__)


def chroma_client(settings: Any) -> tuple[Any, Any]:
    """``(a Chroma client, OK)`` from the settings, or ``(None, reason)``; never raises."""
    try:
        return open_client(settings.chroma_path, settings.chroma_host), OK()
    except Exception as exc:  # noqa: BLE001 - recorded as the lexical_only reason
        return None, UNAVAILABLE(error=raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))


def open_local(req: OpenRequest) -> Opened:
    """BM25 rebuilt from the chunks; the Chroma collections synced (the client from ``req.client``, which the
    Workbench keeps open for its corpora)."""
    s = req.settings
    lexical = LexicalIndex(req.chunks, s.tenant_field, s.bm25_engine)
    if req.embedder is None:
        return Opened(lexical, None, NO_EMBEDDER(why=req.embedder_reason))
    client, why = req.client() if req.client is not None else chroma_client(s)
    if client is None:
        return Opened(lexical, None, why)
    try:
        with req.write_lock():
            store = VectorStore(client, req.corpus_key, req.embedder.name, req.variant, ef_search=s.hnsw_ef_search,
                                passage_template=s.passage_template, tenant_field=s.tenant_field,
                                tenant_buckets=s.tenant_buckets)
            report = store.sync(req.chunks, req.embedder.embed_passages, getattr(req.embedder, "batch", 32),
                                req.progress, req.on_progress)
        return Opened(lexical, store, OK(), report)
    except Exception as exc:  # noqa: BLE001 - recorded; the tier drops to lexical_only
        reason = SYNC_FAILED(error=raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))
        log.warning(reason.text())
        return Opened(lexical, None, reason)


def status(settings: Any, path: Path, drop: bool) -> str:
    """``index --status`` / ``--drop`` on the Chroma store: the index's collections in any layout (one per tenant,
    buckets, or one), counted or dropped together.

    Raises:
        CorpusError: the corpus cannot be read. StoreStatusError: any store failure (one line).
    """
    load_corpus(path, settings.tenant_field)  # a clear error for an unreadable corpus
    variant = index_variant(settings.chunk_tokens, settings.chunk_overlap, settings.contextual,
                            settings.passage_template)
    try:
        store = VectorStore(open_client(settings.chroma_path, settings.chroma_host), str(path),
                            settings.embedding_model, variant)
        name = store.name
        owned = store.owned()
        if drop:
            store.drop()
            return (f"dropped {name}" + (f" ({len(owned)} collections)" if len(owned) > 1 else "")
                    if owned else f"no index for {path}")
        if not owned:
            return f"{path}: not indexed (collection {name} absent)"
        count = sum(col.count() for col in owned.values())
        metas = [col.metadata or {} for col in owned.values()]
    except Exception as exc:  # noqa: BLE001 - any store failure is one line, exit 2
        where = f"server {settings.chroma_host}" if settings.chroma_host else f"path {settings.chroma_path}"
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise StoreStatusError(redact_text(f"vector store unavailable ({where}): {exc.__class__.__name__}"
                                           + (f": {first}" if first else ""), settings.secrets())) from None
    layouts = sorted({str(m.get("layout", "one collection")) for m in metas})
    where = name if len(owned) == 1 else f"{len(owned)} collections of {name}"
    return redact_text(f"{path}: {count} chunks in {where} ({', '.join(layouts)}), model "
                       f"{metas[0].get('embedding_model')}, store {settings.chroma_host or settings.chroma_path}",
                       settings.secrets())


LOCAL = BACKENDS.declare(Backend(
    name="local", label=Text("in-process BM25 + Chroma", "BM25 no processo + Chroma"), open=open_local,
    store_label=lambda s: "chroma-server" if s.chroma_host else "chroma-embedded",
    engine_label=lambda s: s.bm25_engine, status=status))
