"""Judging for a team: every grade with its rater and an optional note, the agreement between raters, the pairs
they disagree on, and one consensus set of judgments with its provenance.

A ratings file is JSONL, one line per (question, parent, rater)::

    {"qid": "lab-003", "question_set": "data/lab/questions.jsonl", "tenant": "lumen", "question": "…",
     "filters": {"tenant": "lumen"}, "parent": "lumen-px7-ativacao", "grade": 2, "rater": "ana",
     "note": "cita o prazo, não o caso", "at": "2026-12-03T12:00:00Z", "source": "page"}

A rating belongs to one question by its key, ``(question_set, qid, tenant)`` as in :mod:`.judgments`: two sets'
``q1``, or two tenants' ``q1``, are two questions whose grades never group together (agreement, queue,
consensus). A line written before keys (no ``question_set``) belongs to a question only when its text (NFC)
and filters are the question's (:func:`ratings_for`), never by its id alone; among themselves such lines group
by id, text and filters.

Saving a rating replaces that rater's earlier grade of the same parent of the same question (by key, or an
unkeyed line of the same text and filters) and keeps every other line; it holds the same lock and atomic
write as :mod:`.judgments` (nothing is lost when two raters save at once). Judgments made elsewhere (TREC
qrels, a question-set JSONL) are imported as ratings with their file as ``source`` and a rater of their own,
so they sit beside the team's grades without replacing them.

Agreement is Cohen's kappa for each pair of raters over the pairs both graded, and Fleiss' kappa over the
pairs every rater graded (statsmodels), on the grades 0-3; the disagreement queue lists the pairs whose
grades differ, the widest spread first. The consensus grade of a pair is the median of its grades (the lower
middle one of an even count), recorded with the raters behind it.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, TypedDict

import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from ..core.errors import CorpusError
from ..core.tenants import may_open
from .judgments import (GRADES, _atomic_write, _jsonl_lines, _key_in, _locked, _qrels_lines, _read_at,
                        _read_key_file, _same_filters, _target, fmt_of, tenant_of)

#: The longest note kept with a grade.
MAX_NOTE_CHARS = 2_000


#: A question's key: ``(question_set, qid, tenant)``; for a line written before keys ``(None, qid, text and
#: filters)``, so that it groups only with lines of the same question.
QuestionKey = tuple[Any, str, str]


class Disagreement(TypedDict):
    """One parent of one question its raters graded differently (:func:`agreement`)."""

    qid: str
    parent: str
    grades: dict[str, int]
    notes: dict[str, str]
    spread: int


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


@dataclass(frozen=True)
class Rating:
    """One rater's grade of one parent for one question.

    ``question_set`` and ``tenant`` with ``qid`` are the question's key (:mod:`.judgments`); ``question_set`` is
    ``None`` for a line written before keys (matched by its text and filters only).
    """

    qid: str
    question: str
    parent: str
    grade: int
    rater: str
    note: str = ""
    filters: Mapping[str, Any] = field(default_factory=dict)
    at: str = ""
    source: str = "page"
    question_set: str | None = ""
    tenant: str = ""

    @property
    def pair(self) -> tuple[str, str]:
        """``(qid, parent)``: the question's id in its set only; :attr:`item` is unique across sets and tenants."""
        return self.qid, self.parent

    @property
    def keyed(self) -> bool:
        return self.question_set is not None

    @property
    def key(self) -> QuestionKey:
        """Whose question this grade is of (see :data:`QuestionKey`)."""
        if self.keyed:
            return self.question_set, self.qid, self.tenant
        filters = sorted((str(k), sorted(map(str, v)) if isinstance(v, (list, tuple)) else [str(v)])
                         for k, v in self.filters.items())
        return None, self.qid, json.dumps([_nfc(self.question), filters], ensure_ascii=False)

    @property
    def item(self) -> tuple[QuestionKey, str]:
        """``(key, parent)``: what a rater grades, once per question of one set and tenant."""
        return self.key, self.parent


