"""The corpus intake panel of the Ask page's sidebar: a folder with files the workbench cannot read shows, in the
page's language, the files read per format and every skipped file with its reason (retrieval/ingest/folder.py)."""

from __future__ import annotations

import re

import pytest
from helpers.apptest import assert_ok, page, plain


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


@pytest.mark.parametrize("lang, title, lines, skipped", [
    ("en", "What was read: 2 files, 1 skipped",
     ["markdown · 1 file · 1 chunk", "text · 1 file · 1 chunk", "total · 2 files · 2 chunks"],
     ["Skipped: 1 (format not read: 1)", "planilha.xyz: format not read (.xyz is not a format the workbench reads)"]),
    ("pt", "O que foi lido: 2 arquivos, 1 pulados",
     ["markdown · 1 arquivo · 1 trecho", "text · 1 arquivo · 1 trecho", "total · 2 arquivos · 2 trechos"],
     ["Pulados: 1 (formato não lido: 1)", "planilha.xyz: formato não lido (.xyz is not a format the workbench reads)"]),
])
def test_the_sidebar_says_what_was_read_and_skipped(folder, lang, title, lines, skipped) -> None:
    at = page(corpus=str(folder), q="Quando passa a coleta seletiva?", lang=lang)
    assert_ok(at)
    (panel,) = [e for e in at.sidebar.expander if plain(e.label) == title]
    texts = [re.sub(r"\*\*|`|^- ", "", plain(m.value)) for m in panel.markdown]
    assert [line.rstrip() for line in texts[0].split("\n")] == lines
    assert texts[1:] == skipped
    assert [b.label for b in panel.get("download_button")] == [
        "Download the intake report (JSON)" if lang == "en" else "Baixar o relatório de leitura (JSON)"]
