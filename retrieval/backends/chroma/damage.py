"""Whether the embedded store's files are damaged. Chroma reads its SQLite file from Rust: a damaged file can make
it *panic* (pyo3's ``PanicException``, a ``BaseException``). :func:`probe_damage` checks the file with Python's own
``sqlite3`` (an ordinary exception here instead of a panic in Chroma), and :func:`damage_reason` says whether a
failure is damage (:data:`~retrieval.backends.base.DAMAGED`, whose remedy is ``index --rebuild``)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ...core.reasons import Reason, error, raw
from ..base import DAMAGED, StoreDamaged, rebuild_command


#: How SQLite (and Chroma quoting it) says a file is damaged: SQLITE_CORRUPT (11) and SQLITE_NOTADB (26).
_DAMAGE_WORDS = ("database disk image is malformed", "file is not a database", "(code: 11)", "(code: 26)",
                 "malformed database schema")
#: The small tables Chroma reads when it opens a store: read whole by the light probe (a few pages).
_START_TABLES = ("migrations", "acquire_write", "tenants", "databases", "collections", "collection_metadata",
                 "segments", "segment_metadata", "maintenance_log", "max_seq_id", "embeddings_queue_config")
_PROBED: dict[tuple[str, int, int], str | None] = {}
_PROBE_LOCK = threading.Lock()


def native_failure(exc: BaseException) -> bool:
    """Whether ``exc`` came from inside a native library: a Rust panic (pyo3's ``PanicException``, matched by
    class since pyo3 does not export it) or SQLite's ``DatabaseError``."""
    if isinstance(exc, sqlite3.DatabaseError):
        return True
    return any(cls.__name__ == "PanicException" for cls in type(exc).__mro__)


def says_damaged(text: str) -> bool:
    """Whether an error's text is SQLite's word for a damaged file (Chroma quotes it)."""
    low = text.lower()
    return any(word in low for word in _DAMAGE_WORDS)


def probe_damage(chroma_path: Path | str, thorough: bool = False) -> str | None:
    """Why the embedded store's SQLite file (``<chroma_path>/chroma.sqlite3``) is damaged, or ``None`` when it
    reads whole, is absent, or cannot be checked (locked, unreadable: no proof of damage). Python's own
    ``sqlite3`` reads it, read-only: a damaged file raises an ordinary exception here instead of a panic in Chroma.

    Args:
        thorough: run ``PRAGMA quick_check`` over every page (about a second per GB; remembered while the file is
            unchanged); otherwise only over the schema and the small tables Chroma reads on opening, with their
            indexes (a few pages).
    """
    db = Path(chroma_path) / "chroma.sqlite3"
    try:
        st = db.stat()
    except OSError:
        return None
    if not db.is_file():
        return None
    key = (str(db.resolve()), st.st_mtime_ns, st.st_size)
    if thorough and key in _PROBED:
        return _PROBED[key]
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
        try:
            tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            checks = ["PRAGMA quick_check(3)"] if thorough else [
                f'PRAGMA quick_check("{table}")' for table in _START_TABLES if table in tables]  # with its indexes
            found = None
            for check in checks:
                rows = con.execute(check).fetchall()
                if not rows or rows[0][0] != "ok":
                    found = " ".join("; ".join(str(r[0]) for r in rows).split()) or "no answer"
                    break
        finally:
            con.close()
    except sqlite3.Error as exc:
        text = f"{exc.__class__.__name__}: {str(exc)[:200]}"
        damaged = type(exc) is sqlite3.DatabaseError or says_damaged(str(exc))
        found = f"SQLite: {text}" if damaged else None
        if not damaged:
            return None  # locked, unreadable, a hot journal: not proof of damage, nothing remembered
    if found is not None and not found.startswith("SQLite: "):
        found = f"SQLite: quick_check: {found[:200]}"
    if thorough:
        with _PROBE_LOCK:
            if len(_PROBED) > 64:
                _PROBED.clear()
            _PROBED[key] = found
    return found


def damage_reason(exc: BaseException, chroma_path: Path | str | None,
                  corpus: str | Path | None = None) -> Reason | None:
    """:data:`~retrieval.backends.base.DAMAGED` when a failure of the embedded store at ``chroma_path`` is damage,
    else ``None`` (the caller keeps its own reason). Damage: the SQLite file fails :func:`probe_damage` (thorough),
    or the failure is a native one (a panic, a ``DatabaseError``) or SQLite's words for a damaged file. A server's
    store (``chroma_path`` ``None``) is never called damaged here: its files are not ours to move. Never raises.

    Args:
        corpus: the corpus the rebuild command names (:func:`~retrieval.backends.base.rebuild_command`).
    """
    if isinstance(exc, StoreDamaged):
        return exc.reason
    if chroma_path is None:
        return None
    try:
        found = probe_damage(chroma_path, thorough=True)
    except Exception:  # noqa: BLE001 - the probe is a diagnosis: a failure of its own proves nothing
        found = None
    if found is None and not (native_failure(exc) or says_damaged(str(exc))):
        return None
    return DAMAGED(path=str(chroma_path), error=raw(found) if found else error(exc), command=rebuild_command(corpus))
