"""Process-wide cached factories: the embedder and one Workbench per (corpus, embedding model, store).

Only shared, read-mostly objects live here (models and indexes). Per-user state (the question, the last
trace, the active corpus) lives in ``st.session_state``.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from retrieval.ingest.corpus import load_questions
from retrieval.backends.embedders import load_embedder
from retrieval.core import safeio
from retrieval.core.admission import Admission
from retrieval.core.redact import install_log_redaction
from retrieval.serving import roots
from retrieval.core.types import Question
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings


def base_settings() -> Settings:
    """Settings read from the environment (and ``.env``). Cheap; read once per script run. Every log line of
    the app's process is redacted of their secrets (:func:`retrieval.core.redact.install_log_redaction`), and
    the run's file reads and writes are confined to the roots (:func:`retrieval.core.safeio.confine_process`)."""
    settings = Settings()
    install_log_redaction(settings.secrets())
    # this run's reads and writes of corpora, question sets and judgments open nothing outside the roots, even
    # through a symlink swapped in after a path was checked (retrieval.core.safeio)
    safeio.confine_process((*roots.data_roots(settings), *roots.SHIPPED_ROOTS), roots.write_roots(settings))
    return settings


def index_key(settings: Settings) -> str:
    """A JSON key of the settings that shape the index (``Settings.index_settings``, store path resolved)."""
    return json.dumps(settings.index_settings(), sort_keys=True)


FAQUAD_HINT = "../shared/data/faquad/"

@st.cache_resource(show_spinner=False)
def warm_metrics() -> Any:
    """Compile ranx's numba functions once per process, in a background thread (``metrics.compile_ranx``).

    ``make install`` compiles them into numba's on-disk cache already; where that cache is missing (another
    install, another CPU) this runs when the Evaluation page opens, so it is done (or under way) before the
    first run needs it.
    """
    import threading

    from retrieval.offline.evaluation.metrics import compile_ranx

    thread = threading.Thread(target=compile_ranx, name="ranx-warm-up", daemon=True)
    thread.start()
    return thread


def faquad_dir() -> Path | None:
    """FaQuAD's folder (``../shared/data/faquad`` next to the project) when it holds both files, else ``None``."""
    from retrieval.core.paths import PROJECT_ROOT

    folder = PROJECT_ROOT.parent / "shared" / "data" / "faquad"
    return folder if (folder / "corpus.jsonl").is_file() and (folder / "questions.jsonl").is_file() else None


@st.cache_resource(show_spinner="Loading the embedding model…")
def get_embedder(name: str, allow_downloads: bool) -> tuple[Any, str]:
    """``(embedder or None, reason)``, loaded once per process."""
    return load_embedder(name, allow_downloads)


def build_workbench(corpus: str, index_settings: str, on_progress: Callable[[int, int], None] | None = None,
                    on_wait: Callable[[Any], None] | None = None) -> Workbench:
    """A fresh Workbench with ``corpus`` loaded ('' = the lab corpus); ``on_progress(embedded, total)`` after
    each batch of chunks embedded.

    Raises:
        CorpusError: the corpus cannot be read.
    """
    settings = Settings().with_overrides(**json.loads(index_settings))
    from retrieval.core.threads import serve_concurrently

    serve_concurrently()  # the app serves its sessions side by side: one torch thread per forward pass
    embedder = get_embedder(settings.embedding_model, settings.allow_downloads)[0]
    bench = Workbench(settings, embedder=embedder, progress=True)
    bench.load_corpus(corpus or None, on_progress=on_progress, on_wait=on_wait)
    store_states_later(bench)
    return bench


@st.cache_resource(show_spinner=False)
def admission(slots: int) -> Admission:
    """The process' admission gate (:class:`retrieval.core.admission.Admission`): ``slots`` questions run at once
    (0: the cores), the others wait in arrival order."""
    return Admission(slots)


def store_states_later(bench: Workbench) -> None:
    """The reader reads the loaded corpus in a background thread (:meth:`Workbench.read_states_in_background`)."""
    bench.read_states_in_background()


#: Workbenches built outside the cache (with a progress callback, whose page elements a cached function may not
#: draw), handed to :func:`get_workbench` by :func:`open_workbench_cached`.
_BUILT: dict[tuple[str, str], Workbench] = {}
#: One build at a time per (corpus, index key): a page on another corpus never waits on this one.
_BUILD_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


@st.cache_resource(show_spinner=False, max_entries=8)
def get_workbench(corpus: str, index_settings: str) -> Workbench:
    """A Workbench with ``corpus`` loaded ('' = the lab corpus), shared by all sessions.

    Raises:
        CorpusError: the corpus cannot be read (nothing is cached, so a fixed file can be retried).
    """
    built = _BUILT.pop((corpus, index_settings), None)
    return built if built is not None else build_workbench(corpus, index_settings)


#: (corpus, index key) pairs this process has already loaded: a flag only, so the app can show an
#: "indexing" status on a cold load instead of on every run. Holds no per-user data.
_READY: set[tuple[str, str]] = set()


def is_loaded(corpus: str, index_settings: str) -> bool:
    """True when :func:`open_workbench_cached` will answer from the cache (no indexing needed)."""
    return (corpus, index_settings) in _READY


def open_workbench_cached(corpus: str, index_settings: str,
                          on_progress: Callable[[int, int], None] | None = None,
                          on_wait: Callable[[Any], None] | None = None) -> Workbench:
    """:func:`get_workbench`, remembering that the pair is now loaded. With ``on_progress``, a cold load is built
    here (one at a time per corpus and index key), so the callbacks may draw on the page, and then cached."""
    key = (corpus, index_settings)
    if on_progress is not None and key not in _READY:
        with _LOCKS_LOCK:
            build_lock = _BUILD_LOCKS.setdefault(key, threading.Lock())
        with build_lock:
            if key not in _READY:
                _BUILT[key] = build_workbench(corpus, index_settings, on_progress, on_wait)
                bench = get_workbench(corpus, index_settings)
                _BUILT.pop(key, None)  # already cached by another session: this one is not kept
                _READY.add(key)
                return bench
    bench = get_workbench(corpus, index_settings)
    _READY.add(key)
    return bench


@st.cache_data(show_spinner=False, max_entries=16)
def get_questions(path: str, mtime: float) -> list[Question]:
    """Labeled questions of ``path`` (re-read when the file's mtime changes)."""
    return load_questions(path)


def file_mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def corpus_size(state: Any, tenants: list[Any] | None) -> tuple[int, int]:
    """``(documents, chunks)`` of a loaded corpus, or of ``tenants``' part of it (cached per index and tenants)."""
    if tenants is None:
        return len(state.documents), len(state.chunks)
    return _tenant_size(state.index_id, tuple(sorted(map(str, tenants))), state)


@st.cache_data(show_spinner=False, max_entries=64)
def _tenant_size(index_id: str, tenants: tuple[str, ...], _state: Any) -> tuple[int, int]:
    from retrieval.core.tenants import may_open

    field, allowed = _state.lexical.tenant_field, frozenset(tenants)
    docs = sum(1 for d in _state.documents if field in d.metadata and may_open(d.metadata[field], allowed))
    chunks = sum(1 for c in _state.chunks if field in c.metadata and may_open(c.metadata[field], allowed))
    return docs, chunks
