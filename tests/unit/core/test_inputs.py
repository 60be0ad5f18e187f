"""Input files are checked before they are parsed: JSON nested deeper than 64 levels is refused in one line
naming the file and line (it gave a RecursionError: a traceback in the app, "internal error" in the CLI), and
a path that is not a regular file (a FIFO, a device, a folder) is refused before anything opens it."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from retrieval import cli
from retrieval.ingest.corpus import load_corpus, load_questions, read_corpus
from retrieval.core.errors import CorpusError, InvalidGlossary
from retrieval.core.inputs import MAX_JSON_DEPTH, json_depth_problem
from retrieval.offline import judgments
from retrieval.stages.transforms import Glossary

DEEP = "[" * 100_000 + "]" * 100_000
GOOD_DOC = json.dumps({"id": "a", "text": "O prazo do PX-7 é de sete dias."})
GOOD_Q = json.dumps({"id": "q1", "question": "Qual o prazo?", "relevant": ["a"]})


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, repr(text)
    return text


def _deep_record(key: str, base: dict) -> str:
    return json.dumps(base)[:-1] + f', "{key}": {DEEP}}}'


def test_depth_scan_counts_brackets_outside_strings_only():
    nested = lambda n: "[" * n + "]" * n  # noqa: E731
    assert json_depth_problem(nested(MAX_JSON_DEPTH)) is None
    assert json_depth_problem(nested(MAX_JSON_DEPTH + 1)) == (1, MAX_JSON_DEPTH + 1)
    in_string = json.dumps({"text": "[" * 1000 + '\\" {{{ ' + "{" * 1000})
    assert json_depth_problem(in_string) is None
    assert json_depth_problem(json.dumps([{"a": [1]}] * 500)) is None  # many brackets, shallow
    lines = '{"a": 1}\n{"b": "x\\ny"}\n' + nested(70)
    assert json_depth_problem(lines) == (3, 65)


@pytest.mark.parametrize("kind", ["corpus", "questions"])
def test_deep_json_lines_are_refused_naming_file_and_line(tmp_path, kind):
    path = tmp_path / f"{kind}.jsonl"
    good, load = (GOOD_DOC, load_corpus) if kind == "corpus" else (GOOD_Q, load_questions)
    key = "metadata" if kind == "corpus" else "filters"
    path.write_text(good + "\n" + _deep_record(key, json.loads(good)) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        load(path)
    text = _one_line(err.value)
    assert text.startswith(f"{path}:2: JSON nested more than 64 levels deep")


def test_deep_squad_file_is_refused_with_its_line(tmp_path):
    path = tmp_path / "squad.json"
    path.write_text('{"data": [\n{"title": "t",\n "paragraphs": ' + DEEP + "}]}", encoding="utf-8")
    for load in (load_corpus, load_questions):
        with pytest.raises(CorpusError) as err:
            load(path)
        assert _one_line(err.value).startswith(f"{path}:3: JSON nested more than 64 levels deep")


def test_deep_judgments_file_is_refused_on_read_and_on_save_and_left_as_it_was(tmp_path):
    path = tmp_path / "judged.jsonl"
    original = GOOD_Q + "\n" + _deep_record("graded", {"id": "q2", "question": "x"}) + "\n"
    path.write_text(original, encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        judgments.load(path, "Qual o prazo?")
    assert _one_line(err.value).startswith(f"{path}:2: JSON nested")
    with pytest.raises(CorpusError):
        judgments.save(path, "Qual o prazo?", {"a": 2})
    assert path.read_text(encoding="utf-8") == original


def test_deep_glossary_and_config_file_are_one_line(tmp_path):
    glossary = tmp_path / "glossary.json"
    glossary.write_text('{"synonyms": ' + DEEP + "}", encoding="utf-8")
    with pytest.raises(InvalidGlossary) as err:
        Glossary.load(glossary)
    assert _one_line(err.value).startswith(f"{glossary}:1: JSON nested")
    config = tmp_path / "configs.json"
    config.write_text(DEEP, encoding="utf-8")
    result = CliRunner().invoke(cli.app, ["eval", "--corpus", str(tmp_path), "--questions", str(tmp_path),
                                          "--configs", "bm25", "--config-file", str(config)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [f"error: {config}:1: JSON nested more than 64 levels deep "
                                                  "(arrays and objects); refused before parsing"]


def test_the_cli_refuses_a_deep_question_file_in_one_line(tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(_deep_record("filters", json.loads(GOOD_Q)) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli.app, ["eval", "--corpus", str(tmp_path), "--questions", str(questions),
                                          "--configs", "bm25"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {questions}:1: JSON nested"), result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_before_anything_opens_it(tmp_path):
    fifo = tmp_path / "corpus.jsonl"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    for call in (lambda: load_corpus(fifo), lambda: load_questions(fifo), lambda: judgments.load(fifo, "q"),
                 lambda: judgments.save(fifo, "q", {"a": 1})):
        with pytest.raises(CorpusError) as err:
            call()
        assert _one_line(err.value) == f"{fifo}: a FIFO (named pipe), not a regular file; refused before reading"
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nO prazo do PX-7 é de sete dias.\n", encoding="utf-8")
    os.mkfifo(folder / "b.md")  # in a folder: skipped and named, never opened, the rest read
    docs, report = read_corpus(folder)
    assert [d.id for d in docs] == ["a"]
    assert [s.to_dict() for s in report.skipped] == [
        {"path": "b.md", "reason": "unreadable", "detail": "not a regular file (a FIFO, a socket, a device)"}]


def test_a_device_or_a_folder_is_not_a_question_file(tmp_path):
    if os.path.exists("/dev/zero"):
        with pytest.raises(CorpusError, match="^/dev/zero: a character device, not a regular file"):
            load_corpus("/dev/zero")
    with pytest.raises(CorpusError, match="a folder, not a regular file"):
        load_questions(tmp_path)
