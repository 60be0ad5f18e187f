"""DOCX and ODT read as structure (retrieval/ingest/office.py), from files their own writers make (python-docx,
odfpy): headings as each chunk's section path, list items and table rows as lines, the Title paragraph as the
title, Markdown's special characters kept literally, the body's order kept (paragraphs and tables interleaved);
a broken ZIP, a ZIP bomb and a file without text refused."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from odf import dc, meta
from odf import table as odftable
from odf import text as odftext
from odf.opendocument import OpenDocumentText
from odf.style import ParagraphProperties, Style

from retrieval.core.types import Document
from retrieval.ingest import archive as zips
from retrieval.ingest.corpus import chunk_documents
from retrieval.ingest.formats import FORMATS, Read, Unreadable, format_for
from retrieval.ingest.office import looks_like_docx, looks_like_odt, read_docx, read_odt

INTRO = "O Município de São João publica o relatório anual de contratações de 2023."
GOALS = "A Secretaria de Administração fixou três metas para o exercício seguinte."
DETAIL = "A remuneração dos cargos eletivos segue a lei municipal nº 1.234, de 2001."
LAST = "As contratações temporárias somaram quarenta servidores no ano."
SPECIAL = ["Use *asterisco* e _sublinhado_ sem ênfase.", "# não é um título", "1. não é uma lista",
           "A tag <b> e a entidade &amp; aparecem como escritas.", "- nem isto é item"]


def chunks(result: Read) -> list:
    return chunk_documents([Document("d", result.title or "t", result.text, {}, "markdown")], 120, 20)


def sections(result: Read) -> dict[str, str]:
    """Each line of the chunks -> its chunk's section path."""
    return {line: c.metadata.get("section", "") for c in chunks(result) for line in c.text.split("\n")}


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def check_structure(result: Read) -> None:
    found = sections(result)
    assert found[INTRO] == "Introdução"
    assert found[GOALS] == "Introdução › Metas"
    assert found["Reduzir o prazo das licitações"] == "Introdução › Metas"
    assert found["em trinta dias"] == "Introdução › Metas"
    assert found["Publicar os contratos"] == "Introdução › Metas"
    assert found[DETAIL] == "Introdução › Metas › Remuneração"
    assert found["Cargo: Prefeito; Salário: R$ 20.000,00"] == "Introdução › Metas › Remuneração"
    assert found["Cargo: Vice-prefeito; Salário: R$ 15.000,00"] == "Introdução › Metas › Remuneração"
    assert found[LAST] == "Conclusão"
    for line in SPECIAL:
        assert found[line] == "Conclusão"
    lines = [line for c in chunks(result) for line in c.text.split("\n")]
    # the body's order: the table between the paragraphs around it
    assert lines.index(DETAIL) < lines.index("Cargo: Prefeito; Salário: R$ 20.000,00") < lines.index(LAST)
    assert "Relatório Anual de Contratações" not in result.text  # the title is the title, not a line


# -- DOCX ----------------------------------------------------------------------------------------------------------
def docx_bytes(build) -> bytes:
    document = docx.Document()
    build(document)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def report_docx(document) -> None:
    document.core_properties.author = "Maria Souza"
    document.core_properties.title = "Título das propriedades"
    document.add_paragraph("Relatório Anual de Contratações", style="Title")
    document.add_heading("Introdução", 1)
    document.add_paragraph(INTRO)
    document.add_paragraph("")
    document.add_heading("Metas", 2)
    document.add_paragraph(GOALS)
    document.add_paragraph("Reduzir o prazo das licitações", style="List Bullet")
    document.add_paragraph("em trinta dias", style="List Bullet 2")
    document.add_paragraph("Publicar os contratos", style="List Bullet")
    document.add_heading("Remuneração", 3)
    document.add_paragraph(DETAIL)
    table = document.add_table(rows=3, cols=2)
    for row, cells in zip(table.rows, [("Cargo", "Salário"), ("Prefeito", "R$ 20.000,00"),
                                       ("Vice-prefeito", "R$ 15.000,00")]):
        for cell, text in zip(row.cells, cells):
            cell.text = text
    document.add_heading("Conclusão", 1)
    document.add_paragraph(LAST)
    for line in SPECIAL:
        document.add_paragraph(line)


