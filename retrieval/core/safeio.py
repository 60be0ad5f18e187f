"""Files opened without following a symlink swapped in after their check: the race-free side of the data roots.

:func:`retrieval.serving.roots.confine` checks a path (inside the roots, symlinks resolved, the kind asked) and
returns its real path; the file is opened later by the loaders. Between the two, a folder or the file could be
replaced by a symlink pointing out of the roots, and a plain ``open`` would follow it. Here, once a process has
declared its roots (:func:`confine_process`; the app does, the command line does not), every read and write of
a corpus, question set, qrels or judgments file goes through :func:`open_beneath`: the path is resolved, must lie
inside a root (a write inside a write root), and is then opened from the root's own descriptor one component
at a time with ``O_NOFOLLOW`` (``openat``), so a symlink anywhere on the way at open time fails the open
(``ELOOP``/``ENOTDIR``) instead of being followed. The file opened is then checked by its descriptor
(``fstat``: a regular file). Without declared roots the same functions open the path as given.

What this does not stop: a hard link inside a root to a file outside it (a hard link is the file itself; the
kernel's ``protected_hardlinks`` refuses links to files the linker cannot read).
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Iterator, Sequence, TextIO

from .errors import PathRefused

#: This context's (read roots, write roots), real paths; empty: not confined. A context variable, so that a
#: page run's thread is confined by its own run (Streamlit runs each page run in a thread of its own).
_ROOTS: ContextVar[tuple[tuple[str, ...], tuple[str, ...]]] = ContextVar("retrieval_safeio_roots", default=((), ()))
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def confine_process(read_roots: Sequence[str | os.PathLike[str]],
                    write_roots: Sequence[str | os.PathLike[str]] = ()) -> None:
    """Declare the roots of this context (the current thread, or an asyncio task): from now on
    :func:`open_beneath` opens only inside them (``()``, ``()``: no confinement, as the command line runs)."""
    reads = tuple(dict.fromkeys(os.path.realpath(r) for r in [*read_roots, *write_roots]))
    _ROOTS.set((reads, tuple(dict.fromkeys(os.path.realpath(r) for r in write_roots))))


@contextmanager
def confined_to(read_roots: Sequence[str | os.PathLike[str]],
                write_roots: Sequence[str | os.PathLike[str]] = ()) -> Iterator[None]:
    """:func:`confine_process` for the body of a ``with`` only."""
    reads = tuple(dict.fromkeys(os.path.realpath(r) for r in [*read_roots, *write_roots]))
    token = _ROOTS.set((reads, tuple(dict.fromkeys(os.path.realpath(r) for r in write_roots))))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def confined() -> bool:
    return bool(_ROOTS.get()[0])


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _refused(path: str | os.PathLike[str], why: str) -> PathRefused:
    return PathRefused(f"refused: {os.fspath(path)!r} {why}")


def _root_of(real: str, write: bool) -> str:
    reads, writes = _ROOTS.get()
    roots = writes if write else reads
    inside = [r for r in roots if _within(real, r)]
    if not inside:
        raise _refused(real, f"is not inside the {'write' if write else 'data'} roots")
    return max(inside, key=len)


def _walk(root: str, parts: Sequence[str], path: str) -> int:
    """A descriptor of the folder ``root/parts…``, each component opened from the one before with
    ``O_NOFOLLOW`` (a symlink on the way: refused)."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            if part in ("", ".", ".."):
                raise _refused(path, "has an empty, '.' or '..' component")
            try:
                next_fd = os.open(part, _DIR_FLAGS | NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refused(path, "changed while it was opened (a symbolic link where a folder was)") \
                        from None
                raise
            os.close(fd)
            fd = next_fd
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_dir(folder: str | os.PathLike[str], write: bool = False, create: bool = False) -> int:
    """A descriptor of ``folder`` (the caller closes it): opened beneath its root when the process is confined
    (:func:`confine_process`), else as given (``create``: made first, with its parents, when unconfined).

    Raises:
        PathRefused: (confined) outside the roots, or a symlink on the way at open time.
        OSError: the folder cannot be opened.
    """
    if not confined():
        if create:
            Path(folder).mkdir(parents=True, exist_ok=True)
        return os.open(folder, _DIR_FLAGS)
    real = os.path.realpath(folder)
    root = _root_of(real, write)
    relative = os.path.relpath(real, root)
    return _walk(root, [] if relative == "." else relative.split(os.sep), real)


def open_beneath(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o666,
                 write: bool = False) -> int:
    """A descriptor of ``path`` opened with ``flags`` (the caller closes it): confined, its real path must be
    inside a root (a write root with ``write``) and is opened component by component with ``O_NOFOLLOW``.

    Raises:
        PathRefused: outside the roots, or a symlink on the way (the file included) at open time.
        OSError: as ``os.open`` (FileNotFoundError for a missing file).
    """
    if not confined():
        return os.open(path, flags | getattr(os, "O_CLOEXEC", 0), mode)
    real = os.path.realpath(path)
    folder, name = os.path.split(real)
    dir_fd = open_dir(folder, write=write)
    try:
        return open_at(dir_fd, name, flags, mode, shown=real)
    finally:
        os.close(dir_fd)


def open_at(dir_fd: int, name: str, flags: int = os.O_RDONLY, mode: int = 0o666, shown: str = "") -> int:
    """``name`` in the folder ``dir_fd`` opened with ``O_NOFOLLOW`` (a symlink there: refused)."""
    try:
        return os.open(name, flags | NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused(shown or name, "changed while it was opened (a symbolic link where a file was)") \
                from None
        raise


def read_fd(fd: int, shown: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file open on ``fd`` (checked by ``fstat``: a FIFO or device is refused)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise _refused(shown, "is not a regular file")
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if limit is not None and total > limit:
            raise _refused(shown, f"is larger than {limit:,} bytes")


def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the file ``path`` (:func:`open_beneath`; a regular file)."""
    fd = open_beneath(path)
    try:
        return read_fd(fd, path, limit)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """The text of ``path`` (:func:`read_bytes`), decoded strictly (``UnicodeDecodeError`` as ``read_text``)."""
    return read_bytes(path).decode(encoding)


@contextmanager
def opened_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> Iterator[TextIO]:
    """A text handle on ``path`` opened by :func:`open_beneath` (for line-by-line readers)."""
    fd = open_beneath(path)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refused(path, "is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "r", encoding=encoding) as handle:
        yield handle
