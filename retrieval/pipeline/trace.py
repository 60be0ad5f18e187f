"""The trace of one request (the JSON contract of DESIGN.md) and the timer that fills its ``timings_ms``.

Every stage writes into one :class:`Trace`; the app, the CLI and the evaluation read it and never
recompute a stage. Field names are the contract: fields may be added, never renamed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.reasons import Reason, put
from ..core.redact import scrub
from ..core.types import FinalItem, Query, RankedList, ScoredItem
from ..stages.answer import Answer

SCHEMA_VERSION = "1.0"


@dataclass(frozen=True)
class Note:
    """A stage that did less than it was asked, and why."""

    stage: str
    reason: Reason

    def to_dict(self) -> dict[str, Any]:
        return put({"stage": self.stage}, "note", self.reason)


@dataclass(frozen=True, kw_only=True)
class Trace:
    """Everything one request did. ``to_dict()`` gives the trace JSON of DESIGN.md (the contract).

    ``selected`` is the list the gate read: the reranked (else fused) list after dedup, top_k and MMR; the
    evaluation scores it, so it scores what the pipeline kept.

    ``notes`` are the stages that did less than they were asked (:class:`Note`): MMR that could not run, an LLM
    transform answered by the local adapter, a store read that failed (the stage dropped). A stage that changes
    the tier says so in ``tier_reason`` instead; nothing degrades without a line here or there.

    Built from named fields only (keyword-only): a field is never filled by its position.
    """

    question: str
    settings: dict[str, Any]
    models: dict[str, Any]
    index_id: str
    queries: list[Query]
    filters: dict[str, Any]
    tier: str
    tier_why: Reason
    lexical: RankedList
    dense: RankedList
    fused: RankedList
    reranked: RankedList
    final: list[FinalItem]
    lost_by_reranker: list[dict[str, Any]]
    answer: Answer
    timings_ms: dict[str, float | None]
    costs: dict[str, Any]
    variants: list[dict[str, Any]] = field(default_factory=list)
    gate: dict[str, Any] = field(default_factory=dict)
    selected: tuple[ScoredItem, ...] = ()
    cache: dict[str, Any] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    #: The settings' secrets (:meth:`Settings.secrets`): none of them is in :meth:`to_dict` (never serialized).
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def tier_reason(self) -> str:
        """Why this tier ran, in the trace's words (English): :attr:`tier_why`'s text."""
        return self.tier_why.text()

    def to_dict(self) -> dict[str, Any]:
        """The trace JSON, with none of :attr:`secrets` in any of its strings (:func:`~retrieval.core.redact.scrub`)."""
        return scrub(self._dict(), self.secrets)

    def _dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "question": self.question,
            "settings": self.settings,
            "models": self.models,
            "index_id": self.index_id,
            "queries": [q.to_dict() for q in self.queries],
            "filters": self.filters,
            "tier": self.tier,
            "tier_reason": self.tier_reason,
            "tier_reason_code": self.tier_why.to_dict(),
            "lexical": self.lexical.to_dict(),
            "dense": self.dense.to_dict(),
            "variants": self.variants,
            "fused": self.fused.to_dict(),
            "reranked": self.reranked.to_dict(),
            "selected": [i.to_dict() for i in self.selected],
            "final": [f.to_dict() for f in self.final],
            "lost_by_reranker": self.lost_by_reranker,
            "gate": self.gate,
            "answer": self.answer.to_dict(),
            "timings_ms": self.timings_ms,
            "costs": self.costs,
            "cache": self.cache,
            "notes": [n.to_dict() for n in self.notes],
        }

    @property
    def context_chunk_ids(self) -> list[str]:
        return [f.chunk_id for f in self.final]
