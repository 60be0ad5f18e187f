"""The trace of one request (the JSON contract: docs/contracts.md, "The trace") and the timer that fills its
``timings_ms``.

Every stage writes into one :class:`Trace`; the app, the CLI and the evaluation read it and never
recompute a stage. Field names are the contract: fields may be added, never renamed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..core.reasons import Reason, put
from ..core.redact import scrub
from ..core.types import Chunk, FinalItem, Query, RankedList, ScoredItem
from ..ingest.location import location
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
    """Everything one request did. ``to_dict()`` gives the trace JSON of docs/contracts.md (the contract).

    ``selected`` is the list the gate read: the reranked (else fused) list after dedup, top_k and MMR; the
    evaluation scores it, so it scores what the pipeline kept.

    ``notes`` are the stages that did less than they were asked (:class:`Note`): MMR that could not run, an LLM
    transform answered by the local adapter, a store read that failed (the stage dropped). A stage that changes
    the tier says so in ``tier_reason`` instead; nothing degrades without a line here or there.

    ``locations`` (:func:`chunk_locations`) is where each chunk the request saw sits in its source: every item of
    every list of :meth:`to_dict` (``lexical``, ``dense``, ``fused``, ``reranked``, ``selected``, ``final``,
    ``lost_by_reranker`` and the variants' lists) carries its chunk's ``section``, ``page`` and ``page_end``, each
    where the chunk has it (:func:`retrieval.ingest.location.location`); the JSON has no ``locations`` field.

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
    #: Chunk id → its place in its source (:func:`chunk_locations`), merged into the items of :meth:`to_dict`.
    locations: dict[str, dict[str, Any]] = field(default_factory=dict)
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
            "lexical": self._ranked(self.lexical.to_dict()),
            "dense": self._ranked(self.dense.to_dict()),
            "variants": [self._variant(v) for v in self.variants],
            "fused": self._ranked(self.fused.to_dict()),
            "reranked": self._ranked(self.reranked.to_dict()),
            "selected": self._placed(i.to_dict() for i in self.selected),
            "final": self._placed(f.to_dict() for f in self.final),
            "lost_by_reranker": self._placed(self.lost_by_reranker),
            "gate": self.gate,
            "answer": self.answer.to_dict(),
            "timings_ms": self.timings_ms,
            "costs": self.costs,
            "cache": self.cache,
            "notes": [n.to_dict() for n in self.notes],
        }

    def _placed(self, items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The items, each with its chunk's :attr:`locations` entry added (a copy; an item without one as it is)."""
        return [{**item, **self.locations.get(item.get("chunk_id", ""), {})} for item in items]

    def _ranked(self, data: dict[str, Any]) -> dict[str, Any]:
        """A ranked list's dict (``RankedList.to_dict()``) with its items placed (:meth:`_placed`)."""
        return {**data, "items": self._placed(data.get("items") or [])}

    def _variant(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """A variant query's entry with its ``lexical`` and ``dense`` lists' items placed."""
        return {k: self._ranked(v) if k in ("lexical", "dense") and isinstance(v, dict) else v
                for k, v in entry.items()}

    @property
    def context_chunk_ids(self) -> list[str]:
        return [f.chunk_id for f in self.final]

    @property
    def gated(self) -> list[FinalItem]:
        """The final chunks the gate passed: ``final`` without the chunks ``context_siblings`` added beside them."""
        return [f for f in self.final if f.sibling_of is None]


def chunk_locations(chunks: Mapping[str, Chunk], ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """What :attr:`Trace.locations` holds: each of ``ids`` whose chunk has a place in its source → its
    :func:`~retrieval.ingest.location.location` (``{"section", "page", "page_end"}``, the keys it has). Only the
    ids given are read (the request's lists, not the corpus); an id without a place, or not in ``chunks``, is
    left out."""
    out: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for cid in ids:
        if cid in seen:
            continue
        seen.add(cid)
        chunk = chunks.get(cid)
        where = location(chunk.metadata) if chunk is not None else {}
        if where:
            out[cid] = where
    return out
