"""Metadata filters: keys combine with AND, a list of values for one key means IN (DESIGN.md, "Tenancy")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .errors import InvalidFilter, TenantRequired
from .types import Chunk, MetadataValue


@dataclass(frozen=True)
class Filters:
    """Normalized filters: ``{field: (value, …)}``, values already of the corpus' metadata types."""

    clauses: tuple[tuple[str, tuple[MetadataValue, ...]], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {k: (v[0] if len(v) == 1 else list(v)) for k, v in self.clauses}

    def get(self, key: str) -> tuple[MetadataValue, ...] | None:
        return next((v for k, v in self.clauses if k == key), None)

    def matches(self, metadata: Mapping[str, MetadataValue]) -> bool:
        """True when every clause holds for ``metadata`` (a missing field never matches)."""
        return all(key in metadata and metadata[key] in values for key, values in self.clauses)

    def chroma_where(self) -> dict[str, Any] | None:
        """The same filters as a Chroma ``where`` clause (``$and`` of ``$eq`` / ``$in``), or ``None``."""
        parts = [{k: {"$eq": v[0]}} if len(v) == 1 else {k: {"$in": list(v)}} for k, v in self.clauses]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else {"$and": parts}

    def narrowed(self, key: str, values: Iterable[MetadataValue]) -> "Filters":
        """Add or intersect a clause; never widens an existing one."""
        values = tuple(values)
        current = self.get(key)
        if current is not None:
            values = tuple(v for v in current if v in values)
        rest = tuple((k, v) for k, v in self.clauses if k != key)
        return Filters(rest + ((key, values),))


def _coerce(key: str, raw: Any, types: set[type]) -> MetadataValue:
    if isinstance(raw, bool) or type(raw) in types:
        if isinstance(raw, bool) and bool not in types and types:
            raise InvalidFilter(f"filter '{key}': {raw!r} is not a {'/'.join(sorted(t.__name__ for t in types))}")
        return raw
    text = str(raw).strip()
    if bool in types and text.lower() in {"true", "false"}:
        return text.lower() == "true"
    if int in types:
        try:
            return int(text)
        except ValueError:
            pass
    if float in types:
        try:
            return float(text)
        except ValueError:
            pass
    if str in types:
        return text
    raise InvalidFilter(f"filter '{key}': {raw!r} is not a {'/'.join(sorted(t.__name__ for t in types))}")


def field_types(chunks: Iterable[Chunk]) -> dict[str, set[type]]:
    """The Python types each metadata field takes in the corpus."""
    types: dict[str, set[type]] = {}
    for chunk in chunks:
        for key, value in chunk.metadata.items():
            types.setdefault(key, set()).add(type(value))
    return types


def build_filters(
    raw: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    types: Mapping[str, set[type]],
    tenant_field: str,
) -> Filters:
    """Validate and type raw filters (from ``--filter key=value``, a question file, or the app).

    Args:
        raw: a mapping ``{key: value | [values]}`` or pairs ``(key, value)``; a key given twice means IN.
        types: the corpus' metadata types (:func:`field_types`).
        tenant_field: when the corpus has this field, a request without it is refused.

    Raises:
        InvalidFilter: unknown field, or a value that cannot take the field's type.
        TenantRequired: the corpus is multi-tenant and no tenant was given.
    """
    pairs = list(raw.items()) if isinstance(raw, Mapping) else list(raw or [])
    merged: dict[str, list[MetadataValue]] = {}
    for key, value in pairs:
        if key not in types:
            known = ", ".join(sorted(types)) or "none"
            raise InvalidFilter(f"unknown filter field '{key}' (the corpus has: {known})")
        values = value if isinstance(value, (list, tuple, set)) else [value]
        for v in values:
            typed = _coerce(key, v, types[key])
            if typed not in merged.setdefault(key, []):
                merged[key].append(typed)
    if tenant_field in types and not merged.get(tenant_field):
        raise TenantRequired(
            f"this corpus is multi-tenant: name a tenant with --filter {tenant_field}=VALUE (or pick one in the app)"
        )
    return Filters(tuple((k, tuple(v)) for k, v in merged.items()))
