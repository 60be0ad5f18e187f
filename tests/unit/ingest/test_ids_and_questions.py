"""Ids and question sets as an attacker (or a careless export) writes them (retrieval/ingest/corpus.py):

* an id holding an invisible format character (a zero-width space) or a control character (NUL, a line break) is
  refused at load in one line naming file:line and the id escaped: ``doc\\u200b1`` and ``doc1`` are never two
  documents that print alike;
* a question set is checked whole before any run: ``relevant`` typed strictly (``0``, ``""``, an object refused),
  an unknown key (``relevent``) refused naming the known keys, a question that the pipeline would refuse
  (no letters) refused, each naming file:line and the question id;
* a Markdown file quoted 100,000 levels deep is read (markdown-it dropped everything past 20 levels: "no text").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval.core.errors import CorpusError
from retrieval.ingest.corpus import QUESTION_KEYS, chunk_documents, load_corpus, load_questions, read_corpus


def refusal(load, path: Path, **kwargs) -> str:
    with pytest.raises(CorpusError) as caught:
        load(path, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)), message
    return message


def _jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# -- ids ----------------------------------------------------------------------------------------------------
def test_a_zero_width_space_id_is_refused_with_file_and_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "corpus.jsonl", {"id": "doc1", "text": "um"}, {"id": "doc\u200b1", "text": "dois"})
    assert refusal(load_corpus, path) == (
        f"{path}:2: 'id' 'doc\\u200b1' holds U+200B (ZERO WIDTH SPACE), an invisible format character; ids may "
        "not hold control or invisible format characters (two ids that print alike would be two documents)")


def test_a_nul_id_is_refused_with_file_and_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "corpus.jsonl", {"id": "doc1", "text": "um"}, {"id": "doc1\x00", "text": "dois"})
    assert f"{path}:2: 'id' 'doc1\\x00' holds U+0000, a control character" in refusal(load_corpus, path)


@pytest.mark.parametrize("bad, shown", [
    ("\u200d", "\\u200d"), ("\ufeff", "\\ufeff"), ("\u202e", "\\u202e"), ("\u00ad", "\\xad"),  # format (Cf)
    ("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r"), ("\x7f", "\\x7f"), ("\x85", "\\x85"), ("\x1b", "\\x1b"),  # Cc
    ("\u2028", "\\u2028"), ("\u2029", "\\u2029"),  # line and paragraph separators
])
def test_control_and_format_characters_are_refused_in_every_id(tmp_path: Path, bad: str, shown: str) -> None:
    corpus = _jsonl(tmp_path / "corpus.jsonl", {"id": f"d{bad}1", "text": "x"})
    assert f"{corpus}:1: 'id' 'd{shown}1' holds U+{ord(bad):04X}" in refusal(load_corpus, corpus)
    questions = _jsonl(tmp_path / "q.jsonl", {"id": "q1", "question": "q?", "relevant": ["d1"]},
                       {"id": f"q{bad}2", "question": "q?", "relevant": ["d1"]})
    assert f"{questions}:2: 'id' 'q{shown}2' holds U+{ord(bad):04X}" in refusal(load_questions, questions)
    questions = _jsonl(tmp_path / "q.jsonl", {"id": "q1", "question": "q?", "relevant": [f"d{bad}1"]})
    assert f"{questions}:1: question 'q1': each 'relevant' id 'd{shown}1' holds" in refusal(load_questions, questions)


def test_ids_with_spaces_and_any_visible_unicode_still_load(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "corpus.jsonl", {"id": "a b", "text": "x"}, {"id": "ação-é/1", "text": "y"},
                    {"id": '=HYPERLINK("x")', "text": "z"})
    assert [d.id for d in load_corpus(corpus)] == ["a b", "ação-é/1", '=HYPERLINK("x")']


def test_a_folder_file_whose_name_holds_a_zero_width_space_is_skipped_and_named(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text("Texto.\n", encoding="utf-8")
    (tmp_path / "manu\u200bal.md").write_text("Outro texto.\n", encoding="utf-8")
    docs, report = read_corpus(tmp_path)
    assert [d.id for d in docs] == ["manual"]
    assert [(s.path, s.reason) for s in report.skipped] == [("manu\\u200bal.md", "unreadable")]
    assert "U+200B (ZERO WIDTH SPACE)" in report.skipped[0].detail


# -- questions ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("relevant, kind", [(0, "a number (0)"), ("", 'a string ("")'), ({"d1": 1}, "an object"),
                                            (None, "null;"), ("d1", 'a string ("d1")'), (False, "a boolean")])
def test_a_relevant_of_the_wrong_type_is_refused_naming_file_line_and_id(tmp_path: Path, relevant, kind) -> None:
    path = _jsonl(tmp_path / "q.jsonl", {"id": "q1", "question": "Qual o prazo?", "relevant": ["d1"]},
                  {"id": "q-2", "question": "Qual o prazo?", "relevant": relevant})
    message = refusal(load_questions, path)
    assert message.startswith(f"{path}:2: question 'q-2': 'relevant' must be a list of document ids, not {kind}")
    assert message.endswith("write [] or leave it out for a question whose right answer is an abstention")


@pytest.mark.parametrize("key", ["relevent", "relevants", "Relevant", "filter"])
def test_a_misspelled_key_is_refused_naming_the_known_keys(tmp_path: Path, key: str) -> None:
    path = _jsonl(tmp_path / "q.jsonl", {"id": "q1", "question": "Qual o prazo?", key: ["d1"]})
    assert refusal(load_questions, path) == (
        f"{path}:1: question 'q1': unknown key {key!r} (a question's keys are {', '.join(QUESTION_KEYS)}; a key "
        "starting with '_' is a note and is ignored)")


def test_abstention_questions_are_written_on_purpose_and_notes_are_kept_out(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", {"id": "q1", "question": "Qual o prazo?"},
                  {"id": "q2", "question": "Qual o prazo?", "relevant": [], "_note": "no answer in the corpus",
                   "plausible_answers": ["30 dias"], "near": "d1"},  # a SQuAD 2.0 set's unanswerable question
                  {"id": 3, "question": "PX-7?", "relevant": ["d1", 7], "group": "codes", "filters": {"tenant": "a",
                   "year": [2024, 2025]}, "graded": {"d1": 3}, "answers": ["x"], "raters": {"d1": ["ana"]}})
    qs = load_questions(path)
    assert [(q.id, q.relevant, q.group) for q in qs] == [("q1", (), "default"), ("q2", (), "default"),
                                                        ("3", ("d1", "7"), "codes")]
    assert qs[2].filters == {"tenant": "a", "year": [2024, 2025]} and qs[2].graded == {"d1": 3}


@pytest.mark.parametrize("record, says", [
    ({"question": "?"}, "the question has no letters or digits"),
    ({"question": "\u200b\u200b"}, "the question is empty once its control and invisible characters are removed"),
    ({"question": "q?", "filters": {"tenant": {"$ne": "a"}}}, "filter 'tenant' must be a string, number or boolean"),
    ({"question": "q?", "filters": {"tenant": []}}, "filter 'tenant' must be a string, number or boolean"),
    ({"question": "q?", "filters": ["tenant", "a"]}, "'filters' must be an object of field → value, not a list"),
    ({"question": "q?", "group": 7}, "'group' must be a string, not a number"),
    ({"question": "q?", "answers": "x"}, "'answers' must be a list of strings"),
    ({"question": "q?", "graded": {"d\x00": 2}}, "each 'graded' id 'd\\x00' holds U+0000"),
    ({"question": "q?", "evidence": [{"parent": "d\u200b", "start": 0, "end": 2}]},
     "each evidence 'parent' id 'd\\u200b' holds U+200B"),
])
def test_what_an_evaluation_would_refuse_is_refused_at_load_naming_file_line_and_id(tmp_path: Path, record,
                                                                                     says: str) -> None:
    path = _jsonl(tmp_path / "q.jsonl", {"id": "ok", "question": "q?"}, {"id": "=bad", **record})
    assert refusal(load_questions, path).startswith(f"{path}:2: question '=bad': {says}")


def test_a_question_longer_than_the_evaluation_accepts_is_refused_when_the_limit_is_given(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", {"id": "long", "question": "palavra " * 300})
    assert len(load_questions(path)) == 1
    assert refusal(load_questions, path, max_question_chars=2000) == (
        f"{path}:1: question 'long': the question has 2,399 characters; the limit is 2,000 "
        "(RETRIEVAL_MAX_QUESTION_CHARS)")


def test_a_duplicate_question_id_names_both_lines(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", {"id": "q1", "question": "a?"}, {"id": "q0", "question": "b?"},
                  {"id": "q1", "question": "c?"})
    assert refusal(load_questions, path) == f"{path}:3: duplicate question id 'q1' (first at {path}:1)"


def test_trec_and_beir_ids_are_checked_with_file_and_line(tmp_path: Path) -> None:
    topics, qrels = tmp_path / "topics.tsv", tmp_path / "qrels.txt"
    topics.write_text("1\tqual o prazo\n2\touto\n", encoding="utf-8")
    qrels.write_text("1 0 doc-a 1\n2 0 doc\u200bb 1\n", encoding="utf-8")
    with pytest.raises(CorpusError) as caught:
        load_questions(topics, qrels=qrels)
    assert str(caught.value).startswith(f"{qrels}:2: question '2': the docno 'doc\\u200bb' holds U+200B")
    qrels.write_text("1 0 doc-a 1\n2 0 doc-b 1\n", encoding="utf-8")
    assert [q.id for q in load_questions(topics, qrels=qrels)] == ["1", "2"]
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    _jsonl(beir / "corpus.jsonl", {"_id": "d1", "text": "x"})
    _jsonl(beir / "queries.jsonl", {"_id": "q1", "text": "qual?"}, {"_id": "q\x002", "text": "outra?"})
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq\x002\td1\t1\n",
                                             encoding="utf-8")
    with pytest.raises(CorpusError) as caught:
        load_questions(beir)
    assert str(caught.value).startswith(f"{beir / 'qrels' / 'test.tsv'}:3: the query-id 'q\\x002' holds U+0000")


# -- Markdown -------------------------------------------------------------------------------------------------
def test_a_markdown_file_quoted_100000_levels_deep_is_read(tmp_path: Path) -> None:
    (tmp_path / "fundo.md").write_text(">" * 100_000 + " O prazo de reembolso é de 30 dias.\n", encoding="utf-8")
    (tmp_path / "espacado.md").write_text("> " * 100_000 + "Texto espaçado.\n", encoding="utf-8")
    docs, report = read_corpus(tmp_path)
    assert sorted(d.id for d in docs) == ["espacado", "fundo"] and not report.skipped
    chunks = {c.parent_id: c.text for c in chunk_documents(docs, 200, 20)}
    assert chunks == {"fundo": "O prazo de reembolso é de 30 dias.", "espacado": "Texto espaçado."}


def test_a_squad_question_id_is_checked_where_it_sits(tmp_path: Path) -> None:
    path = tmp_path / "squad.json"
    qas = [{"id": "a1", "question": "Qual o prazo?", "answers": [{"text": "30 dias"}]},
           {"id": "a\u200b1", "question": "Qual o prazo?", "answers": []}]
    path.write_text(json.dumps({"data": [{"title": "T", "paragraphs": [{"context": "O prazo é 30 dias.",
                                                                        "qas": qas}]}]}), encoding="utf-8")
    assert refusal(load_questions, path).startswith(
        f"{path}: data[0].paragraphs[0].qas[1]: 'id' 'a\\u200b1' holds U+200B")
    assert [d.id for d in load_corpus(path)] == ["t-p0"]  # the corpus side reads its paragraphs as before
