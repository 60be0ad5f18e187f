"""A Markdown corpus on the main page (tests/data/markdown), in both languages: the rank grid has a section
column, the provenance card and the citations name the chunk's section, and the answer holds no Markdown."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _apptest import assert_ok, page, plain
from streamlit.testing.v1 import AppTest

from retrieval.ingest.corpus import chunk_documents, load_corpus

SET = Path(__file__).resolve().parents[1] / "data" / "markdown"
QUESTION = "Quando não é possível fazer rollback para uma versão?"
SYNTAX = re.compile(r"(^|\n)\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|>)|`|\*\*|\]\(|</?(?:b|kbd|Note|Tabs|TabItem|Kbd|Tooltip)\b"
                    r"|<!--|\||\{")
SECTION_LINE = {"en": "Section: {}", "pt": "Seção: {}"}


@pytest.fixture
def sections(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(SET))
    chunks = chunk_documents(load_corpus(SET / "corpus"), 120, 30)  # the default chunking
    return {c.chunk_id: c.metadata["section"] for c in chunks if "section" in c.metadata}


def the_trace(at: AppTest) -> dict:
    traces = [trace for sig, trace in at.session_state["traces"].items() if json.loads(sig)[-1] == ""]
    assert len(traces) == 1
    return traces[0]


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_sections_in_the_grid_card_and_citations_and_no_markdown_in_the_answer(sections, lang) -> None:
    at = page(corpus=str(SET / "corpus"), q=QUESTION, lang=lang)
    assert_ok(at)
    trace = the_trace(at)
    answer = trace["answer"]
    assert not answer["abstained"] and answer["citations"]
    assert not SYNTAX.search(re.sub(r" \[\d+\]", "", answer["text"])), answer["text"]
    assert all(not SYNTAX.search(s["text"]) for s in answer["sentences"])
    first = trace["final"][0]["chunk_id"]
    assert first == "comandos/rollback#2" and sections[first] == "Quando o rollback não é possível"

    (grid,) = [d.value for d in at.dataframe if {"chunk_id", "fate"} <= set(d.value.columns)]
    assert "section" in grid.columns
    assert all(row["section"] == sections.get(row["chunk_id"], "") for row in grid.to_dict("records"))
    # the card opens on final #1 and names its section
    assert SECTION_LINE[lang].format(sections[first]) in [plain(m.value) for m in at.markdown]
    # each citation's expander names the cited chunk's section
    labels = [plain(e.label) for e in at.expander]
    assert any(cited in sections for cited in answer["citations"])
    for cited in answer["citations"]:
        if cited in sections:
            assert any(label.endswith(f"`{cited}` · {sections[cited]}") for label in labels), labels
