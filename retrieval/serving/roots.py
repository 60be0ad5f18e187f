"""The data roots: the only folders whose files the app reads as inputs and writes judgments to.

The app takes paths from its URL and its text boxes (a corpus, a question set, a qrels file, a judgments
file). Each passes :func:`confine` before anything opens it, so a link cannot make a shared server read,
index, show or append to a file elsewhere, nor say what exists outside the roots. The command line is not
confined: it reads and writes any path its user names.

The roots are ``RETRIEVAL_DATA_ROOTS`` (entries separated by :data:`os.pathsep`), or by default the project's
``data/``, ``judgments/`` and ``models/`` folders, ``../shared/data`` beside the project when it exists, and
``~/retrieval-data``.

Writes are narrower: the judgments file, the one file the app rewrites, must lie inside a **write root**
(``RETRIEVAL_WRITE_ROOTS``, by default the project's ``judgments/`` and ``~/retrieval-data``), so a link naming
``judgments=data/lab/questions.jsonl`` cannot make the app rewrite the lab set.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal, Sequence

from ..core.errors import PathRefused
from ..core.paths import PROJECT_ROOT
from ..settings import Settings

#: What a path must be: a regular file, a folder, or either.
Want = Literal["file", "folder", "either"]

#: The project folder judgments are saved to by default (kept by ``make clean``).
JUDGMENTS_DIR = PROJECT_ROOT / "judgments"
#: The Ask page's judgments file (a question-set JSONL) and Team judging's ratings file, when none is named.
DEFAULT_JUDGMENTS = JUDGMENTS_DIR / "judgments.jsonl"
DEFAULT_RATINGS = JUDGMENTS_DIR / "ratings.jsonl"

_NOUNS = {"file": "a file", "folder": "a folder", "either": "a file or folder"}
#: Which roots a refusal names: (the words, the variable that sets them).
Which = Literal["data", "write"]
_ROOT_NAMES = {"data": ("data roots", "RETRIEVAL_DATA_ROOTS"), "write": ("write roots", "RETRIEVAL_WRITE_ROOTS")}
_SHOWN_CHARS = 200


def default_roots() -> tuple[Path, ...]:
    """The roots when ``RETRIEVAL_DATA_ROOTS`` is empty.

    Returns:
        The project's ``data/``, ``judgments/`` and ``models/`` folders, ``../shared/data`` beside the project
        when it is a folder (the Evaluation page's FaQuAD), and ``~/retrieval-data``.
    """
    roots = [PROJECT_ROOT / "data", JUDGMENTS_DIR, PROJECT_ROOT / "models"]
    shared = PROJECT_ROOT.parent / "shared" / "data"
    if shared.is_dir():
        roots.append(shared)
    roots.append(Path(os.path.abspath(os.path.expanduser("~/retrieval-data"))))
    return tuple(roots)


#: What the project ships and the app reads whatever the data roots are: the lab corpus and set (the app's
#: default corpus) and the shipped models. Read roots of the app's process only (a path typed in the app is still
#: checked against the data roots alone).
SHIPPED_ROOTS = (PROJECT_ROOT / "data" / "lab", PROJECT_ROOT / "models")


def default_write_roots() -> tuple[Path, ...]:
    """The write roots when ``RETRIEVAL_WRITE_ROOTS`` is empty: the project's ``judgments/`` and
    ``~/retrieval-data`` (never ``data/`` nor ``models/``: the lab set and the shipped models stay as shipped)."""
    return (JUDGMENTS_DIR, Path(os.path.abspath(os.path.expanduser("~/retrieval-data"))))


def _configured(configured: str) -> tuple[Path, ...]:
    entries = [entry.strip() for entry in configured.split(os.pathsep) if entry.strip()]
    return tuple(dict.fromkeys(Path(os.path.abspath(PROJECT_ROOT / os.path.expanduser(entry))) for entry in entries))


def data_roots(settings: Settings | None = None) -> tuple[Path, ...]:
    """The data roots of ``settings`` (its ``data_roots``), absolute, or :func:`default_roots` when empty.

    Args:
        settings: the settings to read; ``None`` reads the defaults.

    Returns:
        The roots; a relative entry is taken relative to the project folder, ``~`` is expanded.
    """
    return _configured(settings.data_roots if settings is not None else "") or default_roots()


def write_roots(settings: Settings | None = None) -> tuple[Path, ...]:
    """The write roots of ``settings`` (its ``write_roots``), absolute, or :func:`default_write_roots` when empty.

    Args:
        settings: the settings to read; ``None`` reads the defaults.

    Returns:
        The roots; a relative entry is taken relative to the project folder, ``~`` is expanded.
    """
    return _configured(settings.write_roots if settings is not None else "") or default_write_roots()


def describe_roots(roots: Sequence[Path]) -> str:
    """The roots as one ``os.pathsep``-separated string (as ``RETRIEVAL_DATA_ROOTS`` would spell them)."""
    return os.pathsep.join(str(root) for root in roots) or "none"


def _within(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or lies under it (both absolute and normalized; no filesystem access)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _shown(raw: str) -> str:
    return repr(raw) if len(raw) <= _SHOWN_CHARS else repr(raw[:_SHOWN_CHARS]) + "…"


def _refusal(raw: str, roots: Sequence[Path], want: Want, for_writing: bool, which: Which = "data") -> PathRefused:
    what = ("a file, or a new file in an existing folder," if for_writing else _NOUNS[want])
    words, variable = _ROOT_NAMES[which]
    return PathRefused(f"refused: {_shown(raw)} is not {what} inside the {words} "
                       f"({variable}: {describe_roots(roots)})")


def _mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


def _folder_bytes(folder: str, limit: int, real_roots: Sequence[str], raw: str) -> int:
    """The bytes of the regular files under ``folder`` inside the roots (symlinked folders are not walked, as the
    corpus reader does not walk them), stopping once over ``limit``. An entry that is not a regular file inside the
    roots (a FIFO, a device, a link out of them) is not counted: the folder reader never opens it and names it
    among the files it skipped (:mod:`retrieval.ingest.folder`), so one such entry does not refuse the folder."""
    total = 0
    for current, _dirs, files in os.walk(folder, followlinks=False):
        for name in files:
            path = os.path.join(current, name)
            try:
                real = os.path.realpath(path)
                info = os.stat(real) if any(_within(real, root) for root in real_roots) else None
            except (OSError, ValueError):
                info = None
            if info is None or not stat.S_ISREG(info.st_mode):
                continue
            total += info.st_size
            if total > limit:
                return total
    return total


def confine(raw: str | os.PathLike[str], roots: Sequence[Path], *, want: Want = "either",
            for_writing: bool = False, max_bytes: int | None = None, which: Which = "data") -> Path:
    """The real path of ``raw`` when it is a file or folder inside ``roots``; else one refusal.

    The path is first checked lexically (``~`` expanded, made absolute, ``..`` folded): outside every root it
    is refused without touching the filesystem, so nothing outside the roots is ever probed. Then its symlinks
    are resolved and the real path is checked again (a link inside a root that points out is refused), and
    it must be a regular file or a folder as asked (a FIFO, a device such as ``/dev/zero`` or a socket is
    refused). Callers open the returned path, never ``raw``.

    Args:
        raw: the path as the user gave it (relative paths are relative to the working directory).
        roots: the data roots (:func:`data_roots`).
        want: ``"file"`` (a regular file), ``"folder"`` or ``"either"``.
        for_writing: the file may be missing, but its folder must exist inside a root (no folder is ever
            created); needs ``want="file"``.
        max_bytes: refuse a file larger than this, or a folder whose files hold more (``None``: no limit).
        which: the roots a refusal names: ``"data"`` (RETRIEVAL_DATA_ROOTS) or ``"write"`` (RETRIEVAL_WRITE_ROOTS).

    Returns:
        The resolved path (symlinks resolved), inside a root.

    Raises:
        PathRefused: one line, the same whether or not a refused path outside the roots exists; a size
            refusal (only ever of a path inside the roots) says the size and the limit.
        ValueError: ``for_writing`` with ``want`` other than ``"file"`` (a programming error).
    """
    if for_writing and want != "file":
        raise ValueError("for_writing needs want='file'")
    text = raw if isinstance(raw, str) else os.fspath(raw)
    refusal = _refusal(text, roots, want, for_writing, which)
    if not text.strip() or "\0" in text:
        raise refusal
    try:
        lexical = os.path.abspath(os.path.expanduser(text))
        lexical_roots = [os.path.abspath(root) for root in roots]
    except (OSError, ValueError):
        raise refusal from None
    if not any(_within(lexical, root) for root in lexical_roots):
        # Also accept a path spelled through a root's real location (a root that is itself a symlink).
        real_roots_lexical = [os.path.realpath(root) for root in lexical_roots]
        if not any(_within(lexical, root) for root in real_roots_lexical):
            raise refusal
    try:
        real = os.path.realpath(lexical)
        real_roots = [os.path.realpath(root) for root in lexical_roots]
    except (OSError, ValueError):
        raise refusal from None
    inside = [root for root in real_roots if _within(real, root)]
    if not inside:
        raise refusal
    try:
        info = os.stat(real)
    except FileNotFoundError:
        if for_writing:
            parent = os.path.dirname(real)
            try:
                parent_is_folder = stat.S_ISDIR(os.stat(parent).st_mode)
            except (OSError, ValueError):
                parent_is_folder = False
            if parent_is_folder and any(_within(parent, root) for root in inside) and parent != real:
                return Path(real)
        raise refusal from None
    except (OSError, ValueError):
        raise refusal from None
    is_file, is_folder = stat.S_ISREG(info.st_mode), stat.S_ISDIR(info.st_mode)
    if not (is_file and want in ("file", "either") or is_folder and want in ("folder", "either")):
        raise refusal
    if max_bytes is not None:
        if is_file and info.st_size > max_bytes:
            raise PathRefused(f"refused: {_shown(text)} is {_mib(info.st_size)}, over the app's input limit of "
                              f"{_mib(max_bytes)} (RETRIEVAL_MAX_INPUT_BYTES={max_bytes})")
        if is_folder and _folder_bytes(real, max_bytes, real_roots, text) > max_bytes:
            raise PathRefused(f"refused: the files under {_shown(text)} hold more than the app's input limit of "
                              f"{_mib(max_bytes)} (RETRIEVAL_MAX_INPUT_BYTES={max_bytes})")
    return Path(real)


#: The folder under the first write root that holds the users' uploaded collections when ``uploads_path`` is empty.
UPLOADS_DIR = "uploads"


def _uploads_path(settings: Settings) -> Path:
    """The uploads folder as configured (absolute, its links not resolved)."""
    configured = settings.uploads_path.strip()
    return Path(os.path.abspath(PROJECT_ROOT / os.path.expanduser(configured))) if configured else \
        write_roots(settings)[0] / UPLOADS_DIR


def uploads_root(settings: Settings) -> Path:
    """The folder the users' uploaded collections are kept in (:mod:`.uploads`): ``uploads_path``, or
    ``uploads/`` in the first write root; its real path.

    Raises:
        PathRefused: ``uploads_path`` lies outside the write roots (a setting that cannot take effect is refused).
    """
    roots = write_roots(settings)
    path = _uploads_path(settings)
    real = os.path.realpath(path)
    if not any(_within(real, os.path.realpath(root)) for root in roots):
        raise PathRefused(f"refused: the uploads folder {_shown(str(path))} (RETRIEVAL_UPLOADS_PATH) is not inside "
                          "the write roots (RETRIEVAL_WRITE_ROOTS)")
    return Path(real)


def _not_uploads(path: Path, raw: str, settings: Settings) -> Path:
    """``path`` unless it lies in the uploads folder: a collection is opened by its owner's identity from the page,
    never by a path (another user's would otherwise be one link away)."""
    try:
        uploads = [str(uploads_root(settings)), str(_uploads_path(settings))]
    except PathRefused:
        return path
    if any(_within(str(path), folder) for folder in uploads):
        raise PathRefused(f"refused: {_shown(raw)} is inside the uploaded collections' folder; your own documents "
                          "open from the sidebar's \"My documents\"")
    return path


def _not_uploads_lexically(raw: str | os.PathLike[str], settings: Settings) -> None:
    """Refuse ``raw`` spelled inside the uploads folder before anything looks it up: the same refusal whether or not
    it exists, so a typed path never tells whether a user has a collection or which files it holds (the check on
    the real path after :func:`confine` catches a link into the folder)."""
    text = os.fspath(raw)
    if not text.strip() or "\0" in text:
        return
    try:
        lexical = Path(os.path.abspath(os.path.expanduser(text)))
    except (OSError, ValueError):
        return
    _not_uploads(lexical, text, settings)


def confine_input(raw: str | os.PathLike[str], settings: Settings, *, want: Want = "either") -> Path:
    """:func:`confine` of a corpus, question set or qrels file the app will read, with the input size limit; a
    path inside the uploads folder (:func:`uploads_root`) is refused.

    Raises:
        PathRefused: outside the roots, not a regular file or folder as asked, over ``max_input_bytes``, or in
            the uploads folder.
    """
    _not_uploads_lexically(raw, settings)
    found = confine(raw, data_roots(settings), want=want, max_bytes=settings.max_input_bytes)
    return _not_uploads(found, os.fspath(raw), settings)


def confine_output(raw: str | os.PathLike[str], settings: Settings) -> Path:
    """:func:`confine` of a judgments file the app reads and rewrites (it may be missing; its folder may not),
    inside the **write** roots (:func:`write_roots`).

    Raises:
        PathRefused: outside the write roots, not a regular file in an existing folder, or over
            ``max_input_bytes``.
    """
    _not_uploads_lexically(raw, settings)
    found = confine(raw, write_roots(settings), want="file", for_writing=True, max_bytes=settings.max_input_bytes,
                    which="write")
    return _not_uploads(found, os.fspath(raw), settings)
