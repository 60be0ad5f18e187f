"""The dense side's persistent store: Chroma collections of subchunk vectors in cosine space.

An index (a corpus, an embedding model and a chunking: :func:`collection_name`) is laid out by tenant
(:class:`DenseLayout`): one collection per tenant by default, so a request searches its tenant's collection with
no tenant filter (Chroma filters before its HNSW search, and that cost grew with the whole corpus); one
collection for a single-tenant corpus; hash buckets for corpora with thousands of tenants. The model's name is
also in each collection's metadata, and a collection whose metadata names another model is rebuilt. A sync adds,
updates (by content hash) and removes chunks so that no stale chunk survives, creates or drops only the
collections of tenants added or removed, and moves a store built in another layout into this one with its stored
vectors (nothing re-embedded). Vectors are computed before anything is written, so a failure while embedding
leaves the previous collections as they were.

A request reads the store only through :func:`guarded` (:func:`read_vectors`, :func:`read_window`): a store
that fails comes back as a :class:`StoreRead` that says why, and the stage that read it drops with that reason.

Chroma reads its SQLite file from Rust: a damaged file can make it *panic* (pyo3's ``PanicException``, a
``BaseException``, not an ``Exception``). Every boundary where the store is opened, synced or read catches any
``BaseException`` but an interrupt (:data:`INTERRUPTS`, re-raised), and :func:`damage_reason` says whether the
store's files are damaged (:data:`~retrieval.backends.base.DAMAGED`: the remedy is ``index --rebuild``, which moves
the store aside with :func:`move_aside`). :func:`open_client` checks the SQLite file before Chroma reads it
(:func:`probe_damage`), so a damaged file is refused in one line, before any native library prints its panic.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import sys
from concurrent.futures import Future, ThreadPoolExecutor, wait
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, Mapping, Protocol, Sequence, TypeVar

import numpy as np

from ..core.filters import Filters, typed
from ..core.types import RESERVED_KEYS, RESERVED_PREFIXES  # noqa: F401 - the stores' own keys
from ..core.reasons import Declared, Reason, declare, error, raw
from ..core.types import Chunk, RankedList, ScoredItem
from .base import DAMAGED, StoreDamaged, rebuild_command

log = logging.getLogger(__name__)
T = TypeVar("T")

_PARENT, _HASH, _POS = "rw_parent", "rw_hash", "rw_position"


def _chroma_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's metadata as Chroma stores it: a multi-valued field (a tuple) as a list, which ``$contains``
    matches by member."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in metadata.items()}


@dataclass(frozen=True)
class SyncReport:
    """What a sync did: chunk counts (``added + updated`` were embedded), whether a collection was rebuilt (new
    model), and the collections of the layout."""

    added: int
    updated: int
    removed: int
    unchanged: int
    rebuilt: bool
    #: Chunks whose stored vector was moved from a collection of another layout instead of embedded.
    migrated: int = 0
    #: The dense layout in words (:attr:`DenseLayout.kind`; empty where the store has no such layout, as
    #: Milvus), its number of collections, and the collections this sync created and dropped (a tenant added or
    #: removed; a layout change).
    layout: str = ""
    collections: int = 1
    created: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    #: Where this corpus (same chunking) was indexed before by another encoder and this index starts afresh: that
    #: encoder's name (its vectors are kept under their own name, never mixed with these); else "".
    earlier_model: str = ""


def open_client(chroma_path: Path | str, chroma_host: str | None = None) -> Any:
    """A Chroma client: embedded ``PersistentClient`` at ``chroma_path``, or ``HttpClient`` to ``host:port``
    (``user:password@host:port``: HTTP Basic credentials, sent by Chroma's basic-auth client provider).

    Raises:
        ValueError: a port that is not a number (the message never quotes the credentials).
        StoreDamaged: the embedded store's SQLite file is damaged (:func:`probe_damage`, checked before Chroma
            reads it), or Chroma's native code failed opening it (a panic; the half-started client is forgotten,
            so the next open reads the folder again).
        Exception: whatever chromadb raises when the path is unusable or the server is unreachable.
    """
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if chroma_host:
        credentials, _, address = chroma_host.removeprefix("http://").rpartition("@")
        host, _, port = address.partition(":")
        if port and not (port.isascii() and port.isdigit()):
            raise ValueError(f"the Chroma server's port {port[:20]!r} is not a number (host:port)")
        if credentials:
            settings = ChromaSettings(anonymized_telemetry=False,
                                      chroma_client_auth_provider="chromadb.auth.basic_authn.BasicAuthClientProvider",
                                      chroma_client_auth_credentials=credentials)
        return chromadb.HttpClient(host=host, port=int(port or 8000), settings=settings)
    found = probe_damage(chroma_path)
    if found is not None:
        raise StoreDamaged(DAMAGED(path=str(chroma_path), error=raw(found), command=rebuild_command()))
    if replaced(chroma_path):   # moved aside by another process: this process' system reads the old file
        forget_client(chroma_path)
    Path(chroma_path).mkdir(parents=True, exist_ok=True)
    try:
        client = chromadb.PersistentClient(path=str(chroma_path), settings=settings)
        _OPENED.setdefault(str(Path(chroma_path).resolve()), _inode(chroma_path))
        return client
    except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException; interrupts go on below
        if isinstance(exc, INTERRUPTS):
            raise
        if not isinstance(exc, Exception):  # chromadb cleans up after an Exception, not after a panic: it would
            forget_client(chroma_path, bump=False)  # keep the system that failed to start and hand it out again
        reason = damage_reason(exc, chroma_path)
        if reason is not None:
            raise StoreDamaged(reason) from None
        if isinstance(exc, Exception):
            raise
        raise RuntimeError(f"{exc.__class__.__name__}: {str(exc)[:200]}") from None


#: What a boundary that catches every failure of a native library re-raises: the user's interrupt and the
#: interpreter's own exits. Anything else (a Rust panic: ``pyo3_runtime.PanicException``) becomes a reason.
INTERRUPTS = (KeyboardInterrupt, SystemExit, GeneratorExit)

#: How SQLite (and Chroma quoting it) says a file is damaged: SQLITE_CORRUPT (11) and SQLITE_NOTADB (26).
_DAMAGE_WORDS = ("database disk image is malformed", "file is not a database", "(code: 11)", "(code: 26)",
                 "malformed database schema")
#: The small tables Chroma reads when it opens a store: read whole by the light probe (a few pages).
_START_TABLES = ("migrations", "acquire_write", "tenants", "databases", "collections", "collection_metadata",
                 "segments", "segment_metadata", "maintenance_log", "max_seq_id", "embeddings_queue_config")
_PROBED: dict[tuple[str, int, int], str | None] = {}
_PROBE_LOCK = threading.Lock()


def native_failure(exc: BaseException) -> bool:
    """Whether ``exc`` came from inside a native library: a Rust panic (pyo3's ``PanicException``, matched by
    class since pyo3 does not export it) or SQLite's ``DatabaseError``."""
    if isinstance(exc, sqlite3.DatabaseError):
        return True
    return any(cls.__name__ == "PanicException" for cls in type(exc).__mro__)


