"""XLSX read as structure (retrieval/ingest/sheets.py), from files openpyxl writes: each sheet a section, its rows
as ``Header: cell`` lines, dates as ISO text, numbers as written, Markdown's special characters kept literally,
empty sheets skipped, big sheets cut with a warning; a broken ZIP, a ZIP bomb and a workbook without text
refused."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

import openpyxl
import pytest
from helpers.documents import save, workbook

from retrieval.core.types import Document
from retrieval.ingest import sheets
from retrieval.ingest.corpus import chunk_documents
from retrieval.ingest.formats import FORMATS, Read, Unreadable, format_for
from retrieval.ingest.sheets import cell_text, looks_like_xlsx, read_xlsx


def chunks(result: Read) -> list:
    return chunk_documents([Document("d", result.title or "t", result.text, {}, "markdown")], 120, 20)


def sections(result: Read) -> dict[str, str]:
    """Each line of the chunks -> its chunk's section path (and no chunk has a page)."""
    found = chunks(result)
    assert all("page" not in c.metadata for c in found)
    return {line: c.metadata.get("section", "") for c in found for line in c.text.split("\n")}


def test_format_is_declared() -> None:
    fmt = FORMATS.get("xlsx")
    assert fmt.extensions == (".xlsx",) and fmt.read is read_xlsx and fmt.library == "openpyxl 3.1"
    assert format_for(Path("a.XLSX")).name == "xlsx"


def test_sheets_are_sections_and_rows_are_lines(tmp_path: Path) -> None:
    path = tmp_path / "folha.xlsx"
    path.write_bytes(workbook())
    data = path.read_bytes()
    assert looks_like_xlsx(data)
    result = read_xlsx(data, path)
    assert result.pages == 0 and result.title == "" and result.warnings == ()
    found = sections(result)
    assert found["Folha de pagamento de março de 2024"] == "Folha de Pagamento"
    assert found["Cargo: Prefeito; Salário: R$ 10.000; Admissão: 2021-01-01; Carga horária: 40; Efetivo: TRUE"] \
        == "Folha de Pagamento"
    assert found["Cargo: Secretário de Saúde; Salário: R$ 8.500,50; Admissão: 2022-03-15T09:30:00; "
                 "Carga horária: 37.5; Efetivo: FALSE"] == "Folha de Pagamento"
    assert found["Cargo: Assessor *especial* #1; Salário: <b>R$ 4.000</b> & extras; Admissão: 2023-07-01; "
                 "Carga horária: 20"] == "Folha de Pagamento"
    assert found["Número: 12/2024; Objeto: Merenda escolar; Valor: 150000.75"] == "Contratos 2024"
    assert found["Número: 13/2024; Objeto: - Transporte | escolar; Valor: 98000"] == "Contratos 2024"
    assert "# Vazia" not in result.text  # an empty sheet is skipped
    assert result.text.index("# Folha de Pagamento") < result.text.index("# Contratos 2024")


def test_core_title(tmp_path: Path) -> None:
    assert read_xlsx(workbook(title=" Folha  2024 "), tmp_path / "a.xlsx").title == "Folha 2024"


def test_cell_texts() -> None:
    assert [cell_text(v) for v in (None, 3, 3.0, -0.25, 1e20, True, "  a \n b ", dt.time(8, 5))] == \
        ["", "3", "3", "-0.25", "1e+20", "TRUE", "a b", "08:05:00"]
    assert cell_text(dt.datetime(2024, 2, 29)) == "2024-02-29" and cell_text(123456789012.0) == "123456789012"


def test_big_sheets_are_cut_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sheets, "MAX_ROWS", 5)
    monkeypatch.setattr(sheets, "MAX_COLUMNS", 3)
    book = openpyxl.Workbook()
    book.active.title = "Grande"
    book.active.append(["A", "B", "C", "D"])
    for n in range(10):
        book.active.append([f"a{n}", f"b{n}", f"c{n}", f"d{n}"])
    result = read_xlsx(save(book), tmp_path / "a.xlsx")
    assert result.warnings == ("sheet 'Grande': rows past the first 5 left out",
                               "sheet 'Grande': columns past the first 3 left out")
    found = sections(result)
    assert found["A: a3; B: b3; C: c3"] == "Grande" and not any("a4" in line or "d0" in line for line in found)


def test_a_cell_far_past_the_columns_read_is_warned_of(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Larga"
    book.active.append(["Órgão", "Despesa"])
    book.active.append(["Saúde", 1200])
    book.active.cell(row=2, column=16384, value="perdida")  # column XFD, the last there is
    result = read_xlsx(save(book), tmp_path / "a.xlsx")
    assert result.warnings == ("sheet 'Larga': columns past the first 200 left out",)
    assert sections(result)["Órgão: Saúde; Despesa: 1200"] == "Larga" and "perdida" not in result.text


def test_broken_and_empty_workbooks_are_refused(tmp_path: Path) -> None:
    data = workbook()
    with pytest.raises(Unreadable) as broken:
        read_xlsx(data[: len(data) // 2], tmp_path / "a.xlsx")
    assert broken.value.reason == "unreadable" and "\n" not in str(broken.value)
    assert not looks_like_xlsx(data[: len(data) // 2]) and not looks_like_xlsx(b"PK\x03\x04 nada")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("xl/workbook.xml", "<nada")
    with pytest.raises(Unreadable) as wrong:
        read_xlsx(out.getvalue(), tmp_path / "a.xlsx")
    assert wrong.value.reason == "unreadable"
    empty = openpyxl.Workbook()
    empty.create_sheet("Outra")["B2"] = "   "
    with pytest.raises(Unreadable) as blank:
        read_xlsx(save(empty), tmp_path / "a.xlsx")
    assert blank.value.reason == "no_text"


def test_a_zip_bomb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        with zipfile.ZipFile(io.BytesIO(workbook())) as source:
            for info in source.infolist():
                archive.writestr(info.filename, source.read(info.filename))
        archive.writestr("xl/media/bomba.xml", b"\0" * (40 * 1024 * 1024))
    with pytest.raises(Unreadable) as bomb:
        read_xlsx(out.getvalue(), tmp_path / "a.xlsx")
    assert bomb.value.reason == "unreadable" and "ZIP bomb" in str(bomb.value)
