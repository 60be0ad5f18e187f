"""Which tenants a user may see, by their written form: what the access policy names (the policy itself is
:mod:`retrieval.serving.access`), applied to tenants, questions and documents."""

from __future__ import annotations

from typing import Collection, Iterable, Sequence, TypeVar

T = TypeVar("T")


def may_open(tenant: object, allowed: Collection[str] | None) -> bool:
    """True when a tenant value (of any JSON type) is among ``allowed`` (always, in single-user mode)."""
    return allowed is None or written(tenant) in allowed


def visible_tenants(tenants: Iterable[T], allowed: frozenset[str] | None) -> list[T]:
    """The corpus' tenants the user may open, in the corpus' order (all of them in single-user mode)."""
    return [tenant for tenant in tenants if may_open(tenant, allowed)]


def visible_questions(questions: Sequence[T], tenant_field: str, allowed: frozenset[str] | None,
                      multi_tenant: bool) -> list[T]:
    """The labeled questions a user may see: those whose tenant filter names a tenant they may open.

    On a multi-tenant corpus a question that names no tenant is left out under a policy (its text and its
    relevant ids could belong to any tenant); on a corpus without tenants every question is kept.

    Args:
        questions: objects with a ``filters`` mapping (:class:`retrieval.core.types.Question`).
        tenant_field: the corpus' tenant field (``RETRIEVAL_TENANT_FIELD``).
        allowed: :func:`allowed_tenants` (``None``: keep all).
        multi_tenant: whether the corpus has tenants.
    """
    if allowed is None:
        return list(questions)
    kept = []
    for question in questions:
        filters = getattr(question, "filters", None) or {}
        if tenant_field in filters:
            if may_open(filters[tenant_field], allowed):
                kept.append(question)
        elif not multi_tenant:
            kept.append(question)
    return kept


def written(tenant: object) -> str:
    """A tenant's written form: the string itself, or an integer's digits."""
    return tenant if isinstance(tenant, str) else str(tenant)