def says_damaged(text: str) -> bool:
    """Whether an error's text is SQLite's word for a damaged file (Chroma quotes it)."""
    low = text.lower()
    return any(word in low for word in _DAMAGE_WORDS)


def probe_damage(chroma_path: Path | str, thorough: bool = False) -> str | None:
    """Why the embedded store's SQLite file (``<chroma_path>/chroma.sqlite3``) is damaged, or ``None`` when it
    reads whole, is absent, or cannot be checked (locked, unreadable: no proof of damage). Python's own
    ``sqlite3`` reads it, read-only: a damaged file raises an ordinary exception here instead of a panic in Chroma.

    Args:
        thorough: run ``PRAGMA quick_check`` over every page (about a second per GB; remembered while the file is
            unchanged); otherwise only over the schema and the small tables Chroma reads on opening, with their
            indexes (a few pages).
    """
    db = Path(chroma_path) / "chroma.sqlite3"
    try:
        st = db.stat()
    except OSError:
        return None
    if not db.is_file():
        return None
    key = (str(db.resolve()), st.st_mtime_ns, st.st_size)
    if thorough and key in _PROBED:
        return _PROBED[key]
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
        try:
            tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            checks = ["PRAGMA quick_check(3)"] if thorough else [
                f'PRAGMA quick_check("{table}")' for table in _START_TABLES if table in tables]  # with its indexes
            found = None
            for check in checks:
                rows = con.execute(check).fetchall()
                if not rows or rows[0][0] != "ok":
                    found = " ".join("; ".join(str(r[0]) for r in rows).split()) or "no answer"
                    break
        finally:
            con.close()
    except sqlite3.Error as exc:
        text = f"{exc.__class__.__name__}: {str(exc)[:200]}"
        damaged = type(exc) is sqlite3.DatabaseError or says_damaged(str(exc))
        found = f"SQLite: {text}" if damaged else None
        if not damaged:
            return None  # locked, unreadable, a hot journal: not proof of damage, nothing remembered
    if found is not None and not found.startswith("SQLite: "):
        found = f"SQLite: quick_check: {found[:200]}"
    if thorough:
        with _PROBE_LOCK:
            if len(_PROBED) > 64:
                _PROBED.clear()
            _PROBED[key] = found
    return found


def damage_reason(exc: BaseException, chroma_path: Path | str | None,
                  corpus: str | Path | None = None) -> Reason | None:
    """:data:`~retrieval.backends.base.DAMAGED` when a failure of the embedded store at ``chroma_path`` is damage,
    else ``None`` (the caller keeps its own reason). Damage: the SQLite file fails :func:`probe_damage` (thorough),
    or the failure is a native one (a panic, a ``DatabaseError``) or SQLite's words for a damaged file. A server's
    store (``chroma_path`` ``None``) is never called damaged here: its files are not ours to move. Never raises.

    Args:
        corpus: the corpus the rebuild command names (:func:`~retrieval.backends.base.rebuild_command`).
    """
    if isinstance(exc, StoreDamaged):
        return exc.reason
    if chroma_path is None:
        return None
    try:
        found = probe_damage(chroma_path, thorough=True)
    except Exception:  # noqa: BLE001 - the probe is a diagnosis: a failure of its own proves nothing
        found = None
    if found is None and not (native_failure(exc) or says_damaged(str(exc))):
        return None
    return DAMAGED(path=str(chroma_path), error=raw(found) if found else error(exc), command=rebuild_command(corpus))


#: Per store folder, how many times its client was forgotten in this process (:func:`forget_client`): a holder of
#: a client opened at an older generation opens a new one (:func:`client_generation`).
_GENERATIONS: dict[str, int] = {}
#: Per store folder, the inode of its SQLite file when this process' Chroma system first opened it.
_OPENED: dict[str, int | None] = {}


def _inode(chroma_path: Path | str) -> int | None:
    try:
        return (Path(chroma_path) / "chroma.sqlite3").stat().st_ino
    except OSError:
        return None


def replaced(chroma_path: Path | str) -> bool:
    """Whether the store's SQLite file is no longer the one this process' Chroma system opened (the folder was
    moved aside and built again by another process: ``index --rebuild`` beside a running app)."""
    key = str(Path(chroma_path).resolve())
    return key in _OPENED and _OPENED[key] != _inode(chroma_path)


