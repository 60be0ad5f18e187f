"""A collection: the folder a user's uploaded documents are kept in, with its manifest, read as a corpus.

Layout (everything but the documents is hidden, so the folder reader would skip it)::

    <collection>/
        .collection.json      the manifest: the documents it holds, in the order they came
        lei-8666.pdf          each document under a name the collection chose (never the client's path)
        .read/lei-8666.json   what the reader made of it, kept so a later upload reads only the new files
        .incoming/            bytes being written (a file here is never part of the collection)

The manifest is the truth: a document is in the collection once its entry is in the manifest, and an entry is
written only after its file is whole on disk (written, flushed, renamed into place) and read. A write killed
before that leaves a file the manifest does not name, removed by the next write (:meth:`Collection.sweep`) and
never read; a write killed after it is picked up by the next load of the collection (its index built then).
The caller serialises writes (:mod:`retrieval.pipeline.uploads` holds the collection's lock).

:func:`collection_documents` reads it for :func:`retrieval.ingest.corpus.read_corpus`: one document per entry, its
id the collection's name for the file, its title the name the user uploaded it under, its metadata what the file
declares plus ``format`` and ``folder`` (a ``.zip``'s folders; ``.`` for a file uploaded alone).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Sequence

from ..core.types import Document
from .folder import COLLECTION_MANIFEST, IntakeReport, Skipped, folders_of
from .formats import FORMATS, Read, Unreadable
from .metadata import FOLDER_KEY, FORMAT_KEY

MANIFEST = COLLECTION_MANIFEST
READ_DIR = ".read"
INCOMING_DIR = ".incoming"
#: The manifest's version: a manifest of another is refused, never rewritten.
VERSION = 1
#: The longest name the collection gives a file (characters, before its extension).
MAX_STEM_CHARS = 80


@dataclass(frozen=True)
class Entry:
    """One document of a collection.

    Attributes:
        doc_id: its document id, the collection's name for it (``lei-8666``).
        name: the name it was uploaded under (its title, shown).
        stored: its file in the collection's folder (``lei-8666.pdf``).
        format: its declared format's name.
        bytes: its size.
        sha256: its bytes' digest (a second upload of the same bytes is refused as a duplicate).
        added: when it came (seconds since the epoch).
        archive: the ``.zip`` it came in (``""``: uploaded alone).
        folders: its folders inside that ``.zip``.
    """

    doc_id: str
    name: str
    stored: str
    format: str
    bytes: int
    sha256: str
    added: float
    archive: str = ""
    folders: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Entry":
        return cls(str(data["doc_id"]), str(data["name"]), str(data["stored"]), str(data["format"]),
                   int(data["bytes"]), str(data["sha256"]), float(data["added"]), str(data.get("archive", "")),
                   tuple(str(f) for f in data.get("folders", ())))


@dataclass
class Manifest:
    """The manifest: its entries, who the collection belongs to (as the app names them), and a generation that
    each write moves on (a page compares it with the loaded index's to see the collection changed)."""

    owner: str = ""
    entries: list[Entry] = field(default_factory=list)
    generation: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(e.bytes for e in self.entries)

    def by_sha(self, sha256: str) -> Entry | None:
        return next((e for e in self.entries if e.sha256 == sha256), None)


#: A file :func:`_write_whole` was writing when its process was killed (``.name.<pid>.<ns>``).
_TEMPORARY = re.compile(r"^\..+\.\d+\.\d+$")


class CollectionError(Exception):
    """A collection's manifest cannot be read (damaged, or of another version): one line naming it."""


def is_collection(path: Path) -> bool:
    """Whether ``path`` is a collection's folder (it holds a manifest)."""
    return (Path(path) / MANIFEST).is_file()


def _slug(name: str) -> str:
    stem = unicodedata.normalize("NFC", Path(name).stem)
    slug = re.sub(r"[^\w.-]+", "-", stem, flags=re.UNICODE).strip("-.").lower()
    return slug[:MAX_STEM_CHARS].strip("-.") or "documento"


class Collection:
    """The collection in folder ``root`` (module docstring). Only reads touch nothing; every write is the caller's
    to serialise."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    def manifest(self) -> Manifest:
        """The manifest (an empty one where none was written yet).

        Raises:
            CollectionError: it cannot be read, is not valid, or is of another version.
        """
        try:
            raw = self.manifest_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Manifest()
        except OSError as exc:
            raise CollectionError(f"{self.manifest_path}: cannot be read ({exc.strerror or exc})") from None
        try:
            data = json.loads(raw)
            if data.get("version") != VERSION:
                raise CollectionError(f"{self.manifest_path}: version {data.get('version')!r}, not {VERSION}")
            return Manifest(str(data.get("owner", "")), [Entry.from_dict(e) for e in data["entries"]],
                            int(data.get("generation", 0)))
        except CollectionError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CollectionError(f"{self.manifest_path}: not a collection manifest ({exc.__class__.__name__})") \
                from None

    def write_manifest(self, manifest: Manifest) -> Manifest:
        """Write ``manifest`` whole (a temporary file flushed to disk, then renamed over the old one), its
        generation moved on; returns what was written."""
        manifest = Manifest(manifest.owner, list(manifest.entries), manifest.generation + 1)
        self.root.mkdir(parents=True, exist_ok=True)
        data = {"version": VERSION, "owner": manifest.owner, "generation": manifest.generation,
                "entries": [asdict(e) for e in manifest.entries]}
        _write_whole(self.manifest_path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))
        return manifest

    def free_id(self, name: str, taken: Iterable[str]) -> str:
        """A document id for an upload named ``name``: its name's slug, ``-2``, ``-3``… where taken."""
        base, used = _slug(name), set(taken)
        doc_id, n = base, 1
        while doc_id in used:
            n += 1
            doc_id = f"{base}-{n}"
        return doc_id

    def store(self, doc_id: str, extension: str, data: bytes) -> str:
        """Write ``data`` as the file of ``doc_id`` (through ``.incoming/``, flushed, renamed into place); returns
        its file name in the folder."""
        stored = f"{doc_id}{extension.lower()}"
        incoming = self.root / INCOMING_DIR
        incoming.mkdir(parents=True, exist_ok=True)
        tmp = incoming / f"{stored}.{os.getpid()}.{time.monotonic_ns()}"
        _write_whole(self.root / stored, data, tmp)
        return stored

    def read_path(self, entry: Entry) -> Path:
        return self.root / READ_DIR / f"{entry.doc_id}.json"

    def read(self, entry: Entry) -> Read:
        """What the reader makes of ``entry``'s file: the kept one when its digest matches, else read now (and
        kept).

        Raises:
            Unreadable: the file is gone, changed or cannot be read (its reason).
        """
        kept = self._kept_read(entry)
        if kept is not None:
            return kept
        try:
            data = _read_regular(self.root / entry.stored)
        except OSError as exc:
            raise Unreadable("unreadable", f"its file cannot be read ({exc.strerror or exc})") from None
        if hashlib.sha256(data).hexdigest() != entry.sha256:
            raise Unreadable("unreadable", "its file changed on disk since it was uploaded")
        got = read_bytes(entry.format, data, entry.name)
        self.keep_read(entry, got)
        return got

    def keep_read(self, entry: Entry, got: Read) -> None:
        """Keep what the reader made of ``entry`` (a later load reads it back instead of the file)."""
        record = {"sha256": entry.sha256, "text": got.text, "markup": got.markup, "title": got.title,
                  "metadata": {k: list(v) if isinstance(v, tuple) else v for k, v in got.metadata.items()},
                  "multi": sorted(k for k, v in got.metadata.items() if isinstance(v, tuple)),
                  "pages": got.pages, "warnings": list(got.warnings)}
        try:
            (self.root / READ_DIR).mkdir(parents=True, exist_ok=True)
            _write_whole(self.read_path(entry), json.dumps(record, ensure_ascii=False).encode("utf-8"))
        except OSError:
            pass  # read again next time

    def _kept_read(self, entry: Entry) -> Read | None:
        try:
            record = json.loads(self.read_path(entry).read_text(encoding="utf-8"))
            if record.get("sha256") != entry.sha256:
                return None
            multi = set(record.get("multi", ()))
            meta = {k: tuple(v) if k in multi else v for k, v in record["metadata"].items()}
            return Read(record["text"], record["markup"], record["title"], meta, int(record["pages"]),
                        tuple(record["warnings"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def forget(self, entries: Sequence[Entry]) -> None:
        """Delete the files and kept reads of ``entries`` (already out of the manifest)."""
        for entry in entries:
            for path in (self.root / entry.stored, self.read_path(entry)):
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    pass

    def sweep(self) -> list[str]:
        """Remove what the manifest does not name: files of a write killed before its entry was written, kept
        reads of removed documents, leftovers in ``.incoming/``. Returns the names removed."""
        try:
            manifest = self.manifest()
        except CollectionError:
            return []  # a damaged manifest: nothing is deleted on its word
        keep = {e.stored for e in manifest.entries} | {MANIFEST, READ_DIR, INCOMING_DIR}
        reads = {f"{e.doc_id}.json" for e in manifest.entries}
        removed: list[str] = []
        for folder, names in ((self.root, keep), (self.root / READ_DIR, reads), (self.root / INCOMING_DIR, set())):
            try:
                listing = os.listdir(folder)
            except OSError:
                continue
            for name in listing:
                if name in names or name.startswith(".") and folder == self.root and not _TEMPORARY.match(name):
                    continue
                path = folder / name
                try:
                    if path.is_symlink() or path.is_file():
                        path.unlink()
                        removed.append(str(path.relative_to(self.root)))
                except OSError:
                    pass
        return removed


def read_bytes(format_name: str, data: bytes, name: str) -> Read:
    """``data`` read by the declared format ``format_name``.

    Raises:
        Unreadable: the reader cannot read it (its reason), or the format is no longer declared.
    """
    if format_name not in FORMATS:
        raise Unreadable("format", f"{format_name} is no longer a format the workbench reads")
    try:
        return FORMATS.get(format_name).read(data, Path(name))
    except Unreadable:
        raise
    except Exception as exc:  # a library failing on one broken file: this file only
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise Unreadable("unreadable", f"{exc.__class__.__name__}: {first}".rstrip(": ")) from None


def collection_documents(root: Path, tenant_field: str | None = None
                         ) -> tuple[list[tuple[str, Document]], IntakeReport]:
    """The collection's documents (each ``(where, document)``) and the report of what was read (module docstring);
    an entry whose file is gone or changed is skipped with its reason. The report's ``version`` is the manifest's
    generation. A collection is its owner's alone: a ``tenant_field`` a file declares of itself (front matter) is
    left out with a warning, so no upload can make the collection multi-tenant or hide its other documents.

    Raises:
        CollectionError: the manifest cannot be read.
    """
    collection = Collection(root)
    manifest = collection.manifest()
    report = IntakeReport(str(root))
    report.version = str(manifest.generation)
    out: list[tuple[str, Document]] = []
    for entry in manifest.entries:
        try:
            got = collection.read(entry)
        except Unreadable as exc:
            report.skipped.append(Skipped(entry.name, exc.reason, str(exc)))
            continue
        meta = {**got.metadata, FORMAT_KEY: entry.format, FOLDER_KEY: folders_of(PurePosixPath(*entry.folders,
                                                                                               entry.stored))}
        report.warnings.extend(f"{entry.name}: {w}" for w in got.warnings)
        if tenant_field and meta.pop(tenant_field, None) is not None:
            report.warnings.append(f"{entry.name}: its {tenant_field!r} field was left out (a collection is its "
                                   "owner's alone)")
        out.append((str(root / entry.stored), Document(entry.doc_id, entry.name, got.text, meta, got.markup)))
        report.read(entry.format, entry.doc_id, got.pages, entry.name)
    return out, report


def _write_whole(target: Path, data: bytes, tmp: Path | None = None) -> None:
    """``data`` written to ``tmp`` (default: beside ``target``), flushed to disk, then renamed to ``target``: a
    reader sees the old file or the new one, never part of it."""
    tmp = tmp or target.with_name(f".{target.name}.{os.getpid()}.{time.monotonic_ns()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise


def _read_regular(path: Path) -> bytes:
    """A regular file's bytes, never through a link."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)
