"""The cross-encoder reranker (kind ``cross-encoder``): sentence-transformers ``CrossEncoder`` reading question and
chunk together; by name (``BAAI/bge-reranker-v2-m3``, fallback ``BAAI/bge-reranker-base``, the ADR's choices) or a
local path. Scores are the model's output (a logit or a probability, depending on its activation); higher is
better. The catch-all kind: a spec no other kind reads names a cross-encoder.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from ...backends.embedders import offline_hub_env
from ...backends.hub import cache_folder, looks_like_path, model_folder_problem, on_disk
from ...core.kinds import Text
from ...core.reasons import Reason, declare, error, raw
from .base import COULD_NOT_LOAD, KINDS, LOADED, LoadContext, PassageReranker, RerankerKind, RerankerSpec, log

NOT_A_MODEL_FOLDER = declare(
    "rerank.not_a_model_folder",
    en="reranker {spec!q} cannot load: {why} (a cross-encoder folder holds config.json and weights)",
    pt="o reranqueador {spec!q} não pode carregar: {why} (uma pasta de cross-encoder tem config.json e os pesos)")
NOT_ON_DISK = declare(
    "rerank.not_on_disk",
    en="reranker {spec!q} is not on disk (not in the Hugging Face cache {cache}): fetch it with "
       "`python -m retrieval models pull {spec}` where a model hub is reachable, or set RETRIEVAL_ALLOW_DOWNLOADS=true",
    pt="o reranqueador {spec!q} não está no disco (nem no cache do Hugging Face {cache}): baixe-o com "
       "`python -m retrieval models pull {spec}` onde um hub de modelos for acessível, ou defina "
       "RETRIEVAL_ALLOW_DOWNLOADS=true")
NOT_ON_DISK_HINT = declare(
    "rerank.load_error_offline",
    en="{error} (not on disk? fetch it with `python -m retrieval models pull {spec}` where a model hub is reachable, "
       "or set RETRIEVAL_ALLOW_DOWNLOADS=true)",
    pt="{error} (não está no disco? baixe-o com `python -m retrieval models pull {spec}` onde um hub de modelos for "
       "acessível, ou defina RETRIEVAL_ALLOW_DOWNLOADS=true)")
#: What :func:`retrieval.backends.hub.model_folder_problem` says of a path, as reasons.
FOLDER_PROBLEMS = {
    "no such file or folder": declare("hub.missing", en="no such file or folder", pt="arquivo ou pasta inexistente"),
    "a file, not a model folder": declare("hub.file", en="a file, not a model folder",
                                          pt="um arquivo, não uma pasta de modelo"),
    "a folder without config.json, not a model folder": declare(
        "hub.no_config", en="a folder without config.json, not a model folder",
        pt="uma pasta sem config.json, não uma pasta de modelo")}


class CrossEncoderReranker(PassageReranker):
    """A sentence-transformers ``CrossEncoder`` over (question, passage) pairs.

    The model reads at most ``max_length`` tokens of each pair (question and passage together, special
    tokens included) and silently drops the rest: two passages that differ only past the limit score the same.
    :meth:`truncation` says, per passage, whether that happened, so the trace can show it.
    """

    kind = "cross-encoder"

    def __init__(self, name: str, model: Any) -> None:
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


def load(spec: RerankerSpec, context: LoadContext) -> tuple[CrossEncoderReranker | None, Reason]:
    """A cross-encoder by name (from the local Hugging Face cache unless downloads are allowed) or local path."""
    name = spec.text
    problem = None
    if looks_like_path(name):  # a path: it must be a model folder, whatever allow_downloads says
        code = model_folder_problem(name)
        if code is not None:
            problem = NOT_A_MODEL_FOLDER(spec=name,
                                         why=FOLDER_PROBLEMS[code]() if code in FOLDER_PROBLEMS else raw(code))
    elif not context.allow_downloads and not on_disk(name):  # fail in milliseconds, before the library loads
        problem = NOT_ON_DISK(spec=name, cache=cache_folder())
    if problem is not None:
        log.warning(problem.text())
        return None, problem
    try:
        offline_hub_env(context.allow_downloads)
        from sentence_transformers import CrossEncoder  # torch: imported when a cross-encoder is loaded

        model = CrossEncoder(name, device="cpu", local_files_only=not context.allow_downloads)
        return CrossEncoderReranker(name, model), LOADED(name=name, kind=CrossEncoderReranker.kind)
    except BaseException as exc:  # noqa: BLE001 - a loader degrades, it never crashes the request
        if isinstance(exc, KeyboardInterrupt):
            raise
        why: Reason = error(exc)
        if not context.allow_downloads:
            why = NOT_ON_DISK_HINT(error=why, spec=name)
        reason = COULD_NOT_LOAD(spec=name, error=why)
        log.warning(reason.text())
        return None, reason


def _extra(settings: Any) -> tuple[str, ...]:
    return tuple(settings.app_reranker_names)


KINDS.declare(RerankerKind(
    name=CrossEncoderReranker.kind, label=Text("Cross-encoder (configured on this server)",
                                               "Cross-encoder (configurado neste servidor)"),
    described=Text("{name} (cross-encoder)", "{name} (cross-encoder)"), parse=lambda spec: spec,
    load=load, priority=100, offer=None, extra_offers=_extra,
    score_label=Text("cross-encoder score (the model's own scale; higher is better)",
                     "nota do cross-encoder (na escala do modelo; maior é melhor)"),
    tier=Text("Answered with a cross-encoder over BM25 + dense", "Respondido com um cross-encoder sobre BM25 + denso")))
