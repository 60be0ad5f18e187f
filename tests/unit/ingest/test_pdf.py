"""The PDF reader: real PDFs written by reportlab (outline, fonts, page breaks, encryption) read as Markdown with
page markers and headings, then chunked: each chunk's section path and pages are the ones the file shows."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pytest
from PIL import Image
from pypdf import PageObject
from reportlab.lib.pagesizes import A4
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.lib.utils import ImageReader, simpleSplit
from reportlab.pdfgen import canvas

from retrieval.core.types import Chunk, Document
from retrieval.ingest.corpus import chunk_documents
from retrieval.ingest.formats import FORMATS, Unreadable, format_for
from retrieval.ingest.pdf import PDF, read_pdf

SIZES = {"h1": 18, "h2": 14}
BODY = 10
LEADING = 12
WIDTH = 450

#: One drawing step of a page: ``("h1" | "h2", text)`` a heading in Helvetica-Bold (``\n`` wraps it);
#: ``("p", text)`` a paragraph wrapped at the column's width with a gap after it; ``("line", text)`` one body line;
#: ``("gap", "")`` a blank line; ``("mark", level, title)`` an outline entry to this point; ``("small", text)`` an
#: 8pt line (a running head); ``("footer", text)`` an 8pt line at the page's foot (a page number);
#: ``("scaled", text)`` a 10pt line drawn with the canvas scaled ×1.8 (18pt in effect).
Step = tuple


def write_pdf(path: Path, pages: Sequence[Sequence[Step]], *, title: str = "", author: str = "",
              encrypt: StandardEncryption | None = None) -> bytes:
    """A PDF of ``pages`` written by reportlab into ``path``; its bytes."""
    c = canvas.Canvas(str(path), pagesize=A4, encrypt=encrypt)
    if title:
        c.setTitle(title)
    if author:
        c.setAuthor(author)
    marks = 0
    for steps in pages:
        y = 800.0
        for step in steps:
            kind = step[0]
            if kind == "mark":
                marks += 1
                c.bookmarkPage(f"m{marks}", fit="XYZ", top=y)
                c.addOutlineEntry(step[2], f"m{marks}", level=step[1])
            elif kind in SIZES:
                size = SIZES[kind]
                y -= size * 0.6
                c.setFont("Helvetica-Bold", size)
                for line in step[1].split("\n"):  # a heading wrapped over lines
                    c.drawString(72, y, line)
                    y -= size * 1.2
            elif kind == "scaled":
                y -= 12
                c.saveState()
                c.scale(1.8, 1.8)
                c.setFont("Helvetica-Bold", 10)
                c.drawString(72 / 1.8, y / 1.8, step[1])
                c.restoreState()
                y -= 22
            elif kind == "small":
                c.setFont("Helvetica", 8)
                c.drawString(72, y, step[1])
                y -= 16
            elif kind in ("p", "line"):
                c.setFont("Helvetica", BODY)
                lines = simpleSplit(step[1], "Helvetica", BODY, WIDTH) if kind == "p" else [step[1]]
                for line in lines:
                    c.drawString(72, y, line)
                    y -= LEADING
                if kind == "p":
                    y -= 8
            elif kind == "gap":
                y -= LEADING
            elif kind == "footer":
                c.setFont("Helvetica", 8)
                c.drawString(290, 40, step[1])
        c.showPage()
    c.save()
    return path.read_bytes()


def chunks_of(text: str, size: int = 120, overlap: int = 20) -> list[Chunk]:
    return chunk_documents([Document("d", "t", text, {}, "markdown")], size, overlap)


def holding(chunks: list[Chunk], words: str) -> Chunk:
    found = [c for c in chunks if words in c.text]
    assert len(found) == 1, (words, [c.text for c in chunks])
    return found[0]


def where(chunk: Chunk) -> tuple[str, int, int | None]:
    return chunk.metadata.get("section", ""), chunk.metadata["page"], chunk.metadata.get("page_end")


HEAD = "Diário Oficial do Município de Vila Serena — Edição nº 1.234"
ART = {
    1: "Art. 1º Fica instituído o programa municipal de coleta seletiva de resíduos sólidos em todo o território "
       "do Município, abrangendo a zona urbana e os distritos rurais.",
    2: "Art. 2º A execução do programa caberá à Secretaria Municipal de Meio Ambiente, que poderá celebrar "
       "convênios com associações e cooperativas de catadores de materiais recicláveis.",
    3: "Art. 3º A contratação das cooperativas de catadores dispensa licitação, nos termos da legislação federal "
       "aplicável, observada a habilitação jurídica e a regularidade fiscal.",
    4: "Art. 4º As despesas decorrentes desta lei correrão por conta das dotações orçamentárias próprias, "
       "suplementadas se necessário.",
    5: "Art. 5º Esta lei entra em vigor na data de sua publicação, revogadas as disposições em contrário.",
}


def gazette(path: Path) -> bytes:
    """Three pages with an outline (two chapters, sections), a running head and a page number on each."""
    return write_pdf(path, [
        [("small", HEAD), ("mark", 0, "Capítulo I"), ("h1", "Capítulo I"), ("mark", 1, "Seção I"),
         ("h2", "Seção I"), ("p", ART[1]), ("p", ART[2]), ("footer", "Página 1")],
        [("small", HEAD), ("mark", 1, "Seção II"), ("h2", "Seção II"), ("p", ART[3]), ("p", ART[4]),
         ("footer", "Página 2")],
        [("small", HEAD), ("mark", 0, "Capítulo II"), ("h1", "Capítulo II"), ("p", ART[5]), ("footer", "Página 3")],
    ], title="Diário Oficial do Município de Vila Serena", author="Prefeitura Municipal de Vila Serena")


def test_outline_gives_the_headings_and_each_chunk_its_section_and_page(tmp_path: Path) -> None:
    read = read_pdf(gazette(tmp_path / "diario.pdf"), tmp_path / "diario.pdf")
    assert read.markup == "markdown"
    assert read.pages == 3
    assert read.title == "Diário Oficial do Município de Vila Serena"
    assert read.metadata == {"author": "Prefeitura Municipal de Vila Serena"}
    assert read.warnings == ()
    lines = read.text.splitlines()
    assert [line for line in lines if line.startswith(("#", "<!--"))] == [
        "<!-- page 1 -->", "# Capítulo I", "## Seção I", "<!-- page 2 -->", "## Seção II", "<!-- page 3 -->",
        "# Capítulo II"]
    assert ART[1] in lines  # one paragraph, one line, its wrapped lines joined by a space
    chunks = chunks_of(read.text)
    assert where(holding(chunks, "Art. 1º")) == ("Capítulo I › Seção I", 1, None)
    assert where(holding(chunks, "Art. 2º")) == ("Capítulo I › Seção I", 1, None)
    assert where(holding(chunks, "Art. 3º")) == ("Capítulo I › Seção II", 2, None)
    assert where(holding(chunks, "Art. 4º")) == ("Capítulo I › Seção II", 2, None)
    assert where(holding(chunks, "Art. 5º")) == ("Capítulo II", 3, None)
    assert [c.text for c in chunks] == [f"{ART[1]}\n{ART[2]}", f"{ART[3]}\n{ART[4]}", ART[5]]  # no head, no page nº


def test_an_outline_title_not_on_its_page_heads_the_top_of_that_page(tmp_path: Path) -> None:
    data = write_pdf(tmp_path / "anexo.pdf", [
        [("p", ART[1]), ("mark", 0, "Das Penalidades"), ("h2", "3. Das Penalidades"), ("p", ART[4])],
        [("mark", 0, "Anexo Único — Tabela de Preços"), ("p", ART[2]), ("h2", "Disposições Transitórias"),
         ("p", ART[3])],
    ])
    read = read_pdf(data, tmp_path / "anexo.pdf")
    assert read.title == "" and read.metadata == {}  # reportlab's "untitled" and "anonymous" are placeholders
    assert [line for line in read.text.splitlines() if line.startswith("#")] == [
        "# Das Penalidades", "# Anexo Único — Tabela de Preços"]
    chunks = chunks_of(read.text)
    assert where(holding(chunks, "Art. 1º")) == ("", 1, None)
    # the line "3. Das Penalidades" is the entry's (section numbers aside): the heading, not repeated as text
    assert holding(chunks, "Art. 4º").text == ART[4]
    assert where(holding(chunks, "Art. 4º")) == ("Das Penalidades", 1, None)
    assert where(holding(chunks, "Art. 2º")) == ("Anexo Único — Tabela de Preços", 2, None)
    # with an outline, a large line that is no outline entry stays text
    assert holding(chunks, "Art. 2º").text == f"{ART[2]}\nDisposições Transitórias\n{ART[3]}"


def test_paragraphs_end_at_a_gap_a_short_closing_line_a_bullet_or_a_change_of_size(tmp_path: Path) -> None:
    data = write_pdf(tmp_path / "paragrafos.pdf", [[
        ("line", "Art. 1º O Conselho Municipal de Saúde reunir-se-á ordinariamente uma vez por mês e,"),
        ("line", "extraordinariamente, quando convocado pelo seu presidente ou pela maioria dos seus"),
        ("line", "membros titulares."),
        ("line", "Art. 2º As reuniões serão públicas, e suas atas serão publicadas no Diário Oficial do"),
        ("line", "Município no prazo de dez dias."),
        ("gap", ""),
        ("line", "Parágrafo único. As deliberações serão tomadas por maioria simples dos presentes."),
        ("gap", ""),
        ("line", "Art. 3º São membros natos do Conselho, além dos representantes eleitos pelos usuários:"),
        ("line", "• o Secretário Municipal de Saúde;"),
        ("line", "• o Diretor do Hospital Municipal."),
        ("small", "Publicado em 5 de março de 2024."),
    ]])
    read = read_pdf(data, tmp_path / "paragrafos.pdf")
    assert read.text.split("\n\n") == [
        "<!-- page 1 -->",
        "Art. 1º O Conselho Municipal de Saúde reunir-se-á ordinariamente uma vez por mês e, extraordinariamente, "
        "quando convocado pelo seu presidente ou pela maioria dos seus membros titulares.",
        "Art. 2º As reuniões serão públicas, e suas atas serão publicadas no Diário Oficial do Município no prazo "
        "de dez dias.",
        "Parágrafo único. As deliberações serão tomadas por maioria simples dos presentes.",
        "Art. 3º São membros natos do Conselho, além dos representantes eleitos pelos usuários:",
        "• o Secretário Municipal de Saúde;",
        "• o Diretor do Hospital Municipal.",
        "Publicado em 5 de março de 2024.\n"]


def test_without_an_outline_font_sizes_give_the_headings(tmp_path: Path) -> None:
    long_large = ("Este aviso em corpo grande tem mais de quinze palavras e por isso não é lido como um título "
                  "de seção")
    data = write_pdf(tmp_path / "tamanhos.pdf", [
        [("h1", "Capítulo I — Das Disposições Gerais"), ("h2", "Seção I"), ("p", ART[1]), ("h2", "Seção II"),
         ("p", ART[2]), ("h2", "Seção III — Das Normas de Transição\ne da Vigência"), ("p", ART[3])],
        [("scaled", "Capítulo II"), ("p", ART[4]), ("h1", "2024"), ("p", ART[5]), ("h2", long_large)],
    ])
    read = read_pdf(data, tmp_path / "tamanhos.pdf")
    assert [line for line in read.text.splitlines() if line.startswith("#")] == [
        "# Capítulo I — Das Disposições Gerais", "## Seção I", "## Seção II",
        "## Seção III — Das Normas de Transição e da Vigência", "# Capítulo II"]
    chunks = chunks_of(read.text)
    assert where(holding(chunks, "Art. 1º")) == ("Capítulo I — Das Disposições Gerais › Seção I", 1, None)
    assert where(holding(chunks, "Art. 2º")) == ("Capítulo I — Das Disposições Gerais › Seção II", 1, None)
    assert where(holding(chunks, "Art. 3º")) == (
        "Capítulo I — Das Disposições Gerais › Seção III — Das Normas de Transição e da Vigência", 1, None)
    # the 10pt heading drawn scaled ×1.8 is 18pt: level 1; a large year or a long large line is text
    chapter_two = holding(chunks, "Art. 4º")
    assert where(chapter_two) == ("Capítulo II", 2, None)
    assert chapter_two.text == f"{ART[4]}\n2024\n{ART[5]}\n{long_large}"


BEFORE_BREAK = ["Art. 1º Fica criado o Conselho Municipal de Cultura.", "",
                "Art. 2º O contrato de concessão do teatro municipal terá vigência de doze meses,",
                "contados da data de sua assinatura, e poderá ser prorrogado por iguais e"]
AFTER_BREAK = ["sucessivos períodos, até o limite de sessenta meses.", "",
               "Art. 3º A fiscalização do contrato caberá à Secretaria de Cultura."]


def break_pdf(path: Path) -> bytes:
    lines = lambda texts: [("gap", "") if not t else ("line", t) for t in texts]  # noqa: E731
    return write_pdf(path, [lines(BEFORE_BREAK), lines(AFTER_BREAK)])


def test_a_paragraph_over_a_page_break_is_cut_at_the_break(tmp_path: Path) -> None:
    read = read_pdf(break_pdf(tmp_path / "quebra.pdf"), tmp_path / "quebra.pdf")
    assert read.text == (
        "<!-- page 1 -->\n\n"
        "Art. 1º Fica criado o Conselho Municipal de Cultura.\n\n"
        "Art. 2º O contrato de concessão do teatro municipal terá vigência de doze meses, contados da data de sua "
        "assinatura, e poderá ser prorrogado por iguais e\n\n"
        "<!-- page 2 -->\n\n"
        "sucessivos períodos, até o limite de sessenta meses.\n\n"
        "Art. 3º A fiscalização do contrato caberá à Secretaria de Cultura.\n")
    # a large chunk holds text of both pages: it runs from page 1 to page 2
    (whole,) = chunks_of(read.text, 120, 20)
    assert where(whole) == ("", 1, 2)
    # smaller chunks: a chunk runs over both pages exactly where it holds words of both
    only = [{w for t in BEFORE_BREAK for w in t.split()}, {w for t in AFTER_BREAK for w in t.split()}]
    only = [only[0] - only[1], only[1] - only[0]]
    spans = []
    for size in (12, 16, 20, 24, 30):
        for chunk in chunks_of(read.text, size, 0):
            pages = [n for n, words in enumerate(only, 1) if words & set(chunk.text.split())]
            assert where(chunk) == ("", pages[0], pages[-1] if len(pages) > 1 else None), (size, chunk.text)
            spans.append((size, len(pages)))
    assert (20, 2) in spans and (30, 2) not in spans  # the cut paragraph spans pages only in a chunk holding both


def scan(path: Path, pages: int) -> bytes:
    """A PDF of ``pages`` pages of drawn rectangles and an image, without text."""
    c = canvas.Canvas(str(path), pagesize=A4)
    image = ImageReader(Image.new("RGB", (60, 40), (200, 180, 40)))
    for _ in range(pages):
        c.rect(72, 500, 300, 200, fill=1)
        c.drawImage(image, 100, 300, 120, 80)
        c.showPage()
    c.save()
    return path.read_bytes()


def test_a_pdf_without_text_is_no_text_and_a_blank_page_a_warning(tmp_path: Path) -> None:
    for pages, where_ in ((2, "any of its 2 pages"), (1, "its page")):
        with pytest.raises(Unreadable) as caught:
            read_pdf(scan(tmp_path / "scan.pdf", pages), tmp_path / "scan.pdf")
        assert caught.value.reason == "no_text"
        assert str(caught.value) == f"no text layer on {where_}: a scanned PDF? Run OCR first, e.g. ocrmypdf"

    data = write_pdf(tmp_path / "misto.pdf", [[("p", ART[1])], [], [("p", ART[2])], [("gap", "")]])
    read = read_pdf(data, tmp_path / "misto.pdf")
    assert read.pages == 4
    assert read.warnings == ("pages 2, 4 have no text layer",)
    assert read.text == f"<!-- page 1 -->\n\n{ART[1]}\n\n<!-- page 2 -->\n\n<!-- page 3 -->\n\n{ART[2]}\n\n" \
                        "<!-- page 4 -->\n"


def test_a_page_whose_text_cannot_be_read_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_pdf(tmp_path / "tres.pdf", [[("p", ART[1])], [("p", ART[2])], [("p", ART[3])]])
    extract = PageObject.extract_text

    def failing(page: PageObject, *args: object, **kwargs: object) -> str:
        if ART[2][:20] in extract(page):
            raise ValueError("conteúdo corrompido")
        return extract(page, *args, **kwargs)

    monkeypatch.setattr(PageObject, "extract_text", failing)
    read = read_pdf(data, tmp_path / "tres.pdf")
    assert read.warnings == ("page 2 has text that could not be read (conteúdo corrompido)",)
    assert read.text == f"<!-- page 1 -->\n\n{ART[1]}\n\n<!-- page 2 -->\n\n<!-- page 3 -->\n\n{ART[3]}\n"
    monkeypatch.setattr(PageObject, "extract_text", lambda *a, **k: (_ for _ in ()).throw(ValueError("ruim")))
    with pytest.raises(Unreadable) as caught:
        read_pdf(data, tmp_path / "tres.pdf")
    assert (caught.value.reason, str(caught.value)) == ("unreadable", "no page's text could be read (page 1: ruim)")


def test_what_is_not_a_readable_pdf_is_unreadable(tmp_path: Path) -> None:
    data = gazette(tmp_path / "diario.pdf")
    for broken in (b"isto n\xe3o \xe9 um PDF", b"", data[:400], data[: len(data) // 2], b"%PDF-1.4\n%%EOF\n"):
        with pytest.raises(Unreadable) as caught:
            read_pdf(broken, tmp_path / "x.pdf")
        assert caught.value.reason == "unreadable", broken[:20]
        assert "\n" not in str(caught.value) and str(caught.value)


def test_an_encrypted_pdf_opens_with_the_empty_password_or_is_unreadable(tmp_path: Path) -> None:
    steps = [[("p", ART[5])]]
    locked = write_pdf(tmp_path / "senha.pdf", steps, encrypt=StandardEncryption("segredo", "dono", strength=128))
    with pytest.raises(Unreadable) as caught:
        read_pdf(locked, tmp_path / "senha.pdf")
    assert (caught.value.reason, str(caught.value)) == ("unreadable", "encrypted PDF (a password is needed)")
    open_ = write_pdf(tmp_path / "aberto.pdf", steps, encrypt=StandardEncryption("", "dono", strength=128))
    assert read_pdf(open_, tmp_path / "aberto.pdf").text == f"<!-- page 1 -->\n\n{ART[5]}\n"


def test_accents_hyphenation_and_markdown_syntax_survive(tmp_path: Path) -> None:
    data = write_pdf(tmp_path / "acentos.pdf", [[
        ("line", "A contra-"), ("line", "tação de serviços é feita pelo 1º lote; ação nº 5 da ex-"),
        ("line", "Secretaria. Diz-"), ("line", "-se que o preço * unitário é de R$ 2,50 <sem> reajuste."),
        ("gap", ""), ("line", "# 3. Não é título, e [isto] não é link_"),
    ]], title="Ação Civil nº 12 — Cessão de Uso", author="  Conceição   Araújo ")
    read = read_pdf(data, tmp_path / "acentos.pdf")
    assert read.title == "Ação Civil nº 12 — Cessão de Uso"
    assert read.metadata == {"author": "Conceição Araújo"}
    chunks = chunks_of(read.text)
    assert [c.text for c in chunks] == [
        "A contratação de serviços é feita pelo 1º lote; ação nº 5 da ex-Secretaria. Diz-se que o preço * unitário "
        "é de R$ 2,50 <sem> reajuste.\n# 3. Não é título, e [isto] não é link_"]
    assert chunks[0].metadata == {"page": 1}


def test_the_format_is_declared_once_with_its_sniff(tmp_path: Path) -> None:
    assert FORMATS.get("pdf") is PDF
    assert format_for(Path("atas/Ata 12.PDF")) is PDF
    assert PDF.extensions == (".pdf",) and PDF.library == "pypdf 7.1" and PDF.label("pt") == "PDF"
    assert PDF.sniff is not None
    assert PDF.sniff(gazette(tmp_path / "d.pdf"))
    assert PDF.sniff(b"\xef\xbb\xbf  %PDF-1.7\n")
    assert not PDF.sniff(b"PK\x03\x04 a zip") and not PDF.sniff(b" " * 1024 + b"%PDF-1.4")
