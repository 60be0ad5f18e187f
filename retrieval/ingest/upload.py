"""What an upload may bring into a user's collection: each file checked by its name, its size, its declared
format and its bytes, and a ``.zip`` opened member by member, before anything is written.

Nothing here touches the disk: :func:`accept` turns ``(name, bytes)`` as a browser sent them into the files the
collection may keep (:class:`Incoming`) and one :class:`Refusal` per file it may not, each naming the file and
its reason in the page's language (:data:`REFUSALS`). The accepted extensions are the declared formats'
(:data:`.formats.FORMATS`) and ``.zip``: never a second list.

A name is the client's: it is refused, not repaired, when it holds a path (``/``, ``\\``, ``..``), a control
character, or more than :data:`MAX_NAME_CHARS` characters; the collection stores the file under a name of its
own (:mod:`.collection`). A ``.zip`` is refused member by member: a path leaving its folder (zip slip), a link, an
archive inside it, a member over the size limit or expanding past :data:`~.archive.MAX_RATIO` times its
compressed size, and the whole archive when its members together expand past what the collection may still hold
(a ZIP bomb is refused from its directory before a byte is decompressed, and each read is bounded as well, in case
the directory lies).
"""

from __future__ import annotations

import io
import stat
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Mapping, Sequence

from ..core.kinds import Text
from .archive import bomb_ratio
from .folder import INVISIBLE, escape_name
from .formats import FORMATS, Format, format_for, one_line, sniffs

#: The longest file name an upload may carry (characters; most file systems stop at 255 bytes).
MAX_NAME_CHARS = 200
#: The archive an upload may bring a folder in.
ARCHIVE_EXTENSION = ".zip"
#: Extensions of archives and compressed files: never read inside a ``.zip`` (no nested archives).
NESTED_ARCHIVES = (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".zst", ".lz", ".lzma", ".cab",
                   ".jar", ".war", ".apk")
#: The most members a ``.zip`` may list (its directory is read before anything else).
MAX_MEMBERS = 10_000

#: Why a file of an upload was refused: code → its words in each language (``{…}`` filled by the refusal).
REFUSALS: dict[str, Text] = {
    "name_path": Text("its name holds a path (/, \\ or ..); upload the file itself",
                      "o nome contém um caminho (/, \\ ou ..); envie o próprio arquivo"),
    "name_control": Text("its name holds control characters", "o nome contém caracteres de controle"),
    "name_long": Text("its name has {n} characters (at most {max})", "o nome tem {n} caracteres (no máximo {max})"),
    "name_empty": Text("it has no name", "não tem nome"),
    "format": Text("{ext} is not a format the workbench reads (it reads {accepted})",
                   "{ext} não é um formato que o workbench lê (ele lê {accepted})"),
    "too_large": Text("{mb} MB, over the limit of {limit} MB per file", "{mb} MB, acima do limite de {limit} MB por arquivo"),
    "mismatch": Text("its bytes are not {label}, whatever its extension says",
                     "seus bytes não são {label}, diga o que disser a extensão"),
    "pages": Text("{pages} pages, over the limit of {limit} pages per PDF",
                  "{pages} páginas, acima do limite de {limit} páginas por PDF"),
    "unreadable": Text("could not be read ({detail})", "não pôde ser lido ({detail})"),
    "no_text": Text("has no text to index ({detail})", "não tem texto para indexar ({detail})"),
    "zip_bad": Text("not a readable ZIP archive ({detail})", "não é um arquivo ZIP legível ({detail})"),
    "zip_path": Text("a path leaving the archive's folder (zip slip)", "um caminho que sai da pasta do arquivo (zip slip)"),
    "zip_link": Text("a link inside the archive", "um link dentro do arquivo compactado"),
    "zip_nested": Text("an archive inside the archive", "um arquivo compactado dentro do arquivo compactado"),
    "zip_ratio": Text("expands to {ratio} times its compressed size (a ZIP bomb?)",
                      "expande para {ratio} vezes o seu tamanho compactado (uma bomba ZIP?)"),
    "zip_total": Text("its members expand to {mb} MB, more than your collection may still take ({left} MB)",
                      "seus arquivos expandem para {mb} MB, mais do que a sua coleção ainda comporta ({left} MB)"),
    "zip_members": Text("{n} members, more than {max}", "{n} arquivos, mais que {max}"),
    "zip_empty": Text("holds no file", "não contém nenhum arquivo"),
    "hidden": Text("a hidden file (not a document)", "um arquivo oculto (não é documento)"),
    "collection_files": Text("your collection already holds {n} documents, its limit",
                             "a sua coleção já tem {n} documentos, o seu limite"),
    "collection_bytes": Text("it would bring your collection to {mb} MB, over its limit of {limit} MB",
                             "levaria a sua coleção a {mb} MB, acima do limite de {limit} MB"),
    "duplicate": Text("already in your collection, as {title}", "já está na sua coleção, como {title}"),
    "failed": Text("was not indexed ({detail}); your collection is as it was",
                   "não foi indexado ({detail}); a sua coleção ficou como estava"),
}


