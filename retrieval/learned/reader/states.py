"""Passage token states kept on disk, so a passage the reader has read once is never encoded again.

The reader's cost is encoding each candidate passage (about 45 ms a passage on 2 cores); its MaxSim against a
question is a matrix product (about 1 ms). The in-memory cache of :class:`~.interaction.MaxSimReader` keeps
what one process has read; this store keeps it across processes and restarts: one append-only file of rows
and a SQLite table mapping a passage's key (the SHA-1 of its text) to its first row, its number of rows and its
sentence spans. ``retrieval index`` fills it with every chunk of a corpus (:mod:`.precompute`), so a question
on an indexed corpus encodes no passage.

Rows are stored by a codec (:mod:`.codecs`): ``fp16`` as computed (``states.f16``, 768 bytes a token), or
compressed with faiss (``states.codes``: ``sq8`` 384 bytes, ``pq64`` 64 bytes a token), fitted once on the
corpus' own states and kept beside the rows (``codec.faiss``). A lossy codec's store hands the reader what it
would read back (:meth:`StateStore.roundtrip`), so a passage scores the same whether just encoded or read
from disk.

One folder per reader signature and codec (the weights file's SHA-1, the tokens read, int8 or not, the codec):
another model never reads these rows. Writes hold a file lock (two processes append in turn); the store stops
growing at its size limit (nothing is evicted: past the limit, passages are encoded as before). A store that
cannot be opened or read is switched off with its reason (:attr:`StateStore.reason`) and the reader encodes
as before: it never fails a request.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .codecs import AUTO, AUTO_CODECS, StateCodec, tag_of

log = logging.getLogger(__name__)


#: The most a Workbench's reader state store holds on disk (about 0.1 MB a chunk: some 10,000 chunks).
STATE_STORE_MB = 1024.0
#: The most tokens the reader reads of a passage (its specials and prefix included): what ``auto`` sizes with.
MAX_PASSAGE_TOKENS = 192


@lru_cache(maxsize=16)
def _code_size(codec: str, hidden: int) -> int:
    return StateCodec.build(codec, hidden).code_size


def auto_limit(limit_mb: float, hidden: int = 384) -> int:
    """The most passages ``auto`` stores as its first codec (sq8) under ``limit_mb``, at
    :data:`MAX_PASSAGE_TOKENS` a passage (a bound: a passage reads fewer): 14,563 at the 1 GB default."""
    return int(limit_mb * 1024 * 1024 // (MAX_PASSAGE_TOKENS * _code_size(AUTO_CODECS[0], hidden)))


def resolve_codec(spec: str, passages: int | None, limit_mb: float, hidden: int = 384) -> str:
    """The codec a store of ``passages`` distinct passages uses under ``limit_mb``: ``spec`` itself, or for
    ``auto`` the first of :data:`~.codecs.AUTO_CODECS` up to :func:`auto_limit` passages, the second past it
    (``None`` passages, no corpus loaded yet: the first).

    Sized from the count alone, so every process that loads the same corpus (``index``, the app's workers)
    picks the same codec, hence the same folder, without reading a token of it."""
    if spec != AUTO:
        return spec
    return AUTO_CODECS[0] if passages is None or passages <= auto_limit(limit_mb, hidden) else AUTO_CODECS[1]


@dataclass(frozen=True)
class StoreChoice:
    """Where a Workbench's reader keeps its passage states (:class:`~.loader.ReaderStore`), how (a codec, never
    ``auto``: resolved), and how much at most; ``chosen`` is the setting as written (``auto`` or the codec)."""

    folder: Path | None = None
    codec: str = "fp16"
    limit_mb: float = STATE_STORE_MB
    chosen: str = "fp16"
    #: The encoder's precision (``int8`` or ``fp32``) and the passage template the reader reads chunks by: what
    #: the index's vectors were computed with, in the same pass (the settings ``encoder_precision`` and
    #: ``passage_template``).
    precision: str = "fp32"
    template: str = "title-newline"

    @classmethod
    def of(cls, folder: str | Path | None, codec: str = "fp16", limit_mb: float = STATE_STORE_MB,
           passages: int | None = None, precision: str = "fp32", template: str = "title-newline") -> "StoreChoice":
        """States kept under ``folder`` (``None``: in memory only), stored by ``codec`` (:mod:`.codecs`; ``auto``
        is resolved for a corpus of ``passages``: :func:`resolve_codec`), at most ``limit_mb``."""
        return cls(Path(folder).resolve() if folder is not None else None,
                   resolve_codec(codec, passages, float(limit_mb)), float(limit_mb), codec, precision, template)

#: The fewest token rows a scalar codec is fitted on from questions' candidates (:meth:`StateStore.prepare`).
AUTO_FIT_ROWS = 2_048


def passage_key(text: str) -> str:
    """A passage's key in the memory cache and the store: the SHA-1 of its text."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class PassageText:
    """A passage as the reader reads it: a chunk's own ``text``, read inside the whole passage the embedder reads
    (``head + text + tail``: :meth:`~retrieval.core.types.Chunk.passage_parts`), so that one encoder pass gives
    both the chunk's vector and the states of its text. A plain string is a passage with no head or tail."""

    text: str
    head: str = ""
    tail: str = ""

    @property
    def full(self) -> str:
        return self.head + self.text + self.tail

    @classmethod
    def of(cls, chunk: Any, template: str = "title-newline") -> "PassageText":
        """A chunk's passage by ``template`` (:meth:`~retrieval.core.types.Chunk.passage_parts`: head, text, tail)."""
        head, text, tail = chunk.passage_parts(template)
        return cls(text, head, tail)

    @property
    def key(self) -> str:
        """The key of its states: its text's :func:`passage_key`, or with a head or tail, the three parts' (the
        same text under another title is read in another context)."""
        if not (self.head or self.tail):
            return passage_key(self.text)
        return passage_key(f"{self.head}\x00{self.text}\x00{self.tail}")


