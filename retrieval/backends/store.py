"""The dense store's names where they were read before the store became the :mod:`retrieval.backends.chroma`
package: the Chroma store (:mod:`.chroma`), the guarded reads (:mod:`.reads`) and what every dense store's sync
shares (:mod:`.vectors`). Nothing is defined here."""

from ..core.types import RESERVED_KEYS, RESERVED_PREFIXES
from .chroma import (DenseLayout, ExactSearch, VectorStore, client_generation, collection_name, damage_reason,
                     forget_client, move_aside, native_failure, open_client, owned_by, probe_damage, replaced,
                     says_damaged, tenant_digest)
from .reads import (INTERRUPTS, NO_STORE, SEARCH_FAILED, STORE_EMPTY, VECTORS_UNAVAILABLE, DenseStore, StoreRead,
                    guarded, read_vectors, read_window)
from .vectors import SyncReport, embed_chunks, embedded_batches, index_variant

__all__ = [
    "INTERRUPTS", "NO_STORE", "RESERVED_KEYS", "RESERVED_PREFIXES", "SEARCH_FAILED", "STORE_EMPTY",
    "VECTORS_UNAVAILABLE", "DenseLayout", "DenseStore", "ExactSearch", "StoreRead", "SyncReport", "VectorStore",
    "client_generation", "collection_name", "damage_reason", "embed_chunks", "embedded_batches", "forget_client",
    "guarded", "index_variant", "move_aside", "native_failure", "open_client", "owned_by", "probe_damage",
    "read_vectors", "read_window", "replaced", "says_damaged", "tenant_digest",
]