def _checked(rating: Rating) -> Rating:
    if rating.grade not in GRADES:
        raise ValueError(f"grade {rating.grade!r} of {rating.parent!r} is not one of 0-3")
    if not rating.rater.strip():
        raise ValueError("a rating needs its rater")
    if len(rating.note) > MAX_NOTE_CHARS:
        raise ValueError(f"a note holds at most {MAX_NOTE_CHARS:,} characters")
    return rating


def _rating(rec: Mapping[str, Any], where: str) -> Rating:
    try:
        qset = rec.get("question_set")
        if qset is not None and not isinstance(qset, str):
            raise TypeError("question_set must be a string")
        return _checked(Rating(str(rec["qid"]), str(rec.get("question", "")), str(rec["parent"]), rec["grade"],
                               str(rec["rater"]), str(rec.get("note") or ""), dict(rec.get("filters") or {}),
                               str(rec.get("at") or ""), str(rec.get("source") or "page"), qset,
                               str(rec.get("tenant") or "")))
    except (KeyError, TypeError, ValueError) as exc:
        raise CorpusError(f"{where}: a rating line has qid, parent, grade 0-3 and rater ({exc})") from None


def load_ratings(path: str | Path) -> list[Rating]:
    """Every rating of a ratings file (``[]`` when it does not exist).

    Raises:
        CorpusError: an unreadable file or a malformed line (one line naming it).
    """
    path = Path(path)
    if not path.exists():
        return []
    return [_rating(rec, f"{path}:{n}") for n, (_, rec) in enumerate(_jsonl_lines(path), start=1)
            if rec is not None]


def _replaces(new: Rating, old: Rating) -> bool:
    """Whether ``new`` replaces the line ``old``: the same rater and parent of the same question (its key; an
    unkeyed ``old`` of the same id, text and filters)."""
    if (new.rater, new.parent, new.qid) != (old.rater, old.parent, old.qid):
        return False
    if old.keyed:
        return new.key == old.key
    return _nfc(new.question) == _nfc(old.question) and _same_filters(new.filters, old.filters)


def save_ratings(path: str | Path, ratings: Iterable[Rating]) -> int:
    """Add ``ratings`` to the file, each replacing the same rater's earlier grade of the same parent of the same
    question (:func:`_replaces`: never another set's or tenant's question with the same id); returns how many
    were written. One writer at a time (the file's lock), the file replaced atomically.

    Raises:
        ValueError: a grade outside 0-3, a rating without its rater or a note too long (nothing written).
        CorpusError: the file cannot be read or written, or another writer held it too long.
    """
    new = [_checked(r) for r in ratings]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    target = _target(Path(path))
    with _locked(target) as folder:
        lines = _jsonl_lines(target, _read_at(folder, target))
        by_who: dict[tuple[str, str, str], list[Rating]] = {(r.rater, r.parent, r.qid): [] for r in new}
        for r in new:
            by_who[(r.rater, r.parent, r.qid)].append(r)
        kept = []
        for n, (line, rec) in enumerate(lines, start=1):
            if rec is not None:
                who = (str(rec.get("rater")), str(rec.get("parent")), str(rec.get("qid")))
                if who in by_who:
                    old = _rating(rec, f"{target}:{n}")
                    if any(_replaces(r, old) for r in by_who[who]):
                        continue
            kept.append(line)
        fresh = [json.dumps({**asdict(r), "question_set": r.question_set or "", "filters": dict(r.filters),
                             "at": r.at or stamp}, ensure_ascii=False) for r in new]
        _atomic_write(folder, target, "".join(line + "\n" for line in kept + fresh))
    return len(new)


def key_of(question: Any, question_set: str, tenant_field: str) -> QuestionKey:
    """The key of a labeled question (:class:`retrieval.core.types.Question`) of the set ``question_set``."""
    return question_set, str(question.id), tenant_of(question.filters, tenant_field)


