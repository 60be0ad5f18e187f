"""A folder of files as documents, in every declared format (:data:`.formats.FORMATS`), and what was read and
skipped (:class:`IntakeReport`): nothing is left out without a line saying which file and why.

The walk never follows a symbolic link out of the folder (a link to ``/proc/self/environ`` would index the
indexing process' secrets): a link to a file inside the folder is read, one leading out is skipped as
``link_outside``, a link to a folder is never walked (``link_folder``). Files are opened relative to their
folder's descriptor without following a link swapped in after the walk (``os.fwalk``, ``O_NOFOLLOW``).

Id of a document: its path relative to the folder without its extension (``leis/lei-1234``); files that share
one (``diario.pdf`` and ``diario.docx``) keep their extension in it (``diario.pdf``, ``diario.docx``). Its
metadata: what the file declares (front matter, a PDF's author; :mod:`.metadata`), plus ``format`` (the format's
name) and ``folder`` (its folder and every folder above it, a multi-valued field: ``folder=leis`` matches
``leis/2024/lei-1.html``; files at the top have ``.``).
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Mapping

from ..core import safeio
from ..core.kinds import Text
from ..core.types import Document
from .formats import FORMATS, Format, Read, Unreadable, format_for, sniffs
from .metadata import FOLDER_KEY, FORMAT_KEY

#: The largest file a folder corpus reads (bytes); a larger one is skipped as ``too_large``.
MAX_FILE_BYTES = 100 * 2**20

#: Why a file of a folder was not read: code → its words in each language.
SKIP_REASONS: dict[str, Text] = {
    "format": Text("format not read", "formato não lido"),
    "no_text": Text("no text", "sem texto"),
    "too_large": Text("too large", "grande demais"),
    "unreadable": Text("unreadable", "ilegível"),
    "link_outside": Text("a link leaving the folder", "um link para fora da pasta"),
    "link_folder": Text("a link to a folder (not walked)", "um link para uma pasta (não percorrida)"),
    "readme": Text("a README (not a document)", "um README (não é documento)"),
    "hidden": Text("hidden", "oculto"),
    "collection": Text("a user's uploaded collection (opened by its owner only)",
                       "a coleção enviada por um usuário (aberta só pelo dono)"),
}


@dataclass(frozen=True)
class Skipped:
    """A file that was not read: its path relative to the corpus, why (a :data:`SKIP_REASONS` code) and the
    detail in one line."""

    path: str
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason, "detail": self.detail}


@dataclass
class FormatCount:
    """What one format gave: files read, documents, pages (paged formats), chunks (once chunked)."""

    files: int = 0
    documents: int = 0
    pages: int = 0
    chunks: int = 0


@dataclass
class IntakeReport:
    """What reading a corpus did: files read per format, documents, chunks, pages, and each file skipped with
    its reason; ``warnings``: one line each about a value dropped or an encoding guessed."""

    source: str
    formats: dict[str, FormatCount] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The format of each document id (a JSONL corpus: all ``jsonl``), so chunks are counted per format.
    doc_format: dict[str, str] = field(default_factory=dict)

    #: Where the report was written beside the index (``""``: not written).
    written_to: str = ""
    #: The file of each document id read from a folder (its path relative to the folder) and its page count.
    doc_file: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: Which state of the source was read (a collection's manifest generation; ``""``: not tracked).
    version: str = ""

    def read(self, name: str, doc_id: str, pages: int = 0, path: str = "") -> None:
        count = self.formats.setdefault(name, FormatCount())
        count.files += 1
        count.documents += 1
        count.pages += pages
        self.doc_format[doc_id] = name
        if path:
            self.doc_file[doc_id] = (path, pages)

    def unread(self, doc_id: str, reason: str, detail: str) -> None:
        """A document read from a file but refused afterwards (an id too long…): its file moves to the skipped."""
        name = self.doc_format.pop(doc_id, None)
        path, pages = self.doc_file.pop(doc_id, (doc_id, 0))
        if name is not None:
            count = self.formats[name]
            count.files -= 1
            count.documents -= 1
            count.pages -= pages
            if not count.files:
                del self.formats[name]
        self.skipped.append(Skipped(path, reason, detail))

    def skipped_line(self, lang: str = "en") -> str:
        """``skipped 3: format not read: 2, no text: 1`` (``""`` when nothing was skipped)."""
        if not self.skipped:
            return ""
        by_reason = ", ".join(f"{SKIP_REASONS[r](lang) if r in SKIP_REASONS else r}: {n}"
                              for r, n in sorted(self.skipped_by_reason().items()))
        return f"{'puladas' if lang == 'pt' else 'skipped'} {len(self.skipped)}: {by_reason}"

    def count_chunks(self, chunks: Iterable[Any]) -> "IntakeReport":
        """Fill each format's chunk count from the chunks (their ``parent_id``); returns the report."""
        for count in self.formats.values():
            count.chunks = 0
        for chunk in chunks:
            name = self.doc_format.get(chunk.parent_id)
            if name is not None:
                self.formats[name].chunks += 1
        return self

    @property
    def totals(self) -> FormatCount:
        out = FormatCount()
        for c in self.formats.values():
            out.files += c.files
            out.documents += c.documents
            out.pages += c.pages
            out.chunks += c.chunks
        return out

    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped))

    def to_dict(self) -> dict[str, Any]:
        total = self.totals
        return {
            "source": self.source,
            "formats": {name: vars(c).copy() for name, c in self.formats.items()},
            "totals": vars(total).copy(),
            "skipped_by_reason": self.skipped_by_reason(),
            "skipped": [s.to_dict() for s in self.skipped],
            "warnings": list(self.warnings),
        }

    def table(self, lang: str = "en", shown: int = 10) -> str:
        """The report as plain text for a terminal: a row per format (files, documents, pages, chunks), the
        total, the skipped files per reason and the first ``shown`` of them by name, the first warnings."""
        pt = lang == "pt"
        head = ("formato", "arquivos", "documentos", "páginas", "chunks") if pt else \
            ("format", "files", "documents", "pages", "chunks")
        rows = [(name, c.files, c.documents, c.pages, c.chunks) for name, c in sorted(self.formats.items())]
        total = self.totals
        rows.append(("total", total.files, total.documents, total.pages, total.chunks))
        widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(5)]
        fmt = "  ".join(f"{{:<{widths[0]}}}" if i == 0 else f"{{:>{widths[i]}}}" for i in range(5))
        lines = [fmt.format(*head), *(fmt.format(*r) for r in rows)]
        if self.skipped:
            lines.append(self.skipped_line(lang))
            for s in self.skipped[:shown]:
                why = SKIP_REASONS[s.reason](lang) if s.reason in SKIP_REASONS else s.reason
                lines.append(f"  {s.path}: {why}" + (f" ({s.detail})" if s.detail else ""))
            if len(self.skipped) > shown:
                lines.append(f"  … {len(self.skipped) - shown} {'mais' if pt else 'more'}")
        else:
            lines.append("nenhum arquivo pulado" if pt else "no file skipped")
        if self.warnings:
            lines.append(f"{'avisos' if pt else 'warnings'}: {len(self.warnings)}")
            lines.extend(f"  {w}" for w in self.warnings[:shown])
            if len(self.warnings) > shown:
                lines.append(f"  … {len(self.warnings) - shown} {'mais' if pt else 'more'}")
        return "\n".join(lines)