def client_generation(chroma_path: Path | str) -> int:
    """How many times the client of the store at ``chroma_path`` was forgotten in this process."""
    return _GENERATIONS.get(str(Path(chroma_path).resolve()), 0)


def forget_client(chroma_path: Path | str, bump: bool = True) -> None:
    """Forget (and stop) the embedded Chroma system this process keeps for ``chroma_path``: the next
    :func:`open_client` reads the folder again. Chroma keeps one system per folder for the whole process, even one
    that failed to start; after a store is moved aside, the old one still reads the moved file. With ``bump``,
    holders of a client opened before are told to open a new one (:func:`client_generation`). Never raises."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient as Shared
    except Exception:  # noqa: BLE001 - chromadb absent or changed: nothing is kept to forget
        pass
    else:
        for key in {str(chroma_path), str(Path(chroma_path).resolve())}:
            system = Shared._identifier_to_system.pop(key, None)
            Shared._identifier_to_refcount.pop(key, None)
            if system is not None:
                try:
                    system.stop()
                except BaseException as exc:  # noqa: BLE001 - a damaged store may fail to stop too
                    if isinstance(exc, INTERRUPTS):
                        raise
                    log.debug("the forgotten Chroma system did not stop cleanly: %s", exc.__class__.__name__)
    key = str(Path(chroma_path).resolve())
    _OPENED.pop(key, None)
    if bump:
        _GENERATIONS[key] = _GENERATIONS.get(key, 0) + 1


def move_aside(chroma_path: Path | str) -> Path | None:
    """Rename the store folder to ``<chroma_path>.damaged-<YYYYmmdd-HHMMSS>`` (never deleted: its files stay for a
    look or a salvage) and forget this process' client of it; ``None`` when there is no folder to move.

    Raises:
        OSError: the folder cannot be renamed (permissions, another file system).
    """
    path = Path(chroma_path).resolve()
    if not path.exists():
        forget_client(path)
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    forget_client(path)
    os.rename(path, target)
    return target


def index_variant(chunk_tokens: int, chunk_overlap: int, contextual: bool = False,
                  passage_template: str = "title-newline") -> str:
    """What, besides the corpus and the model, changes the vectors: chunking, the context line and the
    passage template (the default template adds nothing, so existing collections keep their names)."""
    return (f"chunks-{chunk_tokens}-{chunk_overlap}" + ("+context" if contextual else "")
            + ("" if passage_template == "title-newline" else f"+{passage_template}"))


def collection_name(corpus_key: str, model_name: str, variant: str = "") -> str:
    """Chroma collection name for a corpus (its absolute path), an embedding model and an index variant
    (:func:`index_variant`): ``chunks-<sha1[:16]>``. Each combination keeps its own collection, so two
    configurations never overwrite each other's chunks and switching back costs no re-embedding."""
    key = f"{corpus_key}\n{model_name}" + (f"\n{variant}" if variant else "")
    return "chunks-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def embedded_batches(todo: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray], batch: int, progress: bool,
                     on_progress: Callable[[int, int], None] | None = None,
                     passage_template: str = "title-newline",
                     encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None
                     ) -> Iterator[tuple[Sequence[Chunk], np.ndarray]]:
    """``(chunks, their vectors)`` batch by batch, each as soon as it is embedded, so the caller writes it before the
    next is encoded. The embedder reads :meth:`Chunk.passage`; ``encode_chunks`` (the e5 one-pass encoder, which
    keeps the reader's states of the same pass) reads the chunks themselves, or, where it has a ``stream`` (a Ray
    cluster's), streams them back in the order its workers finish. A progress bar with its ETA on stderr, and
    ``on_progress(embedded, total)`` after each batch."""
    if not todo:
        return
    from tqdm import tqdm

    with tqdm(total=len(todo), desc="embedding chunks", unit="chunk", file=sys.stderr,
              disable=not progress) as bar:
        stream = getattr(encode_chunks, "stream", None)   # a cluster's encoder streams its batches back
        if stream is not None:
            batches = stream(todo, batch)
        else:
            batches = ((todo[start : start + batch],
                        encode_chunks(todo[start : start + batch]) if encode_chunks is not None
                        else embed([c.passage(passage_template) for c in todo[start : start + batch]]))
                       for start in range(0, len(todo), batch))
        done = 0   # counted here: a disabled bar (progress=False) counts nothing
        for rows, vectors in batches:
            yield rows, np.asarray(vectors, dtype=np.float32)
            done += len(rows)
            bar.update(len(rows))
            if on_progress:
                on_progress(done, len(todo))


def embed_chunks(todo: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray], batch: int, progress: bool,
                 on_progress: Callable[[int, int], None] | None = None,
                 passage_template: str = "title-newline",
                 encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None) -> np.ndarray:
    """Every vector of :func:`embedded_batches` at once: ``(len(todo), dim)``."""
    parts = [vectors for _, vectors in embedded_batches(todo, embed, batch, progress, on_progress, passage_template,
                                                         encode_chunks)]
    return np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)


class DenseStore(Protocol):
    """What a request reads from a dense store (Chroma here; the benchmark's in-memory HNSW store, Milvus).

    ``query`` returns the cosine window (stage ``dense``, filters applied inside the search);
    ``vectors`` the stored unit vectors of the given chunks (absent ids are left out).
    """

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList: ...

    def vectors(self, chunk_ids: Sequence[str]) -> Mapping[str, np.ndarray]: ...

    def count(self) -> int: ...


@dataclass(frozen=True)
class StoreRead(Generic[T]):
    """What one guarded read of the vector store gave: its ``value``, or ``None`` and why (``reason``).

    The request-path stages read the store only through :func:`guarded` (:func:`read_vectors`,
    :func:`read_window`), so a store that fails drops the stage that read it, with this reason in the trace,
    instead of raising out of the request.
    """

    value: T | None
    reason: Reason | None = None

    @property
    def ok(self) -> bool:
        """The read succeeded (``value`` holds its result)."""
        return self.reason is None


