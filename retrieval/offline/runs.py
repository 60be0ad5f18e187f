"""Runs from anywhere: the ranked results of an engine the workbench did not build (Elasticsearch, OpenSearch,
Solr, a vendor API, another library), read from a file and evaluated beside the workbench's own configurations.

Two formats:

* a TREC run, one line per retrieved document, ``qid Q0 docno rank score tag`` (whitespace-separated, as
  ``trec_eval`` reads it): each question's documents are ordered by score, higher first, ties by rank;
* JSONL, one question per line: ``{"id": "q1", "ranking": ["doc-3", "doc-1", …]}`` (``ranking`` in rank order;
  ``"scores"`` beside it optional).

A document id may name a parent document (``doc-3``) or one of its chunks (``doc-3#2``): the metrics read parent
rankings (each parent at its best rank), like the workbench's own. An id the corpus does not hold is kept in the
ranking (it is not relevant, since no qrels can name it) and named in the report, never scored silently; a
question of the set that the run does not answer is scored as an empty list and named too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

from ..core.errors import CorpusError
from ..core.inputs import json_depth_problem

#: The longest run file read (a run of 1,000 documents for 10,000 questions is about 400 MB).
MAX_RUN_BYTES = 512 * 1024**2


@dataclass(frozen=True)
class ImportedRun:
    """One engine's rankings: ``rankings`` maps a question id to its document ids in rank order."""

    name: str
    source: str
    format: str
    rankings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def load_run(path: str | Path, name: str | None = None, text: str | None = None) -> ImportedRun:
    """Read a run file (TREC or JSONL, told apart by its first non-empty line); ``text`` reads an uploaded
    file's contents instead of ``path`` (which then only names it).

    Raises:
        CorpusError: an unreadable file, a TREC line without six fields or with a score that is not a finite
            number, a JSON line that is not an object with ``id`` and ``ranking`` (a list of strings), or a
            question given twice; one line naming the file and line.
    """
    path = Path(path)
    label = name or path.stem
    if text is None:
        try:
            if path.stat().st_size > MAX_RUN_BYTES:
                raise CorpusError(f"{path}: larger than {MAX_RUN_BYTES // 1024**2} MiB")
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CorpusError(f"{path}: cannot read the run ({exc.strerror or exc.__class__.__name__})") from None
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    lines = text.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if not first:
        raise CorpusError(f"{path}: the run is empty")
    if first.startswith("{"):
        return ImportedRun(label, str(path), "jsonl", _jsonl(path, lines))
    return ImportedRun(label, str(path), "trec", _trec(path, lines))


def _trec(path: Path, lines: Sequence[str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[tuple[float, int, str]]] = {}
    for number, line in enumerate(lines, start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise CorpusError(f"{path}:{number}: a TREC run line has six fields (qid Q0 docno rank score tag), "
                              f"this one {len(parts)}")
        qid, _, doc, rank, score, _ = parts
        try:
            value, position = float(score), int(rank)
        except ValueError:
            raise CorpusError(f"{path}:{number}: rank and score must be numbers") from None
        if not math.isfinite(value):
            raise CorpusError(f"{path}:{number}: the score is not a finite number")
        found.setdefault(qid, []).append((value, position, doc))
    return {qid: tuple(dict.fromkeys(doc for _, _, doc in sorted(rows, key=lambda r: (-r[0], r[1]))))
            for qid, rows in found.items()}


def _jsonl(path: Path, lines: Sequence[str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if json_depth_problem(line) is not None:
            raise CorpusError(f"{path}:{number}: JSON nested too deep")
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
        ranking = row.get("ranking") if isinstance(row, dict) else None
        qid = row.get("id") if isinstance(row, dict) else None
        if not isinstance(qid, str) or not qid or not isinstance(ranking, list) \
                or not all(isinstance(d, str) and d for d in ranking):
            raise CorpusError(f'{path}:{number}: a run line is {{"id": "<question>", "ranking": ["<doc>", …]}}')
        if qid in found:
            raise CorpusError(f"{path}:{number}: question '{qid}' is given twice")
        found[qid] = tuple(dict.fromkeys(ranking))
    return found


def parent_rankings(run: ImportedRun, parents: Collection[str], chunk_parent: Mapping[str, str],
                    question_ids: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Each question's parent ranking (chunk ids read as their parents, each parent at its best rank) and what
    the report names: ``{"not_in_corpus": {qid: [ids]}, "unanswered": [qids], "not_in_set": [qids]}``."""
    out: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    for qid in question_ids:
        ranked: list[str] = []
        for doc in run.rankings.get(qid, ()):
            parent = chunk_parent.get(doc, doc)
            if parent not in parents:
                missing.setdefault(qid, []).append(doc)
            if parent not in ranked:
                ranked.append(parent)
        out[qid] = ranked
    asked = set(question_ids)
    return out, {"not_in_corpus": missing, "unanswered": [q for q in question_ids if q not in run.rankings],
                 "not_in_set": sorted(q for q in run.rankings if q not in asked)}