def as_passage(passage: "str | PassageText | Any", template: str = "title-newline") -> PassageText:
    """A :class:`PassageText` from a string (no head), a PassageText, or a chunk (by ``template``)."""
    if isinstance(passage, PassageText):
        return passage
    if isinstance(passage, str):
        return PassageText(passage)
    return PassageText.of(passage, template)


def forget_states(root: str | Path, keys: Sequence[str]) -> int:
    """Delete the index entries of ``keys`` (:func:`passage_key`) from every state store under ``root`` (one
    folder per weights and codec): a removed document's passages are no longer read from disk. Their rows stay in
    the rows file as unreachable bytes (the file only grows; a new store under ``root`` starts it afresh).
    Returns the entries deleted."""
    wanted = list(dict.fromkeys(keys))
    deleted = 0
    if not wanted:
        return 0
    for index in sorted(Path(root).glob("*/index.sqlite")):
        try:
            db = sqlite3.connect(index, timeout=30)
            try:
                for start in range(0, len(wanted), 500):
                    part = wanted[start:start + 500]
                    deleted += db.execute(f"DELETE FROM states WHERE key IN ({','.join('?' * len(part))})",
                                          part).rowcount
                db.commit()
            finally:
                db.close()
        except sqlite3.Error as exc:
            log.warning("reader states under %s not forgotten: %s", index.parent, exc)
    return deleted


@lru_cache(maxsize=8)
def file_sha1(path: str, size: int, mtime_ns: int) -> str:
    """The SHA-1 of a file, hashed once per path, size and modification time."""
    digest = hashlib.sha1()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def signature(weights: Path, max_passage: int, int8: bool | str, hidden: int, codec: str = "fp16") -> str:
    """The folder name of one reader's states: its weights file's SHA-1, the settings that shape its rows and
    the codec that stores them (the file is hashed once per process while it stays the same, not at every store
    attached). ``int8``: ``True`` (or ``"int8"``) for torch's dynamic int8 module, ``"oq8"`` for ONNX Runtime's int8
    graph. ``-w`` marks rows read inside the whole passage (:class:`PassageText`), not the text alone."""
    info = Path(weights).stat()
    digest = file_sha1(str(Path(weights).resolve()), info.st_size, info.st_mtime_ns)
    tag = "int8" if int8 is True else (int8 or "")
    return f"{digest[:16]}-p{max_passage}-h{hidden}-w{'-' + tag if tag else ''}{tag_of(codec)}"


