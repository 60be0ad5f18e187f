"""Learning the ranker from a corpus' labels (retrieval/offline/learn.py): the labels merged from a question set,
the Ask page's judgments and Team judging's ratings; the split that never lets a held-out question (or its
parents) into training; the one-line refusal of too few labels; adoption only of a recommended check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from helpers.fuzz import budget
from retrieval.core.split import split_of
from retrieval.core.types import Question
from retrieval.offline import learn, tuned


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_question_set_the_pages_judgments_and_team_ratings_merge_by_question(tmp_path: Path) -> None:
    qset = _jsonl(tmp_path / "q.jsonl", [
        {"id": "q1", "question": "Qual é o prazo?", "group": "g", "relevant": ["a"], "answers": ["30 dias"]},
        {"id": "q2", "question": "Quem assina?", "group": "g", "relevant": []}])
    # The Ask page's judgments file: the same question (other spacing) with two grades, one of them a new zero.
    judged = _jsonl(tmp_path / "judgments.jsonl", [
        {"id": "judged-1", "question": "Qual  é o prazo?", "graded": {"a": 0, "b": 2}, "relevant": ["b"]}])
    ratings = _jsonl(tmp_path / "ratings.jsonl", [
        {"qid": "t1", "question_set": "", "tenant": "", "question": "Onde fica?", "filters": {}, "parent": "c",
         "grade": 1, "rater": "ana"},
        {"qid": "t1", "question_set": "", "tenant": "", "question": "Onde fica?", "filters": {}, "parent": "c",
         "grade": 3, "rater": "rui"}])
    assert learn.is_ratings_file(ratings) and not learn.is_ratings_file(judged)

    labels = learn.read_label_files([qset, judged, ratings])

    by_text = {q.question: q for q in labels.questions}
    assert list(by_text) == ["Qual é o prazo?", "Quem assina?", "Onde fica?"]
    first = by_text["Qual é o prazo?"]
    assert (first.id, dict(first.graded), first.relevant, first.answers) == ("q1", {"a": 0, "b": 2}, ("b",),
                                                                            ("30 dias",))
    assert by_text["Onde fica?"].graded == {"c": 1}  # the lower middle of the raters' grades (1 and 3)
    assert by_text["Quem assina?"].relevant == ()
    assert labels.judged_pairs == 3
    assert [n for _, n in labels.sources] == [2, 1, 1]
    # Another corpus' judgments (no judged parent in this corpus) are left out; abstentions stay.
    assert [q.question for q in labels.within(frozenset({"c"})).questions] == ["Quem assina?", "Onde fica?"]


@given(st.lists(st.tuples(st.integers(0, 10**6), st.sets(st.sampled_from("abcdefghijklmnop"), max_size=3)),
                min_size=1, max_size=60, unique_by=lambda t: t[0]))
@hsettings(max_examples=budget(60))
def test_no_heldout_question_or_parent_reaches_the_training_part(rows) -> None:
    questions = [Question(f"q{n}", f"pergunta {n}", "g", tuple(sorted(parents))) for n, parents in rows]
    chosen = learn.training_questions(questions)
    held_parents = {p for q in questions if split_of(q.id) == "heldout" for p in q.relevant}
    assert all(split_of(q.id) == "dev" and q.relevant and not set(q.relevant) & held_parents for q in chosen)
    # Every other answerable dev question is chosen: nothing is dropped without a reason.
    assert {q.id for q in chosen} == {q.id for q in questions if split_of(q.id) == "dev" and q.relevant
                                     and not set(q.relevant) & held_parents}


def _dev_ids(n: int) -> list[str]:
    out, i = [], 0
    while len(out) < n:
        if split_of(f"d{i}") == "dev":
            out.append(f"d{i}")
        i += 1
    return out


def test_too_few_labels_are_refused_in_one_line_before_any_request(tmp_path: Path, settings) -> None:
    questions = tuple(Question(qid, f"pergunta {qid}", "g", (f"p{qid}",)) for qid in _dev_ids(5))
    labels = learn.Labels(questions, (("q.jsonl", 5),), 5)
    ready = learn.readiness(labels)
    assert (ready["train"], ready["enough"]) == (5, False)
    assert ready["why"].startswith("too few labels to learn a ranker from: 5 answerable questions")
    opened = []

    class Bench:
        class state:
            documents = [type("D", (), {"id": f"p{q}"})() for q in _dev_ids(5)]

    def open_corpus(corpus, s):
        opened.append(corpus)
        return Bench()

    with pytest.raises(ValueError) as err:
        learn.learn_ranker(open_corpus, settings, tmp_path / "corpus.jsonl", labels)
    assert "\n" not in str(err.value) and "at least 8 are needed" in str(err.value)
    assert not learn.ranker_root(settings, tmp_path / "corpus.jsonl").exists()


def test_adoption_refuses_a_check_that_did_not_recommend_and_keeps_the_overrides_already_adopted(
        tmp_path: Path, settings) -> None:
    corpus = tmp_path / "corpus.jsonl"
    folder = tmp_path / "ranker"
    folder.mkdir()
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    record = {"folder": str(folder), "recommended": False, "why": "default kept: held-out ndcg@10 does not improve",
              "labels": {"questions": 40, "train": 20, "heldout": 12}, "trained_at": "t",
              "comparison": {"delta": -0.01, "p_value": 0.5}}
    with pytest.raises(ValueError, match="not adopted: default kept"):
        learn.adopt_ranker(settings, corpus, record)
    assert tuned.load_adopted(settings, corpus) is None

    tuned.adopt(settings, corpus, {"overrides": {"rrf_k": 30}, "questions": 40,
                                   "heldout": {"metric": "ndcg@10", "delta": 0.02, "p_value": 0.01}})
    learn.adopt_ranker(settings, corpus, {**record, "recommended": True, "comparison": {"delta": 0.041,
                                                                                       "p_value": 0.003}})
    adopted = tuned.load_adopted(settings, corpus)
    assert dict(adopted.overrides) == {"rrf_k": 30, "reranker_model": f"ltr:{folder}"}
    assert adopted.note() == ("tuned for this corpus on 40 questions, held-out ndcg@10 +0.020 (p=0.0100), ranker "
                              "learned from 20 labeled questions, held-out ndcg@10 +0.041 (p=0.0030): rrf_k=30, "
                              f"reranker_model=ltr:{folder}")
    tuned.remove(settings, corpus)


def test_pruning_keeps_the_adopted_the_new_and_the_recent_folders(tmp_path: Path) -> None:
    import os
    import time

    names = ["adopted", "new", "recent", "old"]
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / "last.json").write_text("{}", encoding="utf-8")
    hours_ago = time.time() - 2 * learn.PRUNE_AGE_S
    for name in ("adopted", "new", "old"):
        os.utime(tmp_path / name, (hours_ago, hours_ago))
    learn._prune(tmp_path, [str(tmp_path / "new"), str(tmp_path / "adopted"), None])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adopted", "last.json", "new", "recent"]
