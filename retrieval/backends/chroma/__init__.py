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

A request reads the store only through :func:`~retrieval.backends.reads.guarded` (``read_vectors``,
``read_window``): a store that fails comes back as a :class:`~retrieval.backends.reads.StoreRead` that says why,
and the stage that read it drops with that reason.

Chroma reads its SQLite file from Rust: a damaged file can make it *panic* (pyo3's ``PanicException``, a
``BaseException``, not an ``Exception``). Every boundary where the store is opened, synced or read catches any
``BaseException`` but an interrupt (:data:`~retrieval.backends.reads.INTERRUPTS`, re-raised), and
:func:`damage_reason` says whether the store's files are damaged (:data:`~retrieval.backends.base.DAMAGED`: the
remedy is ``index --rebuild``, which moves the store aside with :func:`move_aside`). :func:`open_client` checks
the SQLite file before Chroma reads it (:func:`probe_damage`), so a damaged file is refused in one line, before any
native library prints its panic.

One job per module:

* :mod:`.client`: the client (:func:`open_client`) and what this process keeps of an embedded store's system
  (:func:`client_generation`, :func:`replaced`, :func:`forget_client`, :func:`move_aside`).
* :mod:`.damage`: whether the store's files are damaged (:func:`probe_damage`, :func:`damage_reason`).
* :mod:`.layout`: the collections of an index (:func:`collection_name`) and of its tenants (:class:`DenseLayout`).
* :mod:`.rows`: a chunk as a Chroma row, and a collection's rows read back page by page.
* :mod:`.collection`: the store (:class:`VectorStore`): its sync, its search and its stored vectors.
* :mod:`.exact`: the exact search of a small corpus (:class:`ExactSearch`).

What is not Chroma's lives beside this package: the guarded reads and :class:`~retrieval.backends.reads.DenseStore`
in :mod:`retrieval.backends.reads`; the index variant, the embedding in batches and the
:class:`~retrieval.backends.vectors.SyncReport` in :mod:`retrieval.backends.vectors` (Milvus reads them too).
"""

from .client import client_generation, forget_client, move_aside, open_client, replaced
from .collection import VectorStore
from .damage import damage_reason, native_failure, probe_damage, says_damaged
from .exact import ExactSearch
from .layout import DenseLayout, collection_name, owned_by, tenant_digest

__all__ = [
    "DenseLayout", "ExactSearch", "VectorStore", "client_generation", "collection_name", "damage_reason",
    "forget_client", "move_aside", "native_failure", "open_client", "owned_by", "probe_damage", "replaced",
    "says_damaged", "tenant_digest",
]
