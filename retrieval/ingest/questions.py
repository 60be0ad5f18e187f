"""A labeled question checked as an evaluation reads it: its keys (:data:`QUESTION_KEYS`), its id and every id it
names, its text (letters or digits once invisible characters are removed, and a length limit), its relevant,
filters, graded, answers and evidence fields, each of its type."""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any

from ..core.errors import CorpusError
from ..core.text import has_words, plain_codes
from ..core.types import Question
from .documents import _SCALARS
from .ids import _check_id, _shown_id
from .records import _json_kind


#: The keys of a question record (JSONL). Kept in the file but not read by an evaluation: ``raters`` (what
#: ``judge agreement --consensus-out`` writes), ``plausible_answers`` and ``near`` (a SQuAD 2.0 set's unanswerable
#: questions: the span that looks like an answer, the paragraph written against; ``../shared/data/squad2-pt``). A
#: key starting with ``_`` is a note of the file's author and is ignored; any other key is refused, naming these,
#: so a misspelled ``relevent`` never turns a question into an abstention question.
QUESTION_KEYS = ("id", "question", "group", "relevant", "filters", "graded", "answers", "evidence", "raters",
                 "plausible_answers", "near")


def _question(rec: dict[str, Any], where: str, max_chars: int | None = None) -> Question:
    """One record of a JSONL question set, every field checked (:func:`load_questions`); errors name ``where``
    (file:line) and, once it is read, the question id."""
    if rec.get("id") in (None, "") or not isinstance(rec.get("question"), str) or not rec["question"].strip():
        raise CorpusError(f"{where}: a question needs 'id' and a non-empty 'question'")
    qid = _check_id(rec["id"], where)
    at = f"{where}: question {_shown_id(qid)}"
    unknown = [k for k in rec if k not in QUESTION_KEYS and not k.startswith("_")]
    if unknown:
        raise CorpusError(f"{at}: unknown key {_shown_id(unknown[0])} (a question's keys are "
                          f"{', '.join(QUESTION_KEYS)}; a key starting with '_' is a note and is ignored)")
    question = _question_text(rec["question"], at, max_chars)
    group = rec.get("group")
    if group is not None and not isinstance(group, str):
        raise CorpusError(f"{at}: 'group' must be a string, not {_json_kind(group)}")
    relevant: Any = rec.get("relevant", [])
    if not isinstance(relevant, list):
        shown = "" if relevant is None else f" ({json.dumps(relevant, ensure_ascii=False)[:40]})"
        raise CorpusError(f"{at}: 'relevant' must be a list of document ids, not {_json_kind(relevant)}{shown}; "
                          "write [] or leave it out for a question whose right answer is an abstention")
    relevant = [_check_id(r, at, "each 'relevant' id") for r in relevant]
    filters = rec.get("filters")
    filters = {} if filters is None else filters
    if not isinstance(filters, dict):
        raise CorpusError(f"{at}: 'filters' must be an object of field → value, not {_json_kind(filters)}")
    for key, value in filters.items():
        if not key.strip():
            raise CorpusError(f"{at}: a filter's field name is empty")
        scalars = value if isinstance(value, list) else [value]
        if not scalars or not all(
                isinstance(v, _SCALARS) and not (isinstance(v, float) and not math.isfinite(v)) for v in scalars):
            raise CorpusError(f"{at}: filter {_shown_id(key)} must be a string, number or boolean (or a non-empty "
                              f"list of them), not {_json_kind(value)}")
    graded = rec.get("graded")
    if graded is not None and (not isinstance(graded, dict) or not all(
            type(v) is int and 0 <= v <= 3 for v in graded.values())):
        raise CorpusError(f"{at}: 'graded' must be an object of parent id → grade 0-3")
    for parent in graded or ():
        _check_id(parent, at, "each 'graded' id")
    answers = rec.get("answers")
    answers = [] if answers is None else answers
    if not isinstance(answers, list) or not all(isinstance(x, str) for x in answers):
        raise CorpusError(f"{at}: 'answers' must be a list of strings")
    return Question(qid, question, group or "default",
                    tuple(relevant), dict(filters), {str(k): int(v) for k, v in graded.items()} if graded else None,
                    tuple(answers), _evidence(rec.get("evidence"), at))


def _question_text(text: Any, at: str, max_chars: int | None = None) -> str:
    """A question's text as the evaluation will ask it, or one line naming ``at``: text with letters or digits
    once control and invisible characters are removed (the pipeline's own reading of a question), at most
    ``max_chars`` characters when given."""
    if not isinstance(text, str):
        raise CorpusError(f"{at}: 'question' must be a string, not {_json_kind(text)}")
    cleaned = "".join(ch for ch in plain_codes(unicodedata.normalize("NFC", text))
                      if ch in "\t\n" or ch.isprintable()).strip()
    if not cleaned:
        raise CorpusError(f"{at}: the question is empty once its control and invisible characters are removed")
    if not has_words(cleaned):
        raise CorpusError(f"{at}: the question has no letters or digits")
    if max_chars is not None and len(cleaned) > max_chars:
        raise CorpusError(f"{at}: the question has {len(cleaned):,} characters; the limit is {max_chars:,} "
                          "(RETRIEVAL_MAX_QUESTION_CHARS)")
    return text


def _evidence(value: Any, where: str) -> tuple[tuple[str, int, int], ...]:
    """A question's ``evidence``: ``[{"parent": id, "start": n, "end": m}, …]`` (character offsets in the
    parent's text, end exclusive)."""
    if value is None:
        return ()
    spans = []
    for span in value if isinstance(value, list) else [None]:
        if not (isinstance(span, dict) and isinstance(span.get("parent"), str) and span["parent"] and all(
                type(span.get(k)) is int for k in ("start", "end")) and 0 <= span["start"] < span["end"]):
            raise CorpusError(f'{where}: \'evidence\' must be a list of {{"parent": id, "start": n, "end": m}} with '
                              "0 ≤ start < end")
        spans.append((_check_id(span["parent"], where, "each evidence 'parent' id"), span["start"], span["end"]))
    return tuple(spans)
