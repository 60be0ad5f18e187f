"""The evidence check (gold spans whole inside a subchunk) and the top-k sweep's recall and redundancy."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.ingest.corpus import chunk_documents
from retrieval.core.types import Document, Question
from retrieval.offline.evaluation import evidence_check
from retrieval.offline.evaluation.sweep import SweepItem, jaccard, redundancy_flags, sweep_points


def test_span_cut_by_the_chunking_is_listed():
    text = ("Primeira frase curta aqui. O prazo de reembolso é de trinta dias corridos. "
            "Terceira frase também curta.")
    doc = Document("d1", "T", text, {})
    chunks = chunk_documents([doc], chunk_tokens=8, chunk_overlap=0)  # every sentence alone, at most 8 words
    spans = ("prazo de reembolso é de trinta dias", "curta aqui. O prazo", "não existe no texto")
    q = Question("q1", "?", "g", ("d1",), answers=spans)
    out = evidence_check([q, Question("u", "?", "g", (), answers=("x",))], chunks, [doc])
    assert out["checked"] == 3 and out["questions"] == 1 and out["whole"] == 1
    assert out["cut"] == [{"id": "q1", "parent": "d1", "span": "curta aqui. O prazo"}]  # crosses two subchunks
    assert out["not_in_parent"] == [{"id": "q1", "parents": ["d1"], "span": "não existe no texto"}]
    # No document of the user's tenants (an access policy's view): the span is in no parent, not cut.
    assert evidence_check([q], [], [])["not_in_parent"] == [{"id": "q1", "parents": ["d1"], "span": spans[0]},
                                                            {"id": "q1", "parents": ["d1"], "span": spans[1]},
                                                            {"id": "q1", "parents": ["d1"], "span": spans[2]}]
    assert len(evidence_check([q], chunks)["cut"]) == 2  # documents not given: what no subchunk holds is cut


def test_lab_gold_spans_survive(lab_questions):
    from retrieval.ingest.corpus import load_corpus
    from retrieval.core.paths import LAB_CORPUS

    docs = load_corpus(LAB_CORPUS)
    out = evidence_check(lab_questions, chunk_documents(docs, 120, 30), docs)
    assert out["checked"] > 30 and out["cut"] == [] and out["not_in_parent"] == []


def v(*xs):
    a = np.asarray(xs, dtype=np.float32)
    return a / np.linalg.norm(a)


def test_redundancy_by_parent_cosine_and_jaccard():
    items = [SweepItem("a#0", "a", v(1, 0)), SweepItem("a#1", "a", v(0, 1)),        # same parent
             SweepItem("b#0", "b", v(0.99, 0.1)), SweepItem("c#0", "c", v(0, 1)),   # cos(b, a#0) = 0.995
             SweepItem("d#0", "d", None, "prazo de reembolso trinta dias"),
             SweepItem("e#0", "e", None, "prazo de reembolso trinta dias corridos")]
    # c#0 equals a#1's vector (cosine 1) → near duplicate; e vs d: Jaccard 4/5 = 0.8 → near duplicate
    assert jaccard(items[4].text, items[5].text) == pytest.approx(4 / 5)
    assert redundancy_flags(items) == [False, True, True, True, False, True]


def test_sweep_points_by_hand():
    lists = {"q1": [SweepItem("a#0", "a", v(1, 0)), SweepItem("a#1", "a", v(0, 1)), SweepItem("g#0", "g", v(1, 1))],
             "u": [SweepItem("x#0", "x", v(1, 0))]}
    points = sweep_points(lists, {"q1": ["g"], "u": []}, max_k=3)
    assert [p["recall"] for p in points] == [0, 0, 1]               # only q1 counts in recall
    # redundancy: q1 = 0/1, 1/2, 1/3 ; u = 0/1 at every k (one item) → means over the two questions
    assert [p["redundancy"] for p in points] == [0, round((1 / 2 + 0) / 2, 4), round((1 / 3 + 0) / 2, 4)]
    assert [p["items_mean"] for p in points] == [1, 1.5, 2]
