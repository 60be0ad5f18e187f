"""Malformed corpus and question files are one line (retrieval/ingest/corpus.py): a 50,000-digit integer, bytes
that are not UTF-8 (the line and column named), an id that is not a string or an integer (``true``, ``7.5``,
``null``, a list), in a corpus and in a question set; a control character in an id is escaped in the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.ingest.corpus import load_corpus, load_questions
from retrieval.core.errors import CorpusError

DOC = '{"id": "d1", "title": "t", "text": "x"}\n'
QUESTION = '{"id": "q1", "question": "q?", "group": "g", "relevant": ["d1"]}\n'


def refusal(load, path: Path) -> str:
    with pytest.raises(CorpusError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)), message
    return message


@pytest.mark.parametrize("body, says", [
    (b'{"id": "d1", "title": "t", "text": "x", "metadata": {"year": ' + b"9" * 50_000 + b"}}\n",
     ":1: a number of 50,000 digits (at most 64)"),
    (b'{"id": ' + b"9" * 50_000 + b', "title": "t", "text": "x"}\n', ":1: a number of 50,000 digits"),
    (DOC.encode() + b'{"id": "d2", "title": "t", "text": "\xff\xfe"}\n', ":2: not UTF-8 (byte 0xff at column 37)"),
    (b'{"id": true, "title": "t", "text": "x"}\n', ":1: 'id' must be a string (or an integer), not a boolean (true)"),
    (b'{"id": 7.5, "title": "t", "text": "x"}\n', ":1: 'id' must be a string (or an integer), not a number (7.5)"),
    (b'{"id": null, "title": "t", "text": "x"}\n', ":1: 'id' must be a string (or an integer), not null"),
    (b'{"id": ["a"], "title": "t", "text": "x"}\n', ":1: 'id' must be a string (or an integer), not a list"),
    # a control character in an id is refused at its first line, the id escaped (it was a duplicate at :2: before)
    (b'{"id": "a\\u001b[31m\\r\\nX", "title": "t", "text": "x"}\n' * 2,
     ":1: 'id' 'a\\x1b[31m\\r\\nX' holds U+001B, a control character"),
])
def test_a_malformed_corpus_is_one_line(tmp_path: Path, body: bytes, says: str) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(body)
    assert says in refusal(load_corpus, path)


@pytest.mark.parametrize("body, says", [
    (b'{"id": true, "question": "q?", "group": "g", "relevant": []}\n', ":1: 'id' must be a string"),
    (b'{"id": 7.5, "question": "q?", "group": "g", "relevant": []}\n', "not a number (7.5)"),
    (b'{"id": "q", "question": "q?", "group": "g", "relevant": [true]}\n',
     ":1: question 'q': each 'relevant' id must be a string (or an integer), not a boolean (true)"),
    (b'{"id": "q", "question": "q?", "relevant": ["d"], "graded": {"d": ' + b"9" * 50_000 + b"}}\n",
     ":1: a number of 50,000 digits"),
    (QUESTION.encode() + b'{"id": "q2", "question": "\xc3(", "relevant": []}\n', ":2: not UTF-8 (byte 0xc3 at column 27)"),
])
def test_a_malformed_question_set_is_one_line(tmp_path: Path, body: bytes, says: str) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_bytes(body)
    assert says in refusal(load_questions, path)


def test_integer_ids_are_still_read_as_their_digits(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"id": 7, "title": "t", "text": "x"}\n', encoding="utf-8")
    assert [d.id for d in load_corpus(path)] == ["7"]
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": 1, "question": "q?", "relevant": [7]}\n', encoding="utf-8")
    assert [(q.id, q.relevant) for q in load_questions(questions)] == [("1", ("7",))]
