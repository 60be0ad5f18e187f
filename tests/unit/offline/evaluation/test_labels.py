"""Labels that survive a re-chunking: spans and chunk ids resolved against the corpus as it is chunked now."""

from __future__ import annotations

import json

import pytest

from retrieval.ingest.corpus import chunk_documents, load_questions
from retrieval.core.errors import CorpusError
from retrieval.core.types import Document, Question
from retrieval.offline.evaluation.diagnose import evidence_check
from retrieval.offline.evaluation.labels import resolve_labels

WORDS = " ".join(f"palavra{n}" for n in range(300))
DOCS = [Document("manual", "Manual", WORDS + " O PX-7 é ativado em até 24 horas após o pagamento. " + WORDS, {}),
        Document("faq", "FAQ", "A garantia dura um ano.", {})]
GOLD = "O PX-7 é ativado em até 24 horas após o pagamento."
SPAN = DOCS[0].text.index(GOLD)


def test_a_span_labelled_question_keeps_its_relevance_under_every_chunking() -> None:
    long_end = SPAN + len(GOLD) + len(" palavra0 palavra1 palavra2 palavra3 palavra4 palavra5")
    q = Question("q1", "Quando o PX-7 é ativado?", "g", (),
                 evidence=(("manual", SPAN, SPAN + len(GOLD)), ("manual", SPAN, long_end)))
    longer = DOCS[0].text[SPAN:long_end]
    for size, overlap in ((120, 30), (40, 10), (8, 2)):
        chunks = chunk_documents(DOCS, size, overlap, False)
        (resolved,), labels = resolve_labels([q], DOCS, chunks)
        assert resolved.relevant == ("manual",) and resolved.answers == (GOLD, longer)
        assert labels == {"chunk_ids": [], "spans": 2, "bad_spans": []}
        check = evidence_check([resolved], chunks, DOCS)
        # the relevance never moves; what a chunking cuts is reported: a chunk of 8 words cuts the 10-word
        # sentence and the span over two sentences, the larger ones keep the sentence whole
        cut = [c["span"] for c in check["cut"]]
        assert check["whole"] + len(cut) == 2 and cut == ([GOLD, longer] if size == 8 else cut) and GOLD not in (
            cut if size > 8 else [])


def test_relevant_chunk_ids_of_another_chunking_are_read_as_their_parents_and_bad_spans_are_named() -> None:
    chunks = chunk_documents(DOCS, 120, 30, False)
    q = Question("q2", "?", "g", ("manual#9", "faq"), evidence=(("faq", 0, 999), ("gone", 0, 3)))
    (resolved,), labels = resolve_labels([q], DOCS, chunks)
    assert resolved.relevant == ("manual", "faq")  # manual#9 exists in no chunking here: its parent is
    assert labels["chunk_ids"] == [{"id": "q2", "named": "manual#9", "parent": "manual"}]
    assert [(b["parent"], b["why"]) for b in labels["bad_spans"]] == [("faq", "past the parent's end (23)"),
                                                                      ("gone", "not in the corpus")]


def test_evidence_is_read_from_the_question_file(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": "q?", "evidence": [{"parent": "manual", "start": 3,
                                                                         "end": 9}]}) + "\n", encoding="utf-8")
    assert load_questions(path)[0].evidence == (("manual", 3, 9),)
    path.write_text(json.dumps({"id": "q1", "question": "q?", "evidence": [{"parent": "m", "start": 9, "end": 3}]})
                    + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="evidence"):
        load_questions(path)