@dataclass(frozen=True)
class Limits:
    """The bounds of one user's collection (the ``upload_*`` settings)."""

    file_bytes: int = 50 * 2**20
    files: int = 200
    collection_bytes: int = 500 * 2**20
    pdf_pages: int = 2000

    @classmethod
    def from_settings(cls, settings: Any) -> "Limits":
        return cls(int(settings.upload_max_file_mb * 2**20), int(settings.upload_max_files),
                   int(settings.upload_max_collection_mb * 2**20), int(settings.upload_max_pdf_pages))


@dataclass(frozen=True)
class Refusal:
    """One file not taken: the name as shown (escaped; a ``.zip``'s member as ``archive.zip › folder/file``), the
    reason's code (:data:`REFUSALS`) and the values its words name."""

    name: str
    code: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def reason(self, lang: str = "en") -> str:
        return REFUSALS[self.code](lang).format(**self.values)

    def line(self, lang: str = "en") -> str:
        """``scan.pdf: its bytes are not PDF, whatever its extension says`` in ``lang``."""
        return f"{self.name}: {self.reason(lang)}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "code": self.code, "reason": self.reason("en")}


@dataclass(frozen=True)
class Incoming:
    """A file the collection may keep: its name as the user knows it (the document's title), its format, its
    bytes, and where it came from inside a ``.zip`` (the archive's name and the member's folders)."""

    name: str
    fmt: Format
    data: bytes
    archive: str = ""
    folders: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        return shown_name(f"{self.archive} › {'/'.join((*self.folders, self.name))}" if self.archive else self.name)


def shown_name(name: str) -> str:
    """A name as a refusal shows it: every control, format or separator character written as an escape, and
    cut to :data:`MAX_NAME_CHARS` + 20 characters (a name of 300 characters is named, not printed whole)."""
    text = escape_name(name)
    limit = MAX_NAME_CHARS + 20
    return text if len(text) <= limit else text[:limit] + "…"


def accepted_extensions() -> tuple[str, ...]:
    """Every extension an upload accepts: the declared formats' and ``.zip``."""
    return tuple(dict.fromkeys(ext for f in FORMATS for ext in f.extensions)) + (ARCHIVE_EXTENSION,)


def _mb(size: int) -> str:
    return f"{size / 2**20:,.1f}"


def name_problem(raw: str) -> Refusal | None:
    """Why the client's file name ``raw`` cannot be taken, or ``None``: a path, a control character, too long,
    empty (module docstring)."""
    name = unicodedata.normalize("NFC", raw)
    shown = shown_name(name)
    if not name.strip():
        return Refusal(shown or "''", "name_empty")
    if any(unicodedata.category(ch) in INVISIBLE for ch in name):
        return Refusal(shown, "name_control")
    if "/" in name or "\\" in name or name.strip() in (".", "..") or ".." in PurePosixPath(name).parts:
        return Refusal(shown, "name_path")
    if len(name) > MAX_NAME_CHARS:
        return Refusal(shown, "name_long", {"n": len(name), "max": MAX_NAME_CHARS})
    return None


def check_file(incoming_name: str, data: bytes, limits: Limits, shown: str | None = None,
               archive: str = "", folders: tuple[str, ...] = ()) -> Incoming | Refusal:
    """One file (not an archive) checked: its format by extension, its size, its bytes by the format's sniff, a
    PDF's page count. ``shown`` names it in a refusal (default: its name)."""
    shown = shown or shown_name(incoming_name)
    suffix = PurePosixPath(incoming_name).suffix.lower()
    fmt = format_for(PurePosixPath(incoming_name))  # type: ignore[arg-type]
    if fmt is None:
        return Refusal(shown, "format", {"ext": suffix or "(no extension)",
                                         "accepted": ", ".join(accepted_extensions())})
    limit = min(limits.file_bytes, fmt.max_bytes or limits.file_bytes)
    if len(data) > limit:
        return Refusal(shown, "too_large", {"mb": _mb(len(data)), "limit": _mb(limit)})
    if not sniffs(fmt, data):
        return Refusal(shown, "mismatch", {"label": fmt.label("en")})
    if fmt.name == "pdf":
        pages = pdf_pages(data)
        if isinstance(pages, str):
            return Refusal(shown, "unreadable", {"detail": pages})
        if pages > limits.pdf_pages:
            return Refusal(shown, "pages", {"pages": f"{pages:,}", "limit": f"{limits.pdf_pages:,}"})
    return Incoming(unicodedata.normalize("NFC", incoming_name), fmt, data, archive, folders)


