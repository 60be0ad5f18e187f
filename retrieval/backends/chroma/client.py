"""The Chroma client (:func:`open_client`): an embedded store in a folder or a server, and what this process keeps
of an embedded store's system: its generation (:func:`client_generation`), whether another process replaced its
file (:func:`replaced`), forgetting it (:func:`forget_client`), and moving a damaged store aside
(:func:`move_aside`)."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from ...core.reasons import raw
from ..base import DAMAGED, StoreDamaged, rebuild_command
from ..reads import INTERRUPTS
from .damage import damage_reason, probe_damage

log = logging.getLogger(__name__)


def open_client(chroma_path: Path | str, chroma_host: str | None = None) -> Any:
    """A Chroma client: embedded ``PersistentClient`` at ``chroma_path``, or ``HttpClient`` to ``host:port``
    (``user:password@host:port``: HTTP Basic credentials, sent by Chroma's basic-auth client provider).

    Raises:
        ValueError: a port that is not a number (the message never quotes the credentials).
        StoreDamaged: the embedded store's SQLite file is damaged (:func:`probe_damage`, checked before Chroma
            reads it), or Chroma's native code failed opening it (a panic; the half-started client is forgotten,
            so the next open reads the folder again).
        Exception: whatever chromadb raises when the path is unusable or the server is unreachable.
    """
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if chroma_host:
        credentials, _, address = chroma_host.removeprefix("http://").rpartition("@")
        host, _, port = address.partition(":")
        if port and not (port.isascii() and port.isdigit()):
            raise ValueError(f"the Chroma server's port {port[:20]!r} is not a number (host:port)")
        if credentials:
            settings = ChromaSettings(anonymized_telemetry=False,
                                      chroma_client_auth_provider="chromadb.auth.basic_authn.BasicAuthClientProvider",
                                      chroma_client_auth_credentials=credentials)
        return chromadb.HttpClient(host=host, port=int(port or 8000), settings=settings)
    found = probe_damage(chroma_path)
    if found is not None:
        raise StoreDamaged(DAMAGED(path=str(chroma_path), error=raw(found), command=rebuild_command()))
    if replaced(chroma_path):   # moved aside by another process: this process' system reads the old file
        forget_client(chroma_path)
    Path(chroma_path).mkdir(parents=True, exist_ok=True)
    try:
        client = chromadb.PersistentClient(path=str(chroma_path), settings=settings)
        _OPENED.setdefault(str(Path(chroma_path).resolve()), _inode(chroma_path))
        return client
    except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException; interrupts go on below
        if isinstance(exc, INTERRUPTS):
            raise
        if not isinstance(exc, Exception):  # chromadb cleans up after an Exception, not after a panic: it would
            forget_client(chroma_path, bump=False)  # keep the system that failed to start and hand it out again
        reason = damage_reason(exc, chroma_path)
        if reason is not None:
            raise StoreDamaged(reason) from None
        if isinstance(exc, Exception):
            raise
        raise RuntimeError(f"{exc.__class__.__name__}: {str(exc)[:200]}") from None


#: Per store folder, how many times its client was forgotten in this process (:func:`forget_client`): a holder of
#: a client opened at an older generation opens a new one (:func:`client_generation`).
_GENERATIONS: dict[str, int] = {}
#: Per store folder, the inode of its SQLite file when this process' Chroma system first opened it.
_OPENED: dict[str, int | None] = {}


def _inode(chroma_path: Path | str) -> int | None:
    try:
        return (Path(chroma_path) / "chroma.sqlite3").stat().st_ino
    except OSError:
        return None


def replaced(chroma_path: Path | str) -> bool:
    """Whether the store's SQLite file is no longer the one this process' Chroma system opened (the folder was
    moved aside and built again by another process: ``index --rebuild`` beside a running app)."""
    key = str(Path(chroma_path).resolve())
    return key in _OPENED and _OPENED[key] != _inode(chroma_path)


def client_generation(chroma_path: Path | str) -> int:
    """How many times the client of the store at ``chroma_path`` was forgotten in this process."""
    return _GENERATIONS.get(str(Path(chroma_path).resolve()), 0)


def forget_client(chroma_path: Path | str, bump: bool = True) -> None:
    """Forget (and stop) the embedded Chroma system this process keeps for ``chroma_path``: the next
    :func:`open_client` reads the folder again. Chroma keeps one system per folder for the whole process, even one
    that failed to start; after a store is moved aside, the old one still reads the moved file. With ``bump``,
    holders of a client opened before are told to open a new one (:func:`client_generation`). Never raises."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient as Shared
    except Exception:  # noqa: BLE001 - chromadb absent or changed: nothing is kept to forget
        pass
    else:
        for key in {str(chroma_path), str(Path(chroma_path).resolve())}:
            system = Shared._identifier_to_system.pop(key, None)
            Shared._identifier_to_refcount.pop(key, None)
            if system is not None:
                try:
                    system.stop()
                except BaseException as exc:  # noqa: BLE001 - a damaged store may fail to stop too
                    if isinstance(exc, INTERRUPTS):
                        raise
                    log.debug("the forgotten Chroma system did not stop cleanly: %s", exc.__class__.__name__)
    key = str(Path(chroma_path).resolve())
    _OPENED.pop(key, None)
    if bump:
        _GENERATIONS[key] = _GENERATIONS.get(key, 0) + 1


def move_aside(chroma_path: Path | str) -> Path | None:
    """Rename the store folder to ``<chroma_path>.damaged-<YYYYmmdd-HHMMSS>`` (never deleted: its files stay for a
    look or a salvage) and forget this process' client of it; ``None`` when there is no folder to move.

    Raises:
        OSError: the folder cannot be renamed (permissions, another file system).
    """
    path = Path(chroma_path).resolve()
    if not path.exists():
        forget_client(path)
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    forget_client(path)
    os.rename(path, target)
    return target
