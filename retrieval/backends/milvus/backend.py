"""The backend's declaration (``RETRIEVAL_BACKEND=milvus``, :data:`MILVUS` in
:data:`retrieval.backends.base.BACKENDS`): opening a corpus on Milvus (:func:`open_backend`: the client, the
server's features, the sync, the lexical side), ``index --status`` / ``--drop`` (:func:`status`), and the one
process a Milvus Lite file allows."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Sequence

from ...core.errors import RetrievalError
from ...core.filters import field_types
from ...core.kinds import Text
from ...core.reasons import Reason, declare, raw
from ...core.redact import redact_text
from ...core.types import Chunk
from ...ingest.chunking import chunk_documents
from ...ingest.corpus import load_corpus
from ..base import BACKENDS, NO_EMBEDDER, OK, SYNC_FAILED, UNAVAILABLE, Backend, Opened, OpenRequest, StoreStatusError
from ..embedders import chunk_encoding, settings_embedding, vectors_name
from ..lexical import LexicalIndex
from ..reads import INTERRUPTS
from ..vectors import SyncReport, index_variant
from .bm25 import tenant_names, tenant_stats
from .client import MilvusUnavailable, is_server_uri, open_client, server_features
from .collection import MilvusStore
from .lexical import InProcessLexical, MilvusLexical

log = logging.getLogger(__name__)


def open_backend(settings: Any, chunks: Sequence[Chunk], embedder: Any, corpus_key: str, variant: str,
                 progress: bool = True, on_progress: Callable[[int, int], None] | None = None,
                 client: Any = None) -> tuple[Any, MilvusStore | None, Reason, SyncReport | None]:
    """Build the lexical index and the vector store of a corpus on Milvus.

    Returns ``(lexical, store, reason, sync_report)`` as ``Workbench.load_corpus`` uses them. When Milvus
    cannot be opened or the ingest fails (or there is no embedder), the lexical side is the in-process
    :class:`LexicalIndex` and ``store`` is ``None`` with the reason (the ``lexical_only`` tier); the collection
    keeps what it held before. A server without sparse vectors keeps the dense side and the filters, and the
    lexical side is :class:`InProcessLexical` (its reason in the trace).
    """
    local = lambda: LexicalIndex(chunks, settings.tenant_field, settings.bm25_engine)  # noqa: E731
    if embedder is None:
        return local(), None, NO_EMBEDDER(why=raw("no embedder")), None
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
    try:
        client = client or open_client(settings.milvus_uri, token, settings.milvus_timeout)
        features = server_features(client, settings.milvus_uri, settings.milvus_timeout)
    except MilvusUnavailable as exc:
        log.warning(str(exc))
        return local(), None, UNAVAILABLE(error=raw(str(exc))), None
    stats = (tenant_stats if features.sparse else tenant_names)(chunks, settings.tenant_field)
    store = MilvusStore(client, corpus_key, vectors_name(embedder), variant, tenant_field=settings.tenant_field,
                        types=field_types(chunks), ef_search=settings.hnsw_ef_search,
                        timeout=settings.milvus_timeout, server=is_server_uri(settings.milvus_uri),
                        passage_template=settings.passage_template, features=features)
    try:
        with chunk_encoding(embedder, chunks, settings.reader_states_at_index) as encode:
            report = store.sync(chunks, embedder.embed_passages, getattr(embedder, "batch", 32), progress,
                                on_progress, stats=stats, encode_chunks=encode)
    except BaseException as exc:  # noqa: BLE001 - recorded; the tier drops to lexical_only (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        reason = SYNC_FAILED(error=raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))
        log.warning(reason.text())
        return local(), None, reason, None
    if not features.sparse:
        why = features.lexical_reason
        assert why is not None  # a server without sparse vectors says why BM25 runs in process
        log.info(why)
        return (InProcessLexical(chunks, settings.tenant_field, settings.bm25_engine, why),
                store, OK(), report)
    return MilvusLexical(store, chunks, settings.tenant_field, stats, settings.bm25_engine), store, OK(), report


def collection_for(settings: Any, corpus_path: Path, model_name: str | None = None) -> tuple[Any, MilvusStore]:
    """The client and the :class:`MilvusStore` (not synced) of a corpus under ``settings`` (for ``index
    --status`` / ``--drop``): the corpus is read and chunked, since the collection name depends on its fields.

    Raises:
        MilvusUnavailable: the server is unreachable or too old.
        CorpusError: the corpus cannot be read.
    """

    chunks = chunk_documents(load_corpus(corpus_path), settings.chunk_tokens, settings.chunk_overlap,
                             settings.contextual)
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
    client = open_client(settings.milvus_uri, token, settings.milvus_timeout)
    store = MilvusStore(client, str(corpus_path), model_name or settings_embedding(settings),
                        index_variant(settings.chunk_tokens, settings.chunk_overlap, settings.contextual,
                                      settings.passage_template),
                        tenant_field=settings.tenant_field, types=field_types(chunks),
                        timeout=settings.milvus_timeout, server=is_server_uri(settings.milvus_uri),
                        features=server_features(client, settings.milvus_uri, settings.milvus_timeout))
    return client, store


def _open(req: OpenRequest) -> Opened:
    with req.write_lock():
        lexical, store, reason, report = open_backend(req.settings, req.chunks, req.embedder, req.corpus_key,
                                                      req.variant, req.progress, req.on_progress)
    if req.embedder is None:
        reason = NO_EMBEDDER(why=req.embedder_reason)
    return Opened(lexical, store, reason, report)


def status(settings: Any, path: Path, drop: bool) -> str:
    """``index --status`` / ``--drop`` on the Milvus backend.

    Raises:
        CorpusError: the corpus cannot be read. StoreStatusError: Milvus is unreachable or fails (one line).
    """
    try:
        _, store = collection_for(settings, path)
        exists = store.client.has_collection(store.name)
        if drop:
            store.drop()
            return f"dropped {store.name}" if exists else f"no index for {path}"
        if not exists:
            return f"{path}: not indexed (collection {store.name} absent)"
        return redact_text(f"{path}: {store.count()} chunks in {store.name}, model {settings.embedding_model}, "
                           f"store milvus {settings.milvus_uri}", settings.secrets())
    except MilvusUnavailable as exc:
        raise StoreStatusError(redact_text(str(exc), settings.secrets())) from None
    except RetrievalError:
        raise
    except BaseException as exc:  # noqa: BLE001 - one line, never a traceback (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        raise StoreStatusError(redact_text(f"Milvus at {settings.milvus_uri}: {exc.__class__.__name__}: "
                                           f"{str(exc)[:200]}", settings.secrets())) from None


LITE_ONE_PROCESS = declare("milvus.lite_one_process",
                           en="RETRIEVAL_MILVUS_URI={uri} is a Milvus Lite file, which one process at a time may open: "
                              "use --workers 1, or a Milvus server URI (http://host:19530) for several workers",
                           pt="RETRIEVAL_MILVUS_URI={uri} é um arquivo do Milvus Lite, que só um processo por vez pode "
                              "abrir: use --workers 1, ou a URI de um servidor Milvus (http://host:19530) para vários "
                              "processos")

MILVUS = BACKENDS.declare(Backend(
    name="milvus", label=Text("Milvus (both indexes)", "Milvus (os dois índices)"), open=_open,
    store_label=lambda s: "milvus", engine_label=lambda s: "milvus sparse (our BM25)", status=status,
    processes=lambda s: None if "://" in s.milvus_uri else LITE_ONE_PROCESS(uri=s.milvus_uri)))