#: The leads of a failed read's reason (``what``): the error follows.
VECTORS_UNAVAILABLE = declare("store.vectors_unavailable", en="stored vectors unavailable: {error}",
                              pt="vetores armazenados indisponíveis: {error}")
SEARCH_FAILED = declare("store.search_failed", en="dense search failed: {error}", pt="a busca densa falhou: {error}")
NO_STORE = declare("store.none", en="no vector store", pt="sem repositório de vetores")
STORE_EMPTY = declare("store.empty", en="the vector store is empty", pt="o repositório de vetores está vazio")


def guarded(read: Callable[[], T], what: Declared,
            damage: Callable[[BaseException], Reason | None] | None = None) -> StoreRead[T]:
    """Run one store read; any failure the store raises, a native library's panic included (any
    ``BaseException`` but :data:`INTERRUPTS`), comes back as ``StoreRead(None, reason)``.

    Args:
        read: the read, e.g. ``lambda: store.vectors(ids)``.
        what: the reason's declared lead (:data:`VECTORS_UNAVAILABLE`…, a field ``error``); the reason is
            ``"<what>: <ExceptionClass>: <message, first 200 characters>"`` (one line, logged once).
        damage: ``failure -> DAMAGED reason or None`` (the store's :meth:`VectorStore.damage`): a damaged store's
            reason is nested as the ``error``, so it names the rebuild.
    """
    try:
        return StoreRead(read())
    except BaseException as exc:  # noqa: BLE001 - the caller drops its stage with this reason
        if isinstance(exc, INTERRUPTS):
            raise
        found = None
        if damage is not None:
            try:
                found = damage(exc)
            except Exception:  # noqa: BLE001 - a diagnosis that fails proves nothing
                found = None
        reason = what(error=found or raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))
        log.warning(reason.text())
        return StoreRead(None, reason)


def read_vectors(store: DenseStore | None, chunk_ids: Sequence[str],
                 what: Declared = VECTORS_UNAVAILABLE) -> StoreRead[Mapping[str, np.ndarray]]:
    """The stored unit vectors of ``chunk_ids`` (absent ids left out), read through :func:`guarded`.

    No ids: an empty mapping without a read. No store: unavailable, reason ``"<what>: no vector store"``.
    """
    if not chunk_ids:
        return StoreRead({})
    if store is None:
        return StoreRead(None, what(error=NO_STORE()))
    ids = list(chunk_ids)
    return guarded(lambda: store.vectors(ids), what, getattr(store, "damage", None))


def read_window(store: DenseStore, vector: np.ndarray, filters: Filters, window: int,
                what: Declared = SEARCH_FAILED) -> StoreRead[RankedList]:
    """The store's cosine window (:meth:`DenseStore.query`), read through :func:`guarded`."""
    return guarded(lambda: store.query(vector, filters, window), what, getattr(store, "damage", None))


def tenant_digest(tenant: Any) -> str:
    """SHA-1 (hex) of a tenant's exact identity, its type and value (:func:`~retrieval.core.filters.typed`): ``"1"``,
    ``1``, ``1.0`` and ``True`` are four tenants with four digests. Stable across processes (never ``hash()``)."""
    kind, value = typed(tenant)
    return hashlib.sha1(f"{kind}\n{value!r}".encode("utf-8")).hexdigest()


def owned_by(base: str, name: str) -> bool:
    """True when collection ``name`` belongs to the index whose base name is ``base``, in any layout
    (``<base>``, ``<base>-t-<digest>``, ``<base>-b<N>-<i>``)."""
    return (name == base or name.startswith(base + "-t-")
            or re.fullmatch(re.escape(base) + r"-b\d+-\d+", name) is not None)


@dataclass(frozen=True)
class DenseLayout:
    """Which Chroma collection of an index holds a tenant's chunks.

    * a single-tenant corpus (no chunk carries the tenant field), or ``buckets == 1``: one collection named
      ``<base>`` (:func:`collection_name`), the tenant (if any) a ``where`` filter inside it: the layout before
      tenant isolation;
    * ``buckets == 0`` (the default): one collection per tenant, ``<base>-t-<sha1(tenant)[:16]>``
      (:func:`tenant_digest`); a request searches its tenant's collection with no tenant filter (Chroma filters
      before its HNSW search, so a filter's cost grows with the collection it runs in: README, "Benchmark");
    * ``buckets == N > 1``: ``<base>-b<N>-<sha1(tenant) mod N>``, for corpora with thousands of tenants; the
      tenant is still filtered inside its bucket.
    """

    base: str
    multi_tenant: bool
    buckets: int = 0

    @property
    def isolated(self) -> bool:
        """Each collection holds exactly one tenant: the tenant clause is not sent to Chroma."""
        return self.multi_tenant and self.buckets == 0

    @property
    def kind(self) -> str:
        """The layout in words (the CLI's and the benchmark's)."""
        if not self.multi_tenant:
            return "one collection (single-tenant corpus)"
        if self.buckets == 0:
            return "one collection per tenant"
        return "one collection, tenant filtered" if self.buckets == 1 else f"{self.buckets} tenant buckets"

    def name_for(self, tenant: Any) -> str:
        """The collection that holds ``tenant``'s chunks."""
        if not self.multi_tenant or self.buckets == 1:
            return self.base
        digest = tenant_digest(tenant)
        if self.buckets == 0:
            return f"{self.base}-t-{digest[:16]}"
        return f"{self.base}-b{self.buckets}-{int(digest, 16) % self.buckets}"