class StateStore:
    """Token states (``(tokens, hidden)`` unit rows) and sentence spans of passages, on disk, by key.

    Args:
        folder: the store's folder (created).
        hidden: the states' width.
        limit_mb: the most the rows file may hold, in MB; 0 stores nothing.
        codec: how rows are stored (:mod:`.codecs`; ``fp16`` by default). A lossy codec stores nothing until it
            is fitted (:meth:`fit`, which ``retrieval index`` does on the corpus' states).
    """

    def __init__(self, folder: str | Path, hidden: int, limit_mb: float = 1024.0, codec: str = "fp16") -> None:
        self.folder = Path(folder)
        self.hidden = int(hidden)
        self.limit_bytes = int(limit_mb * 1024 * 1024)
        self.reason = ""
        self._lock = threading.Lock()
        self._rows: np.memmap | None = None
        self._mapped_rows = 0
        self.codec = StateCodec.build(codec, self.hidden)
        self.row_bytes = self.codec.code_size
        self._file = self.folder / ("states.f16" if self.codec.lossless else "states.codes")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._load_codec()
            self._db = sqlite3.connect(self.folder / "index.sqlite", check_same_thread=False, timeout=30)
            # a cache: WAL with NORMAL sync never corrupts on a crash, it may only forget the last entries
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS states (key TEXT PRIMARY KEY, first INTEGER NOT NULL, "
                             "rows INTEGER NOT NULL, spans TEXT NOT NULL)")
            self._db.commit()
            self._db.execute("SELECT COUNT(*) FROM states").fetchone()  # a damaged file says so now
            self._file.touch()
        except (OSError, ValueError, RuntimeError, sqlite3.Error) as exc:
            self._off(f"reader state store {self.folder} could not open: {exc.__class__.__name__}: {exc}")

    @property
    def enabled(self) -> bool:
        return not self.reason

    @property
    def trained(self) -> bool:
        """Whether rows can be stored (fp16 always; a faiss codec once fitted)."""
        return self.codec.trained

    def _codec_file(self) -> Path:
        return self.folder / "codec.faiss"

    def _load_codec(self) -> None:
        """The fitted codec another process (or an earlier index) wrote, if any."""
        if self.codec.lossless or self.codec.trained or not self._codec_file().is_file():
            return
        self.codec = StateCodec.from_bytes(self.codec.spec, self.hidden, self._codec_file().read_bytes())
        self.row_bytes = self.codec.code_size

    def fit(self, rows: np.ndarray) -> bool:
        """Fit a lossy codec on ``rows`` (a sample of the corpus' states) and keep it beside the rows, unless one
        is there already (another process fitted it first: that one is read). Returns whether it is fitted."""
        if not self.enabled or self.codec.trained:
            return self.enabled
        import fcntl

        try:
            with self._lock, open(self.folder / "lock", "a") as lock_file:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
                try:
                    self._load_codec()
                    if not self.codec.trained:
                        if len(rows) < self.codec.min_train_rows():
                            return False
                        self.codec.train(np.asarray(rows, dtype=np.float32))
                        tmp = self._codec_file().with_suffix(f".tmp{os.getpid()}")
                        tmp.write_bytes(self.codec.to_bytes())
                        os.replace(tmp, self._codec_file())
                        self.row_bytes = self.codec.code_size
                finally:
                    fcntl.flock(lock_file, fcntl.LOCK_UN)
        except (OSError, ValueError, RuntimeError) as exc:
            self._off(f"reader state store {self.folder}: the codec could not be fitted: "
                      f"{exc.__class__.__name__}: {exc}")
            return False
        return True

    def auto_fit_rows(self) -> int:
        """The fewest token rows a lossy codec is fitted on when no index fitted it (:meth:`prepare`): 2,048 for a
        scalar codec (its ranges), 39 a centroid for k-means (faiss' own floor)."""
        return max(AUTO_FIT_ROWS, 39 * self.codec.min_train_rows())

    def prepare(self, blocks: Sequence[np.ndarray]) -> None:
        """Before ``blocks`` (one passage's rows each) are stored: a lossy codec that no index has fitted is fitted
        on them when they hold :meth:`auto_fit_rows` rows (a corpus asked before it was indexed: the first
        questions' candidates fit it); fewer, and nothing is stored yet."""
        if not self.enabled or self.codec.trained:
            return
        rows = [np.asarray(b, dtype=np.float32) for b in blocks if np.ndim(b) == 2 and len(b)]
        if sum(len(r) for r in rows) >= self.auto_fit_rows():
            self.fit(np.concatenate(rows))

    def roundtrip(self, rows: np.ndarray) -> np.ndarray:
        """What ``rows`` read back once stored (fp16 as they are; a fitted lossy codec's decoded rows)."""
        if self.codec.lossless or not self.codec.trained:
            return np.asarray(rows, dtype=np.float16)
        return self.codec.roundtrip(np.asarray(rows, dtype=np.float32))

    def _off(self, why: str) -> None:
        self.reason = why.splitlines()[0] if why else "off"
        log.warning("%s; passages are encoded as before", self.reason)

    # -- reading --------------------------------------------------------------------------------------------
    def _mapped(self, need_rows: int) -> np.memmap | None:
        """The rows file mapped (remapped when it grew past what is mapped)."""
        if self._rows is None or need_rows > self._mapped_rows:
            total = self._file.stat().st_size // self.row_bytes
            if total == 0:
                return None
            self._rows = np.memmap(self._file, dtype=np.uint8, mode="r", shape=(total, self.row_bytes))
            self._mapped_rows = total
        return self._rows

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[np.ndarray, tuple[tuple[int, int], ...]]]:
        """The stored ``(states fp16 (tokens, hidden), spans)`` of those ``keys`` the store holds (decoded: a copy,
        not a view of the file). A row range past the file's end (a write cut short) is treated as absent."""
        if not self.enabled or not keys or not self.codec.trained:
            return {}
        found: dict[str, tuple[np.ndarray, tuple[tuple[int, int], ...]]] = {}
        try:
            with self._lock:
                rows = self._select("key, first, rows, spans", keys)
                if not rows:
                    return {}
                mapped = self._mapped(max(first + n for _, first, n, _ in rows))
                if mapped is None:
                    return {}
                kept = [(key, first, n, spans) for key, first, n, spans in rows
                        if first >= 0 and n > 0 and first + n <= self._mapped_rows]
                if not kept:
                    return {}
                # one decode for the whole window (a codec's call has a fixed cost: 30 calls cost 4× one)
                decoded = self.codec.decode(np.concatenate([np.asarray(mapped[first:first + n]) for _, first, n, _ in kept]))
                at = 0
                for key, _, n, spans in kept:
                    found[key] = (decoded[at:at + n],
                                  tuple((int(start), int(end)) for start, end in json.loads(spans)))
                    at += n
        except (OSError, ValueError, sqlite3.Error) as exc:
            self._off(f"reader state store {self.folder} could not be read: {exc.__class__.__name__}: {exc}")
            return {}
        return found

    # -- writing --------------------------------------------------------------------------------------------
    def put_many(self, entries: Mapping[str, tuple[np.ndarray, Iterable[tuple[int, int]]]]) -> int:
        """Append the entries the store does not hold yet, while the rows file stays under its limit; returns
        how many were written (none before a lossy codec is fitted). Other processes' appends wait on a file
        lock."""
        if not self.enabled or not entries or self.limit_bytes <= 0 or not self.codec.trained:
            return 0
        import fcntl

        written = 0
        try:
            with self._lock, open(self.folder / "lock", "a") as lock_file:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
                try:
                    path = self._file
                    row_bytes = self.row_bytes
                    whole = path.stat().st_size // row_bytes
                    # entries past the file's end (a file cut short) would point at the rows appended next
                    self._db.execute("DELETE FROM states WHERE first + rows > ?", (whole,))
                    keys = list(entries)
                    held = {k for (k,) in self._select("key", keys)}
                    with open(path, "ab") as out:
                        size = out.seek(0, 2)
                        if size % row_bytes:  # a write cut short: start at a whole row
                            size -= size % row_bytes
                            out.truncate(size)
                            out.seek(size)
                        records = []
                        for key in keys:
                            states, spans = entries[key]
                            if key in held:
                                continue
                            rows = np.asarray(states)
                            if rows.ndim != 2 or rows.shape[1] != self.hidden or not np.isfinite(rows).all():
                                continue
                            block = self.codec.encode(rows)
                            if size + block.nbytes > self.limit_bytes:
                                continue   # full for this one: a shorter passage may still fit
                            out.write(block.tobytes())
                            records.append((key, size // row_bytes, rows.shape[0],
                                            json.dumps([list(s) for s in spans])))
                            size += block.nbytes
                        out.flush()
                    if records:  # the rows are on disk before their index entries: a reader never sees a hole
                        self._db.executemany("INSERT OR IGNORE INTO states VALUES (?, ?, ?, ?)", records)
                    self._db.commit()
                    written = len(records)
                finally:
                    fcntl.flock(lock_file, fcntl.LOCK_UN)
        except (OSError, ValueError, sqlite3.Error) as exc:
            self._off(f"reader state store {self.folder} could not be written: {exc.__class__.__name__}: {exc}")
        return written

    def _select(self, columns: str, keys: Sequence[str]) -> list[tuple]:
        """``columns`` of the stored entries among ``keys`` (distinct), 500 keys a query (the caller holds
        the lock)."""
        wanted = list(dict.fromkeys(keys))
        rows: list[tuple] = []
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            rows += self._db.execute(f"SELECT {columns} FROM states WHERE key IN ({','.join('?' * len(part))})",
                                     part).fetchall()
        return rows

    def held(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` the store holds."""
        if not self.enabled or not keys:
            return set()
        try:
            with self._lock:
                return {k for (k,) in self._select("key", keys)}
        except sqlite3.Error as exc:
            self._off(f"reader state store {self.folder} could not be read: {exc.__class__.__name__}: {exc}")
            return set()

    def count(self) -> int:
        """Passages held."""
        if not self.enabled:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM states").fetchone()[0])

    def size_bytes(self) -> int:
        """Bytes of the rows file."""
        try:
            return self._file.stat().st_size
        except OSError:
            return 0