def test_formats_are_declared() -> None:
    assert FORMATS.get("docx").extensions == (".docx",) and FORMATS.get("docx").read is read_docx
    assert FORMATS.get("odt").extensions == (".odt",) and FORMATS.get("odt").read is read_odt
    assert FORMATS.get("docx").library == "python-docx 1.2" and FORMATS.get("odt").library == "lxml (ODF XML)"
    assert format_for(Path("a.DOCX")).name == "docx" and format_for(Path("a.odt")).name == "odt"


def test_docx_structure(tmp_path: Path) -> None:
    path = write(tmp_path, "relatorio.docx", docx_bytes(report_docx))
    data = path.read_bytes()
    assert looks_like_docx(data) and not looks_like_odt(data)
    result = read_docx(data, path)
    assert result.title == "Relatório Anual de Contratações"
    assert result.metadata == {"author": "Maria Souza"}
    assert result.pages == 0 and "<!-- page" not in result.text
    check_structure(result)
    assert "- Reduzir o prazo das licitações\n  - em trinta dias\n- Publicar os contratos" in result.text


def test_docx_title_and_author_fallbacks(tmp_path: Path) -> None:
    def build(document) -> None:
        document.core_properties.title = "  Título das propriedades "
        document.core_properties.author = ""
        document.add_paragraph(INTRO)

    result = read_docx(docx_bytes(build), tmp_path / "a.docx")
    assert result.title == "Título das propriedades" and "author" not in result.metadata


def test_docx_localized_heading_outline_level_and_numbering(tmp_path: Path) -> None:
    def build(document) -> None:
        localized = document.styles.add_style("Título 1", WD_STYLE_TYPE.PARAGRAPH)
        document.add_paragraph("Capítulo Único", style=localized)
        document.add_paragraph(INTRO)
        outlined = document.add_paragraph("Seção com nível de estrutura")
        level = OxmlElement("w:outlineLvl")
        level.set(qn("w:val"), "1")
        outlined._p.get_or_add_pPr().append(level)
        document.add_paragraph(GOALS)
        numbered = document.add_paragraph("Item numerado sem estilo de lista")
        numbering = OxmlElement("w:numPr")
        for tag, value in (("w:ilvl", "0"), ("w:numId", "1")):
            child = OxmlElement(tag)
            child.set(qn("w:val"), value)
            numbering.append(child)
        numbered._p.get_or_add_pPr().append(numbering)

    result = read_docx(docx_bytes(build), tmp_path / "a.docx")
    found = sections(result)
    assert found[INTRO] == "Capítulo Único"
    assert found[GOALS] == "Capítulo Único › Seção com nível de estrutura"
    assert "- Item numerado sem estilo de lista" in result.text


def test_docx_merged_cells(tmp_path: Path) -> None:
    def build(document) -> None:
        document.add_paragraph(INTRO)
        table = document.add_table(rows=3, cols=3)
        for row, cells in zip(table.rows, [("Cargo", "Lotação", "Salário"), ("Prefeito", "Gabinete", "R$ 20.000,00"),
                                           ("Secretário", "Gabinete", "R$ 12.000,00")]):
            for cell, text in zip(row.cells, cells):
                cell.text = text
        table.cell(0, 0).merge(table.cell(0, 1)).text = "Cargo e lotação"
        table.cell(1, 1).merge(table.cell(2, 1)).text = "Gabinete do Prefeito"

    result = read_docx(docx_bytes(build), tmp_path / "a.docx")
    # the merged header cell once, its second column empty: each body row stays aligned with the header
    assert "| Cargo e lotação |  | Salário |" in result.text
    lines = [line for c in chunks(result) for line in c.text.split("\n")]
    # a cell merged down two rows repeated in each
    assert lines[1:] == ["Cargo e lotação: Prefeito; Gabinete do Prefeito; Salário: R$ 20.000,00",
                         "Cargo e lotação: Secretário; Gabinete do Prefeito; Salário: R$ 12.000,00"]


