"""The local backend (``backend=local``): BM25 in the app process (:mod:`.lexical`) and the vectors in Chroma,
embedded on disk (``RETRIEVAL_CHROMA_PATH``) or a Chroma server (``RETRIEVAL_CHROMA_HOST``).

Opening, syncing and ``index --status`` catch any failure of Chroma's native code (a Rust panic is a
``BaseException``; interrupts go on: :data:`.store.INTERRUPTS`); a damaged embedded store is said with
:data:`.base.DAMAGED`, whose remedy is ``index --rebuild``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..core.kinds import Text
from ..core.reasons import raw
from ..core.redact import redact_text
from .base import (BACKENDS, DAMAGED, NO_EMBEDDER, OK, SYNC_FAILED, UNAVAILABLE, Backend, Opened, OpenRequest,
                   StoreDamaged, StoreStatusError, for_corpus, rebuild_command)
from ..ingest.corpus import load_corpus
from .embedders import chunk_encoding, settings_embedding, vectors_name
from .lexical import LexicalIndex
from .chroma import VectorStore, damage_reason, open_client, probe_damage
from .reads import INTERRUPTS
from .vectors import index_variant

log = logging.getLogger(__name__)


def embedded_path(settings: Any) -> Path | None:
    """The embedded store's folder, or ``None`` when the vectors live on a Chroma server."""
    return None if settings.chroma_host else Path(settings.chroma_path)


def chroma_client(settings: Any) -> tuple[Any, Any]:
    """``(a Chroma client, OK)`` from the settings, or ``(None, reason)`` (:data:`.base.DAMAGED` for a damaged
    embedded store); never raises but an interrupt."""
    try:
        return open_client(settings.chroma_path, settings.chroma_host), OK()
    except BaseException as exc:  # noqa: BLE001 - recorded as the lexical_only reason (a Rust panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        damaged = damage_reason(exc, embedded_path(settings))
        if damaged is not None:
            return None, damaged
        return None, UNAVAILABLE(error=raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))


def open_local(req: OpenRequest) -> Opened:
    """BM25 rebuilt from the chunks; the Chroma collections synced (the client from ``req.client``, which the
    Workbench keeps open for its corpora)."""
    s = req.settings
    lexical = LexicalIndex(req.chunks, s.tenant_field, s.bm25_engine, s.bm25_analyzer)
    if req.embedder is None:
        return Opened(lexical, None, NO_EMBEDDER(why=req.embedder_reason))
    client, why = req.client() if req.client is not None else chroma_client(s)
    if client is None:
        why = for_corpus(why, req.corpus_key)
        if DAMAGED.matches(why):
            log.warning(why.text())
        return Opened(lexical, None, why)
    store = VectorStore(client, req.corpus_key, vectors_name(req.embedder), req.variant, ef_search=s.hnsw_ef_search,
                        passage_template=s.passage_template, tenant_field=s.tenant_field,
                        tenant_buckets=s.tenant_buckets, path=embedded_path(s), exact_up_to=s.dense_exact_up_to)
    try:
        with req.write_lock(), chunk_encoding(req.embedder, req.chunks, s.reader_states_at_index) as encode:
            report = store.sync(req.chunks, req.embedder.embed_passages, getattr(req.embedder, "batch", 32),
                                req.progress, req.on_progress, encode_chunks=encode)
        return Opened(lexical, store, OK(), report)
    except BaseException as exc:  # noqa: BLE001 - recorded; the tier drops to lexical_only (a Rust panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        reason = store.damage(exc) or SYNC_FAILED(error=raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))
        log.warning(reason.text())
        return Opened(lexical, None, reason)


def damaged_store(settings: Any, corpus: Path | str | None = None) -> Any:
    """:data:`.base.DAMAGED` when the embedded store's SQLite file fails its page-by-page check (about a second per
    GB), else ``None`` (a whole file, no file yet, a Chroma server, another backend): ``index`` checks before it
    opens the store, so a damaged one is one line and nothing else."""
    where = embedded_path(settings) if settings.backend == LOCAL.name else None
    found = probe_damage(where, thorough=True) if where is not None else None
    return None if found is None else DAMAGED(path=str(where), error=raw(found), command=rebuild_command(corpus))


def status(settings: Any, path: Path, drop: bool) -> str:
    """``index --status`` / ``--drop`` on the Chroma store: the index's collections in any layout (one per tenant,
    buckets, or one), counted or dropped together.

    ``--status`` on an embedded store also checks its SQLite file page by page (``PRAGMA quick_check``, about a
    second per GB) before Chroma reads it: a damaged store is said before an ``index`` fails on it.

    Raises:
        CorpusError: the corpus cannot be read. StoreDamaged: the embedded store is damaged (one line naming
        ``index --rebuild``). StoreStatusError: any other store failure (one line).
    """
    load_corpus(path, settings.tenant_field)  # a clear error for an unreadable corpus
    variant = index_variant(settings.chunk_tokens, settings.chunk_overlap, settings.contextual,
                            settings.passage_template)
    where_path = embedded_path(settings)
    if where_path is not None and not drop:
        found = probe_damage(where_path, thorough=True)
        if found is not None:
            raise StoreDamaged(DAMAGED(path=str(where_path), error=raw(found), command=rebuild_command(path)))
    try:
        store = VectorStore(open_client(settings.chroma_path, settings.chroma_host), str(path),
                            settings_embedding(settings), variant, path=where_path)
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
    except BaseException as exc:  # noqa: BLE001 - any store failure is one line, exit 2 (a Rust panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        damaged = damage_reason(exc, where_path, path)
        if damaged is not None:
            raise StoreDamaged(for_corpus(damaged, path)) from None
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
