"""Relevance judgments made by hand on one question's pooled candidates, stored in the project's formats.

* The pool of a trace is every parent document that any of its lists (BM25, dense, fused, reranked, final)
  returned — not only the final top_k — ordered by the best rank any list gave it.
* Grades are 0-3 (0 = judged not relevant); a parent without a grade is *not judged*.
* A question-set file (JSONL, DESIGN.md "Data contracts") keeps the question's ``graded`` (every judged
  parent, zeros included) and ``relevant`` (grade > 0, as in TREC qrels); a question not in the file yet
  is appended with a new id. A TREC qrels file keeps one ``qid 0 docno grade`` line per judgment.
* Writing never loses a grade:

  - one writer at a time: :func:`save` holds an exclusive lock (``fcntl.flock`` on a sidecar
    ``<file>.lock`` beside the file, left in place) across read-merge-write, so it re-reads the file under
    the lock and keeps what another process or app session wrote meanwhile; a writer that cannot get the
    lock within :data:`LOCK_TIMEOUT_S` raises :class:`~retrieval.core.errors.CorpusError` and writes nothing;
  - the other questions' lines are copied byte for byte (CRLF endings and blank lines included, and a
    qrels file's ``#`` comment lines); only this question's record is replaced (a CRLF record stays CRLF);
  - the write is atomic: a temporary file in the same folder, given the existing file's permission bits
    (a new file gets the umask default), then :func:`os.replace`; a symlinked file is written through —
    its target is replaced and the link stays; a failure before the replace leaves the original intact.
* What a format cannot carry is handled at save, before anything is written: in JSONL every line separator
  a reader may split on (U+0085, U+2028, U+2029, other control characters) and lone surrogates are written
  as ``\\uXXXX`` escapes, so each record is one line for every reader and reads back unchanged; a qrels
  qid or docno holding whitespace or a control character (or starting with ``#``, a comment there) is
  refused with :class:`~retrieval.core.errors.InvalidId`, one line naming the id.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
import time
import unicodedata
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

try:
    import fcntl
except ImportError:  # Windows: saves are not locked there
    fcntl = None  # type: ignore[assignment]

from ..core import safeio
from ..core.errors import CorpusError, InvalidId, PathRefused
from ..core.inputs import check_json_depth, check_regular_file
from ..ingest.location import location

GRADES = (0, 1, 2, 3)
POOLED_LISTS = ("lexical", "dense", "fused", "reranked", "final")
#: How long a save waits for another writer of the same file before it gives up (nothing written).
LOCK_TIMEOUT_S = 10.0


def pool(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pooled parents of a trace: ``[{parent_id, chunk_ids, best_rank, lists: {list: rank}, where}]``,
    sorted by best rank then id. ``lists`` holds the best rank of the parent's chunks in each list; ``where`` the
    place in its source of its first chunk (the one a judge reads: :func:`retrieval.ingest.location.location` of
    its trace item, ``{}`` where it has none)."""
    found: dict[str, dict[str, Any]] = {}
    for name in POOLED_LISTS:
        items = trace.get("final") if name == "final" else (trace.get(name) or {}).get("items")
        for item in items or []:
            entry = found.setdefault(item["parent_id"], {"parent_id": item["parent_id"], "chunk_ids": [],
                                                         "best_rank": item["rank"], "lists": {},
                                                         "where": location(item)})
            if item["chunk_id"] not in entry["chunk_ids"]:
                entry["chunk_ids"].append(item["chunk_id"])
            entry["best_rank"] = min(entry["best_rank"], item["rank"])
            entry["lists"][name] = min(entry["lists"].get(name, item["rank"]), item["rank"])
    return sorted(found.values(), key=lambda e: (e["best_rank"], e["parent_id"]))