@pytest.mark.parametrize("data", [b"PK\x03\x04 not really a zip", b"", b"%PDF-1.7 a pdf",
                                  docx_bytes(report_docx)[:2000]])
def test_broken_docx_is_unreadable(data: bytes, tmp_path: Path) -> None:
    with pytest.raises(Unreadable) as caught:
        read_docx(data, tmp_path / "a.docx")
    assert caught.value.reason == "unreadable" and "\n" not in str(caught.value)
    assert not looks_like_docx(data)


def test_zip_without_a_word_document(tmp_path: Path) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("notas.txt", "não é um documento")
    assert not looks_like_docx(out.getvalue()) and not looks_like_odt(out.getvalue())
    with pytest.raises(Unreadable) as caught:
        read_docx(out.getvalue(), tmp_path / "a.docx")
    assert caught.value.reason == "unreadable"


def test_docx_without_text(tmp_path: Path) -> None:
    with pytest.raises(Unreadable) as caught:
        read_docx(docx_bytes(lambda d: d.add_paragraph("   ")), tmp_path / "a.docx")
    assert caught.value.reason == "no_text"


def test_zip_bomb_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = docx_bytes(report_docx)
    out = io.BytesIO(data)
    with zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/media/bomba.bin", b"\0" * (4 * 1024 * 1024))  # 4 MB to ~4 KB: over 100 times
    with pytest.raises(Unreadable) as caught:
        read_docx(out.getvalue(), tmp_path / "a.docx")
    assert caught.value.reason == "unreadable" and "bomba.bin" in str(caught.value)
    monkeypatch.setattr(zips, "MAX_MEMBER_BYTES", 1000)  # a member past the size limit
    with pytest.raises(Unreadable) as caught:
        read_docx(data, tmp_path / "a.docx")
    assert caught.value.reason == "unreadable"
    with pytest.raises(Unreadable) as caught:
        read_odt(odt_bytes(report_odt), tmp_path / "a.odt")
    assert caught.value.reason == "unreadable" and "content.xml" in str(caught.value)


# -- ODT -----------------------------------------------------------------------------------------------------------
def odt_bytes(build) -> bytes:
    document = OpenDocumentText()
    build(document)
    out = io.BytesIO()
    document.write(out)
    return out.getvalue()


def odt_table(rows: list[tuple[str, ...]], repeated_empty: int = 0) -> odftable.Table:
    table = odftable.Table(name="Remuneracao")
    for cells in rows:
        row = odftable.TableRow()
        for text in cells:
            cell = odftable.TableCell()
            cell.addElement(odftext.P(text=text))
            row.addElement(cell)
        if repeated_empty:
            row.addElement(odftable.TableCell(numbercolumnsrepeated=repeated_empty))
        table.addElement(row)
    return table


def odt_list(items: list[str | list[str]]) -> odftext.List:
    listing = odftext.List()
    for entry in items:
        item = odftext.ListItem()
        if isinstance(entry, list):
            item.addElement(odt_list(entry))
        else:
            item.addElement(odftext.P(text=entry))
        listing.addElement(item)
    return listing


def report_odt(document) -> None:
    title_style = Style(name="Title", family="paragraph")
    title_style.addElement(ParagraphProperties())
    document.styles.addElement(title_style)
    document.meta.addElement(dc.Title(text="Título dos metadados"))
    document.meta.addElement(dc.Creator(text="Maria Souza"))
    document.text.addElement(odftext.P(stylename=title_style, text="Relatório Anual de Contratações"))
    document.text.addElement(odftext.H(outlinelevel=1, text="Introdução"))
    document.text.addElement(odftext.P(text=INTRO))
    document.text.addElement(odftext.P(text=""))
    document.text.addElement(odftext.H(outlinelevel=2, text="Metas"))
    document.text.addElement(odftext.P(text=GOALS))
    listing = odftext.List()
    first = odftext.ListItem()
    first.addElement(odftext.P(text="Reduzir o prazo das licitações"))
    first.addElement(odt_list(["em trinta dias"]))
    listing.addElement(first)
    last = odftext.ListItem()
    last.addElement(odftext.P(text="Publicar os contratos"))
    listing.addElement(last)
    document.text.addElement(listing)
    document.text.addElement(odftext.H(outlinelevel=3, text="Remuneração"))
    document.text.addElement(odftext.P(text=DETAIL))
    document.text.addElement(odt_table([("Cargo", "Salário"), ("Prefeito", "R$ 20.000,00"),
                                        ("Vice-prefeito", "R$ 15.000,00")], repeated_empty=1000))
    document.text.addElement(odftext.H(outlinelevel=1, text="Conclusão"))
    document.text.addElement(odftext.P(text=LAST))
    for line in SPECIAL:
        document.text.addElement(odftext.P(text=line))


