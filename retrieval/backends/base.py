"""The store backends, each declared once: where a corpus' two indexes live (the lexical BM25 side and the dense
vectors), how they are opened and synced, what the trace calls them, and what ``index --status`` says of them.

The ``backend`` setting, the index build, the trace's ``models``, the CLI's ``index --status``/``--drop`` and
``serve``'s check of several workers read :data:`BACKENDS`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Sequence

from ..core.errors import RetrievalError
from ..core.kinds import Registry, Text
from ..core.paths import LAB_CORPUS
from ..core.reasons import Reason, declare
from ..core.types import Chunk

OK = declare("store.ok", en="ok", pt="ok")
NO_EMBEDDER = declare("store.no_embedder", en="no embedder: {why}", pt="sem modelo de embeddings: {why}")
UNAVAILABLE = declare("store.unavailable", en="vector store unavailable: {error}",
                      pt="repositório de vetores indisponível: {error}")
SYNC_FAILED = declare("store.sync_failed", en="vector store sync failed: {error}",
                      pt="a sincronização do repositório de vetores falhou: {error}")
#: The embedded store's files are damaged (its SQLite file fails its check, or a native library panicked reading
#: it): the request runs ``lexical_only`` with this reason, which names the command that rebuilds the store.
DAMAGED = declare("store.damaged",
                  en="the vector store at {path!q} is damaged ({error}); rebuild it with {command!c} (the damaged "
                     "store is moved aside, not deleted)",
                  pt="o repositório de vetores em {path!q} está danificado ({error}); reconstrua-o com {command!c} "
                     "(o repositório danificado é movido para o lado, não apagado)")


def rebuild_command(corpus: str | Path | None = None) -> str:
    """The command that rebuilds a damaged store and indexes ``corpus`` again (no ``--corpus`` for the lab
    corpus), quoted for a POSIX shell."""
    command = "python -m retrieval index --rebuild"
    if corpus and Path(corpus).resolve() != LAB_CORPUS.resolve():
        command += f" --corpus {shlex.quote(str(corpus))}"
    return command


def for_corpus(reason: Reason, corpus: str | Path | None) -> Reason:
    """``reason`` with its rebuild command naming ``corpus``, when it is :data:`DAMAGED` (any other unchanged)."""
    if not DAMAGED.matches(reason):
        return reason
    return DAMAGED(**{**reason.params, "command": rebuild_command(corpus)})


class StoreStatusError(RetrievalError):
    """``index --status`` / ``--drop`` could not read or change the store (one line)."""


class StoreDamaged(StoreStatusError):
    """The embedded store's files are damaged: ``reason`` (:data:`DAMAGED`) names the store and the command that
    rebuilds it (``index --rebuild``); its text is that reason in English, one line."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.text())
        self.reason = reason


@dataclass(frozen=True)
class Opened:
    """A corpus' indexes as a backend opened them: the lexical index, the dense store (``None``: unavailable,
    ``reason`` says why; the request then runs ``lexical_only``), and what the sync did."""

    lexical: Any
    store: Any
    reason: Reason
    report: Any = None


@dataclass(frozen=True)
class OpenRequest:
    """What a backend reads to open a corpus' indexes."""

    settings: Any                       # the index-level settings (retrieval.settings.Settings)
    chunks: Sequence[Chunk]
    embedder: Any                       # the loaded embedder, or None
    embedder_reason: Reason             # why there is none
    corpus_key: str                     # the corpus' path: its collections' names derive from it
    variant: str                        # the chunking and passage template (backends.vectors.index_variant)
    write_lock: Callable[[], ContextManager[Any]]   # held while the store is synced
    client: Callable[[], tuple[Any, Reason]] | None = None   # the local backend's Chroma client, kept open
    progress: bool = True
    on_progress: Callable[[int, int], None] | None = None


@dataclass(frozen=True)
class Backend:
    """A store backend, declared once.

    Attributes:
        name: the ``backend`` setting's value.
        label: the backend on a page.
        open: ``(request) -> Opened``; never raises for a store that cannot be reached (its reason instead).
        store_label: ``settings -> name`` of the vector store in the trace (``models.vector_store``).
        engine_label: ``settings -> name`` of the BM25 engine in the trace when the lexical index has no label.
        status: ``(settings, corpus path, drop) -> one line`` for ``index --status`` / ``--drop``.
            Raises :class:`StoreStatusError` (one line) when the store cannot be read.
        processes: ``settings -> why several processes cannot share it`` (``None``: they can).
    """

    name: str
    label: Text
    open: Callable[[OpenRequest], Opened]
    store_label: Callable[[Any], str]
    engine_label: Callable[[Any], str]
    status: Callable[[Any, Path, bool], str]
    processes: Callable[[Any], Reason | None] = lambda settings: None


#: The store backends, the default first.
BACKENDS: Registry[Backend] = Registry("store backend")
