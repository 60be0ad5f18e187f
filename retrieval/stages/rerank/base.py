"""What every reranker shares: the component contract, its kind's declaration, the registry of kinds, the
parsed ``reranker_model`` spec and the one guarded call of the stage.

A reranker kind is declared once (:class:`RerankerKind`, in its own module: :mod:`.cross_encoder`,
:mod:`.bi_encoder`, :mod:`.reader`, :mod:`.learned`; "no reranker" here), with its spec's parser, its loader,
its labels, what the app offers of it and its evaluation configuration. Settings validation, the pipeline, the
app's picker, the provenance card, the report and the evaluation read :data:`KINDS`.

A loaded reranker is a component with a load step apart (its kind's ``load``, which never raises and never
waits on the network: ``(None, reason)``) and one call, :meth:`Reranker.rerank`, over at most
``reranker_max_input`` fused candidates. The stage calls it only through :func:`run`, which turns anything it
raises into the reason the request drops to ``rrf_only``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from ...core.kinds import Registry, Text
from ...core.paths import PROJECT_ROOT
from ...core.reasons import Reason, declare, raw
from ...core.types import RankedList, ScoredItem
from ...learned.reader.loader import ReaderStore

log = logging.getLogger(__name__)

#: The learned judge's model folder when no setting names one (``RETRIEVAL_JUDGE_PATH``'s default).
DEFAULT_JUDGE_PATH = PROJECT_ROOT / "models" / "judge"

NONE_CONFIGURED = declare("rerank.none", en="no reranker configured (RETRIEVAL_RERANKER_MODEL=none)",
                          pt="nenhum reranqueador configurado (RETRIEVAL_RERANKER_MODEL=none)")
LOADED = declare("rerank.loaded", en="reranker {name!q} ({kind}) loaded", pt="reranqueador {name!q} ({kind}) carregado")
COULD_NOT_LOAD = declare("rerank.could_not_load", en="reranker {spec!q} could not load: {error}",
                         pt="o reranqueador {spec!q} não carregou: {error}")
FAILED = declare("rerank.failed", en="reranker failed: {error}", pt="o reranqueador falhou: {error}")
NONE_RAN = declare("rerank.none_ran", en="no rerank ran: {why}", pt="nenhum rerank rodou: {why}")
TRUNCATED = declare("rerank.truncated", en="{cut} of {n} passages were longer than the model reads ({limit} tokens) "
                    "and were scored on their beginning only",
                    pt="{cut} de {n} passagens eram mais longas do que o modelo lê ({limit} tokens) e foram "
                    "avaliadas só pelo começo")
BAD_SCORES = declare("rerank.bad_scores", en="the reranker returned a wrong number of scores or non-finite scores",
                     pt="o reranqueador devolveu um número errado de notas ou notas não finitas")


@dataclass(frozen=True)
class RerankInput:
    """What one request hands its reranker: the question, the candidates (the first ``reranker_max_input``
    fused items), their texts by chunk id, and the judge's feature rows of the window (``None`` when the judge
    did not run; ``judge_why`` says why when it should have)."""

    question: str
    candidates: tuple[ScoredItem, ...]
    texts: Mapping[str, str]
    judged: Any = None
    judge_why: Reason | None = None
    #: The candidates' chunks by id, for a reranker that reads a chunk whole (``reads_chunks``: the reader reads
    #: its text inside the passage the index encoded, title first); ``None``: texts only.
    chunks: Mapping[str, Any] | None = None


class Reranker(Protocol):
    """A loaded reranker: its name, its kind (a :data:`KINDS` name), the score kind of its list, and one call."""

    name: str
    kind: str
    score_kind: str

    def rerank(self, inp: RerankInput) -> RankedList:
        """The candidates reordered (stage ``reranked``; items keep their ``fused_rank``). May raise: the stage
        calls it through :func:`run`."""
        ...


class Unavailable(Exception):
    """This request gives the reranker nothing it can read (the learned ranker without feature rows)."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.text())
        self.reason = reason


@dataclass(frozen=True)
class LoadContext:
    """What a loader may read besides the spec: whether downloads are allowed, the judge's folder, and the
    Workbench's reader (:class:`~retrieval.learned.reader.loader.ReaderStore`; ``None``: no Workbench, the
    reader keeps its states in memory only)."""

    allow_downloads: bool = False
    judge_path: Path = DEFAULT_JUDGE_PATH
    reader_store: ReaderStore | None = None


