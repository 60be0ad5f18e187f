"""Judging for a team: every grade with its rater and an optional note, the agreement between raters, the pairs
they disagree on, and one consensus set of judgments with its provenance.

A ratings file is JSONL, one line per (question, parent, rater)::

    {"qid": "lab-003", "question": "…", "filters": {"tenant": "lumen"}, "parent": "lumen-px7-ativacao",
     "grade": 2, "rater": "ana", "note": "cita o prazo, não o caso", "at": "2026-12-03T12:00:00Z",
     "source": "page"}

Saving a rating replaces that rater's earlier grade of the same pair and keeps every other line; it holds the
same lock and atomic write as :mod:`.judgments` (nothing is lost when two raters save at once). Judgments
made elsewhere (TREC qrels, a question-set JSONL) are imported as ratings with their file as ``source`` and
a rater of their own, so they sit beside the team's grades without replacing them.

Agreement is Cohen's kappa for each pair of raters over the pairs both graded, and Fleiss' kappa over the
pairs every rater graded (statsmodels), on the grades 0-3; the disagreement queue lists the pairs whose
grades differ, the widest spread first. The consensus grade of a pair is the median of its grades (the lower
middle one of an even count), recorded with the raters behind it.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from ..core.errors import CorpusError
from .judgments import GRADES, _atomic_write, _jsonl_lines, _locked, _qrels_lines, _read_at, _target, fmt_of

#: The longest note kept with a grade.
MAX_NOTE_CHARS = 2_000


@dataclass(frozen=True)
class Rating:
    """One rater's grade of one parent for one question."""

    qid: str
    question: str
    parent: str
    grade: int
    rater: str
    note: str = ""
    filters: Mapping[str, Any] = field(default_factory=dict)
    at: str = ""
    source: str = "page"

    @property
    def pair(self) -> tuple[str, str]:
        return self.qid, self.parent


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
        return _checked(Rating(str(rec["qid"]), str(rec.get("question", "")), str(rec["parent"]), rec["grade"],
                               str(rec["rater"]), str(rec.get("note") or ""), dict(rec.get("filters") or {}),
                               str(rec.get("at") or ""), str(rec.get("source") or "page")))
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


def save_ratings(path: str | Path, ratings: Iterable[Rating]) -> int:
    """Add ``ratings`` to the file, each replacing the same rater's earlier grade of the same pair; returns how
    many were written. One writer at a time (the file's lock), the file replaced atomically.

    Raises:
        ValueError: a grade outside 0-3, a rating without its rater or a note too long (nothing written).
        CorpusError: the file cannot be read or written, or another writer held it too long.
    """
    new = [_checked(r) for r in ratings]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    target = _target(Path(path))
    with _locked(target) as folder:
        lines = _jsonl_lines(target, _read_at(folder, target))
        replaced = {(r.qid, r.parent, r.rater) for r in new}
        kept = [line for line, rec in lines
                if rec is None or (str(rec.get("qid")), str(rec.get("parent")), str(rec.get("rater"))) not in replaced]
        fresh = [json.dumps({**asdict(r), "filters": dict(r.filters), "at": r.at or stamp}, ensure_ascii=False)
                 for r in new]
        _atomic_write(folder, target, "".join(line + "\n" for line in kept + fresh))
    return len(new)


def import_judgments(path: str | Path, rater: str | None = None) -> list[Rating]:
    """The judgments of a TREC qrels file or a question-set JSONL as ratings of ``rater`` (default: the file's
    name), ``source`` the file: what another tool or team graded, kept apart from the page's own."""
    path = Path(path)
    who = rater or path.stem
    if fmt_of(path) == "qrels":
        return [Rating(qid, "", doc, grade, who, source=str(path)) for _, row in _qrels_lines(path) if row
                for qid, doc, grade in [row]]
    out = []
    for _, rec in _jsonl_lines(path):
        if not rec:
            continue
        grades = {str(k): int(v) for k, v in (rec.get("graded") or {}).items()}
        for doc in rec.get("relevant") or []:
            grades.setdefault(str(doc), 1)
        out += [Rating(str(rec.get("id")), str(rec.get("question", "")), doc, grade, who,
                       filters=dict(rec.get("filters") or {}), source=str(path)) for doc, grade in grades.items()]
    return out


def latest(ratings: Sequence[Rating]) -> dict[tuple[str, str], dict[str, Rating]]:
    """Each (question, parent) pair's ratings by rater (a rater's later rating of a pair replaces the earlier)."""
    by_pair: dict[tuple[str, str], dict[str, Rating]] = {}
    for r in ratings:
        by_pair.setdefault(r.pair, {})[r.rater] = r
    return by_pair


def agreement(ratings: Sequence[Rating]) -> dict[str, Any]:
    """Cohen's kappa of every two raters (over the pairs both graded), Fleiss' kappa over the pairs every rater
    graded, and the disagreement queue.

    Returns:
        ``{"raters": [...], "pairs": n, "cohen": [{"a", "b", "pairs", "kappa"}], "fleiss": {"pairs", "kappa"}
        or None, "disagreements": [{"qid", "parent", "grades": {rater: grade}, "notes": {rater: note},
        "spread"}]}``. A kappa is ``None`` where it is undefined (no pair in common, or one grade only).
    """
    by_pair = latest(ratings)
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
    disagreements = []
    for (qid, parent), by_rater in by_pair.items():
        grades = {r: x.grade for r, x in sorted(by_rater.items())}
        if len(set(grades.values())) > 1:
            disagreements.append({"qid": qid, "parent": parent, "grades": grades,
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
    """Per question, the consensus grade of each parent (the median of its raters' grades, the lower middle one
    of an even count) and who graded it: ``{qid: {"question", "filters", "graded": {parent: grade},
    "raters": {parent: [raters]}}}``."""
    out: dict[str, dict[str, Any]] = {}
    for (qid, parent), by_rater in latest(ratings).items():
        first = next(iter(by_rater.values()))
        entry = out.setdefault(qid, {"question": first.question, "filters": dict(first.filters), "graded": {},
                                     "raters": {}})
        entry["question"] = entry["question"] or first.question
        entry["graded"][parent] = int(statistics.median_low([r.grade for r in by_rater.values()]))
        entry["raters"][parent] = sorted(by_rater)
    return out
