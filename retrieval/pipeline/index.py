"""Building an index: read and chunk a corpus, build its BM25 indexes, sync its vector store.

:func:`build_index` returns a frozen :class:`IndexState`; the caller makes it current only once it is
complete, so a failed load leaves the previous index usable. A vector store that cannot be opened or
synced is not an error: the state records why (the request then runs ``lexical_only``); a damaged one says so
(:data:`~retrieval.backends.base.DAMAGED`), and :func:`rebuild_store` makes way for building it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..ingest.chunking import chunk_documents
from ..ingest.corpus import read_corpus
from ..ingest.documents import DEFAULT_TENANT_FIELD
from ..ingest.folder import IntakeReport
from ..backends.embedders import Embedder, settings_embedding, vectors_name
from ..backends import BACKENDS, OpenRequest
from ..backends.base import StoreStatusError
from ..backends.state import IndexState
from ..backends.chroma import VectorStore, damage_reason, move_aside, open_client, probe_damage
from ..backends.reads import INTERRUPTS
from ..backends.vectors import index_variant
from ..core.errors import CorpusError, first_line
from ..core.filters import field_types
from ..core.memory import plan_memory
from ..core.paths import LAB_CORPUS
from ..core.reasons import Reason
from ..core.types import Chunk, Document
from ..settings import Settings

log = logging.getLogger(__name__)




def check_tenant_field(docs: Sequence[Document], tenant_field: str, source: Path) -> None:
    """Refuse a tenant field that would silently change who sees what.

    * A field other than the default ``tenant`` that no document carries, while the documents carry other
      metadata: a misspelled ``RETRIEVAL_TENANT_FIELD`` (``tennant``) would make a multi-tenant corpus
      single-tenant, every request searching every tenant. The refusal names the keys the documents carry.
    * A field some documents carry and others do not: every request names one tenant, so the documents
      without one could never be found. The refusal names how many, and the first.

    A corpus without any tenant field under the default name is single-tenant, as are documents with no
    metadata at all: both load.

    Raises:
        CorpusError: one of the two cases above, in one line naming ``source``.
    """
    carrying = sum(1 for d in docs if tenant_field in d.metadata)
    if carrying == 0:
        keys = sorted({k for d in docs for k in d.metadata})
        if tenant_field != DEFAULT_TENANT_FIELD and keys:
            shown = ", ".join(repr(k) for k in keys[:20]) + (f" and {len(keys) - 20} more" if len(keys) > 20 else "")
            raise CorpusError(f"{source}: the tenant field {tenant_field!r} (RETRIEVAL_TENANT_FIELD) is in no "
                              f"document; their metadata keys are {shown}")
        return
    if carrying < len(docs):
        first = next(d for d in docs if tenant_field not in d.metadata)
        raise CorpusError(f"{source}: {len(docs) - carrying} of {len(docs)} documents have no tenant field "
                          f"{tenant_field!r} (first: {first.id!r}); every request names a tenant, so they could "
                          "never be found: give each document its tenant")


#: Seconds between two looks at a busy collection lock (each tells the waiting page who holds it).
WAIT_POLL_S = 0.5


def lock_path(settings: Settings, key: str) -> Path:
    """The lock file of one collection's writes: ``<chroma_path>.locks/<digest of key>.lock``."""
    path = Path(settings.chroma_path).resolve()  # "" or "." names the folder it resolves to
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]
    return path.with_name(path.name + ".locks") / f"{digest}.lock"


def lock_holder(path: Path) -> dict[str, Any]:
    """What the holder of a collection lock wrote of itself (pid, what it writes, since when, how far), or
    ``{}`` when it wrote nothing readable."""
    try:
        found = json.loads(path.with_suffix(".holder").read_text(encoding="utf-8"))
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}


