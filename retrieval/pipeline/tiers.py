"""Planning the degradation tier of a request before anything is searched (DESIGN.md, "Degradation tiers").

``refusal`` is decided later, by the gate; a dense search that fails mid-request drops to
``lexical_only`` there too. Every tier comes with the reason that chose it.
"""

from __future__ import annotations

from typing import Any, Callable

from ..backends.state import IndexState
from ..core.filters import Filters, typed, typed_set
from ..settings import Settings

#: The five tiers, best first.
TIERS = ("full", "rrf_only", "dense_only", "lexical_only", "refusal")


def plan_tier(state: IndexState, flt: Filters, s: Settings, embedder_ok: bool, embedder_reason: str,
              reranker: Callable[[str], tuple[Any, str]]) -> tuple[str, str]:
    """``(tier, reason)`` for a request.

    Args:
        embedder_ok: an embedder is loaded (``embedder_reason`` says why not).
        reranker: ``spec → (reranker or None, reason)``, loading on first use.
    """
    if not s.dense_enabled:
        return "lexical_only", "dense side switched off (RETRIEVAL_DENSE_ENABLED=false)"
    if not (embedder_ok and state.store is not None):
        why = embedder_reason if not embedder_ok else state.store_reason
        if not s.hybrid_enabled:
            return "lexical_only", f"dense-only requested, but the dense side is unavailable ({why})"
        return "lexical_only", why
    if not s.hybrid_enabled:
        return "dense_only", "hybrid switched off (RETRIEVAL_HYBRID_ENABLED=false / dense-only toggle)"
    tenants = flt.get(s.tenant_field)
    size = sum(state.lexical.size(t) for t in tenants) if tenants else sum(
        state.lexical.size(t) for t in [None, *state.tenants])
    if size == 0:
        return "dense_only", "the BM25 index is empty for this request"
    loaded, why = reranker(s.reranker_model)
    if loaded is None:
        return "rrf_only", why
    return "full", f"reranker '{loaded.name}' ({loaded.kind}) loaded"


def unknown_tenants(state: IndexState, flt: Filters, s: Settings) -> list[Any]:
    """The requested tenant values that no chunk of the corpus has (a misspelled ``Lumen`` for ``lumen``)."""

    known = typed_set(state.tenants)
    return [t for t in (flt.get(s.tenant_field) or []) if typed(t) not in known]


def no_candidate_reason(state: IndexState, flt: Filters, s: Settings, reason: str) -> str:
    """``reason``, with the unknown tenants named when they are why nothing was found."""
    unknown = unknown_tenants(state, flt, s)
    if not unknown:
        return reason
    # Other tenants' values are not listed: a request never learns what another tenant is called.
    return (f"{reason}: {s.tenant_field} {', '.join(repr(t) for t in unknown)} is not in this corpus "
            "(values are matched exactly: case and type count)")