class VectorStore:
    """Subchunk vectors of one corpus in Chroma (cosine distance), laid out by tenant (:class:`DenseLayout`).

    The layout is decided by :meth:`sync` from the chunks: a corpus whose chunks carry ``tenant_field`` gets one
    collection per tenant (or per bucket, ``tenant_buckets``); any other, one collection. Queries route by the
    request's tenant clause; a query without one (a single-tenant corpus; the benchmark's unfiltered search)
    searches every collection of the layout and merges by distance.
    """

    def __init__(self, client: Any, corpus_key: str, model_name: str, variant: str = "",
                 ef_search: int | None = None, passage_template: str = "title-newline",
                 tenant_field: str | None = None, tenant_buckets: int = 0, path: Path | str | None = None,
                 exact_up_to: int = 0) -> None:
        """Store the configuration; nothing is read or written before :meth:`sync`.

        Args:
            ef_search: HNSW's query-time candidate list, set on every collection (Chroma's default is 100;
                Malkov & Yashunin, 2018: a larger list raises recall and latency).
            passage_template: what the embedder reads of each chunk (:meth:`Chunk.passage`).
            tenant_field: the metadata field naming a chunk's tenant; ``None``: one collection, whatever the
                metadata.
            tenant_buckets: 0 = one collection per tenant, 1 = one collection for all (tenant filtered), N = N
                hash buckets (tenant filtered inside its bucket).
            path: the embedded store's folder (``None``: a server's), checked when a read fails (:meth:`damage`).
            exact_up_to: a corpus of at most this many chunks is searched exactly (:class:`ExactSearch`), a larger
                one by Chroma's HNSW; 0: always HNSW.
        """
        self.client, self.corpus_key, self.model_name, self.variant = client, corpus_key, model_name, variant
        self.path = Path(path) if path is not None else None
        self.passage_template = passage_template
        self.name = collection_name(corpus_key, model_name, variant)
        self.ef_search = ef_search
        self.tenant_field, self.tenant_buckets = tenant_field, tenant_buckets
        #: The layout and its open collections (name → Chroma collection), set by :meth:`sync`.
        self.layout: DenseLayout | None = None
        self.collections: dict[str, Any] = {}
        #: Chunk id → chunk of what :meth:`sync` stored: queries then read parents and metadata from memory
        #: instead of asking Chroma for them (half of an unfiltered query's time on the lab corpus).
        self.catalog: dict[str, Chunk] | None = None
        self.exact_up_to = exact_up_to
        #: The exact search's vectors, read from the collections on the first exact query after a sync.
        self.exact: ExactSearch | None = None

    @property
    def searched_exactly(self) -> bool:
        """Whether :meth:`query` compares every stored vector (the corpus has at most ``exact_up_to`` chunks)."""
        return self.catalog is not None and 0 < len(self.catalog) <= self.exact_up_to

    def damage(self, exc: BaseException) -> Reason | None:
        """:data:`~retrieval.backends.base.DAMAGED` when ``exc`` (a failed read or write) comes from damaged files
        of this embedded store (:func:`damage_reason`), else ``None``."""
        return damage_reason(exc, self.path, self.corpus_key)

    @property
    def collection(self) -> Any:
        """The one collection of a one-collection layout.

        Raises:
            AttributeError: the store is not synced, or its layout has several collections (see ``collections``).
        """
        if len(self.collections) != 1:
            raise AttributeError(f"{len(self.collections)} collections in this layout: read .collections")
        return next(iter(self.collections.values()))

    def _create(self, name: str, layout: DenseLayout) -> Any:
        collection = self.client.get_or_create_collection(
            name,
            metadata={"hnsw:space": "cosine", "embedding_model": self.model_name, "corpus": self.corpus_key,
                      "variant": self.variant, "passage_template": self.passage_template, "layout": layout.kind},
            embedding_function=None,
        )
        if self.ef_search is not None:
            self.set_ef_search(self.ef_search, collection)
        return collection

    def set_ef_search(self, ef_search: int, collection: Any = None) -> None:
        """Set HNSW's ``ef_search`` of one collection, or of every collection of the layout (stored with each;
        a no-op where already equal)."""
        for col in [collection] if collection is not None else list(self.collections.values()):
            current = ((col.configuration or {}).get("hnsw") or {}).get("ef_search")
            if current != ef_search:
                col.modify(configuration={"hnsw": {"ef_search": int(ef_search)}})
        self.ef_search = ef_search

    def count(self) -> int:
        """Chunks stored in the layout's collections."""
        return sum(col.count() for col in self.collections.values())

    def _stored_hashes(self, page: int) -> dict[str, str | None]:
        """Chunk id → content hash of everything the layout's collections hold (see :func:`_stored_hashes`)."""
        stored: dict[str, str | None] = {}
        for col in self.collections.values():
            stored.update(_stored_hashes(col, page))
        return stored

    def owned(self, page: int = 1000) -> dict[str, Any]:
        """Every collection of this index in the store, in any layout (name → collection), listed ``page`` at a
        time."""
        found: dict[str, Any] = {}
        offset = 0
        while True:
            got = self.client.list_collections(limit=page, offset=offset)
            found.update((col.name, col) for col in got if owned_by(self.name, col.name))
            if len(got) < page:
                return found
            offset += page

    def earlier_models(self, page: int = 1000) -> list[str]:
        """The encoders another collection of this corpus and chunking was embedded by (``e5-small`` before the
        one pass, say): their collections are another index, named by their model."""
        found: set[str] = set()
        offset = 0
        while True:
            got = self.client.list_collections(limit=page, offset=offset)
            for col in got:
                meta = col.metadata or {}
                if (meta.get("corpus") == self.corpus_key and meta.get("variant") == self.variant
                        and meta.get("embedding_model") not in (None, self.model_name)):
                    found.add(str(meta["embedding_model"]))
            if len(got) < page:
                return sorted(found)
            offset += page

    def sync(self, chunks: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray],
             batch: int = 32, progress: bool = True,
             on_progress: Callable[[int, int], None] | None = None, page: int = 5000,
             encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None) -> SyncReport:
        """Make the layout's collections hold exactly ``chunks`` embedded by the current model.

        Each collection is synced by content hash (added, updated, stale removed); a tenant new to the corpus
        creates only its collection, a tenant gone drops only its own. Collections of this index in another
        layout (a store built before tenant isolation, or with another ``tenant_buckets``) are read back, their
        stored vectors reused for the chunks whose content hash matches (``migrated``, never re-embedded), and
        dropped once the new layout is written.

        Resumable: each batch is written as soon as it is embedded, with its content hash, so a sync killed half
        way keeps what it wrote and the next one embeds only the rest.

        Args:
            chunks: all subchunks of the corpus.
            embed: passage-side encoder, ``list[str] -> (n, dim)`` normalized vectors.
            batch: texts per encode call (and per write).
            progress: show a progress bar on stderr while embedding.
            on_progress: called with ``(embedded, total)`` after each batch (e.g. for a UI progress bar).
            page: stored rows read per request when comparing content hashes.
            encode_chunks: encodes chunks rather than their passages (:func:`embedded_batches`).

        Raises:
            ValueError: two tenants of the corpus fall on one collection name (a 64-bit digest collision).
        """
        field = self.tenant_field
        layout = DenseLayout(self.name, field is not None and any(field in c.metadata for c in chunks),
                             self.tenant_buckets)
        groups: dict[str, list[Chunk]] = {} if chunks else {self.name: []}
        holder: dict[str, tuple[str, Any]] = {}
        name_of: dict[str, str] = {}
        for c in chunks:
            name = self.name
            if layout.multi_tenant:
                assert field is not None  # the layout is multi-tenant only with a tenant field
                name = layout.name_for(c.metadata.get(field))
                if layout.isolated and holder.setdefault(name, typed(c.metadata[field])) != typed(c.metadata[field]):
                    raise ValueError(f"tenants {holder[name][1]!r} and {c.metadata[field]!r} share collection "
                                     f"{name}: set RETRIEVAL_TENANT_BUCKETS")
            groups.setdefault(name, []).append(c)
            name_of[c.chunk_id] = name
        existing = self.owned()
        earlier = self.earlier_models() if not existing and chunks else []
        rebuilt = False
        stored: dict[str, dict[str, str | None]] = {}
        for name in groups:
            col = existing.get(name)
            if col is not None and (col.metadata or {}).get("embedding_model") != self.model_name:
                self.client.delete_collection(name)
                del existing[name]
                rebuilt = True
            stored[name] = _stored_hashes(existing[name], page) if name in existing else {}
        todo = {name: [c for c in group if stored[name].get(c.chunk_id) != c.content_hash]
                for name, group in groups.items()}
        others = {name: col for name, col in existing.items() if name not in groups}
        other_stored = {name: _stored_hashes(col, page) for name, col in others.items()}
        reused = _reusable(others, other_stored, [c for part in todo.values() for c in part])
        to_embed = [c for part in todo.values() for c in part if c.chunk_id not in reused]
        self.layout, self.collections, self.catalog, self.exact = None, {}, None, None  # no half layout kept
        created: list[str] = []
        collections: dict[str, Any] = {}
        for name in groups:
            if name in existing:
                col = self.client.get_collection(name, embedding_function=None)
                if self.ef_search is not None:
                    self.set_ef_search(self.ef_search, col)
            else:
                col = self._create(name, layout)
                created.append(name)
            collections[name] = col

        def write(rows: Sequence[Chunk], vectors: np.ndarray) -> None:
            by_name: dict[str, list[int]] = {}
            for i, c in enumerate(rows):
                by_name.setdefault(name_of[c.chunk_id], []).append(i)
            for name, at in by_name.items():
                part = [rows[i] for i in at]
                collections[name].upsert(
                    ids=[c.chunk_id for c in part],
                    embeddings=np.asarray(vectors[at], dtype=np.float32),
                    documents=[c.text for c in part],
                    metadatas=[{**_chroma_metadata(c.metadata), _PARENT: c.parent_id, _HASH: c.content_hash,
                                _POS: c.position} for c in part],
                )

        moved = [c for part in todo.values() for c in part if c.chunk_id in reused]
        for start in range(0, len(moved), 512):
            block = moved[start : start + 512]
            write(block, np.vstack([reused[c.chunk_id] for c in block]))
        # Writes overlap the encoding of the next batch (one writer thread, at most two batches waiting); a stopped
        # or failed sync still waits for what was handed to the writer, so every batch encoded is kept.
        with ThreadPoolExecutor(1, thread_name_prefix="store-write") as writer:
            pending: list[Future] = []
            try:
                for rows, vectors in embedded_batches(to_embed, embed, batch, progress, on_progress,
                                                      self.passage_template, encode_chunks):
                    pending.append(writer.submit(write, rows, vectors))
                    while len(pending) > 2:
                        pending.pop(0).result()
            finally:
                wait(pending)
            for done in pending:
                done.result()
        for name, group in groups.items():
            members = {c.chunk_id for c in group}
            stale = [cid for cid in stored[name] if cid not in members]
            for start in range(0, len(stale), 512):
                collections[name].delete(ids=stale[start : start + 512])
        for name in others:
            self.client.delete_collection(name)
        wanted = {c.chunk_id: c for c in chunks}
        known = set().union(*stored.values(), *other_stored.values())
        updated = sum(1 for c in to_embed if c.chunk_id in known)
        self.layout, self.collections, self.catalog = layout, collections, wanted
        self.exact = ExactSearch(self.collections, wanted, page) if self.searched_exactly else None
        return SyncReport(len(to_embed) - updated, updated, len(known - wanted.keys()),
                          len(chunks) - sum(map(len, todo.values())), rebuilt, migrated=len(reused),
                          layout=layout.kind, collections=len(collections), created=tuple(sorted(created)),
                          dropped=tuple(sorted(others)), earlier_model=", ".join(earlier))

    def _targets(self, filters: Filters) -> tuple[list[Any], Filters]:
        """The collections a query searches, and the filters sent to them (the tenant clause is left out where a
        collection holds one tenant; the full filters are re-checked on our side in any case).

        Raises:
            RuntimeError: the store is not synced (or was dropped).
            ValueError: the filters name several tenants (a request names one: :func:`build_filters`).
        """
        layout = self.layout
        if layout is None:
            raise RuntimeError("the vector store is not synced (or was dropped)")
        tenants = filters.get(self.tenant_field) if layout.multi_tenant and self.tenant_field else None
        if tenants is None:
            return list(self.collections.values()), filters
        if len(tenants) != 1:
            raise ValueError(f"a dense query names one tenant; got {len(tenants)}: nothing is searched across tenants")
        col = self.collections.get(layout.name_for(tenants[0]))
        if col is None:  # a tenant with no chunk in the corpus has no collection
            return [], filters
        if layout.isolated:
            filters = Filters(tuple((k, v) for k, v in filters.clauses if k != self.tenant_field))
        return [col], filters

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList:
        """Nearest chunks to ``vector`` among those matching ``filters``: in the tenant's collection (no tenant
        filter sent where it holds one tenant; the other filters applied inside Chroma's search), or, without a
        tenant clause, in every collection of the layout, merged by distance.

        Returns:
            A ``RankedList`` (stage ``dense``, score kind ``cosine``: similarity in [-1, 1], higher is better).

        Raises:
            RuntimeError, ValueError: see :meth:`_targets` (a guarded read turns them into a reason).
        """
        catalog = self.catalog
        targets, sent = self._targets(filters)
        exact = self.exact   # set by a sync, with the catalog, where the corpus is small enough
        if exact is not None:
            return exact.query(vector, [name for name, col in self.collections.items() if col in targets], filters,
                               window)
        where = sent.chroma_where()
        query = [np.asarray(vector, dtype=np.float32).tolist()]
        include = ["distances"] if catalog is not None else ["metadatas", "distances"]
        asked = window
        kept: list[tuple[str, str, Mapping[str, Any], float]] = []
        for attempt in range(4):
            rows: list[tuple[str, str, Mapping[str, Any], float]] = []
            full = False
            for col in targets:
                result = col.query(query_embeddings=query, n_results=asked, where=where, include=include)
                ids, dists = result["ids"][0], result["distances"][0]
                full = full or len(ids) >= asked
                if catalog is not None:  # ids stored by another writer since our sync are left out
                    rows += [(cid, catalog[cid].parent_id, catalog[cid].metadata, d) for cid, d in zip(ids, dists)
                             if cid in catalog]
                else:
                    rows += [(cid, str(meta[_PARENT]), meta, d)
                             for cid, meta, d in zip(ids, result["metadatas"][0], dists)]
            if not rows and targets and sum(col.count() for col in targets) == 0:  # a round trip only when empty
                return RankedList("dense", "cosine", (), note=STORE_EMPTY())
            # The filters are checked again on our side, exactly in value and type: Chroma's ``where`` compares
            # numbers across int and float (``$eq: 1`` matches a stored 1.0), and a tenant filter must hold even
            # if the store ignored it (or a collection held another tenant).
            kept = [r for r in rows if filters.matches(r[2])]
            if len(kept) >= window or not full or len(kept) == len(rows):
                break
            asked *= 4  # the re-check dropped some of a full window: ask for more, so the window stays full
        rows = sorted(kept, key=lambda r: (r[3], r[0]))[:window]
        items = tuple(ScoredItem(cid, parent, rank, 1.0 - float(dist))
                      for rank, (cid, parent, _, dist) in enumerate(rows, start=1))
        return RankedList("dense", "cosine", items)

    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of ``chunk_ids`` (missing ids are left out), read from each one's collection (every
        collection of the layout when the catalog does not know the id's tenant)."""
        if not chunk_ids:
            return {}
        layout, catalog = self.layout, self.catalog
        if layout is None:
            raise RuntimeError("the vector store is not synced (or was dropped)")
        wanted: dict[str, list[str]] = {}
        for cid in dict.fromkeys(chunk_ids):
            chunk = catalog.get(cid) if catalog is not None else None
            if chunk is None and catalog is not None:
                continue  # not a chunk of this corpus
            field = self.tenant_field  # set whenever the layout is multi-tenant
            names = ([layout.name_for(chunk.metadata.get(field)) if layout.multi_tenant and field is not None
                      else self.name] if chunk is not None else list(self.collections))
            for name in names:
                wanted.setdefault(name, []).append(cid)
        out: dict[str, np.ndarray] = {}
        for name, ids in wanted.items():
            col = self.collections.get(name)
            if col is None:
                continue
            got = col.get(ids=ids, include=["embeddings"])
            out.update((cid, np.asarray(vec, dtype=np.float32)) for cid, vec in zip(got["ids"], got["embeddings"]))
        return {cid: out[cid] for cid in chunk_ids if cid in out}

    def drop(self) -> None:
        """Delete every collection of this index, in any layout."""
        for name in self.owned():
            self.client.delete_collection(name)
        self.layout, self.collections, self.catalog, self.exact = None, {}, None, None


