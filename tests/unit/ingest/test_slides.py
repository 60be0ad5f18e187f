"""PPTX read as structure (retrieval/ingest/slides.py), from files python-pptx writes: each slide a page, its title
its section, bullets and table rows as lines, speaker notes after the slide's content, Markdown's special
characters kept literally; a broken ZIP, a ZIP bomb and a presentation without text refused."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pptx
import pytest
from helpers.documents import NOTE, OPENING, PAY, REVENUE, SPECIAL, TITLES, deck
from pptx.util import Inches

from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents
from retrieval.ingest.formats import FORMATS, Read, Unreadable, format_for
from retrieval.ingest.slides import looks_like_pptx, read_pptx

def chunks(result: Read) -> list:
    return chunk_documents([Document("d", result.title or "t", result.text, {}, "markdown")], 120, 20)


def located(result: Read) -> dict[str, tuple[str, int]]:
    """Each line of the chunks -> its chunk's (section path, page)."""
    return {line: (c.metadata.get("section", ""), c.metadata.get("page", 0)) for c in chunks(result)
            for line in c.text.split("\n")}


def test_format_is_declared() -> None:
    fmt = FORMATS.get("pptx")
    assert fmt.extensions == (".pptx",) and fmt.read is read_pptx and fmt.library == "python-pptx 1.0"
    assert format_for(Path("a.PPTX")).name == "pptx"


def test_slides_are_pages_and_titles_are_sections(tmp_path: Path) -> None:
    path = tmp_path / "contas.pptx"
    path.write_bytes(deck())
    data = path.read_bytes()
    assert looks_like_pptx(data)
    result = read_pptx(data, path)
    assert result.pages == 3
    assert result.title == TITLES[0]  # no core title: the first slide's
    assert result.metadata == {"author": "Joana Ribeiro"}
    found = located(result)
    assert found[OPENING] == (TITLES[0], 1)
    assert found["Impostos municipais"] == (TITLES[1], 2)
    assert found["IPTU e ISS"] == (TITLES[1], 2)
    assert found["FPM e ICMS"] == (TITLES[1], 2)
    assert found[REVENUE] == (TITLES[1], 2)
    assert found[PAY] == (TITLES[2], 3)
    assert found["Cargo: Prefeito; Salário: R$ 10.000"] == (TITLES[2], 3)
    assert found["Cargo: Vice-prefeito; Salário: R$ 7.500"] == (TITLES[2], 3)
    for line in SPECIAL:
        assert found[line] == (TITLES[2], 3)
    assert found["Notas:"] == (TITLES[2], 3) and found[NOTE] == (TITLES[2], 3)
    # bullets keep their levels; a text box's paragraph is not a bullet; notes after the slide's content
    assert "- Impostos municipais\n  - IPTU e ISS\n- Transferências\n  - FPM e ICMS" in result.text
    assert "- " + REVENUE not in result.text
    lines = [line for c in chunks(result) for line in c.text.split("\n")]
    assert lines.index(PAY) < lines.index("Cargo: Prefeito; Salário: R$ 10.000") < lines.index(SPECIAL[0]) \
        < lines.index("Notas:") < lines.index(NOTE)
    assert result.text.startswith("<!-- page 1 -->\n\n# Prestação de Contas 2023\n\n")


def test_core_title_wins_and_notes_are_optional(tmp_path: Path) -> None:
    result = read_pptx(deck(core_title="  Contas   2023 ", notes=False), tmp_path / "a.pptx")
    assert result.title == "Contas 2023" and "Notas:" not in result.text


def test_a_slide_without_a_title_is_not_the_previous_slide_s(tmp_path: Path) -> None:
    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[5])
    first.shapes.title.text = "Abertura"
    blank = presentation.slides.add_slide(presentation.slide_layouts[6])  # Blank: no title placeholder
    blank.shapes.add_textbox(Inches(1), Inches(1), Inches(8), Inches(1)).text_frame.text = REVENUE
    out = io.BytesIO()
    presentation.save(out)
    result = read_pptx(out.getvalue(), tmp_path / "a.pptx")
    assert result.pages == 2 and located(result)[REVENUE] == ("Slide 2", 2)


def test_broken_and_empty_presentations_are_refused(tmp_path: Path) -> None:
    data = deck()
    with pytest.raises(Unreadable) as broken:
        read_pptx(data[: len(data) // 2], tmp_path / "a.pptx")
    assert broken.value.reason == "unreadable" and "\n" not in str(broken.value)
    assert not looks_like_pptx(data[: len(data) // 2]) and not looks_like_pptx(b"%PDF-1.7")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:  # a ZIP that names the part but holds no presentation
        archive.writestr("ppt/presentation.xml", "<nada/>")
    assert looks_like_pptx(out.getvalue())
    with pytest.raises(Unreadable) as wrong:
        read_pptx(out.getvalue(), tmp_path / "a.pptx")
    assert wrong.value.reason == "unreadable"
    empty = pptx.Presentation()
    empty.slides.add_slide(empty.slide_layouts[6])
    out = io.BytesIO()
    empty.save(out)
    with pytest.raises(Unreadable) as blank:
        read_pptx(out.getvalue(), tmp_path / "a.pptx")
    assert blank.value.reason == "no_text"


def test_a_zip_bomb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        with zipfile.ZipFile(io.BytesIO(deck())) as source:
            for info in source.infolist():
                archive.writestr(info.filename, source.read(info.filename))
        archive.writestr("ppt/media/bomba.xml", b"\0" * (40 * 1024 * 1024))
    with pytest.raises(Unreadable) as bomb:
        read_pptx(out.getvalue(), tmp_path / "a.pptx")
    assert bomb.value.reason == "unreadable" and "ZIP bomb" in str(bomb.value)