@contextmanager
def store_write_lock(settings: Settings, key: str = "", what: str = "",
                     on_wait: Callable[[Mapping[str, Any]], None] | None = None) -> Iterator[Callable[..., None]]:
    """Held while one collection of the store is synced: one writer at a time per collection across the
    processes of one machine (the workers of ``retrieval serve``, a ``retrieval index`` beside a running app),
    by ``flock`` on that collection's lock file (:func:`lock_path`; ``key`` names the collection: the corpus,
    the model and the chunking). Indexing one corpus never blocks another. The second writer of the same
    collection waits, calling ``on_wait(holder)`` at each look with what the holder wrote of itself
    (:func:`lock_holder`), then finds the store synced and writes nothing. Yields ``report(**fields)``, which
    the holder calls to say how far it is (``embedded``, ``total``). Where the file cannot be created (a
    read-only folder), or on a system without ``flock``, the sync goes on under the process' own lock only."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield lambda **_: None
        return
    try:
        path = lock_path(settings, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except (OSError, ValueError) as exc:  # ValueError: a path with no name to put a lock beside ("/")
        log.debug("no cross-process store lock (%s); syncing under the process lock only", exc)
        yield lambda **_: None
        return
    holder = {"pid": os.getpid(), "what": what or key, "since": time.time()}

    def report(**fields: Any) -> None:
        holder.update(fields)
        try:
            tmp = path.with_suffix(f".holder.{os.getpid()}")
            tmp.write_text(json.dumps(holder), encoding="utf-8")
            os.replace(tmp, path.with_suffix(".holder"))
        except OSError:
            pass

    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if on_wait is not None else 0))
                break
            except BlockingIOError:
                assert on_wait is not None  # only the non-blocking try raises it
                on_wait(lock_holder(path))
                time.sleep(WAIT_POLL_S)
        report()
        yield report
    finally:
        try:
            path.with_suffix(".holder").unlink(missing_ok=True)
        except OSError:
            pass
        os.close(fd)  # releases the lock


def collection_key(settings: Settings, corpus: Path, embedder: str | None) -> str:
    """What names one corpus' collection in the store, for its write lock: the backend, the corpus, the
    embedding model and the chunking."""
    s = settings
    variant = index_variant(s.chunk_tokens, s.chunk_overlap, s.contextual, s.passage_template)
    return f"{s.backend}|{Path(corpus).resolve()}|{embedder}|{variant}"


def build_index(settings: Settings, corpus_path: str | Path | None, embedder: Embedder | None,
                embedder_reason: Reason, client: Callable[[], tuple[Any, Reason]], lock: threading.RLock,
                progress: bool = True, on_progress: Callable[[int, int], None] | None = None,
                on_wait: Callable[[Mapping[str, Any]], None] | None = None,
                on_chunks: Callable[[Sequence[Chunk]], None] | None = None) -> IndexState:
    """Read, chunk and index a corpus (BM25 rebuilt, vectors synced) on the settings' store backend
    (:data:`retrieval.backends.BACKENDS`).

    Args:
        settings: the index-level settings are read (chunking, contextual, engine, model, HNSW, backend).
        corpus_path: the corpus (default: the lab corpus).
        embedder: the loaded embedder, or ``None`` (then no vector store: ``embedder_reason`` says why).
        client: returns ``(the local backend's vector store client or None, reason)``.
        lock: held while the store is synced (one writer per process; :func:`store_write_lock` is held too,
            one writer per machine).
        on_progress: called with ``(chunks embedded, chunks to embed)`` while embedding.
        on_wait: called with the holder's report while another process writes this corpus' collection
            (:func:`store_write_lock`).
        on_chunks: called with the chunks once the corpus is chunked, before anything is embedded.

    Raises:
        CorpusError: the corpus cannot be read, or its tenant field is misspelled or partial
            (:func:`check_tenant_field`).
    """
    started = time.perf_counter()
    path = Path(corpus_path or LAB_CORPUS).resolve()
    docs, intake = read_corpus(path, settings.tenant_field)  # the tenant field's types are checked at load
    check_tenant_field(docs, settings.tenant_field, path)
    s = settings
    chunks = chunk_documents(docs, s.chunk_tokens, s.chunk_overlap, s.contextual)
    intake.count_chunks(chunks)
    plan_memory(s.memory_mb, len(chunks))   # a corpus over the memory ceiling is refused before any embedding
    if on_chunks is not None:
        on_chunks(chunks)
    variant = index_variant(s.chunk_tokens, s.chunk_overlap, s.contextual, s.passage_template)

    key = collection_key(s, path, vectors_name(embedder) if embedder else None)
    reports: list[Callable[..., None]] = []

    @contextmanager
    def write_lock() -> Iterator[None]:
        with lock, store_write_lock(s, key, f"indexing {path}", on_wait) as report:
            reports.append(report)
            try:
                yield
            finally:
                reports.remove(report)

    def moved(done: int, total: int) -> None:  # the holder says how far it is, for a page that waits on it
        for report in reports:
            report(embedded=done, total=total)
        if on_progress is not None:
            on_progress(done, total)

    opened = BACKENDS.get(s.backend).open(OpenRequest(s, chunks, embedder, embedder_reason, str(path), variant,
                                                      write_lock, client, progress, moved))
    write_intake(s, key, intake)
    return _state(path, docs, chunks, opened.lexical, opened.store, opened.reason, opened.report, embedder, started,
                  intake)


def rebuild_store(settings: Settings, corpus_path: str | Path | None = None,
                  model_name: str | None = None) -> Path | None:
    """Make way for building ``corpus_path``'s index again (``index --rebuild``; the app's "Rebuild the index").

    A damaged embedded store (its SQLite file fails ``PRAGMA quick_check``, or Chroma fails on it natively: see
    :func:`retrieval.backends.chroma.damage_reason`) is moved aside whole, to ``<chroma_path>.damaged-<time>``
    (never deleted), and this process' client of it forgotten; the caller then indexes the corpus into a new store
    (other corpora are indexed again at their next load). A store that is whole keeps every other corpus'
    collections: this corpus' are dropped, so all its vectors are embedded again.

    Args:
        model_name: the embedder's name, which names the corpus' collections (default: the settings' model).

    Returns:
        Where the damaged store was moved, or ``None`` (nothing was damaged).

    Raises:
        StoreStatusError: the store is not an embedded Chroma folder (a Chroma server, Milvus), cannot be moved
            aside, or fails for another reason than damage (one line each).
        CorpusError: the corpus cannot be read.
    """
    if settings.backend != "local" or settings.chroma_host:
        where = "a Chroma server: RETRIEVAL_CHROMA_HOST" if settings.chroma_host else f"backend {settings.backend}"
        raise StoreStatusError(f"--rebuild moves an embedded Chroma store (RETRIEVAL_CHROMA_PATH) aside; this store "
                               f"is not one ({where}): drop the corpus' index with index --drop, then index it again")
    folder = Path(settings.chroma_path).resolve()
    path = Path(corpus_path or LAB_CORPUS).resolve()
    read_corpus(path, settings.tenant_field)   # an unreadable corpus is refused before anything is dropped
    damaged = probe_damage(folder, thorough=True) is not None
    if not damaged:
        s = settings
        variant = index_variant(s.chunk_tokens, s.chunk_overlap, s.contextual, s.passage_template)
        try:
            VectorStore(open_client(folder), str(path),
                        model_name or settings_embedding(s), variant).drop()
        except BaseException as exc:  # noqa: BLE001 - a native panic too: damage is moved aside below
            if isinstance(exc, INTERRUPTS):
                raise
            if damage_reason(exc, folder, path) is None:
                raise StoreStatusError(f"the vector store at {folder} cannot be read to rebuild {path}: "
                                       f"{exc.__class__.__name__}: {first_line(exc)}") from None
            damaged = True
    if not damaged:
        return None
    try:
        return move_aside(folder)
    except OSError as exc:
        raise StoreStatusError(f"the damaged vector store {folder} cannot be moved aside ({exc.strerror or exc}): "
                               "move or remove it by hand, then run index") from None


def intake_path(settings: Settings, key: str) -> Path:
    """Where the intake report of one collection is kept, beside the index: ``<chroma_path>.intake/<digest>.json``
    (every file read and skipped, with the reason; ``index`` names it)."""
    path = Path(settings.chroma_path).resolve()
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]
    return path.with_name(path.name + ".intake") / f"{digest}.json"


def write_intake(settings: Settings, key: str, intake: IntakeReport) -> Path | None:
    """Write the intake report beside the index (:func:`intake_path`); ``None`` where it cannot be written (a
    read-only folder: the report stays on screen and in ``--json``)."""
    target = intake_path(settings, key)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".json.{os.getpid()}")
        tmp.write_text(json.dumps(intake.to_dict(), indent=1), encoding="utf-8")  # ASCII: any file name writes
        os.replace(tmp, target)
    except (OSError, ValueError) as exc:
        log.warning("the intake report was not written beside the index (%s)", exc)
        return None
    intake.written_to = str(target)
    return target


def _state(path: Path, docs: Any, chunks: Any, lexical: Any, store: Any, reason: Reason, report: Any,
           embedder: Embedder | None, started: float, intake: IntakeReport | None = None) -> IndexState:
    """The frozen state; its id hashes the chunks' contents and the embedder's name."""
    digest = hashlib.sha1()
    for chunk in chunks:
        digest.update(chunk.content_hash.encode())
    digest.update(str(vectors_name(embedder) if embedder else None).encode())
    return IndexState(path, tuple(docs), tuple(chunks), {c.chunk_id: c for c in chunks}, lexical,
                      field_types(chunks), store, reason, report, digest.hexdigest()[:16],
                      (time.perf_counter() - started) * 1000, intake)
