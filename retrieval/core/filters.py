"""Metadata filters: keys combine with AND, a list of values for one key means IN (docs/contracts.md, "Filters
and tenants").

A multi-valued field (a front matter's ``categories: [dados, api]``, kept as a tuple of scalars) matches a value
when one of its members is that value: ``categories=dados`` matches ``("dados", "api")``.

Identity is exact in value **and type** on every path: ``True``, ``1``, ``1.0`` and ``"1"`` are four values
(Python's ``True == 1`` and ``hash(True) == hash(1)`` never merge them): membership, equality and hashing of
:class:`Filters` go through :func:`typed`. A request names exactly one tenant.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping

from .errors import InvalidFilter, TenantRequired
from .types import Chunk, FieldValue, MetadataValue


def typed(value: Any) -> tuple[str, Any]:
    """A metadata value's exact identity: ``(type name, value)``, so ``typed(True) != typed(1)``."""
    return (type(value).__name__, value)


def typed_set(values: Iterable[Any]) -> frozenset[tuple[str, Any]]:
    return frozenset(typed(v) for v in values)


#: In :func:`field_types`' sets, the mark of a multi-valued field (beside its members' types).
MULTI = tuple


def members(value: Any) -> tuple[Any, ...]:
    """A metadata value's members: a multi-valued field's (a tuple or list of scalars), else the value alone."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@dataclass(frozen=True, eq=False)
class Filters:
    """Normalized filters: ``{field: (value, …)}``, values already of the corpus' metadata types.

    Equality and hashing are exact in type (so caches keyed by a ``Filters`` never merge ``tenant=True``
    with ``tenant=1``)."""

    clauses: tuple[tuple[str, tuple[MetadataValue, ...]], ...] = ()
    #: The multi-valued fields among the clauses' keys (matched by member: Chroma's ``$contains``).
    multi: frozenset[str] = field(default=frozenset(), compare=False)

    @cached_property
    def key(self) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
        """The clauses with typed values: the identity used by ``==``, ``hash`` and caches."""
        return tuple((k, tuple(typed(v) for v in values)) for k, values in self.clauses)

    @cached_property
    def _sets(self) -> tuple[tuple[str, frozenset[tuple[str, Any]]], ...]:
        return tuple((k, typed_set(values)) for k, values in self.clauses)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Filters) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def as_dict(self) -> dict[str, Any]:
        return {k: (v[0] if len(v) == 1 else list(v)) for k, v in self.clauses}

    def get(self, key: str) -> tuple[MetadataValue, ...] | None:
        return next((v for k, v in self.clauses if k == key), None)

    def matches(self, metadata: Mapping[str, FieldValue]) -> bool:
        """True when every clause holds for ``metadata`` exactly (value and type; a missing field never matches; a
        multi-valued field matches by any of its members)."""
        return all(key in metadata and any(typed(m) in values for m in members(metadata[key]))
                   for key, values in self._sets)

    def chroma_where(self) -> dict[str, Any] | None:
        """The same filters as a Chroma ``where`` clause (``$and`` of ``$eq`` / ``$in``), or ``None``.

        ``$in`` is used only over values of one type; values of mixed types become an ``$or`` of ``$eq``
        (Chroma compares per type; :meth:`matches` re-checks every returned item exactly)."""
        parts = [self._chroma_clause(k, v, k in self.multi) for k, v in self.clauses]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else {"$and": parts}

    @staticmethod
    def _chroma_clause(key: str, values: tuple[MetadataValue, ...], multi: bool = False) -> dict[str, Any]:
        if multi:  # a list field: one of its members is one of the values
            parts = [{key: {"$contains": v}} for v in values]
            return parts[0] if len(parts) == 1 else {"$or": parts}
        if len(values) == 1:
            return {key: {"$eq": values[0]}}
        if len({type(v) for v in values}) == 1:
            return {key: {"$in": list(values)}}
        return {"$or": [{key: {"$eq": v}} for v in values]}

    def narrowed(self, key: str, values: Iterable[MetadataValue]) -> "Filters":
        """Add or intersect a clause (exactly, by value and type); never widens an existing one."""
        values = tuple(values)
        current = self.get(key)
        if current is not None:
            allowed = typed_set(values)
            values = tuple(v for v in current if typed(v) in allowed)
        rest = tuple((k, v) for k, v in self.clauses if k != key)
        return Filters(rest + ((key, values),), self.multi)


#: Plain ASCII numerals only (Python's int() also reads "1_0" and other scripts' digits).
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _type_names(types: set[type]) -> str:
    return "/".join(sorted(t.__name__ for t in types if t is not MULTI))


def _coerce(key: str, raw: Any, types: set[type]) -> list[MetadataValue]:
    """The typed values a raw filter value stands for in a field of the given types.

    A value that already has a type (a question file's JSON, the app, the API) keeps it exactly: ``True`` is
    never read as ``1``; an int may match a float field (``2024`` → ``2024.0``) only where the field holds no
    int. Text (``--filter year=2024``) takes each of the field's types it parses as (``"1"`` in a field of
    ints and strings means ``1`` or ``"1"``).
    """
    types = set(types) - {MULTI}
    if not isinstance(raw, str):
        if isinstance(raw, (bool, int, float)) and type(raw) in types:
            return [raw]
        if type(raw) is int and float in types and int not in types:
            return [float(raw)]
        raise InvalidFilter(f"filter '{key}': {raw!r} ({type(raw).__name__}) is not a {_type_names(types)}")
    text = raw.strip()
    out: list[MetadataValue] = []
    if bool in types and text.lower() in {"true", "false"}:
        out.append(text.lower() == "true")
    if int in types and _INT_RE.fullmatch(text):
        out.append(int(text))
    if float in types and _FLOAT_RE.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            out.append(number)
    if str in types:
        out.append(raw)
    if not out:
        raise InvalidFilter(f"filter '{key}': {raw!r} is not a {_type_names(types)}")
    return out


def field_types(chunks: Iterable[Chunk]) -> dict[str, set[type]]:
    """The Python types each metadata field takes in the corpus; a multi-valued field's set holds its members'
    types and :data:`MULTI`."""
    types: dict[str, set[type]] = {}
    for chunk in chunks:
        for key, value in chunk.metadata.items():
            if isinstance(value, (tuple, list)):
                types.setdefault(key, set()).update({MULTI, *(type(m) for m in value)})
            else:
                types.setdefault(key, set()).add(type(value))
    return types


def build_filters(
    raw: Mapping[str, Any] | Iterable[tuple[str, Any]] | None,
    types: Mapping[str, set[type]],
    tenant_field: str,
    tenant_types: Callable[[tuple[MetadataValue, ...]], Mapping[str, set[type]]] | None = None,
) -> Filters:
    """Validate and type raw filters (from ``--filter key=value``, a question file, or the app).

    Args:
        raw: a mapping ``{key: value | [values]}`` or pairs ``(key, value)``; a key given twice means IN.
        types: the corpus' metadata types (:func:`field_types`).
        tenant_field: when the corpus has this field, a request without it is refused.
        tenant_types: on a multi-tenant corpus, the fields (and types) of the named tenant's own chunks
            (:meth:`retrieval.pipeline.index.IndexState.field_types_of`): the tenant is read first, and every other field
            is checked against what that tenant's documents carry, so a refusal names only that tenant's fields
            and types, never one that exists only in another tenant. ``None``: the whole corpus' ``types``.

    Raises:
        InvalidFilter: unknown field, a value that cannot take the field's type, or two tenants (a request
            names exactly one: nothing is ever searched across tenants).
        TenantRequired: the corpus is multi-tenant and no tenant was given.
    """
    if raw is not None and not isinstance(raw, Mapping):
        try:
            pairs = [tuple(p) for p in raw]
        except TypeError:
            raise InvalidFilter("filters must be a mapping {field: value} or (field, value) pairs") from None
        if any(len(p) != 2 for p in pairs):
            raise InvalidFilter("filters must be a mapping {field: value} or (field, value) pairs")
    else:
        pairs = list((raw or {}).items())
    multi_tenant = tenant_field in types
    scope: Mapping[str, set[type]] = types
    known = f"the corpus has: {', '.join(sorted(types)) or 'none'}"
    if multi_tenant and tenant_types is not None:
        # The tenant first: the other fields are the named tenant's, and a refusal lists only those.
        named = _merged([(k, v) for k, v in pairs if k == tenant_field], types, known).get(tenant_field, [])
        _check_tenants(named, tenant_field)
        own = tenant_types(tuple(named))
        scope = {**own, tenant_field: types[tenant_field]}
        where = f"{tenant_field}={named[0]!r}"
        known = (f"documents with {where} have: {', '.join(sorted(scope))}" if own
                 else f"no document has {where}")
    merged = _merged(pairs, scope, known)
    if multi_tenant:
        _check_tenants(merged.get(tenant_field) or [], tenant_field)
    return Filters(tuple((k, tuple(v)) for k, v in merged.items()),
                   frozenset(k for k in merged if MULTI in types.get(k, ())))


def _merged(pairs: Iterable[tuple[Any, Any]], types: Mapping[str, set[type]], known: str
            ) -> dict[str, list[MetadataValue]]:
    """Each field's typed values, in order and without repeats (exact in type); ``known`` says which fields
    an unknown one is refused against."""
    merged: dict[str, list[MetadataValue]] = {}
    seen: dict[str, set[tuple[str, Any]]] = {}
    for key, value in pairs:
        if not isinstance(key, str) or key not in types:
            raise InvalidFilter(f"unknown filter field {key!r} ({known})")
        values = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
        for v in values:
            for typed_value in _coerce(key, v, types[key]):
                if typed(typed_value) not in seen.setdefault(key, set()):
                    seen[key].add(typed(typed_value))
                    merged.setdefault(key, []).append(typed_value)
    return merged


def _check_tenants(tenants: list[MetadataValue], tenant_field: str) -> None:
    """A request on a multi-tenant corpus names exactly one tenant."""
    if not tenants:
        raise TenantRequired(
            f"this corpus is multi-tenant: name a tenant with --filter {tenant_field}=VALUE (or pick one in the app)"
        )
    if len(tenants) > 1:
        shown = ", ".join(repr(t) for t in tenants[:5])
        raise InvalidFilter(f"a request names exactly one tenant; got {len(tenants)} ({shown}): nothing is "
                            "searched across tenants")