@dataclass(frozen=True)
class RerankerSpec:
    """``RETRIEVAL_RERANKER_MODEL`` parsed once: ``kind`` is a :data:`KINDS` name, ``name`` the kind's argument
    (a judge model folder for ``ltr:<path>``, empty for the default; an embedding model for
    ``bi-encoder:<model>``; a CrossEncoder name or path), ``text`` the spec as given (stripped)."""

    kind: str
    name: str
    text: str

    @classmethod
    def parse(cls, text: str | None) -> "RerankerSpec":
        spec = (text or "").strip()
        for kind in sorted(KINDS, key=lambda k: k.priority):
            name = kind.parse(spec)
            if name is not None:
                return cls(kind.name, name, spec)
        raise ValueError(f"no reranker kind reads {spec!r}")  # the catch-all kind reads every spec

    @property
    def configured(self) -> bool:
        return self.kind != OFF

    @property
    def declaration(self) -> "RerankerKind":
        return KINDS.get(self.kind)


@dataclass(frozen=True)
class RerankerKind:
    """A reranker kind, declared once.

    Attributes:
        name: the kind (``reranker_kind`` in the trace): never shown as another (a bi-encoder rescoring is not a
            cross-encoder).
        label: the kind on a page (the app's picker, the provenance card).
        described: one offered spec of this kind in words (the Evaluation page's picker): ``{name}`` is the spec.
        parse: ``spec -> argument`` when the spec is of this kind (``""`` for its default), else ``None``.
        load: ``(spec, context) -> (reranker or None, reason)``; never raises, never waits on the network.
            ``None`` for the kind that is no reranker.
        priority: the order in which kinds try to parse a spec (the catch-all last).
        offer: the spec the app offers of this kind when the server's own reranker is of another kind (``None``:
            only the deployer's names, :attr:`extra_offers`).
        extra_offers: ``settings -> specs`` the deployer lets the app offer besides (the cross-encoders).
        score_label: what its scores are, on a page (a scale, "higher is better").
        tier: the full tier in plain words when this kind reranked ("Answered with … over BM25 + dense").
        explains: ``features`` when its items carry per-feature contributions (the card lists them), else
            ``score``.
        reads_features: it reads the judge's feature rows of the window (the pipeline computes them for it).
        shares_judge: its loaded reranker holds the judge's models (``.models``), which the support gate and
            the evidence answer then read instead of ``RETRIEVAL_JUDGE_PATH``'s.
        cache_key: ``(spec, context) -> key`` of a loaded reranker (default: the spec); the learned ranker adds
            what its folder holds, so a retrained model is loaded anew.
        evaluation: its evaluation configuration ``(name, overrides)``, or ``None``.
        tuned: the tuner tries switching the reranker to this kind's :attr:`offer` (or off).
    """

    name: str
    label: Text
    described: Text
    parse: Callable[[str], str | None]
    load: Callable[[RerankerSpec, LoadContext], tuple[Any, Reason]] | None
    priority: int = 50
    offer: str | None = None
    extra_offers: Callable[[Any], Sequence[str]] | None = None
    score_label: Text | None = None
    tier: Text | None = None
    explains: str = "score"
    reads_features: bool = False
    shares_judge: bool = False
    cache_key: Callable[[RerankerSpec, LoadContext], str] | None = None
    evaluation: tuple[str, Mapping[str, Any]] | None = None
    tuned: bool = False


#: The reranker kinds, in the order the app offers them.
KINDS: Registry[RerankerKind] = Registry("reranker kind")
#: The kind that is no reranker (``none``, ``off`` or empty: the ``rrf_only`` tier).
OFF = "none"


def prefixed(prefix: str) -> Callable[[str], str | None]:
    """A parser for specs ``prefix`` and ``prefix:<argument>`` (case-insensitive prefix)."""

    def parse(spec: str) -> str | None:
        low = spec.lower()
        if low == prefix or low.startswith(prefix + ":"):
            return spec.split(":", 1)[1] if ":" in spec else ""
        return None

    return parse


def canonical(spec: str | None) -> str:
    """``spec`` stripped, with every spelling of "no reranker" as :data:`OFF`."""
    parsed = RerankerSpec.parse(spec)
    return OFF if not parsed.configured else parsed.text