def ratings_for(ratings: Sequence[Rating], questions: Sequence[Any], question_set: str, tenant_field: str,
                allowed: frozenset[str] | None = None) -> list[Rating]:
    """The ratings of ``questions`` (of the set ``question_set``), each carrying its question's key: a keyed
    rating whose key is one of theirs, and a rating written before keys whose id, text (NFC) and filters are one
    question's (given that question's key); every other rating is left out: another set's or another tenant's
    question with the same id among them. With ``allowed``, a rating whose tenant the user may not open is left
    out too (a check beside the questions', which the caller has filtered by tenant already).
    """
    keys = {key_of(q, question_set, tenant_field): q for q in questions}
    by_id: dict[str, list[Any]] = {}
    for q in questions:
        by_id.setdefault(str(q.id), []).append(q)
    out = []
    for r in ratings:
        if r.keyed:
            mine = keys.get(r.key)
            rated = r if mine is not None else None
        else:
            mine = next((q for q in by_id.get(r.qid, []) if _nfc(q.question) == _nfc(r.question)
                         and _same_filters(q.filters, r.filters)), None)
            rated = replace(r, question_set=question_set, tenant=tenant_of(mine.filters, tenant_field)) \
                if mine is not None else None
        if rated is None:
            continue
        if allowed is not None and rated.tenant and not may_open(rated.tenant, allowed):
            continue
        out.append(rated)
    return out


def import_judgments(path: str | Path, rater: str | None = None, *, question_set: str = "",
                     tenant_field: str = "tenant") -> list[Rating]:
    """The judgments of a TREC qrels file or a question-set JSONL as ratings of ``rater`` (default: the file's
    name), ``source`` the file: what another tool or team graded, kept apart from the page's own.

    Each rating carries its question's key: a record's own ``_key`` (:mod:`.judgments`) or a qrels file's
    sidecar where there is one, else ``question_set`` (the set the file's ids belong to, ``""`` when not named)
    with the record's id and the tenant of its filters (``tenant_field``; a qrels line: none).
    """
    path = Path(path)
    who = rater or path.stem
    if fmt_of(path) == "qrels":
        owner = _read_key_file(_target(path)) or {"set": question_set, "tenant": ""}
        return [Rating(qid, "", doc, grade, who, source=str(path), question_set=owner["set"],
                       tenant=owner["tenant"]) for _, row in _qrels_lines(path) if row for qid, doc, grade in [row]]
    out = []
    for _, rec in _jsonl_lines(path):
        if not rec:
            continue
        grades = {str(k): int(v) for k, v in (rec.get("graded") or {}).items()}
        for doc in rec.get("relevant") or []:
            grades.setdefault(str(doc), 1)
        filters = dict(rec.get("filters") or {})
        key = _key_in(rec)
        qset, qid, tenant = ((key.question_set, key.qid, key.tenant) if key is not None else
                             (question_set, str(rec.get("id")), tenant_of(filters, tenant_field)))
        out += [Rating(qid, str(rec.get("question", "")), doc, grade, who, filters=filters, source=str(path),
                       question_set=qset, tenant=tenant) for doc, grade in grades.items()]
    return out


def latest(ratings: Sequence[Rating]) -> dict[tuple[QuestionKey, str], dict[str, Rating]]:
    """Each (question key, parent) item's ratings by rater (a rater's later rating of it replaces the earlier);
    two sets' or two tenants' ``q1`` are two items."""
    by_item: dict[tuple[QuestionKey, str], dict[str, Rating]] = {}
    for r in ratings:
        by_item.setdefault(r.item, {})[r.rater] = r
    return by_item


def names(keys: Iterable[QuestionKey]) -> dict[QuestionKey, str]:
    """An id per question key, unique among ``keys``: the question's id where no other key shares it, else the
    id with ``~`` and 6 hex digits of its key (so two sets' ``q1`` stay two questions in one file)."""
    keys = list(dict.fromkeys(keys))
    count: dict[str, int] = {}
    for key in keys:
        count[key[1]] = count.get(key[1], 0) + 1
    return {key: key[1] if count[key[1]] == 1 else
            f"{key[1]}~{hashlib.sha1(json.dumps(list(key)).encode('utf-8', 'surrogatepass')).hexdigest()[:6]}"
            for key in keys}


