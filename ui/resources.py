"""Process-wide cached factories: the embedder and one Workbench per (corpus, embedding model, store).

Only shared, read-mostly objects live here (models and indexes). Per-user state (the question, the last
trace, the active corpus) lives in ``st.session_state``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import streamlit as st

from retrieval.corpus import load_questions
from retrieval.embedders import load_embedder
from retrieval.pipeline import Workbench
from retrieval.settings import Settings
from retrieval.types import Question

#: Settings that shape an index (chunking, store, tokenizer field); the Workbench cache key carries them.
INDEX_FIELDS = ("embedding_model", "chroma_path", "chroma_host", "chunk_tokens", "chunk_overlap",
                "bm25_engine", "tenant_field", "allow_downloads", "backend", "milvus_uri")


def base_settings() -> Settings:
    """Settings read from the environment (and ``.env``). Cheap; read once per script run."""
    return Settings()


def index_key(settings: Settings) -> str:
    """A JSON key of the settings that shape the index (resolved store path)."""
    data = settings.model_dump(mode="json", include=set(INDEX_FIELDS))
    data["chroma_path"] = str(Path(data["chroma_path"]).resolve())
    return json.dumps(data, sort_keys=True)


@st.cache_resource(show_spinner="Loading the embedding model…")
def get_embedder(name: str, allow_downloads: bool) -> tuple[Any, str]:
    """``(embedder or None, reason)``, loaded once per process."""
    return load_embedder(name, allow_downloads)


@st.cache_resource(show_spinner=False, max_entries=8)
def get_workbench(corpus: str, index_settings: str) -> Workbench:
    """A Workbench with ``corpus`` loaded ('' = the lab corpus), shared by all sessions.

    Raises:
        CorpusError: the corpus cannot be read (nothing is cached, so a fixed file can be retried).
    """
    settings = Settings().with_overrides(**json.loads(index_settings))
    embedder = get_embedder(settings.embedding_model, settings.allow_downloads)[0]
    bench = Workbench(settings, embedder=embedder, progress=True)
    bench.load_corpus(corpus or None)
    return bench


#: (corpus, index key) pairs this process has already loaded: a flag only, so the app can show an
#: "indexing" status on a cold load instead of on every run. Holds no per-user data.
_READY: set[tuple[str, str]] = set()


def is_loaded(corpus: str, index_settings: str) -> bool:
    """True when :func:`open_workbench_cached` will answer from the cache (no indexing needed)."""
    return (corpus, index_settings) in _READY


def open_workbench_cached(corpus: str, index_settings: str) -> Workbench:
    """:func:`get_workbench`, remembering that the pair is now loaded."""
    bench = get_workbench(corpus, index_settings)
    _READY.add((corpus, index_settings))
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
