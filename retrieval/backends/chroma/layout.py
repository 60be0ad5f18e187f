"""Which Chroma collections hold an index: its base name (:func:`collection_name`, one per corpus, model and
index variant) and the dense layout of its tenants (:class:`DenseLayout`: one collection per tenant, one for all,
or hash buckets), each tenant known by its exact identity (:func:`tenant_digest`)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from ...core.filters import typed


def collection_name(corpus_key: str, model_name: str, variant: str = "") -> str:
    """Chroma collection name for a corpus (its absolute path), an embedding model and an index variant
    (:func:`index_variant`): ``chunks-<sha1[:16]>``. Each combination keeps its own collection, so two
    configurations never overwrite each other's chunks and switching back costs no re-embedding."""
    key = f"{corpus_key}\n{model_name}" + (f"\n{variant}" if variant else "")
    return "chunks-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


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
