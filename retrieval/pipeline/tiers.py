"""Planning the degradation tier of a request before anything is searched (docs/pipeline.md, the tier table; the
tiers are declared in :mod:`retrieval.stages.tiers`).

``refusal`` is decided later, by the gate; a dense search that fails mid-request drops to ``lexical_only``
there too. Every tier comes with the reason that chose it.
"""

from __future__ import annotations

from typing import Any, Callable

from ..backends.state import IndexState
from ..core.filters import Filters, typed, typed_set
from ..core.reasons import Reason, declare
from ..settings import Settings
from ..stages.tiers import DENSE_ONLY, FULL, LEXICAL_ONLY, RRF_ONLY, Tier

DENSE_OFF = declare("tier.dense_off", en="dense side switched off (RETRIEVAL_DENSE_ENABLED=false)",
                    pt="lado denso desligado (RETRIEVAL_DENSE_ENABLED=false)")
DENSE_UNAVAILABLE = declare("tier.dense_only_unavailable",
                            en="dense-only requested, but the dense side is unavailable ({why})",
                            pt="pedido só denso, mas o lado denso está indisponível ({why})")
HYBRID_OFF = declare("tier.hybrid_off", en="hybrid switched off (RETRIEVAL_HYBRID_ENABLED=false / dense-only toggle)",
                     pt="híbrido desligado (RETRIEVAL_HYBRID_ENABLED=false / opção só denso)")
BM25_EMPTY = declare("tier.bm25_empty", en="the BM25 index is empty for this request",
                     pt="o índice BM25 está vazio para este pedido")
UNKNOWN_TENANT = declare("tier.unknown_tenant",
                         en="{why}: {field} {values!l} is not in this corpus (values are matched exactly: case and "
                            "type count)",
                         pt="{why}: {field} {values!l} não está neste corpus (valores comparados exatamente: "
                            "maiúsculas e tipo contam)")


def plan_tier(state: IndexState, flt: Filters, s: Settings, embedder_ok: bool, embedder_reason: Reason,
              reranker: Callable[[str], tuple[Any, Reason]]) -> tuple[Tier, Reason]:
    """``(tier, reason)`` for a request.

    Args:
        embedder_ok: an embedder is loaded (``embedder_reason`` says why not).
        reranker: ``spec → (reranker or None, reason)``, loading on first use.
    """
    if not s.dense_enabled:
        return LEXICAL_ONLY, DENSE_OFF()
    if not (embedder_ok and state.store is not None):
        why = embedder_reason if not embedder_ok else state.store_reason
        if not s.hybrid_enabled:
            return LEXICAL_ONLY, DENSE_UNAVAILABLE(why=why)
        return LEXICAL_ONLY, why
    if not s.hybrid_enabled:
        return DENSE_ONLY, HYBRID_OFF()
    tenants = flt.get(s.tenant_field)
    size = sum(state.lexical.size(t) for t in tenants) if tenants else sum(
        state.lexical.size(t) for t in [None, *state.tenants])
    if size == 0:
        return DENSE_ONLY, BM25_EMPTY()
    loaded, why = reranker(s.reranker_model)
    if loaded is None:
        return RRF_ONLY, why
    return FULL, why  # the loader's own words: the learned ranker's name is written in the page's language


def unknown_tenants(state: IndexState, flt: Filters, s: Settings) -> list[Any]:
    """The requested tenant values that no chunk of the corpus has (a misspelled ``Lumen`` for ``lumen``)."""
    known = typed_set(state.tenants)
    return [t for t in (flt.get(s.tenant_field) or []) if typed(t) not in known]


def no_candidate_reason(state: IndexState, flt: Filters, s: Settings, reason: Reason) -> Reason:
    """``reason``, with the unknown tenants named when they are why nothing was found."""
    unknown = unknown_tenants(state, flt, s)
    if not unknown:
        return reason
    # Other tenants' values are not listed: a request never learns what another tenant is called.
    return UNKNOWN_TENANT(why=reason, field=s.tenant_field, values=[repr(t) for t in unknown])
