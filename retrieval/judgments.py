"""Relevance judgments made by hand on one question's pooled candidates, stored in the project's formats.

* The pool of a trace is every parent document that any of its lists (BM25, dense, fused, reranked, final)
  returned — not only the final top_k — ordered by the best rank any list gave it.
* Grades are 0-3 (0 = judged not relevant); a parent without a grade is *not judged*.
* A question-set file (JSONL, DESIGN.md "Data contracts") keeps the question's ``graded`` (every judged
  parent, zeros included) and ``relevant`` (grade > 0, as in TREC qrels); a question not in the file yet
  is appended with a new id. A TREC qrels file keeps one ``qid 0 docno grade`` line per judgment.
* Writing never loses the other questions' lines (they are copied byte for byte) and is atomic (a
  temporary file in the same folder, then :func:`os.replace`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import unicodedata
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import CorpusError

GRADES = (0, 1, 2, 3)
POOLED_LISTS = ("lexical", "dense", "fused", "reranked", "final")


def pool(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pooled parents of a trace: ``[{parent_id, chunk_ids, best_rank, lists: {list: rank}}]``,
    sorted by best rank then id. ``lists`` holds the best rank of the parent's chunks in each list."""
    found: dict[str, dict[str, Any]] = {}
    for name in POOLED_LISTS:
        items = trace.get("final") if name == "final" else (trace.get(name) or {}).get("items")
        for item in items or []:
            entry = found.setdefault(item["parent_id"], {"parent_id": item["parent_id"], "chunk_ids": [],
                                                         "best_rank": item["rank"], "lists": {}})
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
    return "judged-" + hashlib.sha1(key.encode()).hexdigest()[:10]


def _check(grades: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for doc, grade in grades.items():
        if isinstance(grade, bool) or int(grade) not in GRADES or int(grade) != grade:
            raise ValueError(f"grade of {doc} must be one of 0, 1, 2, 3 (got {grade!r})")
        out[str(doc)] = int(grade)
    return out


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fmt_of(path: str | Path) -> str:
    """``qrels`` for ``*.qrels`` / ``*.txt`` / ``*.tsv`` files, else ``jsonl`` (a question set)."""
    return "qrels" if Path(path).suffix.lower() in {".qrels", ".txt", ".tsv"} else "jsonl"


# -- question-set JSONL ------------------------------------------------------------------------------------
def _jsonl_lines(path: Path) -> list[tuple[str, dict[str, Any] | None]]:
    if not path.exists():
        return []
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            out.append((line, None))
            continue
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
    reads them). Raises :class:`~retrieval.errors.CorpusError` on an unreadable file.
    """
    path = Path(path)
    if fmt_of(path) == "qrels":
        wanted = qid or question_id(question, filters)
        return {doc: grade for q, doc, grade in _qrels_rows(path) if q == wanted}
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
    Every other question's line is kept unchanged.

    Raises:
        ValueError: a grade outside 0-3.
        CorpusError: the existing file cannot be parsed (nothing is written).
    """
    grades = _check(grades)
    path = Path(path)
    if fmt_of(path) == "qrels":
        return _save_qrels(path, qid or question_id(question, filters), grades)
    lines = _jsonl_lines(path)
    at = _find(lines, question, filters, qid)
    if at is None:
        used = {str(rec.get("id")) for _, rec in lines if rec}
        rec = {"id": qid if qid and qid not in used else question_id(question, filters), "question": question,
               "group": group, "relevant": [], "filters": dict(filters or {})}
        lines.append(("", rec))
        at = len(lines) - 1
    rec = dict(lines[at][1] or {})
    rec["graded"] = dict(sorted(grades.items()))
    rec["relevant"] = sorted(d for d, g in grades.items() if g > 0)
    lines[at] = (json.dumps(rec, ensure_ascii=False), rec)
    _atomic_write(path, "".join(line + "\n" for line, _ in lines))
    return str(rec["id"])


# -- TREC qrels --------------------------------------------------------------------------------------------
def _qrels_rows(path: Path) -> list[tuple[str, str, int]]:
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise CorpusError(f"{path}:{number}: a qrels line is 'qid 0 docno relevance'; nothing written")
        try:
            rows.append((parts[0], parts[2], int(parts[3])))
        except ValueError as exc:
            raise CorpusError(f"{path}:{number}: relevance must be an integer; nothing written") from exc
    return rows


def _save_qrels(path: Path, qid: str, grades: Mapping[str, int]) -> str:
    kept = [line for line in (path.read_text(encoding="utf-8").splitlines() if path.exists() else [])
            if line.split() and line.split()[0] != qid]
    _qrels_rows(path)  # validate before writing
    new = [f"{qid} 0 {doc} {grade}" for doc, grade in sorted(grades.items())]
    _atomic_write(path, "".join(line + "\n" for line in kept + new))
    return qid
