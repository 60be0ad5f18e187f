"""The one place that chains the stages: question → filters → BM25 + dense → RRF → rerank → dedup → top_k
→ gate → answer, writing everything into one :class:`Trace`.

Tiers (DESIGN.md): ``full`` (a reranker loaded and ran), ``rrf_only`` (no reranker, or it failed or is off),
``dense_only`` (BM25 index empty for the tenant, or hybrid switched off), ``lexical_only`` (embedder or
vector store unavailable), ``refusal`` (nothing passed the gate). A fallback is never silent: ``tier`` and
``tier_reason`` are recorded, and the OpenTelemetry span attribute ``agent.hybrid_path`` carries the tier.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import unicodedata
from contextlib import contextmanager
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from .answer import Answer, ExtractiveAnswerer, LLMAnswerer, abstention
from .corpus import chunk_documents, load_corpus
from .embedders import Embedder, load_embedder
from .errors import InvalidQuestion
from .filters import Filters, build_filters, field_types
from .fusion import fuse, rrf
from .listcache import ListCache
from .lexical import LexicalIndex
from .rerank import Reranker, load_reranker
from .settings import LAB_CORPUS, Settings
from .store import SyncReport, VectorStore, open_client
from .text import has_words
from .types import Chunk, Document, FinalItem, Query, RankedList, ScoredItem

log = logging.getLogger(__name__)
SCHEMA_VERSION = "1.0"
TIERS = ("full", "rrf_only", "dense_only", "lexical_only", "refusal")


def _tracer() -> Any:
    from opentelemetry import trace

    return trace.get_tracer("retrieval")


@dataclass
class Trace:
    """Everything one request did. ``to_dict()`` gives the trace JSON of DESIGN.md (the contract)."""

    question: str
    settings: dict[str, Any]
    models: dict[str, Any]
    index_id: str
    queries: list[Query]
    filters: dict[str, Any]
    tier: str
    tier_reason: str
    lexical: RankedList
    dense: RankedList
    fused: RankedList
    reranked: RankedList
    final: list[FinalItem]
    lost_by_reranker: list[dict[str, Any]]
    answer: Answer
    timings_ms: dict[str, float | None]
    costs: dict[str, int | None]
    variants: list[dict[str, Any]] = field(default_factory=list)
    gate: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
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
            "lexical": self.lexical.to_dict(),
            "dense": self.dense.to_dict(),
            "variants": self.variants,
            "fused": self.fused.to_dict(),
            "reranked": self.reranked.to_dict(),
            "final": [f.to_dict() for f in self.final],
            "lost_by_reranker": self.lost_by_reranker,
            "gate": self.gate,
            "answer": self.answer.to_dict(),
            "timings_ms": self.timings_ms,
            "costs": self.costs,
        }

    @property
    def context_chunk_ids(self) -> list[str]:
        return [f.chunk_id for f in self.final]


@dataclass(frozen=True)
class IndexState:
    """One loaded corpus: documents, chunks, BM25 indexes and the vector store (or why it is missing)."""

    corpus_path: Path
    documents: tuple[Document, ...]
    chunks: tuple[Chunk, ...]
    chunk_by_id: Mapping[str, Chunk]
    lexical: LexicalIndex
    field_types: Mapping[str, set[type]]
    store: VectorStore | None
    store_reason: str
    sync: SyncReport | None
    index_id: str
    load_ms: float

    @property
    def tenants(self) -> list[Any]:
        return sorted({c.metadata.get(self.lexical.tenant_field) for c in self.chunks} - {None}, key=str)

    def filter_values(self) -> dict[str, list[Any]]:
        """Each metadata field and its values (sorted), for filter pickers."""
        values: dict[str, set[Any]] = {}
        for c in self.chunks:
            for k, v in c.metadata.items():
                values.setdefault(k, set()).add(v)
        return {k: sorted(v, key=str) for k, v in values.items()}


def validate_question(question: str, max_chars: int) -> str:
    """Return the question in Unicode NFC, without control characters or surrounding whitespace
    (so NFC and NFD spellings reach every stage, the embedder included, as the same text).

    Raises:
        InvalidQuestion: empty, whitespace-only or punctuation-only, or longer than ``max_chars``.
    """
    if not isinstance(question, str):
        raise InvalidQuestion("the question must be text")
    text = unicodedata.normalize("NFC", question)
    cleaned = "".join(ch for ch in text if ch in "\t\n" or ch.isprintable()).strip()
    if not cleaned:
        raise InvalidQuestion("the question is empty")
    if len(cleaned) > max_chars:
        raise InvalidQuestion(f"the question has {len(cleaned)} characters; the limit is {max_chars} "
                              "(RETRIEVAL_MAX_QUESTION_CHARS)")
    if not has_words(cleaned):
        raise InvalidQuestion("the question has no letters or digits")
    return cleaned


_UNSET: Any = object()


class Workbench:
    """A loaded corpus plus the models, shared by requests (thread-safe for reads).

    Models load once; :meth:`load_corpus` swaps in a new corpus only when it loaded completely, so a failed
    load leaves the previous index usable.

    Args:
        settings: validated settings (embedding model, store location, chunking, engine, …).
        embedder: inject an already-loaded embedder (or ``None`` to simulate an unavailable one); by default
            it is loaded from ``settings.embedding_model``.
        progress: show progress bars on stderr while embedding.
    """

    def __init__(self, settings: Settings, *, embedder: Embedder | None = _UNSET, progress: bool = True) -> None:
        self.settings = settings
        self.progress = progress
        self._lock = threading.RLock()
        if embedder is _UNSET:
            self.embedder, self.embedder_reason = load_embedder(settings.embedding_model, settings.allow_downloads)
        else:
            self.embedder = embedder
            self.embedder_reason = "loaded" if embedder is not None else "embedder disabled by the caller"
        self._rerankers: dict[str, tuple[Reranker | None, str]] = {}
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        #: Optional shared generator lists (see :mod:`retrieval.listcache`); the evaluation turns it on.
        self.list_cache: ListCache | None = None
        self._client: Any = None
        self.state: IndexState | None = None

    # -- loading ---------------------------------------------------------------------------------------
    def _client_or_reason(self) -> tuple[Any, str]:
        if self._client is None:
            try:
                self._client = open_client(self.settings.chroma_path, self.settings.chroma_host)
            except Exception as exc:  # noqa: BLE001 - recorded as the lexical_only reason
                return None, f"vector store unavailable: {exc.__class__.__name__}: {str(exc)[:200]}"
        return self._client, "ok"

    def load_corpus(self, corpus_path: str | Path | None = None,
                    on_progress: Callable[[int, int], None] | None = None) -> IndexState:
        """Read, chunk and index a corpus (BM25 rebuilt, Chroma synced), then make it current.

        Args:
            corpus_path: the corpus (default: the lab corpus).
            on_progress: called with ``(chunks embedded, chunks to embed)`` while embedding.

        Raises:
            CorpusError: the corpus cannot be read; the previous state stays current.
        """
        started = time.perf_counter()
        path = Path(corpus_path or LAB_CORPUS).resolve()
        docs = load_corpus(path)
        s = self.settings
        chunks = chunk_documents(docs, s.chunk_tokens, s.chunk_overlap)
        lexical = LexicalIndex(chunks, s.tenant_field, s.bm25_engine)
        store, reason, report = None, "no embedder: " + self.embedder_reason, None
        if self.embedder is not None:
            client, client_reason = self._client_or_reason()
            if client is None:
                reason = client_reason
            else:
                try:
                    with self._lock:
                        store = VectorStore(client, str(path), self.embedder.name)
                        report = store.sync(chunks, self.embedder.embed_passages,
                                            getattr(self.embedder, "batch", 32), self.progress, on_progress)
                    reason = "ok"
                except Exception as exc:  # noqa: BLE001 - recorded; the tier drops to lexical_only
                    store, reason = None, f"vector store sync failed: {exc.__class__.__name__}: {str(exc)[:200]}"
                    log.warning(reason)
        digest = hashlib.sha1()
        for chunk in chunks:
            digest.update(chunk.content_hash.encode())
        digest.update(str(self.embedder.name if self.embedder else None).encode())
        state = IndexState(path, tuple(docs), tuple(chunks), {c.chunk_id: c for c in chunks}, lexical,
                           field_types(chunks), store, reason, report, digest.hexdigest()[:16],
                           (time.perf_counter() - started) * 1000)
        self.state = state
        return state

    def reranker(self, spec: str) -> tuple[Reranker | None, str]:
        """The reranker for ``spec``, loaded once per process (``(None, reason)`` when it cannot load)."""
        with self._lock:
            if spec not in self._rerankers:
                self._rerankers[spec] = load_reranker(spec, self.settings.allow_downloads)
            return self._rerankers[spec]

    # -- one request -----------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        filters: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
        *,
        settings: Settings | None = None,
        answerer: Any = None,
    ) -> Trace:
        """Run one request and return its trace.

        Args:
            question: the user's question (validated: see :func:`validate_question`).
            filters: metadata filters; the tenant is required on a multi-tenant corpus.
            settings: per-request settings (top_k, overfetch, rrf_k, hybrid_enabled, reranker_model,
                reranker_max_input, min_similarity, min_bm25, dedup). Defaults to the workbench's.
            answerer: override the answer adapter (defaults to the LLM when configured, else extractive).

        Raises:
            InvalidQuestion, TenantRequired, InvalidFilter: bad input, before any search runs.
            RuntimeError: no corpus loaded.
        """
        state = self.state
        if state is None:
            raise RuntimeError("no corpus loaded: call load_corpus() first")
        s = settings or self.settings
        t_total = time.perf_counter()
        timings: dict[str, float | None] = {}
        question = validate_question(question, s.max_question_chars)
        flt = build_filters(filters, state.field_types, s.tenant_field)

        @contextmanager
        def stage(name: str) -> Iterator[Any]:
            start = time.perf_counter()
            with _tracer().start_as_current_span(f"retrieval.{name}") as span:
                yield span
            timings[name] = round((time.perf_counter() - start) * 1000, 3)

        with _tracer().start_as_current_span("retrieval.ask") as root:
            tier, reason = self._plan(state, flt, s)
            query = Query(question)
            window = s.window
            lexical = RankedList("lexical", "bm25", (), note=None)
            dense = RankedList("dense", "cosine", (), note=None)
            q_vec = None
            if tier == "dense_only":
                lexical = RankedList("lexical", "bm25", (), note=f"skipped: {reason}")
                timings["lexical"] = None
            else:
                with stage("lexical"):
                    lexical = self._shared(("lexical", state.index_id, question, flt, window),
                                           lambda: state.lexical.search(question, flt, window))
            if tier == "lexical_only":
                dense = RankedList("dense", "cosine", (), note=f"skipped: {reason}")
                timings["embed_query"] = timings["dense"] = None
            else:
                with stage("embed_query"):
                    q_vec = self._embed_query(question)
                with stage("dense"):
                    dense = self._shared(("dense", state.index_id, question, False, flt, window),
                                         lambda: state.store.query(q_vec, flt, window))
            with stage("fusion"):
                ranked = {name: lst for name, lst in (("bm25", lexical), ("dense", dense))
                          if not (lst.note or "").startswith("skipped")}
                fused = fuse(ranked, s.fusion, s.rrf_k, s.fusion_weight_map)
            reranked = RankedList("reranked", "none", (), note=f"no rerank ran: {reason}")
            timings["rerank"] = None
            if tier == "full":
                reranker, _ = self.reranker(s.reranker_model)
                try:
                    with stage("rerank"):
                        reranked = self._rerank(reranker, question, fused, state, s.reranker_max_input)
                except Exception as exc:  # noqa: BLE001 - the request carries on one tier down
                    tier, reason = "rrf_only", f"reranker failed: {exc.__class__.__name__}: {str(exc)[:200]}"
                    reranked = RankedList("reranked", "none", (), note=f"no rerank ran: {reason}")
                    timings["rerank"] = None
                    log.warning(reason)
            source = reranked if reranked.items else fused
            with stage("dedup"):
                top = self._dedup(source, s.dedup)[: s.top_k]
            lost = self._lost(fused, reranked, s) if reranked.items else []
            with stage("gate"):
                final, gate = self._gate(top, lexical, q_vec, state, s, tier)
            if not final:
                tier, reason = "refusal", gate["reason"]
            with stage("answer"):
                answer = self._answer(question, final, s, answerer)
            timings["total"] = round((time.perf_counter() - t_total) * 1000, 3)
            root.set_attribute("agent.hybrid_path", tier)
            root.set_attribute("retrieval.tier_reason", reason)

        models = {"embedder": self.embedder.name if self.embedder else None,
                  "embedder_status": self.embedder_reason,
                  "reranker": s.reranker_model if s.reranker_model.lower() not in {"", "none", "off"} else None,
                  "reranker_kind": None, "answer_adapter": answer.adapter,
                  "bm25_engine": s.bm25_engine, "vector_store": "chroma-server" if s.chroma_host else "chroma-embedded"}
        if models["reranker"]:
            reranker, why = self.reranker(s.reranker_model)
            models["reranker_kind"] = reranker.kind if reranker else None
            models["reranker_status"] = "loaded" if reranker else why
        return Trace(question, s.public_dict(), models, state.index_id, [query], flt.as_dict(), tier, reason,
                     lexical, dense, fused, reranked, final, lost, answer, timings, dict(answer.costs), [], gate)

    # -- stages ----------------------------------------------------------------------------------------
    def _shared(self, key: tuple, run: Callable[[], RankedList]) -> RankedList:
        """A generator list from :attr:`list_cache` when one is set, else computed."""
        cache = self.list_cache
        return cache.get_or_run(key, run) if cache is not None else run()

    def _embed_query(self, text: str, cache_size: int = 256) -> np.ndarray:
        """The query vector, from a small LRU cache (an A/B or a re-run of the same question re-embeds nothing)."""
        with self._lock:
            if text in self._query_vectors:
                self._query_vectors.move_to_end(text)
                return self._query_vectors[text]
            vector = self.embedder.embed_queries([text])[0]
            self._query_vectors[text] = vector
            if len(self._query_vectors) > cache_size:
                self._query_vectors.popitem(last=False)
            return vector

    def _plan(self, state: IndexState, flt: Filters, s: Settings) -> tuple[str, str]:
        """Choose the tier before searching (``refusal`` is decided after the gate)."""
        if not s.dense_enabled:
            return "lexical_only", "dense side switched off (RETRIEVAL_DENSE_ENABLED=false)"
        dense_ok = self.embedder is not None and state.store is not None
        if not dense_ok:
            why = self.embedder_reason if self.embedder is None else state.store_reason
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
        reranker, why = self.reranker(s.reranker_model)
        if reranker is None:
            return "rrf_only", why
        return "full", f"reranker '{reranker.name}' ({reranker.kind}) loaded"

    @staticmethod
    def _rerank(reranker: Reranker, question: str, fused: RankedList, state: IndexState,
                max_input: int) -> RankedList:
        candidates = fused.items[:max_input]
        if not candidates:
            return RankedList("reranked", reranker.score_kind, ())
        scores = reranker.score(question, [state.chunk_by_id[i.chunk_id].text for i in candidates])
        if len(scores) != len(candidates) or not np.all(np.isfinite(scores)):
            raise ValueError("the reranker returned a wrong number of scores or non-finite scores")
        order = sorted(range(len(candidates)), key=lambda j: (-scores[j], candidates[j].rank))
        items = tuple(ScoredItem(candidates[j].chunk_id, candidates[j].parent_id, rank, float(scores[j]),
                                 fused_rank=candidates[j].rank) for rank, j in enumerate(order, start=1))
        return RankedList("reranked", reranker.score_kind, items)

    @staticmethod
    def _dedup(ranked: RankedList, mode: str) -> list[ScoredItem]:
        """Keep the best-ranked chunk of each parent (``mode="parent"``) or each chunk once."""
        seen: set[str] = set()
        out = []
        for item in ranked.items:
            key = item.parent_id if mode == "parent" else item.chunk_id
            if key not in seen:
                seen.add(key)
                out.append(item)
        return out

    def _lost(self, fused: RankedList, reranked: RankedList, s: Settings) -> list[dict[str, Any]]:
        """Fused top_k parents that the reranked top_k no longer holds."""
        before = self._dedup(fused, s.dedup)[: s.top_k]
        after = self._dedup(reranked, s.dedup)[: s.top_k]
        kept = {i.parent_id if s.dedup == "parent" else i.chunk_id for i in after}
        rerank_rank = {i.chunk_id: i.rank for i in reranked.items}
        return [{"chunk_id": i.chunk_id, "parent_id": i.parent_id, "fused_rank": i.rank,
                 "reranked_rank": rerank_rank.get(i.chunk_id)}
                for i in before if (i.parent_id if s.dedup == "parent" else i.chunk_id) not in kept]

    def _gate(self, top: list[ScoredItem], lexical: RankedList, q_vec: np.ndarray | None, state: IndexState,
              s: Settings, tier: str) -> tuple[list[FinalItem], dict[str, Any]]:
        """Keep final chunks whose cosine to the question ≥ ``min_similarity`` (BM25 ≥ ``min_bm25`` in
        ``lexical_only``). Similarities come from the stored vectors, for lexical-only finds too."""
        bm25 = {i.chunk_id: i.score for i in lexical.items}
        vectors = state.store.vectors([i.chunk_id for i in top]) if (q_vec is not None and state.store) else {}
        final, rejected, values = [], 0, []
        for item in top:
            sim = float(vectors[item.chunk_id] @ q_vec) if item.chunk_id in vectors else None
            if q_vec is not None:
                passes, value = sim is not None and sim >= s.min_similarity, sim
            else:
                value = bm25.get(item.chunk_id, 0.0)
                passes = value >= s.min_bm25
            values.append(value)
            if passes:
                final.append(FinalItem(item.chunk_id, item.parent_id, len(final) + 1, item.score, sim,
                                       state.chunk_by_id[item.chunk_id].text, bm25.get(item.chunk_id)))
            else:
                rejected += 1
        kind, threshold = ("cosine", s.min_similarity) if q_vec is not None else ("bm25", s.min_bm25)
        best = max((v for v in values if v is not None), default=None)
        reason = (f"no chunk passed the gate ({kind} ≥ {threshold}; best {best:.3f})" if best is not None
                  else "no candidate to answer from")
        return final, {"kind": kind, "threshold": threshold, "rejected": rejected,
                       "reason": reason if not final else "ok"}

    def _answer(self, question: str, final: list[FinalItem], s: Settings, answerer: Any) -> Answer:
        if answerer is None and s.llm_configured:
            try:
                answerer = LLMAnswerer(s.llm_base_url, s.llm_model,
                                       s.llm_api_key.get_secret_value() if s.llm_api_key else None)
            except Exception as exc:  # noqa: BLE001 - fall back, say why
                log.warning("LLM adapter unavailable: %s", exc.__class__.__name__)
                answerer = None
        answerer = answerer or ExtractiveAnswerer()
        if not final:
            return abstention(answerer.name, "no chunk passed the gate")
        try:
            return answerer.answer(question, final)
        except Exception as exc:  # noqa: BLE001 - an LLM failure must not lose the retrieval
            fallback = ExtractiveAnswerer().answer(question, final)
            fallback.note = f"{answerer.name} failed ({exc.__class__.__name__}); extractive fallback. " + (
                fallback.note or "")
            fallback.costs = {"llm_calls": 1, "input_tokens": None, "output_tokens": None}
            return fallback


def open_workbench(settings: Settings | None = None, corpus: str | Path | None = None, *,
                   progress: bool = True) -> Workbench:
    """Load models and ``corpus`` (the lab corpus by default) into a ready :class:`Workbench`."""
    bench = Workbench(settings or Settings(), progress=progress)
    bench.load_corpus(corpus)
    return bench