@dataclass(frozen=True)
class _Found:
    relative: PurePosixPath
    real: str  # the file to open: itself, or a link's target inside the folder
    link: bool
    size: int
    root: str = ""  # the folder's real path: the file is opened from it, one component at a time


#: The Unicode categories of characters no name may show raw: controls, invisible format characters, line and
#: paragraph separators, lone surrogates (an undecodable byte).
INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def escape_name(relative: PurePosixPath | str) -> str:
    """A path as the report names it: every control, format, separator or undecodable character (a newline, an
    escape sequence, a byte that is not UTF-8) written as an escape (``\\x0a``), so a file's name can neither forge a
    line of ``index``'s output nor stop the report from being written as JSON."""
    out = []
    for ch in str(relative):
        if unicodedata.category(ch) in INVISIBLE:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


#: The file that makes a folder a user's uploaded collection (:mod:`.collection`).
COLLECTION_MANIFEST = ".collection.json"


def _holds_manifest(name: str, dirfd: int) -> bool:
    """Whether the folder ``name`` (in the folder open as ``dirfd``) is an uploaded collection."""
    try:
        os.stat(f"{name}/{COLLECTION_MANIFEST}", dir_fd=dirfd, follow_symlinks=False)
        return True
    except OSError:
        return False


def _walk(root: Path, report: IntakeReport) -> list[_Found]:
    """The folder's files in path order; links out of it, links to folders, hidden entries and READMEs are
    recorded as skipped."""
    real_root = os.path.realpath(root)
    found: list[_Found] = []
    for dirpath, dirnames, filenames, dirfd in os.fwalk(real_root, follow_symlinks=False):
        here = PurePosixPath(Path(os.path.relpath(dirpath, real_root)).as_posix())
        walked = []
        for name in sorted(dirnames):
            relative = (here / name) if str(here) != "." else PurePosixPath(name)
            shown = escape_name(relative.as_posix()) + "/"
            if name.startswith("."):
                report.skipped.append(Skipped(shown, "hidden"))
            elif _holds_manifest(name, dirfd):  # another user's uploads are never part of a folder corpus
                report.skipped.append(Skipped(shown, "collection"))
            elif os.path.islink(os.path.join(dirpath, name)):  # listed as a folder, never walked
                target = os.path.realpath(os.path.join(dirpath, name))
                report.skipped.append(Skipped(shown, "link_folder") if _within(target, real_root) else
                                      Skipped(shown, "link_outside", "leads to a folder outside the folder"))
            else:
                walked.append(name)
        dirnames[:] = walked
        for name in sorted(filenames):
            relative = (here / name) if str(here) != "." else PurePosixPath(name)
            shown = escape_name(relative.as_posix())
            if name.startswith("."):
                report.skipped.append(Skipped(shown, "hidden"))
                continue
            try:
                info = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError as exc:
                report.skipped.append(Skipped(shown, "unreadable", exc.strerror or str(exc)))
                continue
            if stat.S_ISLNK(info.st_mode):
                target = os.path.realpath(os.path.join(dirpath, name))
                if not _within(target, real_root):
                    report.skipped.append(Skipped(shown, "link_outside", "leads to a file outside the folder"))
                    continue
                if os.path.isdir(target):
                    report.skipped.append(Skipped(shown, "link_folder"))
                    continue
                try:
                    info = os.stat(target)
                except OSError as exc:
                    report.skipped.append(Skipped(shown, "unreadable", exc.strerror or str(exc)))
                    continue
                found.append(_Found(relative, target, True, info.st_size, real_root))
                continue
            if not stat.S_ISREG(info.st_mode):
                report.skipped.append(Skipped(shown, "unreadable", "not a regular file (a FIFO, a socket, a device)"))
                continue
            found.append(_Found(relative, os.path.join(dirpath, name), False, info.st_size, real_root))
    return found


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0) | safeio.NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | safeio.NOFOLLOW


