"""The whole pipeline on the Markdown set (tests/data/markdown): answers in plain text citing sectioned chunks,
code searchable but never quoted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from retrieval.ingest.corpus import load_questions
from retrieval.ingest.markup import SECTION_KEY
from retrieval.pipeline.workbench import open_workbench

pytestmark = pytest.mark.integration

SET = Path(__file__).resolve().parents[1] / "data" / "markdown"
SYNTAX = re.compile(r"(^|\n)\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|>)|`|\*\*|\]\(|</?(?:b|kbd|Note|Tabs|TabItem|Kbd|Tooltip)\b"
                    r"|<!--|\||\{")

ASKED = {"md-01", "md-04", "md-08", "md-11", "md-12"}


@pytest.fixture(scope="module")
def md_bench(settings):
    return open_workbench(settings, SET / "corpus", progress=False)


def test_answers_hold_no_markdown_nor_code_and_cite_their_sections(md_bench) -> None:
    chunks = md_bench.state.chunk_by_id
    code_lines = {line.strip() for c in chunks.values() for line in c.code.split("\n") if len(line.strip()) > 12}
    found = 0
    # one question per kind of place an answer lies in: a table row, a list item, the English page, the MDX page
    for q in [q for q in load_questions(SET / "questions.jsonl") if q.id in ASKED]:
        trace = md_bench.ask(q.question)
        assert not trace.answer.abstained, q.id
        assert trace.answer.adapter == "local-extractive (learned evidence)"
        for sentence in trace.answer.sentences:
            assert not SYNTAX.search(sentence["text"]), (q.id, sentence["text"])
            assert not any(line in sentence["text"] for line in code_lines), (q.id, sentence["text"])
        found += any(chunks[c].parent_id in q.relevant for c in trace.answer.citations)
        assert all(chunks[c].metadata.get(SECTION_KEY) or chunks[c].position == 0 for c in trace.answer.citations)
    assert found == len(ASKED), found


def test_code_is_searched_but_stays_out_of_the_text(md_bench) -> None:
    trace = md_bench.ask("lince deploy --message Promoção de inverno")
    top = trace.lexical.items[0].chunk_id
    chunk = md_bench.state.chunk_by_id[top]
    assert top == "comandos/deploy#3" and chunk.metadata[SECTION_KEY] == "Exemplos"
    assert "Promoção de inverno" in chunk.code and "Promoção de inverno" not in chunk.text
    # every item of the trace JSON names its chunk's section, as the chunk has it (and no page: no page markers)
    data = trace.to_dict()
    items = [*(i for name in ("lexical", "dense", "fused") for i in data[name]["items"]), *data["selected"],
             *data["final"], *data["lost_by_reranker"], *data["reranked"]["items"]]
    assert data["lexical"]["items"][0]["section"] == "Exemplos"
    for item in items:
        assert item.get("section") == md_bench.state.chunk_by_id[item["chunk_id"]].metadata.get(SECTION_KEY), item
        assert "page" not in item and "page_end" not in item
