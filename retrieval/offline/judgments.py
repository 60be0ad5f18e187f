"""Relevance judgments made by hand on one question's pooled candidates, stored in the project's formats.

* The pool of a trace is every parent document that any of its lists (BM25, dense, fused, reranked, final)
  returned — not only the final top_k — ordered by the best rank any list gave it.
* Grades are 0-3 (0 = judged not relevant); a parent without a grade is *not judged*.
* A question-set file (JSONL, docs/contracts.md "A question set") keeps the question's ``graded`` (every judged
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

Whose judgment a record is (:class:`Key`): the question set it comes from (:func:`set_name` of its file, ``""``
for a question typed in the box), the question's id there (for a typed question, :func:`question_id` of its
text and filters) and its tenant (the written form of its tenant filter, ``""`` on a corpus without tenants).

* In a question-set file every record :func:`save` writes carries its key (``"_key": {"set", "id",
  "tenant"}``) and is found by that key alone: a record of another tenant, or of another set's question with
  the same id, never matches, is never shown and is never overwritten. The key is a note (``_key``: the
  evaluation ignores keys starting with ``_``), and a record's own ``id`` stays unique in the file (the
  question's id when free, else a ``judged-`` id of its key), so the file stays a question set.
* A record written before keys (no ``_key``) matches only a question whose text (NFC) and filters are the same
  (the filters hold the tenant, so another tenant's record never matches); never by its id alone. Saving it
  writes its key into it.
* A TREC qrels line holds no key, so a qrels file holds one question set's judgments for one tenant: the
  first save of a keyed question into a file with no judgment line records ``{"set", "tenant"}`` in a sidecar
  ``<file>.key.json`` (TREC tools never see it). Reading or saving another set's or tenant's question there,
  or a keyed question in a qrels file written before (lines, no sidecar), is refused with one line that names
  neither; a file with no sidecar keeps serving questions with no set and no tenant, by qid as before.
* With ``allowed`` (the user's tenants under an access policy), a key whose tenant is not among them is
  refused before the file is opened (a key with no tenant is one of a corpus without tenants, which every
  user of the deployment sees).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

try:
    import fcntl
except ImportError:  # Windows: saves are not locked there
    fcntl = None  # type: ignore[assignment]

from ..core import safeio
from ..core.errors import CorpusError, InvalidId, PathRefused
from ..core.inputs import check_json_depth, check_regular_file
from ..core.paths import PROJECT_ROOT
from ..core.tenants import may_open, written
from ..ingest.corpus import id_problem
from ..pipeline.view import Final, Item, TraceView

GRADES = (0, 1, 2, 3)
POOLED_LISTS = ("lexical", "dense", "fused", "reranked", "final")
#: How long a save waits for another writer of the same file before it gives up (nothing written).
LOCK_TIMEOUT_S = 10.0


def pool(trace: TraceView) -> list[dict[str, Any]]:
    """The pooled parents of a trace: ``[{parent_id, chunk_ids, best_rank, lists: {list: rank}, where}]``,
    sorted by best rank then id. ``lists`` holds the best rank of the parent's chunks in each list; ``where`` the
    place in its source of its first chunk (the one a judge reads: :func:`retrieval.ingest.location.location` of
    its trace item, ``{}`` where it has none)."""
    found: dict[str, dict[str, Any]] = {}
    for name in POOLED_LISTS:
        items: tuple[Item | Final, ...] = trace.final if name == "final" else trace.ranked(name).items
        for item in items:
            entry = found.setdefault(item.parent_id, {"parent_id": item.parent_id, "chunk_ids": [],
                                                      "best_rank": item.rank, "lists": {}, "where": dict(item.where)})
            if item.chunk_id not in entry["chunk_ids"]:
                entry["chunk_ids"].append(item.chunk_id)
            entry["best_rank"] = min(entry["best_rank"], item.rank)
            entry["lists"][name] = min(entry["lists"].get(name, item.rank), item.rank)
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


@dataclass(frozen=True)
class Key:
    """Whose judgment a record is: the question set (:func:`set_name`; ``""``: a question typed, no set), the
    question's id in it (a typed question's :func:`question_id`) and its tenant (written form; ``""``: a
    corpus without tenants). Two records match only when the three are equal."""

    question_set: str
    qid: str
    tenant: str

    def as_dict(self) -> dict[str, str]:
        return {"set": self.question_set, "id": self.qid, "tenant": self.tenant}

    @property
    def named(self) -> bool:
        """Whether the key names a set or a tenant (a qrels file then needs its sidecar)."""
        return bool(self.question_set or self.tenant)


def key_of(question: str, filters: Mapping[str, Any] | None = None, qid: str | None = None,
           question_set: str = "", tenant: str = "") -> Key:
    """The :class:`Key` of a question: ``qid`` in ``question_set``, or (no ``qid``) its text and filters."""
    return Key(str(question_set), str(qid) if qid else question_id(question, filters), str(tenant))


def set_name(path: str | Path) -> str:
    """The name of a question set in a key: its resolved path, relative to the project folder when inside it
    (``data/lab/questions.jsonl``), so that two files named alike in two folders never share a key."""
    resolved = Path(os.path.realpath(path))
    try:
        return resolved.relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return resolved.as_posix()


def tenant_of(filters: Mapping[str, Any] | None, tenant_field: str) -> str:
    """The written tenant of a question's filters (``""`` where they name none). A list of tenants is written
    as :func:`~retrieval.core.tenants.written` writes it, which no policy names: such a key is refused under a
    policy, as :func:`~retrieval.core.tenants.visible_questions` leaves such a question out."""
    value = (filters or {}).get(tenant_field)
    return "" if value is None else written(value)


def _key_in(rec: Mapping[str, Any]) -> Key | None:
    """The key a record carries, or ``None`` (written before keys, or not a key)."""
    key = rec.get("_key")
    if not isinstance(key, dict) or not all(isinstance(key.get(k), str) for k in ("set", "id", "tenant")):
        return None
    return Key(key["set"], key["id"], key["tenant"])


def _check_tenant(path: Path, key: Key, allowed: frozenset[str] | None, doing: str) -> None:
    """Refuse a key whose tenant the user may not open (one line naming no tenant)."""
    if allowed is not None and key.tenant and not may_open(key.tenant, allowed):
        raise CorpusError(f"{path}: refused: the question's tenant is not one of yours; nothing {doing}")


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
    out: list[tuple[str, dict[str, Any] | None]] = []
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
          key: Key) -> int | None:
    """The line of ``key``'s record: the record carrying that key, else a record written before keys whose text
    and filters are the question's (never a record found by its id alone)."""
    for i, (_, rec) in enumerate(lines):
        if rec is not None and _key_in(rec) == key:
            return i
    for i, (_, rec) in enumerate(lines):
        if rec is None or "_key" in rec or not isinstance(rec.get("question"), str):
            continue
        if _nfc(rec["question"]) == _nfc(question) and _same_filters(rec.get("filters"), filters):
            return i
    return None