class ExactSearch:
    """Exact cosine search over the stored vectors of a corpus small enough to hold them in memory
    (``dense_exact_up_to``): every vector of the searched collections that the filters admit is compared, ties
    broken by chunk id, so a question gets the same dense list in every process.

    Why: Chroma's HNSW graph is approximate, and the embedded store rebuilds part of it when a process opens the
    collection (its recent writes are inserted again, by several threads), so the same query vector can get a
    different list in another process; ``hnsw_ef_search`` raises the approximate search's recall, not its
    reproducibility. Exact search costs memory (4 bytes × dimensions × chunks: 77 MB at 50,000 chunks of e5-small)
    and a matrix product per query (measured 2.1 ms at 12,000 chunks, 1.6 ms of product at 50,000, one core:
    docs/evaluation.md, "Numbers that repeat").

    The vectors are read from the collections (``page`` rows a request) on the first query after a sync; the
    filter masks of the last 64 filters are kept.

    Args:
        collections: the layout's collections (name → Chroma collection), as the sync left them.
        catalog: chunk id → chunk of what the sync stored (ids written since by another process are left out).
    """

    def __init__(self, collections: Mapping[str, Any], catalog: Mapping[str, Chunk], page: int = 5000,
                 masks: int = 64) -> None:
        self.collections, self.catalog, self.page, self.masks_kept = collections, catalog, page, masks
        self._lock = threading.Lock()
        self._loaded: dict[str, tuple[list[str], np.ndarray]] = {}
        self._masks: dict[tuple[str, Filters], np.ndarray] = {}

    def _matrix(self, name: str) -> tuple[list[str], np.ndarray]:
        """The collection's chunk ids (sorted) and their unit vectors, read once."""
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            found = {cid: vec for got in _pages(self.collections[name], ["embeddings"], self.page)
                     for cid, vec in zip(got["ids"], got["embeddings"]) if cid in self.catalog}
            ids = sorted(found)
            matrix: np.ndarray = (np.asarray([found[cid] for cid in ids], dtype=np.float32) if ids
                                  else np.zeros((0, 0), dtype=np.float32))
            if len(ids):
                norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                matrix = matrix / np.where(norms > 0, norms, 1.0)
            self._loaded[name] = (ids, matrix)
            return ids, matrix

    def _mask(self, name: str, ids: Sequence[str], filters: Filters) -> np.ndarray | None:
        """Which rows the filters admit (``None``: all, no filter)."""
        if not filters.clauses:
            return None
        key = (name, filters)
        with self._lock:
            if key in self._masks:
                return self._masks[key]
        mask = np.fromiter((filters.matches(self.catalog[cid].metadata) for cid in ids), dtype=bool, count=len(ids))
        with self._lock:
            if len(self._masks) >= self.masks_kept:
                self._masks.pop(next(iter(self._masks)))
            self._masks[key] = mask
        return mask

    def query(self, vector: np.ndarray, names: Sequence[str], filters: Filters, window: int) -> RankedList:
        """The ``window`` chunks of collections ``names`` nearest to ``vector`` among those ``filters`` admits
        (filters checked exactly in value and type, as :meth:`VectorStore.query` re-checks them)."""
        q = np.asarray(vector, dtype=np.float32).ravel()
        norm = float(np.linalg.norm(q))
        q = q / norm if norm > 0 else q
        rows: list[tuple[float, str]] = []
        stored = 0
        for name in names:
            ids, matrix = self._matrix(name)
            stored += len(ids)
            if not ids:
                continue
            mask = self._mask(name, ids, filters)
            at = np.arange(len(ids)) if mask is None else np.flatnonzero(mask)
            if not len(at):
                continue
            sims = matrix[at] @ q
            if len(at) > window:  # the window's worst similarity, then every row at least as similar (ties kept)
                cut = np.partition(sims, len(sims) - window)[len(sims) - window]
                keep = np.flatnonzero(sims >= cut)
            else:
                keep = np.arange(len(at))
            rows += [(float(sims[i]), ids[at[i]]) for i in keep]
        if not rows and names and stored == 0:
            return RankedList("dense", "cosine", (), note=STORE_EMPTY())
        rows.sort(key=lambda r: (-r[0], r[1]))
        catalog = self.catalog
        return RankedList("dense", "cosine", tuple(ScoredItem(cid, catalog[cid].parent_id, rank, sim)
                                                   for rank, (sim, cid) in enumerate(rows[:window], start=1)))


