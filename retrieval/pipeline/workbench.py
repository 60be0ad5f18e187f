"""The one place that chains the stages of a request; each stage lives in its own module:

    validate → filters → [self-query] → plan the tier (:mod:`.tiers`) → BM25 + dense windows
    (:mod:`.generate`) → [variant queries: :mod:`.expand`] → fusion (:mod:`.fusion`, via
    :func:`.expand.fuse_expanded`) → [multi-hop] → rerank (:mod:`.rerank`) → dedup, top_k / MMR
    (:mod:`.select`) → gate (:mod:`.gate`) → answer (:mod:`.answer`), all written into one
    :class:`~retrieval.pipeline.trace.Trace`.

Indexes are built by :mod:`.index`. Tiers (DESIGN.md): ``full`` (a reranker loaded and ran), ``rrf_only``,
``dense_only``, ``lexical_only``, ``refusal``; a fallback is never silent: ``tier`` and ``tier_reason`` are
recorded, and the OpenTelemetry span attribute ``agent.hybrid_path`` carries the tier.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..backends.embedders import Embedder, load_embedder
from ..backends.state import IndexState
from ..backends.store import open_client
from ..core.errors import InvalidQuestion, InvalidSetting
from ..core.filters import Filters, build_filters
from ..core.listcache import ListCache
from ..core.loadonce import LoadOnce
from ..core.text import has_words, plain_codes
from ..core.timing import StageTimer, tracer
from ..core.types import FinalItem, Query, RankedList, RankerKey
from ..learned.judge.models import folder_fingerprint, load_judge
from ..learned.reader.states import use_state_store
from ..settings import Settings
from ..stages.answer import Answer, answer_stage
from ..stages.gate import decide, question_cosines
from ..stages.generate import Generated, QueryEncoder, generate
from ..stages.judge import LearnedEvidenceAnswerer, apply_support_gate, judge_window, ltr_rerank
from ..stages.rerank import Reranker, RerankerSpec, load_reranker, rerank, reranker_key
from ..stages.select import lost_by_reranker, select
from .expand import expand, fuse_expanded, multi_hop, self_query, variants
from .index import build_index
from .tiers import no_candidate_reason, plan_tier
from .trace import SCHEMA_VERSION, Trace

log = logging.getLogger(__name__)
__all__ = ["IndexState", "SCHEMA_VERSION", "Trace", "Workbench", "open_workbench", "validate_question"]


def validate_question(question: str, max_chars: int) -> str:
    """Return the question in Unicode NFC, without control characters or surrounding whitespace
    (so NFC and NFD spellings reach every stage, the embedder included, as the same text), with one
    spelling for dashes and full-width forms (:func:`retrieval.core.text.plain_codes`: ``PX‑70`` is ``PX-70``).

    Raises:
        InvalidQuestion: empty, whitespace-only or punctuation-only, or longer than ``max_chars``.
    """
    if not isinstance(question, str):
        raise InvalidQuestion("the question must be text")
    text = plain_codes(unicodedata.normalize("NFC", question))
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
    """A loaded corpus plus the models, shared by requests (thread-safe: a request changes nothing on it).

    Models load once; :meth:`load_corpus` swaps in a new corpus only when it loaded completely, so a failed
    load leaves the previous index usable.

    Args:
        settings: validated settings; its index-level ones (:data:`~retrieval.settings.INDEX_SETTINGS`) are
            fixed for this Workbench.
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
        self.encoder = QueryEncoder(self.embedder) if self.embedder is not None else None
        # Models load once per key, each under its own lock: a request never waits for a model it does not use,
        # nor for a re-index (which holds self._lock); a loaded model is read without any lock.
        self._rerankers: LoadOnce[str, tuple[Reranker | None, str]] = LoadOnce()
        self._judges: LoadOnce[str, tuple[Any, str]] = LoadOnce()
        self._client: Any = None
        self.state: IndexState | None = None
        # The reader keeps the passages it has read beside the vector store: read once, never encoded again.
        use_state_store(Path(settings.chroma_path).resolve().parent / "reader-states")

    def _client_or_reason(self) -> tuple[Any, str]:
        with self._lock:
            if self._client is None:
                try:
                    self._client = open_client(self.settings.chroma_path, self.settings.chroma_host)
                except Exception as exc:  # noqa: BLE001 - recorded as the lexical_only reason
                    return None, f"vector store unavailable: {exc.__class__.__name__}: {str(exc)[:200]}"
            return self._client, "ok"

    def load_corpus(self, corpus_path: str | Path | None = None,
                    on_progress: Callable[[int, int], None] | None = None) -> IndexState:
        """Read, chunk and index a corpus (:func:`~retrieval.pipeline.index.build_index`), then make it current.

        Raises:
            CorpusError: the corpus cannot be read; the previous state stays current.
        """
        state = build_index(self.settings, corpus_path, self.embedder, self.embedder_reason,
                            self._client_or_reason, self._lock, self.progress, on_progress)
        self.state = state
        return state

    def reranker(self, spec: str) -> tuple[Reranker | None, str]:
        """The reranker for ``spec``, loaded once per process (``(None, reason)`` when it cannot load); a learned
        ranker once per content of its folder (:func:`~retrieval.stages.rerank.reranker_key`: retrained → reloaded)."""
        key = reranker_key(spec, self.settings.judge_path)
        return self._rerankers.get(key, lambda: load_reranker(spec, self.settings.allow_downloads,
                                                              self.settings.judge_path))

    def judge(self, s: Settings) -> tuple[Any, str]:
        """The judge models for the support gate and the evidence answer: the ``ltr`` reranker's own folder
        when that is the request's reranker, else ``RETRIEVAL_JUDGE_PATH`` (loaded once; ``(None, why)``)."""
        if RerankerSpec.parse(s.reranker_model).kind == "ltr":
            reranker, why = self.reranker(s.reranker_model)
            return (reranker.models if reranker is not None else None), why

        key = f"{s.judge_path}@{folder_fingerprint(s.judge_path)}"  # retrained in place → loaded anew
        return self._judges.get(key, lambda: load_judge(s.judge_path))

    def request_settings(self, settings: Settings | None) -> Settings:
        """``settings`` for one request, refused when it changes an index-level setting of this Workbench.

        Raises:
            InvalidSetting: an index-level setting differs (it would be silently ignored otherwise).
        """
        if settings is None:
            return self.settings
        conflicts = settings.request_conflicts(self.settings)
        if conflicts:
            raise InvalidSetting(f"{', '.join(conflicts)}: index-level setting(s) cannot change per request; "
                                "load a Workbench (or an index) built with them")
        return settings

    def ask(self, question: str, filters: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None, *,
            settings: Settings | None = None, answerer: Any = None, lists: ListCache | None = None) -> Trace:
        """Run one request and return its trace.

        Args:
            question: the user's question (validated: see :func:`validate_question`).
            filters: metadata filters; the tenant is required on a multi-tenant corpus.
            settings: per-request settings (defaults to the workbench's); index-level ones must match.
            answerer: override the answer adapter (defaults to the LLM when configured, else extractive).
            lists: a generator-list cache shared by several requests (the evaluation's), or ``None``.

        Raises:
            InvalidQuestion, TenantRequired, InvalidFilter, InvalidSetting: bad input, before any search runs.
            RuntimeError: no corpus loaded.
        """
        state = self.state
        if state is None:
            raise RuntimeError("no corpus loaded: call load_corpus() first")
        s, timer = self.request_settings(settings), StageTimer()
        with timer.stage("validate"):
            question = validate_question(question, s.max_question_chars)
            # Validated against the named tenant's own fields: a refusal never names another tenant's.
            flt = build_filters(filters, state.field_types, s.tenant_field, state.field_types_of)
        with tracer().start_as_current_span("retrieval.ask") as root:
            c = self._candidates(question, flt, state, s, lists, timer)
            notes = [{"stage": "transforms", "note": f"{name}: {t['fallback']}"}
                     for name, t in c.techniques.items() if t.get("fallback")]
            judged, judge_why = None, None
            if self._wants_judge(c.tier, s):  # the learned judge reads the window once
                with timer.stage("judge_features"):
                    judged, judge_why = self._judge_run(question, c, state, s)
                if judged is None and judge_why is not None:  # a failed store read: the learned stages drop
                    notes.append({"stage": "judge_features", "note": judge_why})
            tier, reason, reranked = self._rerank(c.tier, c.reason, question, c.fused, state, s, timer, judged,
                                                  judge_why)
            with timer.stage("dedup"):
                # MMR reads stored vectors (guarded); it does not run without the dense side, and says so.
                no_vectors = (f"the dense side did not run: {c.reason}" if c.vector is None
                              else f"no vector store: {state.store_reason}")
                selection = select(reranked if reranked.items else c.fused, s.dedup, s.top_k, s.window,
                                   s.mmr_lambda, state.store if c.vector is not None else None, no_vectors)
                selected = selection.items
            if selection.note:
                notes.append({"stage": "select", "note": selection.note})
            with timer.stage("gate"):
                cosines = question_cosines(selected, c.dense, c.vector, state.store)
                if cosines.note:
                    notes.append({"stage": "gate", "note": cosines.note})
                gate = decide(selected, cosines, c.lexical, state.chunk_by_id, question, s.min_similarity,
                              s.min_bm25, s.require_codes, state.codes_of(flt.get(s.tenant_field)))
                # The learned gate reads the context the answer would use: what passed the cosine and code checks.
                gate, gate_dict = self._support_gate(gate, judged, gate.final or selected, question, s, judge_why)
            support_note = (gate_dict.get("support") or {}).get("note") or ""
            if judged is not None and support_note.startswith("not applied"):  # the widening read failed
                notes.append({"stage": "support_gate", "note": support_note})
            if not gate.final:
                tier, reason = "refusal", gate.reason
                if not selected:  # nothing was found: a misspelled tenant is the usual cause, say so
                    reason = no_candidate_reason(state, c.filters, s, reason)
            _assert_from_index(gate.final, state.chunk_by_id)
            with timer.stage("answer"):
                if answerer is None and not s.llm_configured and s.evidence_model and judged is not None:
                    answerer = LearnedEvidenceAnswerer(judged[0], judged[1], language=s.answer_language)
                answer = answer_stage(question, gate.final, s, answerer, refusal_reason=gate.reason)
            timings = timer.finish()
            root.set_attribute("agent.hybrid_path", tier)
            root.set_attribute("retrieval.tier_reason", reason)
        return Trace(question, s.public_dict(), self._models(s, answer, state), state.index_id, list(c.queries),
                     c.filters.as_dict(), tier, reason, c.lexical, c.dense, c.fused, reranked, list(gate.final),
                     lost_by_reranker(c.fused, reranked, s.dedup, s.top_k,
                                      judged[1].inp.reader if judged is not None else None), answer, timings,
                     _costs(answer, c.techniques), variants(c.extra), gate_dict, selected,
                     {"query_vector": c.vector_cache}, notes)

    def _candidates(self, question: str, flt: Filters, state: IndexState, s: Settings, lists: ListCache | None,
                    timer: StageTimer) -> "_Candidates":
        """Everything before the rerank: self-query filters, the tier, the generator windows of the original
        and of the variant queries, their fusion, and multi-hop insertions."""
        queries, techniques = [Query(question)], {}
        if "self_query" in s.transforms:
            flt, drawn, techniques["self_query"] = self_query(question, state, flt, s)
            queries.append(drawn)
        if RerankerSpec.parse(s.reranker_model).configured \
                and reranker_key(s.reranker_model, self.settings.judge_path) not in self._rerankers:
            with timer.stage("load_reranker"):  # the first request that names a reranker pays its loading
                self.reranker(s.reranker_model)
        with timer.stage("plan"):
            tier, reason = plan_tier(state, flt, s, self.encoder is not None, self.embedder_reason, self.reranker)
        original = generate(state, self.encoder, question, flt, s.window, tier, reason, lists=lists, timer=timer)
        if original.dense_error is not None:
            tier, reason = "lexical_only", original.dense_error

        def search(text: str, hyde: bool) -> Generated:
            return generate(state, self.encoder, text, flt, s.window, tier, "", lists=lists, hyde=hyde)

        with timer.stage("transforms"):
            expansion = expand(question, s, state, search)
        if not s.transforms:
            timer.skip("transforms")
        queries += expansion.queries
        techniques.update(expansion.techniques)
        with timer.stage("fusion"):
            lexical, dense, fused = fuse_expanded(original.lexical, original.dense, expansion, s)
        extra = dict(expansion.lists)
        if "multi_hop" in s.transforms:
            with timer.stage("multi_hop"):
                hops = multi_hop(question, s, state, fused, search)
            fused, techniques["multi_hop"] = hops.fused, hops.cost
            queries += hops.queries
            extra.update(hops.lists)
        cache = None if original.vector_cached is None else ("hit" if original.vector_cached else "miss")
        return _Candidates(tier, reason, flt, tuple(queries), techniques, lexical, dense, fused, extra,
                           original.vector, cache)

    # -- the learned judge (retrieval/judge/stage.py): learned rerank, support gate, evidence sentences --
    def _wants_judge(self, tier: str, s: Settings) -> bool:
        """The judge runs when the request's reranker is ``ltr`` (full tier) or a learned gate or evidence
        model is on. In ``dense_only`` its BM25 features are absent (0) and the gate and evidence still run; in
        ``lexical_only`` there is no query vector, so the gate's cosine features would be unknown: it does not run."""
        if tier not in {"full", "rrf_only", "dense_only"}:
            return False
        return RerankerSpec.parse(s.reranker_model).kind == "ltr" or s.support_gate or s.evidence_model

    def _judge_run(self, question: str, c: "_Candidates", state: IndexState,
                   s: Settings) -> tuple[tuple[Any, Any] | None, str | None]:
        """``((models, JudgeRun), None)`` with the rerank window's features computed once; ``(None, None)`` when
        no judge model loads, ``(None, why)`` when the store read the features need fails (the stages that
        need the judge then run without it, and the trace says so)."""
        models, _ = self.judge(s)
        if models is None:
            return None, None

        run, why = judge_window(state, question, c.filters, s.tenant_field, c.lexical, c.dense, c.fused,
                                c.vector, s.reranker_max_input)
        return ((models, run) if run is not None else None), why

    def _support_gate(self, gate: Any, judged: tuple[Any, Any] | None, selected: Sequence[Any], question: str,
                      s: Settings, judge_why: str | None = None) -> tuple[Any, dict[str, Any]]:
        """The learned support gate (:func:`retrieval.stages.judge.apply_support_gate`) when it is on;
        ``judge_why`` is why the judge has no run although its models loaded (a failed store read)."""
        if not s.support_gate:
            return gate, gate.to_dict()

        return apply_support_gate(gate, judged, selected, question, judge_why or self.judge(s)[1],
                                  s.support_threshold)

    def _rerank(self, tier: str, reason: str, question: str, fused: RankedList, state: IndexState, s: Settings,
                timer: StageTimer, judged: tuple[Any, Any] | None = None,
                judge_why: str | None = None) -> tuple[str, str, RankedList]:
        """The rerank stage in the ``full`` tier; a reranker that fails (or the learned ranker without its
        feature rows: ``judge_why``) drops the request to ``rrf_only``."""
        timer.skip("rerank")
        if tier != "full":
            return tier, reason, RankedList("reranked", "none", (), note=f"no rerank ran: {reason}")
        reranker, _ = self.reranker(s.reranker_model)
        if reranker.kind == "ltr":  # the learned ranker reads the window's feature rows

            if judged is None:
                why = f"learned ranker: {judge_why or 'no feature rows for this request'}"
                return "rrf_only", why, RankedList("reranked", "none", (), note=f"no rerank ran: {why}")
            with timer.stage("rerank"):
                return tier, reason, ltr_rerank(reranker.models, judged[1])
        texts = {i.chunk_id: state.chunk_by_id[i.chunk_id].text for i in fused.items[: s.reranker_max_input]}
        try:
            with timer.stage("rerank"):
                return tier, reason, rerank(reranker, question, fused, texts, s.reranker_max_input)
        except Exception as exc:  # noqa: BLE001 - the request carries on one tier down
            timer.skip("rerank")
            why = f"reranker failed: {exc.__class__.__name__}: {str(exc)[:200]}"
            log.warning(why)
            return "rrf_only", why, RankedList("reranked", "none", (), note=f"no rerank ran: {why}")

    def _models(self, s: Settings, answer: Answer, state: IndexState | None = None) -> dict[str, Any]:
        spec = RerankerSpec.parse(s.reranker_model)
        models = {"embedder": self.embedder.name if self.embedder else None,
                  "embedder_status": self.embedder_reason,
                  "reranker": s.reranker_model if spec.configured else None,
                  "reranker_kind": None, "answer_adapter": answer.adapter,
                  # A Milvus server without sparse vectors runs BM25 in process: its label says so and why.
                  "bm25_engine": getattr(state.lexical if state else None, "label", None)
                  or ("milvus sparse (our BM25)" if s.backend == "milvus" else s.bm25_engine),
                  "vector_store": ("milvus" if s.backend == "milvus"
                                   else "chroma-server" if s.chroma_host else "chroma-embedded"),
                  "passage_template": s.passage_template}
        if spec.configured:
            reranker, why = self.reranker(s.reranker_model)
            models["reranker_kind"] = reranker.kind if reranker else None
            models["reranker_status"] = "loaded" if reranker else why
        return models


