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
import re
import threading
import time
import unicodedata
from contextlib import contextmanager, nullcontext
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from .answer import Answer, ExtractiveAnswerer, LLMAnswerer, abstention
from .corpus import chunk_documents, load_corpus
from .embedders import Embedder, load_embedder
from .errors import InvalidQuestion
from .filters import Filters, build_filters, field_types
from .fusion import fuse, round_robin, rrf
from .listcache import ListCache
from .mmr import mmr
from .transforms import (Glossary, LLMTransformer, checked, codes, corpus_codes, decompose, invariant_flags,
                         local_hyde, local_multi_query, local_rewrite, new_codes, self_query_filters)
from .lexical import LexicalIndex
from .rerank import Reranker, load_reranker
from .settings import LAB_CORPUS, Settings
from .store import SyncReport, VectorStore, index_variant, open_client
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

    @cached_property
    def tenants(self) -> list[Any]:
        """Tenant values present in the corpus, sorted (computed once per loaded corpus: O(chunks))."""
        return sorted({c.metadata.get(self.lexical.tenant_field) for c in self.chunks} - {None}, key=str)

    @cached_property
    def known_codes(self) -> frozenset[str]:
        """The corpus' own letters-only codes (see :func:`retrieval.transforms.corpus_codes`), once per corpus."""
        return corpus_codes(f"{c.title} {c.text}" for c in self.chunks)

    @cached_property
    def _filter_values(self) -> dict[str, tuple[Any, ...]]:
        values: dict[str, set[Any]] = {}
        for c in self.chunks:
            for k, v in c.metadata.items():
                values.setdefault(k, set()).add(v)
        return {k: tuple(sorted(v, key=str)) for k, v in values.items()}

    def filter_values(self) -> dict[str, list[Any]]:
        """Each metadata field and its values (sorted), for filter pickers (computed once per corpus)."""
        return {k: list(v) for k, v in self._filter_values.items()}


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
        docs = load_corpus(path, self.settings.tenant_field)  # reliability fix: the tenant field's types checked
        s = self.settings
        chunks = chunk_documents(docs, s.chunk_tokens, s.chunk_overlap, s.contextual)
        lexical = LexicalIndex(chunks, s.tenant_field, s.bm25_engine)
        store, reason, report = None, "no embedder: " + self.embedder_reason, None
        if self.embedder is not None:
            client, client_reason = self._client_or_reason()
            if client is None:
                reason = client_reason
            else:
                try:
                    with self._lock:
                        store = VectorStore(client, str(path), self.embedder.name,
                                            index_variant(s.chunk_tokens, s.chunk_overlap, s.contextual),
                                            ef_search=s.hnsw_ef_search)
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
            queries = [Query(question)]
            techniques: dict[str, dict[str, Any]] = {}
            if "self_query" in s.transforms:
                started = time.perf_counter()
                drawn = self_query_filters(question, state.filter_values(), s.tenant_field)
                for key, values in drawn.items():
                    flt = flt.narrowed(key, values)
                queries.append(Query(question, "self_query", False, (), drawn))
                techniques["self_query"] = _cost(0, 0, started)
            tier, reason = self._plan(state, flt, s)
            window = s.window
            q_vec = None
            lexical, dense = self._generate(state, question, flt, window, tier, reason, timings, stage)
            if (dense.note or "").startswith("skipped: dense search failed"):
                tier, reason = "lexical_only", dense.note.removeprefix("skipped: ")
            if tier != "lexical_only":
                q_vec = self._embed_query(question)
            with stage("transforms"):
                extra = self._transform(question, s, state, flt, window, tier, queries, techniques)
            if not s.transforms:
                timings["transforms"] = None
            parts = list(dict.fromkeys(n.split(":", 1)[1] for n in extra if ":decompose" in n))
            if len(parts) >= 2:
                # Sub-questions replace the original in the fusion, so each part gets its own top candidates.
                note = "searched but not fused: the question was decomposed into sub-questions"
                lexical = RankedList(lexical.stage, lexical.score_kind, lexical.items, note=note)
                dense = RankedList(dense.stage, dense.score_kind, dense.items, note=note)
            with stage("fusion"):
                ranked = {name: lst for name, lst in (("bm25", lexical), ("dense", dense))
                          if not (lst.note or "").startswith(("skipped", "searched but not fused"))}
                ranked.update({name: lst for name, (_, lst) in extra.items()})
                fused = fuse(ranked, s.fusion, s.rrf_k, s.fusion_weight_map)
                if len(parts) >= 2:
                    fused = round_robin([fuse({n: lst for n, lst in ranked.items() if n.endswith(f":{part}")},
                                              s.fusion, s.rrf_k, s.fusion_weight_map) for part in parts])
            if "multi_hop" in s.transforms:
                with stage("multi_hop"):
                    fused = self._multi_hop(question, s, state, flt, window, tier, fused, ranked, extra,
                                            queries, techniques)
            variants = self._variants(extra)
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
                pool = self._dedup(source, s.dedup)
                if s.mmr_lambda is not None and q_vec is not None and state.store is not None:
                    vectors = state.store.vectors([i.chunk_id for i in pool[:window]])
                    top = mmr(pool[:window], vectors, s.mmr_lambda, s.top_k)
                else:
                    top = pool[: s.top_k]
            lost = self._lost(fused, reranked, s) if reranked.items else []
            with stage("gate"):
                final, gate = self._gate(top, lexical, dense, q_vec, state, s, tier, question)
            if not final:
                tier, reason = "refusal", gate["reason"]
            _assert_no_hypothesis(final, queries)
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
        costs: dict[str, Any] = dict(answer.costs)
        if techniques:
            for value in techniques.values():
                for key in ("llm_calls", "input_tokens", "output_tokens"):
                    a, b = costs.get(key), value.get(key)
                    costs[key] = None if a is None or b is None else a + b
            costs["retrieval_calls"] = 2 + sum(v["retrieval_calls"] for v in techniques.values())
            costs["techniques"] = techniques
        return Trace(question, s.public_dict(), models, state.index_id, queries, flt.as_dict(), tier, reason,
                     lexical, dense, fused, reranked, final, lost, answer, timings, costs, variants, gate)

    # -- stages ----------------------------------------------------------------------------------------
    def _generate(self, state: IndexState, text: str, flt: Filters, window: int, tier: str, reason: str,
                  timings: dict[str, float | None] | None = None, stage: Any = None,
                  hyde: bool = False) -> tuple[RankedList, RankedList]:
        """The lexical and dense windows for one query text (filters applied inside both generators)."""
        timed = stage if stage is not None else (lambda name: nullcontext())
        lexical = RankedList("lexical", "bm25", ())
        dense = RankedList("dense", "cosine", ())
        if tier == "dense_only" or hyde:
            lexical = RankedList("lexical", "bm25", (), note=f"skipped: {reason if not hyde else 'HyDE is dense only'}")
            if timings is not None:
                timings["lexical"] = None
        else:
            with timed("lexical"):
                lexical = self._shared(("lexical", state.index_id, text, flt, window),
                                       lambda: state.lexical.search(text, flt, window))
        if tier == "lexical_only":
            dense = RankedList("dense", "cosine", (), note=f"skipped: {reason}")
            if timings is not None:
                timings["embed_query"] = timings["dense"] = None
        else:
            with timed("embed_query"):
                vector = self._embed_passage(text) if hyde else self._embed_query(text)
            with timed("dense"):
                try:
                    dense = self._shared(("dense", state.index_id, text, hyde, flt, window),
                                         lambda: state.store.query(vector, flt, window))
                except Exception as exc:  # noqa: BLE001 - the request carries on one tier down, saying why
                    why = f"dense search failed: {exc.__class__.__name__}: {str(exc)[:200]}"
                    log.warning(why)
                    dense = RankedList("dense", "cosine", (), note=f"skipped: {why}")
        return lexical, dense

    def _shared(self, key: tuple, run: Callable[[], RankedList]) -> RankedList:
        """A generator list from :attr:`list_cache` when one is set, else computed."""
        cache = self.list_cache
        return cache.get_or_run(key, run) if cache is not None else run()

    def _embed_passage(self, text: str) -> np.ndarray:
        with self._lock:
            return self.embedder.embed_passages([text])[0]

    def _transform(self, question: str, s: Settings, state: IndexState, flt: Filters, window: int, tier: str,
                   queries: list[Query], techniques: dict[str, dict[str, Any]]) -> dict[str, tuple[Query, RankedList]]:
        """Run rewrite / multi_query / hyde / decompose: each variant query gets its own lists (same filters).

        Returns ranker name → (query, list) for the fusion, e.g. ``bm25:rewrite``, ``dense:hyde``.
        """
        out: dict[str, tuple[Query, RankedList]] = {}
        wanted = [t for t in s.transforms if t in {"rewrite", "multi_query", "hyde", "decompose"}]
        if not wanted:
            return out
        # --- reliability fix (decompose with other transforms) -------------------------------------------
        # A decomposed question is fused part by part (round robin over the sub-questions), which has no place
        # for rewrite / multi_query / hyde lists: decompose runs first, and when it splits the question the
        # others are not searched (nor paid for) and say so in their query's flags and in costs.techniques.
        wanted.sort(key=lambda t: t != "decompose")
        # --- end of the fix -----------------------------------------------------------------------------------
        glossary = Glossary.load(s.glossary_path or state.corpus_path.parent / "glossary.json")
        llm = None
        if s.llm_configured:
            llm = LLMTransformer(s.llm_base_url, s.llm_model,
                                 s.llm_api_key.get_secret_value() if s.llm_api_key else None)
        for technique in wanted:
            started = time.perf_counter()
            # --- reliability fix (decompose with other transforms), continued -------------------------------
            if technique != "decompose" and len({n.split(":", 1)[1] for n in out if ":decompose" in n}) >= 2:
                why = "not run: the question was decomposed into sub-questions, which are fused on their own"
                queries.append(Query(question, technique, False, ("skipped:decomposed",)))
                techniques[technique] = {**_cost(0, 0, started), "skipped": why}
                continue
            # --- end of the fix -------------------------------------------------------------------------------
            before = dict(llm.costs) if llm else None
            texts = self._variant_texts(technique, question, glossary, llm)
            calls = 0
            if technique == "decompose" and texts:
                # Sub-questions each hold a part: the invariants must hold over all of them together.
                lost = invariant_flags(question, " ".join(texts))
                if lost and s.transform_fallback:
                    texts = [question]
            for n, text in enumerate(texts, start=1):
                if technique == "decompose":
                    query = Query(text, technique, False, lost + (("fallback:original",) if text == question else ()))
                else:
                    query = checked(question, text, technique, s.transform_fallback,
                                    hypothesis_only=technique == "hyde")
                queries.append(query)
                if query.text == question and not query.hypothesis_only:
                    continue  # fell back to (or equals) the original, already searched
                lexical, dense = self._generate(state, query.text, flt, window, tier, "", hyde=technique == "hyde")
                suffix = technique if len(texts) == 1 else f"{technique}#{n}"
                for side, lst in (("bm25", lexical), ("dense", dense)):
                    if not (lst.note or "").startswith("skipped"):
                        out[f"{side}:{suffix}"] = (query, lst)
                        calls += 1
            llm_costs = ({k: (None if llm.costs[k] is None else llm.costs[k] - (before[k] or 0)) for k in llm.costs}
                         if llm else {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0})
            techniques[technique] = {**_cost(calls, 0, started), **llm_costs}
        return out

    @staticmethod
    def _variant_texts(technique: str, question: str, glossary: Glossary, llm: Any) -> list[str]:
        if technique == "decompose":
            return decompose(question)
        if llm is not None:
            try:
                text = llm.run(technique, question)
                return [line.strip(" -•") for line in text.splitlines() if line.strip()] if technique == \
                    "multi_query" else [text]
            except Exception as exc:  # noqa: BLE001 - the local adapter takes over, and says so
                log.warning("LLM %s failed (%s); local adapter used", technique, exc.__class__.__name__)
        if technique == "rewrite":
            return [local_rewrite(question, glossary)]
        if technique == "multi_query":
            return local_multi_query(question, glossary)
        return [local_hyde(question)]

    def _multi_hop(self, question: str, s: Settings, state: IndexState, flt: Filters, window: int, tier: str,
                   fused: RankedList, ranked: dict[str, RankedList], extra: dict[str, tuple[Query, RankedList]],
                   queries: list[Query], techniques: dict[str, dict[str, Any]]) -> RankedList:
        """Follow codes that the top results mention but the question does not, hop by hop (≤ max_hops; at
        most two codes a hop; stop early when a hop brings no new code).

        Each hop searches the code (BM25 + dense, same filters) and inserts its best chunk that contains the
        code and whose parent is not already in the top_k right after the chunk that mentioned it, so the
        original ranking is kept and only the missing link is added. Inserted items keep the RRF score,
        contributions and ranks of their hop's lists (the list's score kind says so).
        """
        started, calls, seen = time.perf_counter(), 0, codes(question)
        items = list(fused.items)
        inserted = False
        for hop in range(1, s.max_hops + 1):
            top = self._dedup(RankedList("fused", fused.score_kind, tuple(items)), s.dedup)[: s.top_k]
            found = [(code, item) for item in top
                     for code in new_codes([state.chunk_by_id[item.chunk_id].text], seen)]
            found = [(c, i) for n, (c, i) in enumerate(found) if c not in {x for x, _ in found[:n]}][:2]
            if not found:
                break
            for code, referrer in found:
                seen.append(code)
                query = Query(code, "multi_hop", False, ())
                queries.append(query)
                lexical, dense = self._generate(state, code, flt, window, tier, "")
                hop_lists = {}
                for side, lst in (("bm25", lexical), ("dense", dense)):
                    if not (lst.note or "").startswith("skipped"):
                        extra[f"{side}:hop{hop}:{code}"] = (query, lst)
                        hop_lists[f"{side}:hop{hop}:{code}"] = lst
                        calls += 1
                top_parents = {i.parent_id for i in self._dedup(RankedList("f", "", tuple(items)), s.dedup)[: s.top_k]}
                best = next((i for i in fuse(hop_lists, s.fusion, s.rrf_k, s.fusion_weight_map).items
                             if i.parent_id not in top_parents
                             and _has_code(state.chunk_by_id[i.chunk_id].indexed_text, code)), None)
                # --- reliability fix (multi-hop insertion) ---------------------------------------------------
                # An earlier insertion of this hop can push the referrer's parent out of the top_k; the hop's best
                # may then be the referrer itself, which is already listed: nothing to insert (the old code
                # removed it and then looked for it: StopIteration).
                if best is None or best.chunk_id == referrer.chunk_id:
                    continue
                items = [i for i in items if i.chunk_id != best.chunk_id]
                at = next((n for n, i in enumerate(items) if i.chunk_id == referrer.chunk_id), len(items) - 1) + 1
                # --- end of the fix ---------------------------------------------------------------------------
                items.insert(at, best)
                inserted = True
        techniques["multi_hop"] = _cost(calls, 0, started)
        if not inserted:
            return fused
        return RankedList("fused", f"{fused.score_kind} + multi-hop insertions (hop items keep their hop score)",
                          tuple(ScoredItem(i.chunk_id, i.parent_id, rank, i.score, contributions=i.contributions,
                                           ranks=i.ranks) for rank, i in enumerate(items, start=1)))

    @staticmethod
    def _variants(extra: dict[str, tuple[Query, RankedList]]) -> list[dict[str, Any]]:
        """Trace entries, one per extra query: ``{query, lexical, dense}`` with the ranker names used."""
        by_query: dict[int, dict[str, Any]] = {}
        for name, (query, lst) in extra.items():
            entry = by_query.setdefault(id(query), {"query": query.to_dict(), "rankers": []})
            side = "lexical" if name.startswith("bm25:") else "dense"
            entry[side] = lst.to_dict()
            entry["rankers"].append(name)
        return list(by_query.values())

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

    def _gate(self, top: list[ScoredItem], lexical: RankedList, dense: RankedList, q_vec: np.ndarray | None,
              state: IndexState, s: Settings, tier: str, question: str = "") -> tuple[list[FinalItem], dict[str, Any]]:
        """Keep final chunks whose cosine to the question ≥ ``min_similarity`` (BM25 ≥ ``min_bm25`` in
        ``lexical_only``). A chunk in the question's dense window reuses that list's cosine; the others
        (lexical-only finds) are scored against their stored vectors.

        Code identity (``require_codes``): when the question names a code (``PX-70``) that no kept chunk
        contains, nothing passes — topical similarity is not identity (a PX-7 article does not answer PX-70).
        """
        bm25 = {i.chunk_id: i.score for i in lexical.items}
        note = None
        known = {i.chunk_id: i.score for i in dense.items} if q_vec is not None else {}
        try:
            wanted = [i.chunk_id for i in top if i.chunk_id not in known]
            vectors = state.store.vectors(wanted) if (q_vec is not None and state.store and wanted) else {}
        except Exception as exc:  # noqa: BLE001 - fall back to the BM25 gate, and say so
            vectors, q_vec = {}, None
            note = f"stored vectors unavailable ({exc.__class__.__name__}): BM25 gate used"
            log.warning(note)
        final, rejected, values = [], 0, []
        for item in top:
            sim = known.get(item.chunk_id)
            if sim is None and item.chunk_id in vectors:
                sim = float(vectors[item.chunk_id] @ q_vec)
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
        missing: list[str] = []
        if final and s.require_codes:
            texts = [state.chunk_by_id[f.chunk_id].indexed_text for f in final]
            missing = [c for c in codes(question, state.known_codes) if not any(_has_code(t, c) for t in texts)]
            if missing:
                rejected += len(final)
                final = []
                reason = (f"the question names {', '.join(missing)}, which no final chunk contains "
                          "(code identity gate)")
        return final, {"kind": kind, "threshold": threshold, "rejected": rejected, "missing_codes": missing,
                       "reason": reason if not final else "ok", "note": note}

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


def _cost(retrieval_calls: int, llm_calls: int, started: float) -> dict[str, Any]:
    return {"retrieval_calls": retrieval_calls, "llm_calls": llm_calls, "input_tokens": 0, "output_tokens": 0,
            "ms": round((time.perf_counter() - started) * 1000, 3)}


def _has_code(text: str, code: str) -> bool:
    """``code`` appears in ``text`` as a whole token, case-insensitively (``PX-7`` is not in ``PX-17``)."""
    return re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", text, re.IGNORECASE) is not None


def _assert_no_hypothesis(final: Sequence[FinalItem], queries: Sequence[Query]) -> None:
    """HyDE text is a search hint only: it must never reach the context (enforced on every request)."""
    for query in queries:
        if query.hypothesis_only and any(query.text in item.text for item in final):
            raise RuntimeError("hypothesis-only text reached the context")


def open_workbench(settings: Settings | None = None, corpus: str | Path | None = None, *,
                   progress: bool = True) -> Workbench:
    """Load models and ``corpus`` (the lab corpus by default) into a ready :class:`Workbench`."""
    bench = Workbench(settings or Settings(), progress=progress)
    bench.load_corpus(corpus)
    return bench
