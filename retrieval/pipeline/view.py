"""A typed view of one trace dict (docs/contracts.md, "The trace"): what the explanations, the pages and the offline
tools read of a request, built once from the JSON-shaped dict of :meth:`~retrieval.pipeline.trace.Trace.to_dict`.

The app keeps its traces as dicts (the session's traces, a downloaded ``trace.json``, the CLI's ``ask --json``), so
:meth:`TraceView.from_dict` reads the dict, like ranx's ``Run.from_dict``, and every reader takes the view: one place
knows the contract's keys. It reads an older trace as the readers always did: a key it lacks is ``None``, an empty
text, list or mapping, or ``False`` (never an error), and a reason recorded as text only keeps its text
(:class:`Said`). ``raw`` keeps the dict itself for what passes it on whole (the trace's JSON download).

Nothing here re-scores or changes the trace: the values are the recorded ones, in the recorded order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..core.reasons import Reason, raw
from ..core.types import SKIPPED, Query
from ..ingest.location import location

#: The four ranked lists of a trace, in pipeline order.
LIST_NAMES = ("lexical", "dense", "fused", "reranked")


def _mapping(value: Any) -> dict[str, Any]:
    """A recorded mapping (a copy), or ``{}`` where the trace has none."""
    return dict(value) if isinstance(value, Mapping) else {}


def _texts(value: Any) -> tuple[str, ...]:
    """A recorded list of texts (ids, codes, tokens), or ``()`` where the trace has none."""
    return tuple(value) if isinstance(value, (list, tuple)) else ()


@dataclass(frozen=True)
class Said:
    """A reason as the trace records it under one key: its text (``key``) and its code (``key_code``, the
    ``{"code", "params"}`` of :meth:`~retrieval.core.reasons.Reason.to_dict`), each ``None`` where it has none."""

    text: str | None = None
    code: Mapping[str, Any] | None = None

    @classmethod
    def read(cls, data: Mapping[str, Any], key: str) -> Said:
        text, code = data.get(key), data.get(f"{key}_code")
        return cls(None if text is None else str(text), dict(code) if isinstance(code, Mapping) else None)

    @property
    def value(self) -> Mapping[str, Any] | str | None:
        """What a page renders: the code where the trace recorded one, else the text."""
        return self.code or self.text

    def reason(self) -> Reason | None:
        """The recorded reason: its code's, else its text as recorded (:func:`~retrieval.core.reasons.raw`);
        ``None`` when the trace recorded neither."""
        found = Reason.from_dict(self.code)
        return found if found is not None or not self.text else raw(self.text)


@dataclass(frozen=True, kw_only=True)
class Item:
    """One item of a ranked list (``lexical``, ``dense``, ``fused``, ``reranked``, ``selected``, a variant's lists):
    the fields of :class:`~retrieval.core.types.ScoredItem`, a list's own ones empty (or ``None``) elsewhere, and
    ``where``, the chunk's place in its source (:func:`~retrieval.ingest.location.location`, ``{}`` if none)."""

    chunk_id: str
    parent_id: str
    rank: int
    score: float
    terms: Mapping[str, float] = field(default_factory=dict)
    contributions: Mapping[str, float] = field(default_factory=dict)
    ranks: Mapping[str, int] = field(default_factory=dict)
    fused_rank: int | None = None
    feature_contributions: Mapping[str, float] = field(default_factory=dict)
    truncation: Mapping[str, Any] | None = None
    fused_tail: bool = False
    where: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Item:
        truncation = data.get("truncation")
        return cls(chunk_id=data["chunk_id"], parent_id=data["parent_id"], rank=data["rank"], score=data["score"],
                   terms=_mapping(data.get("terms")), contributions=_mapping(data.get("contributions")),
                   ranks=_mapping(data.get("ranks")), fused_rank=data.get("fused_rank"),
                   feature_contributions=_mapping(data.get("feature_contributions")),
                   truncation=dict(truncation) if isinstance(truncation, Mapping) else None,
                   fused_tail=bool(data.get("fused_tail")), where=location(data))


@dataclass(frozen=True, kw_only=True)
class Final:
    """One chunk of the answer's context (``final``): :class:`~retrieval.core.types.FinalItem`'s fields and
    ``where``. ``sibling_of`` is set on a chunk ``context_siblings`` added beside its document's final chunk. Its
    chunk id and rank are read as every reader reads them; a hand-written trace may leave out the rest (its parent
    id is then ``""``, its score ``None``)."""

    chunk_id: str
    parent_id: str = ""
    rank: int
    score: float | None = None
    similarity: float | None = None
    text: str = ""
    sibling_of: int | None = None
    where: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gated(self) -> bool:
        """The gate passed this chunk (it was not added beside another)."""
        return self.sibling_of is None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Final:
        return cls(chunk_id=data["chunk_id"], parent_id=str(data.get("parent_id", "")), rank=data["rank"],
                   score=data.get("score"), similarity=data.get("similarity"), text=str(data.get("text") or ""),
                   sibling_of=data.get("sibling_of"), where=location(data))


@dataclass(frozen=True, kw_only=True)
class Lost:
    """One entry of ``lost_by_reranker``: a fused top-k document the reranked top-k no longer holds, its ranks
    before and after the rerank (``None``: not reranked), the reader's score of it and its place in its source."""

    chunk_id: str
    parent_id: str
    fused_rank: int | None = None
    reranked_rank: int | None = None
    reader: float | None = None
    where: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Lost:
        return cls(chunk_id=data["chunk_id"], parent_id=data["parent_id"], fused_rank=data.get("fused_rank"),
                   reranked_rank=data.get("reranked_rank"), reader=data.get("reader"), where=location(data))


@dataclass(frozen=True)
class ListView:
    """One ranked list of the trace: its score kind, its items in the recorded order, and its ``note`` (why it is
    empty, partial or left out of the fusion)."""

    score_kind: str | None = None
    items: tuple[Item, ...] = ()
    note: Said = Said()

    @classmethod
    def from_dict(cls, data: Any) -> ListView:
        data = data if isinstance(data, Mapping) else {}
        return cls(data.get("score_kind"), tuple(Item.from_dict(i) for i in data.get("items") or ()),
                   Said.read(data, "note"))

    @property
    def skipped(self) -> bool:
        """The list did not run (the tier skipped it, or its search failed)."""
        return str((self.note.code or {}).get("code", "")) == SKIPPED.code

    def by_id(self) -> dict[str, Item]:
        """Chunk id → its item (the last one where an id is listed twice)."""
        return {item.chunk_id: item for item in self.items}


@dataclass(frozen=True)
class Variant:
    """A transform's query and the lists it produced (``lexical``, ``dense``: empty where it ran none), with the
    names the fusion knows them by (``rankers``)."""

    query: Query
    rankers: tuple[str, ...] = ()
    lexical: ListView = ListView()
    dense: ListView = ListView()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Variant:
        return cls(_query(data.get("query")), _texts(data.get("rankers")), ListView.from_dict(data.get("lexical")),
                   ListView.from_dict(data.get("dense")))


def _query(data: Any) -> Query:
    """A query as the trace records it (:meth:`Query.to_dict`); an empty kind and text where it has none."""
    data = data if isinstance(data, Mapping) else {}
    added = data.get("filters_added")
    return Query(str(data.get("text", "")), str(data.get("kind", "")), bool(data.get("hypothesis_only")),
                 _texts(data.get("flags")), dict(added) if isinstance(added, Mapping) else None)


@dataclass(frozen=True)
class Models:
    """The request's models and engines, each ``None`` where the trace names none: the embedder and its status,
    the reranker (its spec, kind and status), the answer adapter, the BM25 engine, the vector store and the
    passage template."""

    embedder: str | None = None
    embedder_status: Said = Said()
    reranker: str | None = None
    reranker_kind: str | None = None
    reranker_status: Said = Said()
    answer_adapter: str | None = None
    bm25_engine: str | None = None
    vector_store: str | None = None
    passage_template: str | None = None

    @classmethod
    def from_dict(cls, data: Any) -> Models:
        data = data if isinstance(data, Mapping) else {}
        return cls(data.get("embedder"), Said.read(data, "embedder_status"), data.get("reranker"),
                   data.get("reranker_kind"), Said.read(data, "reranker_status"), data.get("answer_adapter"),
                   data.get("bm25_engine"), data.get("vector_store"), data.get("passage_template"))


@dataclass(frozen=True)
class RequestSettings:
    """The settings the readers use, as the trace recorded them (``None`` where it has none; each reader keeps its
    own default), and ``recorded``: every public setting of the request."""

    top_k: int | None = None
    overfetch: int | None = None
    dedup: str | None = None
    rrf_k: int | None = None
    fusion: str | None = None
    fusion_weights: str | None = None
    mmr_lambda: float | None = None
    reranker_max_input: int | None = None
    min_similarity: float | None = None
    require_codes: bool | None = None
    bm25_analyzer: str | None = None
    recorded: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> RequestSettings:
        data = _mapping(data)
        return cls(data.get("top_k"), data.get("overfetch"), data.get("dedup"), data.get("rrf_k"), data.get("fusion"),
                   data.get("fusion_weights"), data.get("mmr_lambda"), data.get("reranker_max_input"),
                   data.get("min_similarity"), data.get("require_codes"), data.get("bm25_analyzer"), data)


@dataclass(frozen=True)
class Support:
    """The learned support gate's decision (``gate.support``): P(support) (``best``; ``None`` when the gate did not
    decide, ``note`` then says why), its threshold and verdict, the chunks it read, its features' values and
    contributions to the log-odds (with ``bias``), the question's words no selected chunk holds, and its reason."""

    best: float | None = None
    threshold: float | None = None
    passes: bool = False
    chunks: tuple[str, ...] = ()
    features: Mapping[str, float] = field(default_factory=dict)
    contributions: Mapping[str, float] = field(default_factory=dict)
    missing_tokens: tuple[str, ...] = ()
    reason: Said = Said()
    note: Said = Said()

    @classmethod
    def from_dict(cls, data: Any) -> Support:
        data = data if isinstance(data, Mapping) else {}
        return cls(data.get("best"), data.get("threshold"), bool(data.get("passes")), _texts(data.get("chunks")),
                   _mapping(data.get("features")), _mapping(data.get("contributions")),
                   _texts(data.get("missing_tokens")), Said.read(data, "reason"), Said.read(data, "note"))


@dataclass(frozen=True)
class Gate:
    """The gate's decision (``gate``): its kind (``cosine``, ``bm25``, …), threshold, how many chunks it refused,
    the codes no final chunk holds, its reason and note, and the learned support gate's decision."""

    kind: str | None = None
    threshold: float | None = None
    rejected: int | None = None
    missing_codes: tuple[str, ...] = ()
    reason: Said = Said()
    note: Said = Said()
    support: Support = Support()

    @classmethod
    def from_dict(cls, data: Any) -> Gate:
        data = data if isinstance(data, Mapping) else {}
        return cls(data.get("kind"), data.get("threshold"), data.get("rejected"), _texts(data.get("missing_codes")),
                   Said.read(data, "reason"), Said.read(data, "note"), Support.from_dict(data.get("support")))


@dataclass(frozen=True)
class Answer:
    """The answer (``answer``): its text with ``[n]`` citations, whether it abstained, the adapter that wrote it,
    the chunk ids it cites (always in ``final``) and the ones it dropped (outside the context), and its note."""

    text: str = ""
    abstained: bool = False
    adapter: str | None = None
    citations: tuple[str, ...] = ()
    dropped_citations: tuple[str, ...] = ()
    note: Said = Said()

    @classmethod
    def from_dict(cls, data: Any) -> Answer:
        data = data if isinstance(data, Mapping) else {}
        return cls(str(data.get("text") or ""), bool(data.get("abstained")), data.get("adapter"),
                   _texts(data.get("citations")), _texts(data.get("dropped_citations")), Said.read(data, "note"))


@dataclass(frozen=True)
class Note:
    """A stage that did less than it was asked, and why (``notes``)."""

    stage: str
    note: Said

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Note:
        return cls(str(data.get("stage", "")), Said.read(data, "note"))


@dataclass(frozen=True, kw_only=True)
class TraceView:
    """One trace dict, typed (see the module docstring). The lists' items are :class:`Item`, ``final``'s
    :class:`Final`, ``lost_by_reranker``'s :class:`Lost`; ``tier_reason`` is the reason the tier ran
    (``tier_reason`` and ``tier_reason_code``); ``costs`` are the scalar costs and ``techniques`` each query
    transform's; ``query_vector_from`` is the cache's note of where the question's vector came from."""

    schema_version: str | None = None
    question: str = ""
    settings: RequestSettings = RequestSettings()
    models: Models = Models()
    index_id: str | None = None
    queries: tuple[Query, ...] = ()
    filters: Mapping[str, Any] = field(default_factory=dict)
    tier: str | None = None
    tier_reason: Said = Said()
    lexical: ListView = ListView()
    dense: ListView = ListView()
    variants: tuple[Variant, ...] = ()
    fused: ListView = ListView()
    reranked: ListView = ListView()
    selected: tuple[Item, ...] = ()
    final: tuple[Final, ...] = ()
    lost_by_reranker: tuple[Lost, ...] = ()
    gate: Gate = Gate()
    answer: Answer = Answer()
    timings_ms: Mapping[str, float | None] = field(default_factory=dict)
    costs: Mapping[str, Any] = field(default_factory=dict)
    techniques: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    query_vector_from: str | None = None
    notes: tuple[Note, ...] = ()
    #: The dict the view was read from, as it is (the trace's JSON download passes it on).
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TraceView:
        """The view of a trace dict (``Trace.to_dict()``, or an older trace's JSON: see the module docstring).

        Raises:
            KeyError: a list item without ``chunk_id``, ``parent_id``, ``rank`` or ``score``, a final item without
                ``chunk_id`` or ``rank``, a lost one without ``chunk_id`` or ``parent_id`` (every trace has them).
        """
        costs = _mapping(data.get("costs"))
        techniques = costs.pop("techniques", None)
        return cls(
            schema_version=data.get("schema_version"), question=str(data.get("question") or ""),
            settings=RequestSettings.from_dict(data.get("settings")), models=Models.from_dict(data.get("models")),
            index_id=data.get("index_id"), queries=tuple(_query(q) for q in data.get("queries") or ()),
            filters=_mapping(data.get("filters")), tier=data.get("tier"), tier_reason=Said.read(data, "tier_reason"),
            lexical=ListView.from_dict(data.get("lexical")), dense=ListView.from_dict(data.get("dense")),
            variants=tuple(Variant.from_dict(v) for v in data.get("variants") or () if isinstance(v, Mapping)),
            fused=ListView.from_dict(data.get("fused")), reranked=ListView.from_dict(data.get("reranked")),
            selected=tuple(Item.from_dict(i) for i in data.get("selected") or ()),
            final=tuple(Final.from_dict(i) for i in data.get("final") or ()),
            lost_by_reranker=tuple(Lost.from_dict(i) for i in data.get("lost_by_reranker") or ()),
            gate=Gate.from_dict(data.get("gate")), answer=Answer.from_dict(data.get("answer")),
            timings_ms=_mapping(data.get("timings_ms")), costs=costs,
            techniques={str(k): _mapping(v) for k, v in _mapping(techniques).items()},
            query_vector_from=_mapping(data.get("cache")).get("query_vector_from"),
            notes=tuple(Note.from_dict(n) for n in data.get("notes") or () if isinstance(n, Mapping)),
            raw=data)

    def ranked(self, name: str) -> ListView:
        """The ranked list ``name`` (one of :data:`LIST_NAMES`).

        Raises:
            KeyError: another name.
        """
        if name not in LIST_NAMES:
            raise KeyError(name)
        lists: dict[str, ListView] = {"lexical": self.lexical, "dense": self.dense, "fused": self.fused,
                                      "reranked": self.reranked}
        return lists[name]

    @property
    def gated(self) -> tuple[Final, ...]:
        """The final chunks the gate passed (:attr:`retrieval.pipeline.trace.Trace.gated`): ``final`` without the
        chunks ``context_siblings`` added to the answer's context beside them."""
        return tuple(item for item in self.final if item.gated)