def counter(pooled: Iterable[Mapping[str, Any]], grades: Mapping[str, int]) -> tuple[int, int]:
    """``(judged, pooled)``: how many pooled parents have a grade."""
    ids = [p["parent_id"] for p in pooled]
    return sum(1 for i in ids if i in grades), len(ids)


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def _same_filters(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    norm = (lambda f: {str(k): sorted(map(str, v)) if isinstance(v, (list, tuple)) else [str(v)]
                       for k, v in (f or {}).items()})
    return norm(a) == norm(b)


def question_id(question: str, filters: Mapping[str, Any] | None = None) -> str:
    """A stable id for a question not in the file yet: ``judged-`` + 10 hex digits of its text and filters."""
    key = json.dumps([_nfc(question), sorted((str(k), str(v)) for k, v in (filters or {}).items())],
                     ensure_ascii=False)
    return "judged-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _check(grades: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for doc, grade in grades.items():
        if isinstance(grade, bool) or int(grade) not in GRADES or int(grade) != grade:
            raise ValueError(f"grade of {doc} must be one of 0, 1, 2, 3 (got {grade!r})")
        out[str(doc)] = int(grade)
    return out


# -- safe writing ----------------------------------------------------------------------------------------------
#: Characters a JSON string may hold raw that some readers take for a line break (str.splitlines: U+0085,
#: U+2028, U+2029; C0/C1 controls), plus lone surrogates (not encodable as UTF-8). json.dumps escapes C0
#: already; these are escaped the same way so a record is one line for every reader.
_JSON_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _json_line(rec: Mapping[str, Any]) -> str:
    text = json.dumps(rec, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def trec_field_problem(value: str) -> str | None:
    """Why ``value`` cannot be one whitespace-separated field of a TREC qrels or run line, or ``None``:
    empty, or holding whitespace (any Unicode space or line separator) or a control character."""
    if not value:
        return "is empty"
    for ch in value:
        kind = unicodedata.category(ch)
        if ch.isspace() or kind in {"Cc", "Cs"}:
            name = unicodedata.name(ch, "") or ("a lone surrogate" if kind == "Cs" else "a control character")
            return f"holds U+{ord(ch):04X} ({name})"
    return None


def _target(path: Path) -> Path:
    """The file a write must replace: a symlink's final target (the link itself stays).

    Raises:
        PathRefused: the path changed while it was resolved (a link swapped for a folder between two looks).
    """
    try:
        return Path(os.path.realpath(path))
    except OSError as exc:
        raise PathRefused(f"refused: {str(path)!r} changed while it was resolved ({exc.strerror})") from None


def _orphans(dir_fd: int, name: str) -> list[str]:
    """The temporary files of interrupted saves of ``name`` in the folder ``dir_fd`` (``.<name>.<hex>.tmp``)."""
    pattern = re.compile(rf"\.{re.escape(name)}\.[0-9a-f]{{12}}\.tmp")
    try:
        return [entry for entry in os.listdir(dir_fd) if pattern.fullmatch(entry)]
    except OSError:
        return []


@contextmanager
def _locked(target: Path) -> Iterator[int]:
    """Exclusive ``flock`` on ``<target>.lock`` (created beside the file and left there) while the body runs;
    yields a descriptor of the file's folder, opened without following a symlink swapped in after the path
    was checked (:func:`retrieval.core.safeio.open_dir`), which every read and write of the save goes through.
    Separate opens conflict, so two sessions of one process exclude each other as two processes do. Under the
    lock no other save is writing, so the temporary files an interrupted save left are removed."""
    try:
        dir_fd = safeio.open_dir(target.parent, write=True, create=True)
    except OSError as exc:
        raise CorpusError(f"{target}: cannot open its folder ({exc.strerror or exc}); nothing written") from None
    try:
        fd = safeio.open_at(dir_fd, target.name + ".lock", os.O_RDWR | os.O_CREAT, 0o666, shown=str(target))
        try:
            if fcntl is not None:
                deadline = time.monotonic() + LOCK_TIMEOUT_S
                pause = 0.002
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() >= deadline:
                            raise CorpusError(f"{target}: another writer has held the file for {LOCK_TIMEOUT_S:g} "
                                              "s; nothing written, try again") from None
                        time.sleep(pause)
                        pause = min(pause * 2, 0.05)
                for orphan in _orphans(dir_fd, target.name):
                    try:
                        os.unlink(orphan, dir_fd=dir_fd)
                    except OSError:
                        pass
            yield dir_fd
        finally:
            os.close(fd)  # releases the lock
    finally:
        os.close(dir_fd)


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 text (byte {exc.start}); nothing written") from exc


def _read(path: Path) -> str:
    """The file's text exactly as stored (no newline translation); ``""`` when it does not exist. A path that
    exists but is not a regular file (a folder, a FIFO, a device) is refused before it is opened; it is opened
    without following a symlink swapped in after its check (:func:`retrieval.core.safeio.read_bytes`)."""
    if os.path.exists(path):
        check_regular_file(path)
    try:
        data = safeio.read_bytes(path)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.strerror or exc}); nothing written") from exc
    return _decode(data, path)