def pdf_pages(data: bytes) -> int | str:
    """A PDF's page count from its page tree (nothing of its text read), or why it cannot be counted."""
    try:
        import pypdf

        return len(pypdf.PdfReader(io.BytesIO(data)).pages)
    except Exception as exc:  # a damaged PDF: refused by name with pypdf's one line
        return one_line(exc) or exc.__class__.__name__


def accept(name: str, data: bytes, limits: Limits, room_bytes: int | None = None
           ) -> tuple[list[Incoming], list[Refusal]]:
    """The files an upload ``name`` with ``data`` brings (a ``.zip`` its members), and each refusal.

    Args:
        room_bytes: what the collection may still take (default: its whole limit); a ``.zip`` expanding past it is
            refused whole, before a member is read.
    """
    problem = name_problem(name)
    if problem is not None:
        return [], [problem]
    if PurePosixPath(name).suffix.lower() != ARCHIVE_EXTENSION:
        got = check_file(name, data, limits)
        return ([got], []) if isinstance(got, Incoming) else ([], [got])
    room = limits.collection_bytes if room_bytes is None else room_bytes
    return open_archive(unicodedata.normalize("NFC", name), data, limits, room)


def _is_link(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def _leaves(raw: str) -> bool:
    """A member path that leaves the archive's folder, or could on some system: absolute, a drive letter, a
    backslash, a ``..`` component."""
    return (raw.startswith(("/", "\\")) or "\\" in raw or (len(raw) > 1 and raw[1] == ":")
            or ".." in PurePosixPath(raw).parts)


def open_archive(name: str, data: bytes, limits: Limits, room: int) -> tuple[list[Incoming], list[Refusal]]:
    """A ``.zip``'s members as files to keep, and a refusal for each member (or the archive) that may not be
    (module docstring)."""
    shown = shown_name(name)
    if len(data) > limits.file_bytes:
        return [], [Refusal(shown, "too_large", {"mb": _mb(len(data)), "limit": _mb(limits.file_bytes)})]
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        return [], [Refusal(shown, "zip_bad", {"detail": one_line(exc) or exc.__class__.__name__})]
    if len(infos) > MAX_MEMBERS:
        return [], [Refusal(shown, "zip_members", {"n": f"{len(infos):,}", "max": f"{MAX_MEMBERS:,}"})]
    files = [i for i in infos if not i.is_dir()]
    expanded = sum(i.file_size for i in files)
    if expanded > room:
        return [], [Refusal(shown, "zip_total", {"mb": _mb(expanded), "left": _mb(max(room, 0))})]
    kept: list[Incoming] = []
    refused: list[Refusal] = []
    for info in files:
        raw = info.filename
        member_shown = f"{shown} › {shown_name(raw)}"
        if _leaves(raw):
            refused.append(Refusal(member_shown, "zip_path"))
            continue
        if _is_link(info):
            refused.append(Refusal(member_shown, "zip_link"))
            continue
        path = PurePosixPath(raw)
        problem = name_problem(path.name)
        if problem is not None:
            refused.append(Refusal(member_shown, problem.code, problem.values))
            continue
        if any(part.startswith(".") or part == "__MACOSX" for part in path.parts):
            refused.append(Refusal(member_shown, "hidden"))
            continue
        if path.suffix.lower() in NESTED_ARCHIVES:
            refused.append(Refusal(member_shown, "zip_nested"))
            continue
        if info.file_size > limits.file_bytes:
            refused.append(Refusal(member_shown, "too_large", {"mb": _mb(info.file_size),
                                                               "limit": _mb(limits.file_bytes)}))
            continue
        ratio = bomb_ratio(info)
        if ratio is not None:
            refused.append(Refusal(member_shown, "zip_ratio", {"ratio": f"{ratio:,}"}))
            continue
        try:
            with archive.open(info) as handle:  # bounded, whatever the directory said of the size
                body = handle.read(limits.file_bytes + 1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
            refused.append(Refusal(member_shown, "unreadable", {"detail": one_line(exc) or exc.__class__.__name__}))
            continue
        if len(body) > limits.file_bytes:
            refused.append(Refusal(member_shown, "too_large", {"mb": f"> {_mb(limits.file_bytes)}",
                                                               "limit": _mb(limits.file_bytes)}))
            continue
        got = check_file(path.name, body, limits, member_shown, name, tuple(path.parts[:-1]))
        (kept if isinstance(got, Incoming) else refused).append(got)  # type: ignore[arg-type]
    if not files:
        refused.append(Refusal(shown, "zip_empty"))
    return kept, refused


def refusal_lines(refusals: Sequence[Refusal], lang: str = "en") -> list[str]:
    """Each refusal in one line of ``lang``."""
    return [r.line(lang) for r in refusals]
