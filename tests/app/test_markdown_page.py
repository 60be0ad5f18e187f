"""A Markdown corpus on the main page (tests/data/markdown), in both languages: the rank grid has a "where"
column (the section, these files have no pages), the provenance card and the citations name the chunk's section,
and the answer holds no Markdown. A folder with page markers (as a PDF reader writes them): the grid, the card, the
citations, the lists' cards, the judge's candidates and "Where is my document?" name the chunk's pages
and section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.apptest import assert_ok, open_tab, page, plain
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
    assert "where" in grid.columns and "section" not in grid.columns
    assert all(row["where"] == sections.get(row["chunk_id"], "") for row in grid.to_dict("records"))
    # the card opens on final #1 and names its section
    assert SECTION_LINE[lang].format(sections[first]) in [plain(m.value) for m in at.markdown]
    # each citation's expander names the cited chunk's document title and section
    labels = [plain(e.label) for e in at.expander]
    titles = {d.id: d.title for d in load_corpus(SET / "corpus")}
    assert any(cited in sections for cited in answer["citations"])
    for cited in answer["citations"]:
        if cited in sections:
            title = titles[cited.split("#")[0]]
            assert any(label.endswith(f"`{cited}` · {title} · {sections[cited]}") for label in labels), labels


#: A gazette as a PDF reader writes it (page markers between blank lines, retrieval/ingest/formats.py): its
#: chunk on the appeal runs over pages 4-5 of "Capítulo I › Seção II".
GAZETTE = """# Diário Oficial, 12/03/2024

Publicação oficial do município.

## Capítulo I

<!-- page 3 -->

Disposições gerais sobre as licitações públicas do município e os contratos administrativos.

### Seção II

<!-- page 4 -->

O prazo para interpor recurso administrativo contra a decisão da comissão é de cinco dias úteis, contados da
intimação do ato.

<!-- page 5 -->

A autoridade competente decide o recurso administrativo em dez dias úteis.
"""
OTHER = """# Boletim de obras

<!-- page 1 -->

A prefeitura anuncia a reforma da praça central e o recapeamento das ruas do bairro.
"""
WHERE = {"en": ("where", "Page: {} · Section: {}"), "pt": ("onde", "Página: {} · Seção: {}")}


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_pages_in_the_grid_card_and_citations(lang, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Markdown folder with page markers: the trace's items carry page, page_end and section; the grid's "where"
    column, the provenance card and the citation (with the document's title) show them."""
    corpus = tmp_path / "gazette"
    corpus.mkdir()
    (corpus / "diario.md").write_text(GAZETTE, encoding="utf-8")
    (corpus / "boletim.md").write_text(OTHER, encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))
    at = page(corpus=str(corpus), q="Qual o prazo para interpor recurso administrativo?", lang=lang)
    assert_ok(at)
    trace = the_trace(at)
    final = {i["chunk_id"]: i for i in trace["final"]}
    cited = [c for c in trace["answer"]["citations"] if final[c].get("page_end")]
    assert cited, trace["answer"]
    item = final[cited[0]]
    assert (item["page"], item["page_end"], item["section"]) == (4, 5, "Capítulo I › Seção II")
    (frame,) = [d for d in at.dataframe if {"chunk_id", "fate"} <= set(d.value.columns)]
    assert json.loads(frame.proto.columns)["where"]["label"] == WHERE[lang][0]
    where = dict(zip(frame.value["chunk_id"], frame.value["where"]))
    assert where[cited[0]] == "pp. 4-5 · Capítulo I › Seção II"
    assert where["boletim#0"] == "p. 1"
    # the card opens on final #1 (the cited chunk): its pages and section
    assert trace["final"][0]["chunk_id"] == cited[0]
    assert WHERE[lang][1].format("pp. 4-5", "Capítulo I › Seção II") in [plain(m.value) for m in at.markdown]
    # the citation names the document, the pages and the section
    labels = [plain(e.label) for e in at.expander]
    assert f"`{cited[0]}` · Diário Oficial, 12/03/2024 · pp. 4-5 · Capítulo I › Seção II" in " ".join(labels), labels
    # the lists' cards and the judge's candidates name it too
    assert_ok(open_tab(at, "tab_lists", lang))
    assert any(plain(m.value).startswith(f"**#1** `{cited[0]}` · pp. 4-5 · Capítulo I › Seção II")
               for m in at.markdown)
    assert_ok(open_tab(at, "tab_judge", lang))
    assert any(plain(m.value).startswith("`diario` · Diário Oficial, 12/03/2024 · pp. 4-5 · Capítulo I › Seção II · ")
               for m in at.markdown)  # then the lists' ranks
    # and "Where is my document?" on the chunk
    assert_ok(open_tab(at, "tab_where", lang))
    at.text_input(key="where_q").set_value("diario").run()
    at.selectbox(key="where_pick").set_value(cited[0]).run()
    assert_ok(at)
    assert any(plain(m.value).startswith(f"**`{cited[0]}`**") and plain(m.value).endswith(
        " · pp. 4-5 · Capítulo I › Seção II") for m in at.markdown), [m.value for m in at.markdown]
