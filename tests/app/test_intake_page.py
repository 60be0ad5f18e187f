"""The corpus intake panel of the Ask page's sidebar: a folder with files the workbench cannot read shows, in the
page's language, the files read per format and every skipped file with its reason (retrieval/ingest/folder.py)."""

from __future__ import annotations

import pytest
from _apptest import assert_ok, page, plain


@pytest.fixture
def folder(tmp_path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "acervo"
    (root / "leis").mkdir(parents=True)
    (root / "leis" / "lei-1.txt").write_bytes("Lei nº 1. Dispõe sobre a coleta seletiva no Município.\n"
                                              .encode("cp1252"))
    (root / "guia.md").write_text("---\ncategories: [coleta, lixo]\ndate: 2026-02-26\n---\n# Guia da coleta\n\n"
                                  "A coleta seletiva passa às terças e sextas.\n", encoding="utf-8")
    (root / "planilha.xyz").write_text("a;b\n", encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))
    return root


@pytest.mark.parametrize("lang, title, reason", [("en", "What was read: 2 files, 1 skipped", "format not read"),
                                                 ("pt", "O que foi lido: 2 arquivos, 1 pulados", "formato não lido")])
def test_the_sidebar_says_what_was_read_and_skipped(folder, lang, title, reason) -> None:
    at = page(corpus=str(folder), q="Quando passa a coleta seletiva?", lang=lang)
    assert_ok(at)
    assert title in [plain(e.label) for e in at.sidebar.expander]
    tables = [d.value for d in at.sidebar.dataframe]
    counts = tables[0].to_dict("records")
    assert [list(r.values()) for r in counts] == [["markdown", 1, 1, 0, 1], ["text", 1, 1, 0, 1],
                                                  ["total", 2, 2, 0, 2]]
    assert [list(r.values())[:2] for r in tables[1].to_dict("records")] == [["planilha.xyz", reason]]
