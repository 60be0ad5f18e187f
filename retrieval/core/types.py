"""Frozen data types passed between stages. Stages return new objects instead of changing their inputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .reasons import Reason, declare, put

MetadataValue = str | int | float | bool
#: A document's (and its chunks') metadata value: one value, or a tuple of them for a multi-valued field (``tags``).
FieldValue = MetadataValue | tuple[MetadataValue, ...]

#: Metadata keys the stores keep for themselves (ours: ``rw_parent``, ``rw_hash``, ``rw_position``; Chroma's
#: ``chroma:document``): refused at load, with keys that are empty or start with ``$`` (filter operators), ``#``
#: or ``chroma:`` (Chroma's own).
RESERVED_KEYS = frozenset({"rw_parent", "rw_hash", "rw_position", "chroma:document"})
RESERVED_PREFIXES = ("$", "#", "chroma:")

SKIPPED = declare("list.skipped", en="skipped: {why}", pt="pulada: {why}")
UNFUSED = declare("list.unfused", en="searched but not fused: {why}", pt="buscada, mas não fundida: {why}")

#: What the embedder reads of a chunk (the ``passage_template`` setting): ``title-newline`` =
#: "title\ncontext\ntext", ``title-period`` = "title. context text", ``text`` = "context text" (no title).
PASSAGE_TEMPLATES = ("title-newline", "title-period", "text")


@dataclass(frozen=True)
class Document:
    """A parent document as read from the corpus.

    ``markup`` is ``""`` for plain text, ``"markdown"`` or ``"mdx"`` for a folder's ``.md`` / ``.mdx`` file: its
    ``text`` is then the source, read as structure when it is chunked (:mod:`retrieval.ingest.markup`).
    """

    id: str
    title: str
    text: str
    metadata: Mapping[str, FieldValue]
    markup: str = ""


@dataclass(frozen=True)
class Chunk:
    """A subchunk of a parent document: id ``"{parent_id}#{n}"`` (n from 0), with the parent's metadata.

    ``context`` is an optional contextual-retrieval line (and a Markdown chunk's section path), indexed but never
    shown as evidence. ``code`` holds a Markdown chunk's code blocks: indexed, never cut into answer sentences
    (``text`` holds none of it).
    """

    chunk_id: str
    parent_id: str
    position: int
    title: str
    text: str
    metadata: Mapping[str, FieldValue]
    content_hash: str
    context: str = ""
    code: str = ""

    @property
    def indexed_text(self) -> str:
        """The text the indexes see: title, optional context line, the chunk text, then its code."""
        return "\n".join(part for part in (self.title, self.context, self.text, self.code) if part)

    def passage(self, template: str = "title-newline") -> str:
        """The text the embedder reads, by :data:`PASSAGE_TEMPLATES` (BM25 always reads :attr:`indexed_text`):
        ``"".join(self.passage_parts(template))``.

        Raises:
            ValueError: an unknown template.
        """
        return "".join(self.passage_parts(template))

    def passage_parts(self, template: str = "title-newline") -> tuple[str, str, str]:
        """:meth:`passage` as ``(head, text, tail)``: what comes before the chunk's own text (title, context line
        and their separators), the text itself, and what follows it (its code). The reader reads the whole passage
        in one pass and keeps the states of the middle part only; the head and tail end and start at a space or
        a line break, so a text's pieces are the same alone as inside the passage.

        Raises:
            ValueError: an unknown template.
        """
        if template not in PASSAGE_TEMPLATES:
            raise ValueError(f"unknown passage template '{template}' (use {', '.join(PASSAGE_TEMPLATES)})")
        if template == "title-newline":
            before = [part for part in (self.title, self.context) if part]
            sep = "\n"
        else:
            before = [self.context] if self.context else []
            sep = " "
        if template == "title-period":
            title = self.title.rstrip()
            if title:
                before.insert(0, f"{title}{'' if title.endswith(('.', '?', '!', ':')) else '.'}")
        text = self.text
        head = sep.join(before)
        alone = template == "title-period" and len(before) == 1 and bool(self.title.rstrip())
        if head and (text or self.code or alone):
            head += sep   # a title-period title with nothing after it reads "Title. ", as it always did
        tail = f"{sep if text else ''}{self.code}" if self.code else ""
        return head, text, tail


@dataclass(frozen=True)
class ScoredItem:
    """One entry of a ranked list. ``rank`` starts at 1. Stage-specific fields are ``None`` elsewhere.

    Attributes:
        terms: lexical only, per-token BM25 contribution (they sum to ``score``).
        contributions: fused only, per-ranker RRF term ``w / (k + rank)``.
        ranks: fused only, the 1-based rank each ranker gave the item.
        fused_rank: reranked only, the item's rank in the fused list.
        feature_contributions: reranked by the learned ranker only, each feature's contribution to
            ``score`` (raw LambdaMART units) plus ``bias``; they sum to ``score``.
        truncation: reranked by a cross-encoder only, ``{"truncated", "tokens", "limit"}``: whether the
            pair (question, passage) was longer than the model reads (the rest was never scored).
        fused_tail: selected after the reranked window, from the fused list, in fused order (its ``score`` is
            the fused one): the window held fewer than ``top_k`` parents.
    """

    chunk_id: str
    parent_id: str
    rank: int
    score: float
    terms: Mapping[str, float] | None = None
    contributions: Mapping[str, float] | None = None
    ranks: Mapping[str, int] | None = None
    fused_rank: int | None = None
    feature_contributions: Mapping[str, float] | None = None
    truncation: Mapping[str, Any] | None = None
    fused_tail: bool = False

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
        if self.feature_contributions is not None:
            data["feature_contributions"] = dict(self.feature_contributions)
        if self.truncation is not None:
            data["truncation"] = dict(self.truncation)
        if self.fused_tail:
            data["fused_tail"] = True
        return data


@dataclass(frozen=True)
class RankedList:
    """A ranked list that names its stage and its score kind (e.g. ``"bm25"``, ``"cosine"``, ``"rrf"``).

    ``note`` says why the list is empty or partial (e.g. the tier that skipped it).
    """

    stage: str
    score_kind: str
    items: tuple[ScoredItem, ...] = ()
    note: Reason | None = None
    #: The list did not run (the tier skipped it, or its search failed): why. Its items are empty.
    skipped: Reason | None = None
    #: The list ran but the fusion leaves it out (e.g. a decomposed question fuses its parts): why.
    unfused: Reason | None = None

    @property
    def fusable(self) -> bool:
        """The list ran and the fusion takes it."""
        return self.skipped is None and self.unfused is None

    @property
    def status(self) -> Reason | None:
        """What the trace shows under ``note``: why the list is empty, partial or left out."""
        if self.skipped is not None:
            return SKIPPED(why=self.skipped)
        if self.unfused is not None:
            return UNFUSED(why=self.unfused)
        return self.note

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"score_kind": self.score_kind, "items": [i.to_dict() for i in self.items]}
        return put(data, "note", self.status)

    def chunk_ids(self) -> list[str]:
        return [item.chunk_id for item in self.items]


@dataclass(frozen=True)
class RankerKey:
    """The identity of one generator list in the fusion: which side ran which query.

    Prints as the ranker names of the trace: ``bm25``, ``dense``, ``bm25:rewrite``, ``dense:multi_query#2``,
    ``bm25:decompose#1``, ``dense:hop1:PX-7``.

    Attributes:
        side: ``bm25`` (lexical) or ``dense``.
        kind: the query's kind (``original`` or a transform name).
        variant: the number of the query when a transform gave several (1-based), else ``None``.
        hop: multi-hop only, the hop number (1-based).
        code: multi-hop only, the code that hop searched.
    """

    side: str
    kind: str = "original"
    variant: int | None = None
    hop: int | None = None
    code: str | None = None

    def __str__(self) -> str:
        if self.kind == "original":
            return self.side
        if self.kind == "multi_hop":
            return f"{self.side}:hop{self.hop}:{self.code}"
        return f"{self.side}:{self.kind}" + (f"#{self.variant}" if self.variant is not None else "")

    @property
    def query_part(self) -> tuple[str, int | None]:
        """``(kind, variant)``: the keys of both sides of one query share it."""
        return self.kind, self.variant


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
    #: For a chunk added to the context beside its document's final chunk (``context_siblings``): that chunk's
    #: rank in the final list; ``None`` for the final chunks themselves.
    sibling_of: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"chunk_id": self.chunk_id, "parent_id": self.parent_id, "rank": self.rank,
               "score": self.score, "similarity": self.similarity, "text": self.text}
        if self.sibling_of is not None:
            out["sibling_of"] = self.sibling_of
        return out


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
    #: Evidence as character spans of parents, ``(parent id, start, end)``: resolved against the corpus at
    #: evaluation (:func:`retrieval.offline.evaluation.labels.resolve_labels`), whatever its chunking.
    evidence: tuple[tuple[str, int, int], ...] = ()
