"""Uploading from the Ask page's sidebar (ui/ask/uploads.py, retrieval/serving/uploads.py): a real PDF chosen in the
uploader is read, indexed and listed in "My documents" with no other click; a question is answered citing it and its
page; a file whose bytes are not what its name says is refused by name, the collection untouched; removed, the
document is gone from the list and the index."""

from __future__ import annotations

import pytest
from helpers.apptest import assert_ok, page, plain
from helpers.documents import gazette_pdf


@pytest.fixture
def write_root(tmp_path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "gravaveis"
    root.mkdir()
    monkeypatch.setenv("RETRIEVAL_WRITE_ROOTS", str(root))
    return root


def uploader(at):
    (found,) = [w for w in at.sidebar.get("file_uploader")]
    return found


def test_an_uploaded_pdf_is_indexed_answered_with_its_page_and_removed(write_root) -> None:
    at = page(lang="en")
    assert_ok(at)
    assert ".pdf" in [f".{t}" if not t.startswith(".") else t for t in uploader(at).allowed_type]
    uploader(at).set_value([("Diário Oficial.pdf", gazette_pdf(), "application/pdf"),
                            ("planilha.pdf", b"not a pdf at all", "application/pdf")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [plain(e.value) for e in at.sidebar.error]
    assert errors == ["Not added: planilha.pdf: its bytes are not PDF, whatever its extension says"]
    assert [plain(s.value) for s in at.sidebar.success] == ["Added `Diário Oficial.pdf` (7 chunks): ask about it now."]
    assert at.session_state.corpus_source == "mine"
    assert at.query_params["corpus"] == "@mine"
    (listing,) = [e for e in at.sidebar.expander if plain(e.label) == "My documents (1)"]
    assert "Diário Oficial.pdf" in plain(listing.markdown[0].value)
    assert "PDF · 3 pages · 7 chunks" in plain(listing.markdown[0].value)

    at.session_state.question = "Qual é a taxa de inscrição no concurso de jardinagem?"
    at.run()
    assert_ok(at)
    trace = list(at.session_state.traces.values())[-1]
    top = trace["final"][0]
    assert top["chunk_id"].startswith("diário-oficial#")
    assert "quarenta e dois reais" in top["text"]
    assert (top["page"], top["page_end"]) == (1, 2)  # the fact opens page 2; its chunk starts on page 1
    page_text = "\n".join(plain(m.value) for m in at.markdown)
    assert "Page: pp. 1-2" in page_text
    assert "**[1]**" in page_text  # the answer cites it
    assert "1 documents · 7 chunks" in "\n".join(plain(c.value) for c in at.sidebar.caption)

    (listing,) = [e for e in at.sidebar.expander if plain(e.label) == "My documents (1)"]
    listing.button[0].click()
    at.run()
    assert not at.exception
    assert [plain(s.value) for s in at.sidebar.success][0].startswith("Removed `Diário Oficial.pdf`")
    assert [plain(i.value) for i in at.sidebar.info][-1] == \
        "Your collection is empty: add documents with the uploader in the sidebar."
    assert not at.sidebar.expander or all("My documents" not in plain(e.label) for e in at.sidebar.expander)
    folders = [p for p in (write_root / "uploads").iterdir()]
    assert [p.name for p in folders[0].iterdir() if not p.name.startswith(".")] == []
