"""A folder as the analyst keeps it (retrieval/ingest/folder.py): any front matter, files skipped and named with
their reason, links never followed out of the folder, a new format declared in one place."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from retrieval.core.filters import build_filters, field_types
from retrieval.core.kinds import Text
from retrieval.ingest.corpus import chunk_documents, read_corpus
from retrieval.ingest.formats import FORMATS, Format, Read
from retrieval.ingest.metadata import keepable

POST = """---
title: Novo portal de dados
date: 2026-02-26
updated: 2026-03-01T10:30:00
authors: [ana, bruno]
categories:
  - dados
  - api
versions: [1, "dois"]
extra:
  social: true
  cover: null
  autor:
    nome: Ana
tags: []
---
# Novo portal de dados

O portal de dados abertos do município publica a API de licitações.
"""


def _write(root: Path, name: str, data: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def test_static_site_front_matter_is_kept_dates_iso_lists_multi_valued_maps_dotted(tmp_path):
    _write(tmp_path, "blog/post.md", POST)
    docs, report = read_corpus(tmp_path)
    (doc,) = docs
    assert doc.title == "Novo portal de dados"
    assert dict(doc.metadata) == {
        "date": "2026-02-26", "updated": "2026-03-01T10:30:00", "authors": ("ana", "bruno"),
        "categories": ("dados", "api"), "versions": ("1", "dois"), "extra.social": True, "extra.autor.nome": "Ana",
        "format": "markdown", "folder": ("blog",)}
    assert report.warnings == ["blog/post.md: metadata 'extra.cover' dropped (null)",
                               "blog/post.md: metadata 'tags' dropped (an empty list)"]


def test_front_matter_numbers_yaml_would_rewrite_stay_distinct_tenants(tmp_path):
    """Regression: YAML read the front matter's ``tenant: 007`` as the integer 7, merging tenants 007 and 7."""
    from retrieval.core.errors import CorpusError
    from retrieval.ingest.corpus import load_corpus

    for name, tenant in (("t007.md", "007"), ("t7.md", "7")):
        (tmp_path / name).write_text(f"---\ntitle: {name}\ntenant: {tenant}\n---\nsenha do cofre\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="tenant field 'tenant' is a integer here but a string"):
        load_corpus(tmp_path, "tenant")  # two tenants of two types: refused, never merged into one
    (tmp_path / "t7.md").write_text("---\ntitle: sete\ntenant: '7'\n---\nsenha\n", encoding="utf-8")
    assert sorted(d.metadata["tenant"] for d in load_corpus(tmp_path, "tenant")) == ["007", "7"]


def test_a_filter_on_a_list_matches_by_member(tmp_path):
    _write(tmp_path, "blog/post.md", POST)
    _write(tmp_path, "blog/outro.md", "---\ncategories: saude\n---\nO posto de saúde abre às sete.\n")
    docs, _ = read_corpus(tmp_path)
    assert {d.id: d.metadata["categories"] for d in docs} == {"blog/post": ("dados", "api"),
                                                             "blog/outro": ("saude",)}  # one kind per field
    chunks = chunk_documents(docs, 120, 20)
    types = field_types(chunks)
    flt = build_filters({"categories": "dados"}, types, "tenant")
    assert [c.parent_id for c in chunks if flt.matches(c.metadata)] == ["blog/post"]
    assert flt.chroma_where() == {"categories": {"$contains": "dados"}}
    either = build_filters([("categories", "api"), ("categories", "saude")], types, "tenant")
    assert sorted(c.parent_id for c in chunks if either.matches(c.metadata)) == ["blog/outro", "blog/post"]
    assert build_filters({"folder": "blog"}, types, "tenant").matches(chunks[0].metadata)


def test_one_file_s_front_matter_never_refuses_the_folder(tmp_path):
    _write(tmp_path, "quebrado.md", "---\ntitle: [sem fim\n---\nCorpo do texto quebrado.\n")
    _write(tmp_path, "aberto.md", "---\ntitle: nunca fecha\nCorpo sem fim de front matter.\n")
    _write(tmp_path, "reservado.md", "---\nformat: pdf\n$where: x\npage: 3\n---\nTexto comum.\n")
    docs, report = read_corpus(tmp_path)
    assert sorted(d.id for d in docs) == ["aberto", "quebrado", "reservado"]
    by_id = {d.id: d for d in docs}
    assert by_id["reservado"].metadata == {"format": "markdown", "folder": (".",)}
    assert by_id["quebrado"].text.strip() == "Corpo do texto quebrado."
    assert [w.split(": ", 1)[0] for w in report.warnings] == ["aberto.md", "quebrado.md", "reservado.md",
                                                              "reservado.md", "reservado.md"]
    assert "front matter is not valid YAML" in report.warnings[1]
    assert "metadata 'format' dropped (the workbench writes this key itself)" in report.warnings[2]


def test_skipped_files_are_named_with_their_reason_and_a_link_out_is_never_followed(tmp_path):
    root = tmp_path / "acervo"
    _write(root, "leis/lei-1.txt", "Lei Municipal nº 1. Dispõe sobre a limpeza urbana.\n")
    _write(root, "dados.bin", os.urandom(64) + b"\x00")
    _write(root, "planilha.xyz", "a;b\n")
    _write(root, "quebrado.txt", b"\x00\x01\x02 binario")
    _write(root, "README.md", "# Leia-me\n\nNão é um documento.\n")
    _write(root, ".oculto.md", "segredo\n")
    secret = _write(tmp_path, "fora.md", "SEGREDO=abc123\n")
    os.symlink("/proc/self/environ", root / "ambiente.md")
    os.symlink(secret, root / "fora.md")
    os.symlink(root / "leis" / "lei-1.txt", root / "atalho.txt")  # a link inside the folder is read
    os.symlink(tmp_path, root / "pasta-fora")
    docs, report = read_corpus(root)
    assert sorted(d.id for d in docs) == ["atalho", "leis/lei-1"]
    assert all("SEGREDO" not in d.text and "PATH=" not in d.text for d in docs)
    assert sorted((s.path, s.reason) for s in report.skipped) == [
        (".oculto.md", "hidden"), ("README.md", "readme"), ("ambiente.md", "link_outside"),
        ("dados.bin", "format"), ("fora.md", "link_outside"), ("pasta-fora/", "link_outside"),
        ("planilha.xyz", "format"), ("quebrado.txt", "unreadable")]
    assert report.skipped_by_reason() == {"hidden": 1, "readme": 1, "link_outside": 3, "format": 2, "unreadable": 1}
    table = report.count_chunks(chunk_documents(docs, 120, 20)).table()
    assert table.splitlines()[:3] == ["format  files  documents  pages  chunks",
                                      "text        2          2      0       2",
                                      "total       2          2      0       2"]
    assert "  ambiente.md: a link leaving the folder (leads to a file outside the folder)" in table
    assert json.loads(json.dumps(report.to_dict()))["totals"] == {"files": 2, "documents": 2, "pages": 0,
                                                                  "chunks": 2}


def test_a_windows_1252_text_file_is_read_with_its_accents(tmp_path):
    _write(tmp_path, "lei.txt", "Lei nº 7. Dispõe sobre a contratação no Município de São José.\n".encode("cp1252"))
    docs, report = read_corpus(tmp_path)
    assert "contratação no Município de São José" in docs[0].text
    assert report.warnings == ["lei.txt: not UTF-8, read as cp1252"]


def test_a_format_declared_in_one_place_is_read_listed_and_counted(tmp_path):
    def read_note(data: bytes, path: Path) -> Read:
        title, _, body = data.decode("utf-8").partition("\n")
        return Read(f"# {title}\n\n<!-- page 2 -->\n\n{body}", "markdown", title, {"fonte": "nota"}, pages=2)

    FORMATS.declare(Format("nota", Text("note", "nota"), (".nota",), read_note, lambda b: b.startswith(b"NOTA")))
    try:
        _write(tmp_path, "a.nota", "NOTA de serviço\nO expediente termina às dezoito horas.\n")
        _write(tmp_path, "b.nota", "não começa com a assinatura\n")
        docs, report = read_corpus(tmp_path)
        (chunk,) = chunk_documents(docs, 120, 20)
        assert (chunk.parent_id, chunk.metadata["page"], chunk.metadata["section"]) == ("a", 2, "NOTA de serviço")
        assert chunk.metadata["format"] == "nota" and chunk.metadata["fonte"] == "nota"
        assert [(s.path, s.reason, s.detail) for s in report.skipped] == [("b.nota", "unreadable",
                                                                          "its bytes are not note")]
        report.count_chunks([chunk])
        assert vars(report.formats["nota"]) == {"files": 1, "documents": 1, "pages": 2, "chunks": 1}
    finally:
        FORMATS.withdraw("nota")


@pytest.mark.parametrize("value, kept", [
    ({"a": [True, 1]}, {"a": ("true", "1")}),
    ({"a": [{"b": 1}]}, {}),
    ({"a": float("nan")}, {}),
    ({"a": 2**70}, {}),
    ({"a": {"b": {"c": [1, 2]}}}, {"a.b.c": (1, 2)}),
])
def test_keepable_values(value, kept):
    assert keepable(value, "f.md")[0] == kept


def test_a_law_s_article_abbreviation_never_ends_a_sentence():
    from retrieval.core.text import split_sentences, whole_sentences

    text = "Art. 3º Fica autorizado o serviço. Parágrafo único. Nos arts. 4 e 5 vale o prazo."
    assert split_sentences(text) == ["Art. 3º Fica autorizado o serviço.", "Parágrafo único.",
                                     "Nos arts. 4 e 5 vale o prazo."]
    assert whole_sentences(text) == split_sentences(text)


def test_a_scanned_pdf_is_named_in_the_table_never_indexed_empty(tmp_path):
    from reportlab.pdfgen import canvas

    scan = canvas.Canvas(str(tmp_path / "digitalizado.pdf"))
    scan.rect(50, 50, 400, 600, fill=1)  # a page with no text layer, as a scanner writes it
    scan.showPage()
    scan.save()
    _write(tmp_path, "nota.txt", "Nota\n\nO expediente termina às dezoito horas.\n")
    docs, report = read_corpus(tmp_path)
    assert [d.id for d in docs] == ["nota"]
    (skipped,) = report.skipped
    assert (skipped.path, skipped.reason) == ("digitalizado.pdf", "no_text")
    assert "digitalizado.pdf: no text (no text layer" in report.table()


def test_a_file_over_its_format_s_limit_is_skipped_as_too_large(tmp_path):
    from retrieval.ingest.html import MAX_HTML_BYTES

    _write(tmp_path, "enorme.html", b"<p>" + b"a " * (MAX_HTML_BYTES // 2 + 10) + b"</p>")
    _write(tmp_path, "nota.txt", "Nota\n\nO expediente termina às dezoito horas.\n")
    docs, report = read_corpus(tmp_path)
    assert [d.id for d in docs] == ["nota"]
    assert [(s.path, s.reason, s.detail) for s in report.skipped] == [
        ("enorme.html", "too_large", "10.0 MB; the limit for HTML is 10 MB")]


def test_what_broke_the_intake_once_now_costs_one_file_at_most(tmp_path):
    """A YAML map bomb, 20,000 keys, a tenant list, an id twice, a name that forges a line, a corrupt ODT sniff."""
    import zipfile

    bomb = "---\na: &a {x1: 1, x2: 2, x3: 3, x4: 4, x5: 5, x6: 6, x7: 7, x8: 8, x9: 9}\n" + "".join(
        f"{k}: &{k} {{y1: *{p}, y2: *{p}, y3: *{p}, y4: *{p}, y5: *{p}, y6: *{p}, y7: *{p}, y8: *{p}}}\n"
        for p, k in zip("abcdefgh", "bcdefghi")) + "---\nCorpo com muitas chaves.\n"
    _write(tmp_path, "bomba.md", bomb)
    _write(tmp_path, "chaves.md", "---\n" + "".join(f"k{n}: {n}\n" for n in range(20_000)) + "---\nCorpo.\n")
    _write(tmp_path, "inquilinos.md", "---\ntenant: [a, b]\n---\nDe dois inquilinos.\n")
    _write(tmp_path, "a.md", "Primeiro a.\n")
    _write(tmp_path, "a.txt", "Segundo a.\n")
    _write(tmp_path, "a.md.txt", "Terceiro a: its id 'a.md' is a.md's.\n")
    _write(tmp_path, "forjado\nindexed 999 documents.txt", "Nome que forja uma linha.\n")
    with zipfile.ZipFile(tmp_path / "quebrado.odt", "w") as z:
        z.writestr("mimetype", "x" * 100, compress_type=zipfile.ZIP_DEFLATED)
    raw = (tmp_path / "quebrado.odt").read_bytes()
    at = raw.index(b"mimetype") + len(b"mimetype")
    (tmp_path / "quebrado.odt").write_bytes(raw[:at] + b"\xff" * 8 + raw[at + 8:])  # a corrupt deflate stream
    docs, report = read_corpus(tmp_path, "tenant")
    assert sorted(d.id for d in docs) == ["a.md", "a.txt", "bomba", "chaves"]  # a name forging a line: no id
    by_id = {d.id: d for d in docs}
    assert len(by_id["bomba"].metadata) == 100 + 2 and len(by_id["chaves"].metadata) == 100 + 2  # + format, folder
    assert sorted((s.path, s.reason) for s in report.skipped) == [
        ("a.md.txt", "unreadable"), ("forjado\\x0aindexed 999 documents.txt", "unreadable"),
        ("inquilinos.md", "unreadable"), ("quebrado.odt", "unreadable")]
    assert not any(line.startswith("indexed 999") for line in report.table().split("\n"))
    assert json.dumps(report.to_dict())


def test_a_table_stops_at_its_limit_and_escapes_a_repeated_cell_once():
    from retrieval.ingest.formats import MAX_TABLE_CHARS, md_table

    big = "Art. 1º " + "a" * 500_000
    table = md_table([["Texto"]] + [[big]] * 8_000)  # a merged cell down 8,000 rows: one object, many rows
    assert len(table) <= MAX_TABLE_CHARS + len(big) + 100 and table.count("| Art. 1º") == 3
    assert md_table([["Cargo", "Salário"], ["Prefeito", "R$ 20.000,00"], ["", " "]]).split("\n") == [
        "| Cargo | Salário |", "|---|---|", "| Prefeito | R$ 20.000,00 |"]