def _read_bytes(item: _Found) -> bytes:
    """The file's bytes, opened from the folder's own descriptor one component at a time with ``O_NOFOLLOW`` (a
    link's target, checked to stay inside the folder, by its real path below it): a folder or file swapped for a
    link after the walk fails the open instead of leading out of the folder; ``O_NONBLOCK``, so a file swapped
    for a FIFO is refused by its ``fstat`` instead of blocking the read.

    Raises:
        OSError: a component is a link or missing now; PathRefused: not a regular file, or over the size limit.
    """
    parts = os.path.relpath(item.real, item.root).split(os.sep)
    if parts[0] in ("", ".", "..") or os.path.isabs(parts[0]):
        raise OSError(f"{item.relative}: outside the folder")
    fd = safeio.open_dir(item.root)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
        file_fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        return safeio.read_fd(file_fd, str(item.relative), MAX_FILE_BYTES)
    finally:
        os.close(file_fd)


def folders_of(relative: PurePosixPath) -> tuple[str, ...]:
    """``leis/2024/lei.html`` → ``("leis", "leis/2024")``; a file at the top → ``(".",)``."""
    parents = [p.as_posix() for p in reversed(relative.parents) if p.as_posix() != "."]
    return tuple(parents) or (".",)


def folder_documents(root: Path) -> tuple[list[tuple[str, Document]], IntakeReport]:
    """The files under ``root`` read as documents (each ``(where, document)``), and the report of what was read
    and skipped (module docstring). A file that cannot be read is skipped with its reason, never refusing the
    folder; a value of a file's metadata that cannot be kept is dropped with a warning.
    """
    report = IntakeReport(str(root))
    found = _walk(root, report)
    chosen: list[tuple[_Found, Format]] = []
    for item in found:
        shown = escape_name(item.relative.as_posix())
        if item.relative.name.lower() == "readme.md":
            report.skipped.append(Skipped(shown, "readme"))
            continue
        fmt = format_for(Path(item.relative.name))
        if fmt is None:
            suffix = item.relative.suffix.lower() or "(no extension)"
            report.skipped.append(Skipped(shown, "format", f"{suffix} is not a format the workbench reads"))
            continue
        limit = min(MAX_FILE_BYTES, fmt.max_bytes or MAX_FILE_BYTES)
        if item.size > limit:
            report.skipped.append(Skipped(shown, "too_large", f"{item.size / 2**20:,.1f} MB; the limit for "
                                                              f"{fmt.label('en')} is {limit // 2**20} MB"))
            continue
        chosen.append((item, fmt))
    stems = Counter(item.relative.with_suffix("").as_posix() for item, _ in chosen)
    out: list[tuple[str, Document]] = []
    for item, fmt in chosen:
        shown = escape_name(item.relative.as_posix())
        stem = item.relative.with_suffix("").as_posix()
        doc_id = stem if stems[stem] == 1 else shown
        got = _read_one(item, fmt, root, report)
        if got is None:
            continue
        meta = {**got.metadata, FORMAT_KEY: fmt.name, FOLDER_KEY: folders_of(item.relative)}
        title = got.title.strip() or item.relative.stem
        out.append((str(root / shown), Document(doc_id, title, got.text, meta, got.markup)))
        report.read(fmt.name, doc_id, got.pages, shown)
    return out, report


