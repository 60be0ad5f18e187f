"""One loaded corpus: its documents, chunks, BM25 indexes and vector store (or why the store is missing).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..core.codes import corpus_codes
from ..core.filters import members, typed
from ..core.reasons import Reason
from ..core.types import Chunk, Document
from ..ingest.folder import IntakeReport
from .lexical import Lexical
from .reads import DenseStore
from .vectors import SyncReport


@dataclass(frozen=True)
class IndexState:
    """One loaded corpus: documents, chunks, BM25 indexes and the vector store (or why it is missing)."""

    corpus_path: Path
    documents: tuple[Document, ...]
    chunks: tuple[Chunk, ...]
    chunk_by_id: Mapping[str, Chunk]
    lexical: Lexical
    field_types: Mapping[str, set[type]]
    store: DenseStore | None
    store_reason: Reason
    sync: SyncReport | None
    index_id: str
    load_ms: float
    #: What reading the corpus did: files read per format, documents, chunks, pages, the files skipped and why
    #: (:class:`retrieval.ingest.folder.IntakeReport`); ``None`` for a state built without one.
    intake: IntakeReport | None = None

    @cached_property
    def tenants(self) -> list[Any]:
        """Tenant values present in the corpus, sorted (computed once per loaded corpus: O(chunks))."""
        return sorted({c.metadata.get(self.lexical.tenant_field) for c in self.chunks} - {None}, key=str)

    @cached_property
    def known_codes(self) -> frozenset[str]:
        """The corpus' own letters-only codes (see :func:`retrieval.stages.transforms.corpus_codes`), once per corpus."""
        return corpus_codes(f"{c.title} {c.text}" for c in self.chunks)

    @cached_property
    def _known_codes_by_tenant(self) -> dict[tuple[str, Any], frozenset[str]]:
        """Typed tenant → the letters-only codes of its own chunks (once per corpus: O(chunks))."""
        texts: dict[tuple[str, Any], list[str]] = {}
        field = self.lexical.tenant_field
        for c in self.chunks:
            if field in c.metadata:
                texts.setdefault(typed(c.metadata[field]), []).append(f"{c.title} {c.text}")
        return {t: corpus_codes(parts) for t, parts in texts.items()}

    def codes_of(self, tenants: Iterable[Any] | None = None) -> frozenset[str]:
        """The letters-only codes the code gate knows for a request: those of its tenant's chunks, so a code
        written only in another tenant (or written there in lower case) never changes a tenant's verdict.

        Args:
            tenants: the request's tenant (a request names one: ``Filters.get(tenant_field)``); ``None`` (no
                tenant field: a corpus without tenants): the whole corpus' :attr:`known_codes`.
        """
        if tenants is None:
            return self.known_codes
        out: frozenset[str] = frozenset()
        for tenant in tenants:
            out |= self._known_codes_by_tenant.get(typed(tenant), frozenset())
        return out

    @cached_property
    def _filter_values(self) -> dict[str, tuple[Any, ...]]:
        values: dict[str, set[Any]] = {}
        for c in self.chunks:
            for k, v in c.metadata.items():
                values.setdefault(k, set()).update(members(v))  # a multi-valued field offers its members
        return {k: tuple(sorted(v, key=str)) for k, v in values.items()}

    @cached_property
    def _filter_values_by_tenant(self) -> dict[tuple[str, Any], dict[str, frozenset[tuple[str, Any]]]]:
        """Typed tenant → field → the typed values its chunks carry (once per corpus: O(chunks))."""
        by_tenant: dict[tuple[str, Any], dict[str, set[tuple[str, Any]]]] = {}
        field = self.lexical.tenant_field
        for c in self.chunks:
            if field in c.metadata:
                fields = by_tenant.setdefault(typed(c.metadata[field]), {})
                for k, v in c.metadata.items():
                    fields.setdefault(k, set()).update(typed(m) for m in members(v))
                    if isinstance(v, tuple):
                        fields[k].add(("tuple", ()))  # the field's multi-valued mark (field_types_of)
        return {t: {k: frozenset(v) for k, v in fields.items()} for t, fields in by_tenant.items()}

    def field_types_of(self, tenants: Iterable[Any]) -> dict[str, set[type]]:
        """The metadata fields (and their types) the chunks of these tenants carry, exact in value and type.

        A request's filters are validated against its tenant's fields (:func:`retrieval.core.filters.build_filters`):
        an unknown field's message then names only fields that tenant's documents have, never a field (or a
        field's type) that exists only in another tenant. Empty for a tenant no chunk carries.
        """
        out: dict[str, set[type]] = {}
        for tenant in tenants:
            for k, values in self._filter_values_by_tenant.get(typed(tenant), {}).items():
                out.setdefault(k, set()).update(type(v) for _, v in values)
        return out

    def filter_values(self, tenants: Iterable[Any] | None = None) -> dict[str, list[Any]]:
        """Each metadata field and its values (sorted), for filter pickers and the self-query (computed once per
        corpus).

        Args:
            tenants: only the values the chunks of these tenants carry (exact in value and type), so a picker
                or the self-query of one tenant never lists a value that exists only in another; ``None``: every
                chunk's values.
        """
        if tenants is None:
            return {k: list(v) for k, v in self._filter_values.items()}
        wanted: dict[str, set[tuple[str, Any]]] = {}
        for tenant in tenants:
            for k, v in self._filter_values_by_tenant.get(typed(tenant), {}).items():
                wanted.setdefault(k, set()).update(v)
        return {k: [v for v in values if typed(v) in wanted[k]]
                for k, values in self._filter_values.items() if k in wanted}