@dataclass(frozen=True)
class _Candidates:
    """What :meth:`Workbench._candidates` hands to the rest of the request."""

    tier: str
    reason: str
    filters: Filters
    queries: tuple[Query, ...]
    techniques: dict[str, dict[str, Any]]
    lexical: RankedList
    dense: RankedList
    fused: RankedList
    extra: dict[RankerKey, tuple[Query, RankedList]]
    vector: np.ndarray | None
    vector_cache: str | None


def _costs(answer: Answer, techniques: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The request's costs: the answer's LLM use plus each technique's (``None`` where not measured)."""
    costs: dict[str, Any] = dict(answer.costs)
    if techniques:
        for value in techniques.values():
            for key in ("llm_calls", "input_tokens", "output_tokens"):
                a, b = costs.get(key), value.get(key)
                costs[key] = None if a is None or b is None else a + b
        costs["retrieval_calls"] = 2 + sum(v["retrieval_calls"] for v in techniques.values())
        costs["techniques"] = dict(techniques)
    return costs


def _assert_from_index(final: Sequence[FinalItem], chunks: Mapping[str, Any]) -> None:
    """Provenance by origin: every context item is an indexed chunk, word for word (enforced on every request).

    HyDE's hypothesis is a query (``Query.hypothesis_only``), never an item: it can reach the context only by
    becoming one, which this check refuses. A real document may contain any text, the hypothesis' included."""
    for item in final:
        chunk = chunks.get(item.chunk_id)
        if chunk is None or chunk.text != item.text:
            raise RuntimeError(f"context item {item.chunk_id!r} is not the indexed chunk of that id")


def open_workbench(settings: Settings | None = None, corpus: str | Path | None = None, *,
                   progress: bool = True) -> Workbench:
    """Load models and ``corpus`` (the lab corpus by default) into a ready :class:`Workbench`."""
    bench = Workbench(settings or Settings(), progress=progress)
    bench.load_corpus(corpus)
    return bench
