"""Typed filters as Milvus expressions (:func:`expression`): field names come from the schema, values are
rendered as typed literals (:func:`literal`: strings escaped for Milvus's own parser), never pasted. The tenant is
in every search expression (:func:`tenant_key`, the partition key); results are checked again against the filters
on our side (:class:`~retrieval.backends.milvus.collection.MilvusStore`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from ...core.errors import InvalidFilter
from ...core.filters import Filters

#: An expression no row matches (an empty IN, or no value of a DOUBLE field's type).
NOTHING = "id == \"\" and id != \"\""


def tenant_key(value: Any) -> str:
    """The partition-key string of a tenant value (``""`` for a corpus without tenants)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else "json:" + json.dumps(value)


#: The escapes Milvus's expression parser reads in a double-quoted string (Milvus Lite reads no other: not
#: ``\\uXXXX``, ``\\xHH``, octal, ``\\a``, ``\\b``, ``\\f`` nor ``\\v``; a raw line break ends the literal).
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPE_RE = re.compile(r'[\\"\n\r\t]')


def literal(value: Any) -> str:
    """A Milvus expression literal for one typed filter value (never the raw text).

    Strings are double-quoted with ``\\``, ``"``, line feed, carriage return and tab escaped as ``\\\\``,
    ``\\"``, ``\\n``, ``\\r``, ``\\t`` (the escapes Milvus reads); every other character is written as it
    is, control characters and non-ASCII included (``josé``, U+0001, U+2028): Milvus reads no ``\\uXXXX``
    escape, and rejected the expression JSON's escapes made of a control character (every request of that
    tenant then fell to ``lexical_only``). A value can never close its literal; numbers must be finite;
    bools are ``true``/``false``.

    Raises:
        InvalidFilter: a value of another type, a non-finite number, or text that is not valid Unicode (a lone
            surrogate, which no UTF-8 request can carry).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidFilter(f"filter value {value!r} is not a finite number")
        return repr(float(value))
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidFilter(f"filter value {value!r} is not valid Unicode text (a lone surrogate)") from None
        return '"' + _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group()], value) + '"'
    raise InvalidFilter(f"filter value {value!r} has an unsupported type {type(value).__name__}")


def field(key: str, scalars: Mapping[str, str]) -> str:
    """The expression that names metadata ``key``: its scalar field, or its entry in the JSON field."""
    if key in scalars:
        return f"m_{key}"
    return f"meta[{literal(key)}]"


def expression(filters: Filters, tenant: Any, tenant_field: str, scalars: Mapping[str, str],
               with_tenant: bool = True) -> str:
    """The Milvus expression of ``filters`` (AND across keys, IN within a key) for one tenant; ``scalars`` are the
    metadata keys with a typed field of their own and its type (:class:`~retrieval.backends.milvus.schema.Schema`)."""
    parts = []
    if with_tenant:
        parts.append(f"tenant == {literal(tenant_key(tenant))}")
    for key, values in filters.clauses:
        if key == tenant_field:
            continue
        if not values:
            return NOTHING  # an empty IN matches nothing
        name = field(key, scalars)
        if key in filters.multi:  # a list in the JSON field: one of its members is one of the values
            parts.append(f"json_contains_any({name}, [{', '.join(literal(v) for v in values)}])")
            continue
        if scalars.get(key) == "DOUBLE":
            values = tuple(float(v) for v in values if not isinstance(v, bool))
            if not values:
                return NOTHING
        if key in scalars:
            parts.append(f"{name} in [{', '.join(literal(v) for v in values)}]")
        else:  # a JSON path: Milvus Lite takes no IN on it, so a disjunction of equalities
            parts.append(" or ".join(f"{name} == {literal(v)}" for v in values))
    return " and ".join(f"({p})" for p in parts)
