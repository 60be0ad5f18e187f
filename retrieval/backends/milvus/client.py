"""The connection to Milvus: a client on a Milvus Lite file or a server (:func:`open_client`), and what the server
behind it supports, from its version (:func:`server_features`). A server older than 2.3, or one that does not answer
the version request, is refused with one line (:class:`MilvusUnavailable`)."""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.redact import redact_text
from ..reads import INTERRUPTS


class MilvusUnavailable(RuntimeError):
    """The Milvus server did not answer (or the embedded one could not open), or it is one the backend cannot
    use (too old): one line, the URI in it without its credentials (:func:`retrieval.core.redact.redact_text`)."""

    def __init__(self, message: str) -> None:
        super().__init__(redact_text(message))


#: The oldest Milvus server the backend runs on (HNSW with COSINE, partition keys and JSON fields: 2.3).
MIN_SERVER = (2, 3)


@dataclass(frozen=True)
class ServerFeatures:
    """What the Milvus behind a client supports, from its version (:func:`server_features`)."""

    #: As the server reports it (``2.3.5-lite``), or ``Milvus Lite``.
    version: str
    #: SPARSE_FLOAT_VECTOR (2.4+): our BM25 in Milvus; without it the lexical side runs in the app process.
    sparse: bool = True
    #: Nullable scalar fields (2.5+): typed fields for metadata keys that some chunks lack; else JSON only.
    nullable: bool = True
    #: ``upsert(partial_update=True)`` (2.6+): a reweighted row sends its sparse vector only.
    partial_update: bool = True
    #: ``upsert`` keeps a row in its partition-key partition (Milvus 2.3.5 routed upserted rows to another
    #: tenant's partition, where a tenant's search did not find them): else delete, then insert.
    upsert: bool = True
    #: ``hybrid_search`` (2.4+).
    hybrid: bool = True

    @property
    def lexical_reason(self) -> str | None:
        """Why the lexical side runs in the app process (None: it runs in Milvus)."""
        if self.sparse:
            return None
        return (f"Milvus {self.version} has no sparse vectors (2.4+): BM25 runs in the app process, the dense "
                "search and the filters in Milvus")


#: Milvus Lite (embedded): the whole API the backend uses.
LITE = ServerFeatures("Milvus Lite")


def is_server_uri(uri: str) -> bool:
    """True for a server address (``http://``, ``https://``, ``tcp://``, ``grpc://``), False for a file path."""
    return re.match(r"^(https?|tcp|grpc|unix)://", str(uri)) is not None


def open_client(uri: str | Path, token: str | None = None, timeout: float = 10.0) -> Any:
    """A ``MilvusClient``: Milvus Lite on a ``.db`` file for a path, else a connection to the server ``uri``.

    Raises:
        MilvusUnavailable: the server is unreachable or the file cannot be opened.
    """
    from pymilvus import MilvusClient

    # pymilvus logs each failed reconnection with a traceback; the failure reaches the user as a tier reason.
    # Milvus Lite's embedded server logs an unimplemented call (AllocTimestamp) with a traceback on ingest.
    # Milvus Lite logs a file held by another process with a traceback (DataDirLockedError): said below in one line.
    for name in ("pymilvus", "pymilvus.milvus_client", "grpc._server", "milvus_lite"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    target = str(uri)
    try:
        if not is_server_uri(target):
            path = Path(target)
            if path.suffix != ".db":  # pymilvus runs Milvus Lite only for a path ending in .db
                path = path / "milvus.db"
            path.parent.mkdir(parents=True, exist_ok=True)
            target = str(path.resolve())
        return MilvusClient(uri=target, token=token or "", timeout=timeout)
    except BaseException as exc:  # noqa: BLE001 - one line for the tier reason (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        if not is_server_uri(target) and _held_elsewhere(Path(target)):
            raise MilvusUnavailable(f"Milvus Lite file {target} is open in another process (Milvus Lite serves one "
                                    "process at a time: stop the other one, or use a Milvus server)") from None
        raise MilvusUnavailable(f"Milvus at {uri} unavailable: {exc.__class__.__name__}: {str(exc)[:200]}") from exc


def server_features(client: Any, uri: str | Path, timeout: float = 10.0) -> ServerFeatures:
    """What the Milvus at ``uri`` supports (:data:`LITE` for a file path), from the server's version.

    Raises:
        MilvusUnavailable: the server is down (as :func:`open_client` says it), did not answer the version request
            or is older than 2.3 (one line naming the version the backend needs).
    """
    if not is_server_uri(str(uri)):
        return LITE
    need = f"the Milvus backend needs a Milvus server {MIN_SERVER[0]}.{MIN_SERVER[1]} or later"
    try:
        raw = str(client.get_server_version(timeout=timeout))
    except BaseException as exc:  # noqa: BLE001 - one line for the tier reason (a native panic too)
        if isinstance(exc, INTERRUPTS):
            raise
        import pymilvus

        said = " ".join(str(exc).split())
        if getattr(exc, "code", None) == 2 or "Fail connecting" in said:  # down, not incompatible
            raise MilvusUnavailable(f"Milvus at {uri} unavailable: {exc.__class__.__name__}: {said[:200]}") from None
        raise MilvusUnavailable(f"Milvus at {uri} did not answer pymilvus {pymilvus.__version__}'s version request "
                                f"({exc.__class__.__name__}: {said[:120]}): {need}") from None
    found = re.search(r"(\d+)\.(\d+)(?:\.\d+)?", raw)
    if found is None:
        raise MilvusUnavailable(f"Milvus at {uri} reports the version {raw[:60]!r}, not one the backend knows: {need}")
    # Milvus Lite as a server process reports its own version (3.2.2), read as a 2.4+ server: it has the whole API.
    version = (int(found.group(1)), int(found.group(2)))
    shown = raw[found.start():].strip()[:40]
    if version < MIN_SERVER:
        raise MilvusUnavailable(f"Milvus at {uri} is version {shown}: {need} (2.4 or later keeps BM25 in Milvus)")
    return ServerFeatures(shown, sparse=version >= (2, 4), nullable=version >= (2, 5),
                          partial_update=version >= (2, 6), upsert=version >= (2, 4), hybrid=version >= (2, 4))


def _held_elsewhere(db: Path) -> bool:
    """True when another process holds Milvus Lite's lock on ``db`` (the ``LOCK`` file of its folder)."""
    try:
        import fcntl
    except ImportError:  # Windows: no diagnosis, the generic reason stands
        return False
    lock = db / "LOCK"
    if not lock.is_file():
        return False
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe's own lock, when it got one
    return False
