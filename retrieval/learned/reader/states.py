"""Passage token states kept on disk, so a passage the reader has read once is never encoded again.

The reader's cost is encoding each candidate passage (about 45 ms a passage on 2 cores); its MaxSim against a
question is a matrix product (about 1 ms). The in-memory cache of :class:`~.interaction.MaxSimReader` keeps
what one process has read; this store keeps it across processes and restarts: one append-only file of fp16
rows (``states.f16``) and a SQLite table mapping a passage's key (the SHA-1 of its text) to its first row, its
number of rows and its sentence spans. Rows are what the in-memory cache holds (fp16), so a score read from
the store equals the one computed.

One folder per reader signature (the weights file's SHA-1, the tokens read, int8 or not): another model never
reads these rows. Writes hold a file lock (two processes append in turn); the store stops growing at its size
limit (nothing is evicted: past the limit, passages are encoded as before). A store that cannot be opened or
read is switched off with its reason (:attr:`StateStore.reason`) and the reader encodes as before: it never
fails a request.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

log = logging.getLogger(__name__)

ROW_BYTES_PER_DIM = 2  # fp16

#: The most the shared reader's state store holds on disk (about 0.1 MB a chunk: some 10,000 chunks).
STATE_STORE_MB = 1024.0

_state_dir: Path | None = None


def use_state_store(folder: str | Path | None) -> None:
    """Keep the shared reader's passage states on disk under ``folder`` (``None``: in memory only).

    A Workbench calls this with the folder beside its vector store (``.retrieval/reader-states``); the shared
    reader, loaded or not, takes it from its next request on. Rows are keyed by their text and folders by the
    weights file, so the folder another Workbench chose holds the same rows. Torch-free: a Workbench that
    never reads does not load the reader for this."""
    global _state_dir
    _state_dir = Path(folder).resolve() if folder is not None else None


def state_dir() -> Path | None:
    """The folder :func:`use_state_store` set last."""
    return _state_dir


@lru_cache(maxsize=8)
def _file_sha1(path: str, size: int, mtime_ns: int) -> str:
    """The SHA-1 of a file, hashed once per path, size and modification time."""
    digest = hashlib.sha1()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def signature(weights: Path, max_passage: int, int8: bool, hidden: int) -> str:
    """The folder name of one reader's states: its weights file's SHA-1 and the settings that shape its rows
    (the file is hashed once per process while it stays the same, not at every store attached)."""
    info = Path(weights).stat()
    digest = _file_sha1(str(Path(weights).resolve()), info.st_size, info.st_mtime_ns)
    return f"{digest[:16]}-p{max_passage}-h{hidden}{'-int8' if int8 else ''}"


class StateStore:
    """Token states (fp16, ``(tokens, hidden)``) and sentence spans of passages, on disk, by key.

    Args:
        folder: the store's folder (created).
        hidden: the states' width.
        limit_mb: the most the rows file may hold, in MB; 0 stores nothing.
    """

    def __init__(self, folder: str | Path, hidden: int, limit_mb: float = 1024.0) -> None:
        self.folder = Path(folder)
        self.hidden = int(hidden)
        self.row_bytes = self.hidden * ROW_BYTES_PER_DIM
        self.limit_bytes = int(limit_mb * 1024 * 1024)
        self.reason = ""
        self._lock = threading.Lock()
        self._rows: np.memmap | None = None
        self._mapped_rows = 0
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.folder / "index.sqlite", check_same_thread=False, timeout=30)
            # a cache: WAL with NORMAL sync never corrupts on a crash, it may only forget the last entries
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS states (key TEXT PRIMARY KEY, first INTEGER NOT NULL, "
                             "rows INTEGER NOT NULL, spans TEXT NOT NULL)")
            self._db.commit()
            self._db.execute("SELECT COUNT(*) FROM states").fetchone()  # a damaged file says so now
            (self.folder / "states.f16").touch()
        except (OSError, sqlite3.Error) as exc:
            self._off(f"reader state store {self.folder} could not open: {exc.__class__.__name__}: {exc}")

    @property
    def enabled(self) -> bool:
        return not self.reason

    def _off(self, why: str) -> None:
        self.reason = why.splitlines()[0] if why else "off"
        log.warning("%s; passages are encoded as before", self.reason)

    # -- reading --------------------------------------------------------------------------------------------
    def _mapped(self, need_rows: int) -> np.memmap | None:
        """The rows file mapped (remapped when it grew past what is mapped)."""
        if self._rows is None or need_rows > self._mapped_rows:
            path = self.folder / "states.f16"
            total = path.stat().st_size // self.row_bytes
            if total == 0:
                return None
            self._rows = np.memmap(path, dtype=np.float16, mode="r", shape=(total, self.hidden))
            self._mapped_rows = total
        return self._rows

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[np.ndarray, tuple[tuple[int, int], ...]]]:
        """The stored ``(states fp16 (tokens, hidden), spans)`` of those ``keys`` the store holds (a copy, not a
        view of the file). A row range past the file's end (a write cut short) is treated as absent."""
        if not self.enabled or not keys:
            return {}
        found: dict[str, tuple[np.ndarray, tuple[tuple[int, int], ...]]] = {}
        try:
            with self._lock:
                rows = self._select("key, first, rows, spans", keys)
                if not rows:
                    return {}
                mapped = self._mapped(max(first + n for _, first, n, _ in rows))
                for key, first, n, spans in rows:
                    if mapped is None or first < 0 or n <= 0 or first + n > self._mapped_rows:
                        continue
                    found[key] = (np.array(mapped[first:first + n]),
                                  tuple(tuple(int(x) for x in span) for span in json.loads(spans)))
        except (OSError, ValueError, sqlite3.Error) as exc:
            self._off(f"reader state store {self.folder} could not be read: {exc.__class__.__name__}: {exc}")
            return {}
        return found

    # -- writing --------------------------------------------------------------------------------------------
    def put_many(self, entries: Mapping[str, tuple[np.ndarray, Iterable[tuple[int, int]]]]) -> int:
        """Append the entries the store does not hold yet, while the rows file stays under its limit; returns
        how many were written. Other processes' appends wait on a file lock."""
        if not self.enabled or not entries or self.limit_bytes <= 0:
            return 0
        import fcntl

        written = 0
        try:
            with self._lock, open(self.folder / "lock", "a") as lock_file:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
                try:
                    path = self.folder / "states.f16"
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
                            block = np.ascontiguousarray(states, dtype=np.float16)
                            if block.ndim != 2 or block.shape[1] != self.hidden or not np.isfinite(block).all():
                                continue
                            if size + block.nbytes > self.limit_bytes:
                                continue   # full for this one: a shorter passage may still fit
                            out.write(block.tobytes())
                            records.append((key, size // row_bytes, block.shape[0],
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

    def count(self) -> int:
        """Passages held."""
        if not self.enabled:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM states").fetchone()[0])

    def size_bytes(self) -> int:
        """Bytes of the rows file."""
        try:
            return (self.folder / "states.f16").stat().st_size
        except OSError:
            return 0
