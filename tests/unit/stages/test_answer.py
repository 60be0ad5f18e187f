"""The extractive answer over Markdown chunks: no sentence of an answer holds Markdown syntax or a code line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from retrieval.ingest.corpus import chunk_documents, load_corpus, load_questions
from retrieval.core.types import FinalItem
from retrieval.stages.answer import ExtractiveAnswerer

SET = Path(__file__).resolve().parents[2] / "data" / "markdown"
#: Markdown syntax: a heading, list or quote marker at a line's start, backticks, strong emphasis, link syntax, an
#: HTML or JSX tag of the set's pages or a comment, a table pipe, an MDX expression. (``<hash>`` inside the inline
#: code ``https://<hash>--site.lince.app`` is text, not a tag: inline code becomes its text.)
SYNTAX = re.compile(r"(^|\n)\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|>)|`|\*\*|\]\(|</?(?:b|kbd|Note|Tabs|TabItem|Kbd|Tooltip)\b"
                    r"|<!--|\||\{")


@pytest.fixture(scope="module")
def chunks():
    return chunk_documents(load_corpus(SET / "corpus"), 120, 30)


def test_no_answer_sentence_holds_markdown_syntax_or_a_code_line(chunks) -> None:
    code_lines = {line.strip() for c in chunks for line in c.code.split("\n") if line.strip()}
    assert code_lines and any(c.code for c in chunks)
    answerer = ExtractiveAnswerer(max_sentences=3)
    for q in load_questions(SET / "questions.jsonl"):
        # the context: every chunk of the relevant parent, code-holding chunks first (the worst case)
        mine = sorted((c for c in chunks if c.parent_id in q.relevant), key=lambda c: not c.code)
        context = [FinalItem(c.chunk_id, c.parent_id, r, 1.0, None, c.text) for r, c in enumerate(mine, start=1)]
        answer = answerer.answer(q.question, context)
        assert not answer.abstained and answer.sentences, q.id
        for sentence in answer.sentences:
            assert not SYNTAX.search(sentence["text"]), (q.id, sentence["text"])
            assert sentence["text"] not in code_lines and not any(line in sentence["text"] for line in code_lines
                                                                  if len(line) > 12), (q.id, sentence["text"])
        assert not SYNTAX.search(re.sub(r" \[\d+\]", "", answer.text)), (q.id, answer.text)


def test_a_list_item_never_runs_into_the_next_in_an_answer(chunks) -> None:
    (uso,) = [c for c in chunks if c.chunk_id == "comandos/rollback#2"]
    answer = ExtractiveAnswerer(max_sentences=1).answer(
        "Quando o rollback não é possível para uma versão arquivada?",
        [FinalItem(uso.chunk_id, uso.parent_id, 1, 1.0, None, uso.text)])
    assert [s["text"] for s in answer.sentences] == ["A versão de destino tem mais de 90 dias e já foi arquivada."]