def _read_one(item: _Found, fmt: Format, root: Path, report: IntakeReport) -> Read | None:
    shown = escape_name(item.relative.as_posix())
    try:
        data = _read_bytes(item)
    except Exception as exc:  # gone, swapped for a link or a FIFO, grown past the limit: this file only
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        report.skipped.append(Skipped(shown, "unreadable", (detail.splitlines() or [exc.__class__.__name__])[0]))
        return None
    if not sniffs(fmt, data):
        report.skipped.append(Skipped(shown, "unreadable", f"its bytes are not {fmt.label('en')}"))
        return None
    try:
        got = fmt.read(data, Path(shown))  # the path as the report names it
    except Unreadable as exc:
        report.skipped.append(Skipped(shown, exc.reason, str(exc)))
        return None
    except Exception as exc:  # a reader's library failing on one broken file never stops the folder
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        report.skipped.append(Skipped(shown, "unreadable", f"{exc.__class__.__name__}: {first}".rstrip(": ")))
        return None
    report.warnings.extend(w if w.startswith(shown) else f"{shown}: {w}" for w in got.warnings)  # each names its file
    return got


def format_names() -> Mapping[str, str]:
    """Each declared format's name → its extensions, for the docs and the app's help."""
    return {f.name: ", ".join(f.extensions) for f in FORMATS}