def test_odt_structure(tmp_path: Path) -> None:
    path = write(tmp_path, "relatorio.odt", odt_bytes(report_odt))
    data = path.read_bytes()
    assert looks_like_odt(data) and not looks_like_docx(data)
    result = read_odt(data, path)
    assert result.title == "Relatório Anual de Contratações"
    assert result.metadata == {"author": "Maria Souza"}
    assert result.pages == 0 and "<!-- page" not in result.text
    check_structure(result)
    assert "- Reduzir o prazo das licitações\n  - em trinta dias\n- Publicar os contratos" in result.text
    assert "|  |" not in result.text  # the thousand repeated empty cells are not columns


def test_odt_inline_text_and_meta_title(tmp_path: Path) -> None:
    def build(document) -> None:
        document.meta.addElement(dc.Title(text=" Ata da reunião "))
        document.meta.addElement(meta.InitialCreator(text="João Lima"))
        paragraph = odftext.P(text="Presentes:")
        paragraph.addElement(odftext.S(c=3))
        paragraph.addElement(odftext.Span(text="o Prefeito"))
        paragraph.addElement(odftext.Tab())
        paragraph.addText("e o Vice")
        paragraph.addElement(odftext.LineBreak())
        paragraph.addText("na sala nº 2.")
        document.text.addElement(paragraph)
        section = odftext.Section(name="Anexo")
        section.addElement(odftext.H(outlinelevel=2, text="Anexo I"))
        section.addElement(odftext.P(text=DETAIL))
        document.text.addElement(section)
        cell_table = odftable.Table(name="Mesclada")
        for cells in (("Cargo", "Salário"), ("Prefeito", None)):
            row = odftable.TableRow()
            for text in cells:
                if text is None:
                    row.addElement(odftable.CoveredTableCell())
                else:
                    cell = odftable.TableCell()
                    cell.addElement(odftext.P(text=text))
                    row.addElement(cell)
            cell_table.addElement(row)
        document.text.addElement(cell_table)

    result = read_odt(odt_bytes(build), tmp_path / "ata.odt")
    assert result.title == "Ata da reunião" and result.metadata == {"author": "João Lima"}
    found = sections(result)
    assert found["Presentes: o Prefeito e o Vice na sala nº 2."] == ""
    assert found[DETAIL] == "Anexo I"
    assert found["Cargo: Prefeito"] == "Anexo I"


@pytest.mark.parametrize("data", [b"PK\x03\x04 not really a zip", b"", docx_bytes(report_docx)])
def test_broken_odt_is_unreadable(data: bytes, tmp_path: Path) -> None:
    with pytest.raises(Unreadable) as caught:
        read_odt(data, tmp_path / "a.odt")
    assert caught.value.reason == "unreadable" and "\n" not in str(caught.value)
    assert not looks_like_odt(data)


def test_odt_with_broken_xml_or_without_text(tmp_path: Path) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", "<office:document-content xmlns:office='x'><unclosed>")
    assert looks_like_odt(out.getvalue())
    with pytest.raises(Unreadable) as caught:
        read_odt(out.getvalue(), tmp_path / "a.odt")
    assert caught.value.reason == "unreadable"
    with pytest.raises(Unreadable) as caught:
        read_odt(odt_bytes(lambda d: d.text.addElement(odftext.P(text="  "))), tmp_path / "a.odt")
    assert caught.value.reason == "no_text"