def agreement(ratings: Sequence[Rating]) -> dict[str, Any]:
    """Cohen's kappa of every two raters (over the pairs both graded), Fleiss' kappa over the pairs every rater
    graded, and the disagreement queue.

    A pair is one parent of one question (its key: :func:`latest`); a disagreement's ``qid`` is the question's
    id, made unique where two keys share it (:func:`names`).

    Returns:
        ``{"raters": [...], "pairs": n, "cohen": [{"a", "b", "pairs", "kappa"}], "fleiss": {"pairs", "kappa"}
        or None, "disagreements": [{"qid", "parent", "grades": {rater: grade}, "notes": {rater: note},
        "spread"}]}``. A kappa is ``None`` where it is undefined (no pair in common, or one grade only).
    """
    by_pair = latest(ratings)
    named = names(key for key, _ in by_pair)
    raters = sorted({r.rater for r in ratings})
    cohen = []
    for a, b in combinations(raters, 2):
        both = [(p[a].grade, p[b].grade) for p in by_pair.values() if a in p and b in p]
        table = np.zeros((len(GRADES), len(GRADES)))
        for x, y in both:
            table[x, y] += 1
        cohen.append({"a": a, "b": b, "pairs": len(both), "kappa": _kappa(lambda: cohens_kappa(table).kappa)
                      if both else None})
    everyone = [p for p in by_pair.values() if len(raters) >= 2 and all(r in p for r in raters)]
    fleiss = None
    if everyone:
        counts, _ = aggregate_raters(np.array([[p[r].grade for r in raters] for p in everyone]), n_cat=len(GRADES))
        fleiss = {"pairs": len(everyone), "kappa": _kappa(lambda: fleiss_kappa(counts))}
    disagreements: list[Disagreement] = []
    for (key, parent), by_rater in by_pair.items():
        grades = {r: x.grade for r, x in sorted(by_rater.items())}
        if len(set(grades.values())) > 1:
            disagreements.append({"qid": named[key], "parent": parent, "grades": grades,
                                  "notes": {r: x.note for r, x in sorted(by_rater.items()) if x.note},
                                  "spread": max(grades.values()) - min(grades.values())})
    disagreements.sort(key=lambda d: (-d["spread"], d["qid"], d["parent"]))
    return {"raters": raters, "pairs": len(by_pair), "cohen": cohen, "fleiss": fleiss,
            "disagreements": disagreements}


def _kappa(compute: Any) -> float | None:
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(compute())
    return None if not np.isfinite(value) else round(value, 4)


def consensus(ratings: Sequence[Rating]) -> dict[str, dict[str, Any]]:
    """Per question (per key: two sets' or tenants' ``q1`` are two entries), the consensus grade of each parent
    (the median of its raters' grades, the lower middle one of an even count) and who graded it: ``{id:
    {"question", "filters", "key": {"set", "id", "tenant"}, "graded": {parent: grade}, "raters": {parent:
    [raters]}}}``, ``id`` the question's id made unique where two keys share it (:func:`names`); ``key`` is
    ``None`` for lines written before keys."""
    by_item = latest(ratings)
    named = names(key for key, _ in by_item)
    out: dict[str, dict[str, Any]] = {}
    for (key, parent), by_rater in by_item.items():
        first = next(iter(by_rater.values()))
        entry = out.setdefault(named[key], {"question": first.question, "filters": dict(first.filters),
                                            "key": {"set": key[0], "id": key[1], "tenant": key[2]}
                                            if first.keyed else None, "graded": {}, "raters": {}})
        entry["question"] = entry["question"] or first.question
        entry["graded"][parent] = int(statistics.median_low([r.grade for r in by_rater.values()]))
        entry["raters"][parent] = sorted(by_rater)
    return out
