"""The ZIP packages most formats are (DOCX, ODT, PPTX, XLSX, EPUB), opened and read one way: every member checked
against a ZIP bomb before it is decompressed (:func:`guard_zip`), each failure one :class:`~.formats.Unreadable`
line, and the sniffs that tell the packages apart by their members, not by magic numbers (all of them start
``PK``)."""

from __future__ import annotations

import io
import zipfile
from typing import Iterable

from .formats import Unreadable, one_line

#: The largest member a reader decompresses (uncompressed bytes).
MAX_MEMBER_BYTES = 200 * 1024 * 1024
#: The highest ratio of a member's uncompressed to compressed size, past :data:`RATIO_FLOOR_BYTES`: a ZIP bomb's
#: members are thousands of times smaller compressed; a document's XML is 5 to 30 times.
MAX_RATIO = 100
#: Members smaller than this are not held to :data:`MAX_RATIO` (a short, repetitive XML part compresses past it and
#: cannot exhaust memory).
RATIO_FLOOR_BYTES = 1024 * 1024
#: The largest ``mimetype`` member a sniff reads.
MAX_MIMETYPE_BYTES = 256
#: What reading a damaged member raises (zlib's and lzma's errors included, through zipfile).
_READ_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError)
_OPEN_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError)


def open_zip(data: bytes) -> zipfile.ZipFile | None:
    """The ZIP archive of ``data``, or ``None`` where it is none (a sniff's question)."""
    if not data.startswith(b"PK\x03\x04"):
        return None
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except _OPEN_ERRORS:
        return None


def read_zip(data: bytes) -> zipfile.ZipFile:
    """The ZIP archive of ``data``.

    Raises:
        Unreadable: ``unreadable``, not a readable ZIP file.
    """
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except _OPEN_ERRORS as exc:
        raise Unreadable("unreadable", f"not a readable ZIP file ({one_line(exc)})") from None


def holds(archive: zipfile.ZipFile, name: str) -> bool:
    """Whether ``archive`` has a member ``name``."""
    try:
        archive.getinfo(name)
    except KeyError:
        return False
    return True


def bomb_ratio(info: zipfile.ZipInfo) -> int | None:
    """The times a member decompresses past its compressed size when that is past :data:`MAX_RATIO` (and the member
    past :data:`RATIO_FLOOR_BYTES`), else ``None``."""
    if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        return info.file_size // max(info.compress_size, 1)
    return None


def guard_zip(archive: zipfile.ZipFile, names: Iterable[str] | None = None) -> None:
    """Refuse, before any is read, a member (of ``names``, default all) that decompresses past
    :data:`MAX_MEMBER_BYTES` or past :data:`MAX_RATIO` times its compressed size; with ``names`` left out, the
    members together past :data:`MAX_MEMBER_BYTES` too (a reader that loads every part).

    Raises:
        Unreadable: ``unreadable``, naming the member.
    """
    infos = archive.infolist() if names is None else [archive.getinfo(n) for n in names if holds(archive, n)]
    for info in infos:
        if info.file_size > MAX_MEMBER_BYTES:
            raise Unreadable("unreadable", f"{info.filename} decompresses to {info.file_size:,} bytes (a ZIP bomb?)")
        ratio = bomb_ratio(info)
        if ratio is not None:
            raise Unreadable("unreadable", f"{info.filename} decompresses to {ratio} times its size (a ZIP bomb?)")
    if names is None and sum(i.file_size for i in infos) > MAX_MEMBER_BYTES:
        raise Unreadable("unreadable", f"the parts decompress to more than {MAX_MEMBER_BYTES:,} bytes (a ZIP bomb?)")


def member(archive: zipfile.ZipFile, name: str) -> bytes | None:
    """One member's bytes, guarded (:func:`guard_zip`); ``None`` if there is no such member.

    Raises:
        Unreadable: ``unreadable``, the member is a ZIP bomb or cannot be decompressed.
    """
    if not holds(archive, name):
        return None
    guard_zip(archive, [name])
    try:
        return archive.read(name)
    except _READ_ERRORS as exc:
        raise Unreadable("unreadable", f"{name} cannot be decompressed ({one_line(exc)})") from None


def zip_holding(data: bytes, name: str) -> bool:
    """A sniff: whether ``data`` is a ZIP holding the member ``name`` (``word/document.xml``…)."""
    archive = open_zip(data)
    return archive is not None and holds(archive, name)


def zip_of_mimetype(data: bytes, mimetype: bytes) -> bool:
    """A sniff: whether ``data`` is a ZIP whose ``mimetype`` member is ``mimetype`` (ODF, EPUB); a damaged or
    oversized ``mimetype`` member says no."""
    archive = open_zip(data)
    if archive is None or not holds(archive, "mimetype") \
            or archive.getinfo("mimetype").file_size > MAX_MIMETYPE_BYTES:
        return False
    try:
        return archive.read("mimetype").strip() == mimetype
    except _READ_ERRORS:
        return False