def _pages(collection: Any, include: list[str], page: int) -> Iterator[Mapping[str, Any]]:
    """Everything stored in ``collection``, ``page`` rows a ``get`` (one unbounded ``get`` fails on large
    collections: Chroma's SQLite says "too many SQL variables" at 100k chunks)."""
    offset = 0
    while True:
        got = collection.get(include=include, limit=page, offset=offset)
        yield got
        if len(got["ids"]) < page:
            return
        offset += page


def _stored_hashes(collection: Any, page: int) -> dict[str, str | None]:
    """Chunk id → content hash of everything stored in ``collection``, read ``page`` rows at a time
    (:func:`_pages`)."""
    return {cid: (meta or {}).get(_HASH) for got in _pages(collection, ["metadatas"], page)
            for cid, meta in zip(got["ids"], got["metadatas"])}


def _reusable(others: Mapping[str, Any], other_stored: Mapping[str, Mapping[str, str | None]],
              todo: Sequence[Chunk], batch: int = 1000) -> dict[str, np.ndarray]:
    """Stored vectors of ``todo`` chunks found, with the same content hash, in collections of another layout
    (read back ``batch`` ids at a time): a layout change moves vectors and embeds nothing."""
    found: dict[str, np.ndarray] = {}
    for name, hashes in other_stored.items():
        ids = [c.chunk_id for c in todo if c.chunk_id not in found and hashes.get(c.chunk_id) == c.content_hash]
        for start in range(0, len(ids), batch):
            got = others[name].get(ids=ids[start : start + batch], include=["embeddings"])
            found.update((cid, np.asarray(vec, dtype=np.float32)) for cid, vec in zip(got["ids"], got["embeddings"]))
    return found