def _read_at(dir_fd: int, target: Path) -> str:
    """:func:`_read` of ``target`` in its folder's descriptor (``O_NOFOLLOW``)."""
    if os.path.exists(target):
        check_regular_file(target)
    try:
        fd = safeio.open_at(dir_fd, target.name, os.O_RDONLY, shown=str(target))
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise CorpusError(f"{target}: cannot read ({exc.strerror or exc}); nothing written") from exc
    try:
        return _decode(safeio.read_fd(fd, target), target)
    finally:
        os.close(fd)


def _split(text: str) -> list[str]:
    """Lines split at ``\\n`` only, each keeping a ``\\r`` it ends with (a CRLF line is kept as it is)."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _atomic_write(dir_fd: int, target: Path, text: str) -> None:
    """Replace ``target`` (already symlink-resolved) in its folder's descriptor ``dir_fd`` with ``text``: a
    temporary file in the same folder with the existing file's permission bits (a new file: 0666 less the
    umask), fsynced, then renamed over it within the folder (``renameat``), and the folder fsynced. Nothing is
    opened by path, so a folder swapped for a symlink after the check is never written through. On any failure
    before the rename the temporary file is removed and the original is untouched."""
    name = target.name
    try:
        old = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    if old is not None and not os.access(name, os.W_OK, dir_fd=dir_fd):
        raise CorpusError(f"{target}: the file is read-only (mode {stat.S_IMODE(old.st_mode):04o}); nothing written")
    data = text.encode("utf-8")
    while True:
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:  # O_CREAT with 0666: the kernel applies the umask (mkstemp would give 0600)
            fd = safeio.open_at(dir_fd, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                                0o666, shown=str(target))
            break
        except FileExistsError:
            continue
    try:
        try:
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if hasattr(os, "fchown") and os.fstat(fd).st_gid != old.st_gid:
                    try:
                        os.fchown(fd, -1, old.st_gid)
                    except OSError:
                        pass
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        os.fsync(dir_fd)
    except OSError:
        pass


def fmt_of(path: str | Path) -> str:
    """``qrels`` for ``*.qrels`` / ``*.txt`` / ``*.tsv`` files, else ``jsonl`` (a question set)."""
    return "qrels" if Path(path).suffix.lower() in {".qrels", ".txt", ".tsv"} else "jsonl"


# -- question-set JSONL ------------------------------------------------------------------------------------
def _jsonl_lines(path: Path, text: str | None = None) -> list[tuple[str, dict[str, Any] | None]]:
    """``(line as stored, record or None)`` per line; JSON Lines are split at ``\\n`` only, as the evaluation
    reads them (str.splitlines would also cut at U+0085, U+2028 and other separators a JSON string may hold)."""
    out = []
    for number, line in enumerate(_split(_read(path) if text is None else text), start=1):
        if not line.strip():
            out.append((line, None))
            continue
        check_json_depth(line, path, number)
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{number}: not JSON ({exc.msg}); nothing written") from exc
        out.append((line, rec if isinstance(rec, dict) else None))
    return out


def _find(lines: list[tuple[str, dict[str, Any] | None]], question: str, filters: Mapping[str, Any] | None,
          qid: str | None) -> int | None:
    for i, (_, rec) in enumerate(lines):
        if rec is None:
            continue
        if qid is not None and str(rec.get("id")) == qid:
            return i
    for i, (_, rec) in enumerate(lines):
        if rec is None or not isinstance(rec.get("question"), str):
            continue
        if _nfc(rec["question"]) == _nfc(question) and _same_filters(rec.get("filters"), filters):
            return i
    return None


def load(path: str | Path, question: str, filters: Mapping[str, Any] | None = None,
         qid: str | None = None) -> dict[str, int]:
    """The grades stored for one question (by id, else by text and filters); ``{}`` when none.

    In a question set, ``relevant`` parents without a ``graded`` entry count as grade 1 (as the evaluation
    reads them). Raises :class:`~retrieval.core.errors.CorpusError` on an unreadable file. Reading takes no lock:
    every save replaces the file atomically, so a reader sees the file before or after it, never half.
    """
    path = Path(path)
    if fmt_of(path) == "qrels":
        wanted = qid or question_id(question, filters)
        return {row[1]: row[2] for _, row in _qrels_lines(path) if row is not None and row[0] == wanted}
    lines = _jsonl_lines(path)
    at = _find(lines, question, filters, qid)
    if at is None:
        return {}
    rec = lines[at][1] or {}
    grades = {str(k): int(v) for k, v in (rec.get("graded") or {}).items()}
    for doc in rec.get("relevant") or []:
        grades.setdefault(str(doc), 1)
    return grades


def save(path: str | Path, question: str, grades: Mapping[str, int], filters: Mapping[str, Any] | None = None,
         qid: str | None = None, group: str = "judged") -> str:
    """Store ``grades`` (parent → 0-3) as the full judgment set of one question; returns its id.

    Parents absent from ``grades`` are not judged (a grade removed in the app is removed from the file).
    Under an exclusive lock the file is re-read, this question's record (or qrels lines) replaced, every
    other line kept byte for byte, and the result written atomically (mode and symlink kept); see the
    module docstring.

    Raises:
        ValueError: a grade outside 0-3.
        InvalidId: (qrels) a qid or docno the format cannot carry (whitespace, a control character, a
            leading ``#``); a ``ValueError`` too. Nothing is written.
        CorpusError: the existing file cannot be read or parsed, is read-only, or another writer held it
            for :data:`LOCK_TIMEOUT_S` (nothing is written).
    """
    grades = _check(grades)
    path = Path(path)
    if fmt_of(path) == "qrels":
        return _save_qrels(path, qid or question_id(question, filters), grades)
    target = _target(path)
    with _locked(target) as folder:
        lines = _jsonl_lines(path, _read_at(folder, target))
        at = _find(lines, question, filters, qid)
        records = [line for line, rec in lines if rec is not None]
        if at is None:
            used = {str(rec.get("id")) for _, rec in lines if rec}
            rec = {"id": qid if qid and qid not in used else question_id(question, filters), "question": question,
                   "group": group, "relevant": [], "filters": dict(filters or {})}
            lines.append(("\r" if records and records[-1].endswith("\r") else "", rec))
            at = len(lines) - 1
        rec = dict(lines[at][1] or {})
        rec["graded"] = dict(sorted(grades.items()))
        rec["relevant"] = sorted(d for d, g in grades.items() if g > 0)
        lines[at] = (_json_line(rec) + ("\r" if lines[at][0].endswith("\r") else ""), rec)
        _atomic_write(folder, target, "".join(line + "\n" for line, _ in lines))
    return str(rec["id"])


# -- TREC qrels --------------------------------------------------------------------------------------------
def _qrels_lines(path: Path, text: str | None = None) -> list[tuple[str, tuple[str, str, int] | None]]:
    """``(line as stored, (qid, docno, grade) or None)`` per line; blank and ``#`` comment lines have no row
    (the evaluation skips them too)."""
    out: list[tuple[str, tuple[str, str, int] | None]] = []
    for number, raw in enumerate(_split(_read(path) if text is None else text), start=1):
        line = raw.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            out.append((raw, None))
            continue
        if len(line.splitlines()) > 1:
            raise CorpusError(f"{path}:{number}: a line separator inside a qrels line; nothing written")
        parts = line.split()
        if len(parts) != 4:
            raise CorpusError(f"{path}:{number}: a qrels line is 'qid 0 docno relevance'; nothing written")
        try:
            out.append((raw, (parts[0], parts[2], int(parts[3]))))
        except ValueError as exc:
            raise CorpusError(f"{path}:{number}: relevance must be an integer; nothing written") from exc
    return out


def _qrels_field(path: Path, what: str, value: str) -> None:
    problem = trec_field_problem(value)
    if problem is None and what == "qid" and value.startswith("#"):
        problem = "starts with '#' (a comment line in qrels)"
    if problem is not None:
        raise InvalidId(f"{path}: the {what} {value!r} {problem}, which a qrels line "
                        "('qid 0 docno relevance', whitespace-separated) cannot carry; nothing written")


def _save_qrels(path: Path, qid: str, grades: Mapping[str, int]) -> str:
    _qrels_field(path, "qid", qid)
    for doc in sorted(grades):
        _qrels_field(path, "docno", doc)
    target = _target(path)
    with _locked(target) as folder:
        lines = _qrels_lines(path, _read_at(folder, target))
        kept = [raw for raw, row in lines if row is None or row[0] != qid]
        rows = [raw for raw, row in lines if row is not None]
        cr = "\r" if rows and rows[-1].endswith("\r") else ""
        new = [f"{qid} 0 {doc} {grade}{cr}" for doc, grade in sorted(grades.items())]
        _atomic_write(folder, target, "".join(line + "\n" for line in kept + new))
    return qid