def load_reranker(spec: str, context: LoadContext | None = None) -> tuple[Reranker | None, Reason]:
    """The reranker named by ``RETRIEVAL_RERANKER_MODEL``, by its kind's loader: ``(reranker, LOADED)`` or
    ``(None, reason)``; never raises."""
    parsed = RerankerSpec.parse(spec)
    kind = parsed.declaration
    if kind.load is None:
        return None, NONE_CONFIGURED()
    return kind.load(parsed, context or LoadContext())


def reranker_key(spec: str, context: LoadContext | None = None) -> str:
    """The cache key of a loaded reranker (see :attr:`RerankerKind.cache_key`)."""
    parsed = RerankerSpec.parse(spec)
    key = parsed.declaration.cache_key
    return key(parsed, context or LoadContext()) if key is not None else parsed.text


def offered(settings: Any) -> tuple[str, ...]:
    """The rerankers the app offers, its only choices (a link or a box never names a model path or folder): each
    kind's :attr:`~RerankerKind.offer` in declaration order, the server's own spec in its kind's place, then
    the deployer's names (:attr:`~RerankerKind.extra_offers`).

    Args:
        settings: the server's settings (``reranker_model``, ``app_rerankers``).
    """
    server = canonical(settings.reranker_model)
    server_kind = RerankerSpec.parse(server).kind
    out: list[str] = []
    for kind in KINDS:
        if kind.offer is not None:
            out.append(server if kind.name == server_kind else kind.offer)
        if kind.extra_offers is not None:
            out.extend(kind.extra_offers(settings))
            if kind.name == server_kind and kind.offer is None:
                out.append(server)
    return tuple(dict.fromkeys(out))


def score_passages(reranker: Any, inp: RerankInput) -> RankedList:
    """The candidates rescored by a reranker that reads passages (``score(question, passages) -> (n,)``, higher
    is better; ``truncation(question, passages)`` when it can say what it did not read). Ties keep the fused
    order; items keep their ``fused_rank``; the list's score kind is the reranker's.

    Raises:
        ValueError: the reranker returned a wrong number of scores or a non-finite score.
    """
    candidates = inp.candidates
    if not candidates:
        return RankedList("reranked", reranker.score_kind, ())
    chunks = inp.chunks if getattr(reranker, "reads_chunks", False) else None  # read whole where it can
    passages = [chunks[i.chunk_id] if chunks is not None else inp.texts[i.chunk_id] for i in candidates]
    scores = np.asarray(reranker.score(inp.question, passages), dtype=np.float64).reshape(-1)
    if len(scores) != len(candidates) or not np.all(np.isfinite(scores)):
        raise ValueError(BAD_SCORES().text())
    report = getattr(reranker, "truncation", None)
    truncation = report(inp.question, passages) if callable(report) else None
    if truncation is not None and len(truncation) != len(candidates):
        truncation = None
    order = sorted(range(len(candidates)), key=lambda j: (-scores[j], candidates[j].rank))
    items = tuple(ScoredItem(candidates[j].chunk_id, candidates[j].parent_id, rank, float(scores[j]),
                             fused_rank=candidates[j].rank, truncation=truncation[j] if truncation else None)
                  for rank, j in enumerate(order, start=1))
    cut = sum(1 for t in truncation or () if t.get("truncated"))
    note = TRUNCATED(cut=cut, n=len(candidates), limit=truncation[0]["limit"]) if cut and truncation else None
    return RankedList("reranked", reranker.score_kind, items, note=note)


class PassageReranker:
    """The :class:`Reranker` call of a reranker that reads passages: :meth:`rerank` is :func:`score_passages`."""

    name: str
    kind: str
    score_kind: str

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def rerank(self, inp: RerankInput) -> RankedList:
        return score_passages(self, inp)


@dataclass(frozen=True)
class Outcome:
    """The rerank stage's result: the reranked list, or why none (the request then runs ``rrf_only``)."""

    reranked: RankedList | None
    reason: Reason | None = None
    failed: bool = field(default=False)


def run(reranker: Reranker, inp: RerankInput) -> Outcome:
    """The rerank stage's one guarded call: :meth:`Reranker.rerank`, and anything it raises as the reason the
    request drops a tier (never an exception to the caller)."""
    try:
        return Outcome(reranker.rerank(inp))
    except Unavailable as exc:
        return Outcome(None, exc.reason)
    except Exception as exc:  # noqa: BLE001 - the request carries on one tier down, and says why
        why = FAILED(error=raw(f"{exc.__class__.__name__}: {str(exc)[:200]}"))
        log.warning(why.text())
        return Outcome(None, why, failed=True)