def _new_id(used: set[str], question: str, filters: Mapping[str, Any] | None, key: Key) -> str:
    """A record id not in ``used``: the question's own id when free, else a ``judged-`` id of its key (a typed
    question's: of its text and filters, as before keys), with ``-2``, ``-3``… if even that is taken."""
    if key.qid not in used:
        return key.qid
    if key.question_set:
        digest = json.dumps([key.question_set, key.qid, key.tenant], ensure_ascii=False)
        base = "judged-" + hashlib.sha1(digest.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    else:
        base = question_id(question, filters)
    out, n = base, 2
    while out in used:
        out, n = f"{base}-{n}", n + 1
    return out


def load(path: str | Path, question: str, filters: Mapping[str, Any] | None = None,
         qid: str | None = None, *, question_set: str = "", tenant: str = "",
         allowed: frozenset[str] | None = None) -> dict[str, int]:
    """The grades stored for one question, found by its :class:`Key` (``qid`` in ``question_set`` of
    ``tenant``; a record written before keys by its text and filters: see the module docstring); ``{}`` when
    none.

    In a question set, ``relevant`` parents without a ``graded`` entry count as grade 1 (as the evaluation
    reads them). Reading takes no lock: every save replaces the file atomically, so a reader sees the file
    before or after it, never half.

    Raises:
        CorpusError: an unreadable file; the tenant not in ``allowed``; (qrels) a file of another set or tenant.
    """
    path = Path(path)
    key = key_of(question, filters, qid, question_set, tenant)
    _check_tenant(path, key, allowed, "read")
    if fmt_of(path) == "qrels":
        rows = _qrels_lines(path)
        _qrels_owner(path, _read_key_file(_target(path)), key, any(row for _, row in rows), "read")
        return {row[1]: row[2] for _, row in rows if row is not None and row[0] == key.qid}
    lines = _jsonl_lines(path)
    at = _find(lines, question, filters, key)
    if at is None:
        return {}
    rec = lines[at][1] or {}
    grades = {str(k): int(v) for k, v in (rec.get("graded") or {}).items()}
    for doc in rec.get("relevant") or []:
        grades.setdefault(str(doc), 1)
    return grades


def save(path: str | Path, question: str, grades: Mapping[str, int], filters: Mapping[str, Any] | None = None,
         qid: str | None = None, group: str = "judged", *, question_set: str = "", tenant: str = "",
         allowed: frozenset[str] | None = None) -> str:
    """Store ``grades`` (parent → 0-3) as the full judgment set of one question, its record found by its
    :class:`Key` (see :func:`load`); returns the record's id.

    Parents absent from ``grades`` are not judged (a grade removed in the app is removed from the file).
    Under an exclusive lock the file is re-read, this question's record (or qrels lines) replaced, every
    other line kept byte for byte, and the result written atomically (mode and symlink kept); see the
    module docstring.

    Raises:
        ValueError: a grade outside 0-3.
        InvalidId: a question or document id holding a control, format or line-separator character (refused
            at load: :func:`retrieval.ingest.corpus.id_problem`); (qrels) a qid or docno the format cannot carry
            (whitespace, a leading ``#``); a ``ValueError`` too. Nothing is written.
        CorpusError: the existing file cannot be read or parsed, is read-only, or another writer held it
            for :data:`LOCK_TIMEOUT_S`; the tenant is not in ``allowed``; (qrels) the file holds another set's
            or tenant's judgments. Nothing is written.
    """
    grades = _check(grades)
    for value, what in [(qid, "question id"), *((p, "document id") for p in grades)]:
        problem = id_problem(value) if value is not None else None
        if problem is not None:  # the file would load no more: ids that print alike are refused at load
            raise InvalidId(f"{path}: the {what} {value!r} {problem}; nothing written")
    path = Path(path)
    key = key_of(question, filters, qid, question_set, tenant)
    _check_tenant(path, key, allowed, "written")
    if fmt_of(path) == "qrels":
        return _save_qrels(path, key, grades)
    target = _target(path)
    with _locked(target) as folder:
        lines = _jsonl_lines(path, _read_at(folder, target))
        at = _find(lines, question, filters, key)
        records = [line for line, rec in lines if rec is not None]
        if at is None:
            used = {str(rec.get("id")) for _, rec in lines if rec}
            rec = {"id": _new_id(used, question, filters, key), "question": question,
                   "group": group, "relevant": [], "filters": dict(filters or {})}
            lines.append(("\r" if records and records[-1].endswith("\r") else "", rec))
            at = len(lines) - 1
        rec = dict(lines[at][1] or {})
        rec["graded"] = dict(sorted(grades.items()))
        rec["relevant"] = sorted(d for d, g in grades.items() if g > 0)
        rec["_key"] = key.as_dict()
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


def _key_file(target: Path) -> Path:
    """A qrels file's sidecar naming whose judgments it holds: ``<file>.key.json`` beside its target."""
    return target.with_name(target.name + ".key.json")


def _read_key_file(target: Path, text: str | None = None) -> dict[str, str] | None:
    """The ``{"set", "tenant"}`` of a qrels file's sidecar, or ``None`` where it has none."""
    raw = _read(_key_file(target)) if text is None else text
    if not raw.strip():
        return None
    try:
        found = json.loads(raw)
    except json.JSONDecodeError:
        found = None
    if not isinstance(found, dict) or not all(isinstance(found.get(k), str) for k in ("set", "tenant")):
        raise CorpusError(f"{_key_file(target)}: not a qrels key file ({{\"set\", \"tenant\"}}); nothing written")
    return {"set": found["set"], "tenant": found["tenant"]}


def _qrels_owner(path: Path, owner: dict[str, str] | None, key: Key, has_rows: bool, doing: str) -> bool:
    """Whether a save of ``key`` must (re)write the sidecar (or, for a key naming no set or tenant, remove it);
    refuses a key the file does not hold (one line that names neither the file's set nor its tenant). A file
    with no judgment line takes the key of its next save."""
    if not has_rows:
        return owner != ({"set": key.question_set, "tenant": key.tenant} if key.named else None)
    if owner is None:
        if key.named:
            raise CorpusError(f"{path}: this qrels file was written without a question set or tenant, and a qrels "
                              f"line cannot say whose it is; name another file; nothing {doing}")
        return False
    if owner != {"set": key.question_set, "tenant": key.tenant}:
        raise CorpusError(f"{path}: this qrels file holds another question set's or tenant's judgments (a qrels "
                          f"line cannot say whose it is); name another file; nothing {doing}")
    return False


def _save_qrels(path: Path, key: Key, grades: Mapping[str, int]) -> str:
    qid = key.qid
    _qrels_field(path, "qid", qid)
    for doc in sorted(grades):
        _qrels_field(path, "docno", doc)
    target = _target(path)
    sidecar = _key_file(target)
    with _locked(target) as folder:
        lines = _qrels_lines(path, _read_at(folder, target))
        owner = _read_key_file(target, _read_at(folder, sidecar))
        rewrite_key = _qrels_owner(path, owner, key, any(row for _, row in lines), "written")
        kept = [raw for raw, row in lines if row is None or row[0] != qid]
        rows = [raw for raw, row in lines if row is not None]
        cr = "\r" if rows and rows[-1].endswith("\r") else ""
        new = [f"{qid} 0 {doc} {grade}{cr}" for doc, grade in sorted(grades.items())]
        if rewrite_key and key.named:  # before the lines: a crash between leaves a key and no line, not the reverse
            _atomic_write(folder, sidecar, json.dumps({"set": key.question_set, "tenant": key.tenant},
                                                      ensure_ascii=False) + "\n")
        elif rewrite_key:  # a stale key of a file emptied since, now given lines of no set or tenant
            os.unlink(sidecar.name, dir_fd=folder)
        _atomic_write(folder, target, "".join(line + "\n" for line in kept + new))
    return qid
