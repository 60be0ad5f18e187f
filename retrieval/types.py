"""Frozen data types passed between stages. Stages return new objects; nothing is mutated in place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

MetadataValue = str | int | float | bool


@dataclass(frozen=True)
class Document:
    """A parent document as read from the corpus."""

    id: str
    title: str
    text: str
    metadata: Mapping[str, MetadataValue]


@dataclass(frozen=True)
class Chunk:
    """A subchunk of a parent document: id ``"{parent_id}#{n}"`` (n from 0), with the parent's metadata.

    ``context`` is an optional contextual-retrieval line, indexed but never shown as evidence.
    """

    chunk_id: str
    parent_id: str
    position: int
    title: str
    text: str
    metadata: Mapping[str, MetadataValue]
    content_hash: str
    context: str = ""

    @property
    def indexed_text(self) -> str:
        """The text the indexes see: title, optional context line, then the chunk text."""
        return "\n".join(part for part in (self.title, self.context, self.text) if part)


@dataclass(frozen=True)
class ScoredItem:
    """One entry of a ranked list. ``rank`` starts at 1. Stage-specific fields are ``None`` elsewhere.

    Attributes:
        terms: lexical only, per-token BM25 contribution (they sum to ``score``).
        contributions: fused only, per-ranker RRF term ``w / (k + rank)``.
        ranks: fused only, the 1-based rank each ranker gave the item.
        fused_rank: reranked only, the item's rank in the fused list.
    """

    chunk_id: str
    parent_id: str
    rank: int
    score: float
    terms: Mapping[str, float] | None = None
    contributions: Mapping[str, float] | None = None
    ranks: Mapping[str, int] | None = None
    fused_rank: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "chunk_id": self.chunk_id,
            "parent_id": self.parent_id,
            "rank": self.rank,
            "score": self.score,
        }
        for name in ("terms", "contributions", "ranks"):
            value = getattr(self, name)
            if value is not None:
                data[name] = dict(value)
        if self.fused_rank is not None:
            data["fused_rank"] = self.fused_rank
        return data


@dataclass(frozen=True)
class RankedList:
    """A ranked list that names its stage and its score kind (e.g. ``"bm25"``, ``"cosine"``, ``"rrf"``).

    ``note`` says why the list is empty or partial (e.g. the tier that skipped it).
    """

    stage: str
    score_kind: str
    items: tuple[ScoredItem, ...] = ()
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"score_kind": self.score_kind, "items": [i.to_dict() for i in self.items]}
        if self.note:
            data["note"] = self.note
        return data

    def chunk_ids(self) -> list[str]:
        return [item.chunk_id for item in self.items]


@dataclass(frozen=True)
class Query:
    """A query sent to the generators: the original question or a transform of it."""

    text: str
    kind: str = "original"
    hypothesis_only: bool = False
    flags: tuple[str, ...] = ()
    filters_added: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {"text": self.text, "kind": self.kind, "hypothesis_only": self.hypothesis_only,
                "flags": list(self.flags)}
        if self.filters_added is not None:
            data["filters_added"] = dict(self.filters_added)
        return data


@dataclass(frozen=True)
class FinalItem:
    """A chunk sent to the answer stage, with its cosine similarity to the question (``None`` if unknown)."""

    chunk_id: str
    parent_id: str
    rank: int
    score: float
    similarity: float | None
    text: str
    bm25: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, "parent_id": self.parent_id, "rank": self.rank,
                "score": self.score, "similarity": self.similarity, "text": self.text}


@dataclass(frozen=True)
class Question:
    """A labeled question. Empty ``relevant`` means the right answer is an abstention."""

    id: str
    question: str
    group: str
    relevant: tuple[str, ...]
    filters: Mapping[str, Any] = field(default_factory=dict)
    graded: Mapping[str, int] | None = None
    answers: tuple[str, ...] = ()
