"""EPUB read as structure (retrieval/ingest/epub.py), from files written with the format's own structure (a ZIP:
``mimetype`` first and stored, the container, the OPF, the spine's XHTML): chapters in spine order, their headings
as sections, a heading-less chapter named by the table of contents, the OPF's title and creator; a broken ZIP, a
spine path out of the archive and a ZIP bomb refused. And a folder with one PPTX, XLSX and EPUB read through
the folder reader, each counted under its format."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from helpers.documents import PAY, TITLES, deck, workbook

from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents, read_corpus
from retrieval.ingest.epub import looks_like_epub, read_epub
from retrieval.ingest.formats import FORMATS, Read, Unreadable, format_for

TITLE = "Guia da Transparência Municipal"
ACCESS = "Qualquer pessoa pode pedir informação a um órgão público sem dizer por quê."
TERMS = "O órgão tem vinte dias para responder, prorrogáveis por mais dez."
OMBUDS = "A ouvidoria recebe reclamações, denúncias e sugestões pela internet."
APPEAL = "Negado o pedido, cabe recurso à autoridade superior em dez dias."
SPECIAL = ["Use *asterisco* e _sublinhado_ sem ênfase.", "# não é um título", "A tag <b> e a entidade & ficam."]
CH1, CH2, CH3 = "Capítulo 1 – Acesso à informação", "Capítulo 2 – Ouvidoria", "Capítulo 3 – Recursos"

CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""


def xhtml(title: str, body: str) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="pt-BR">
<head><title>{title}</title><link rel="stylesheet" type="text/css" href="../estilo.css"/></head>
<body><section epub:type="chapter">{body}</section></body></html>"""


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")


CHAPTERS = {
    "capa.xhtml": xhtml(TITLE, '<div class="capa"><img src="../capa.jpg" alt=""/></div>'),
    "cap1.xhtml": xhtml(TITLE, f"""<h1 id="inicio">{CH1}</h1><p>{ACCESS}</p><h2>Prazos</h2><p>{TERMS}</p>
        <table><tr><th>Cargo</th><th>Salário</th></tr><tr><td>Prefeito</td><td>R$ 10.000</td></tr>
        <tr><td>Vereador</td><td>R$ 6.000</td></tr></table>"""),
    "cap2.xhtml": xhtml(TITLE, f"<h1>{CH2}</h1><p>{OMBUDS}</p>"
                               + "".join(f"<p>{escape(line)}</p>" for line in SPECIAL)),
    "cap3.xhtml": xhtml(TITLE, f"<p>{APPEAL}</p>"),  # no heading: the table of contents names it
}

NAV = f"""<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Sumário</title>
</head><body><nav epub:type="toc"><ol>
<li><a href="texto/cap1.xhtml#inicio">{CH1}</a></li><li><a href="texto/cap2.xhtml">{CH2}</a></li>
<li><a href="texto/cap3.xhtml">{CH3}</a></li></ol></nav></body></html>"""

NCX = f"""<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head/><docTitle><text>{TITLE}</text></docTitle>
<navMap>
<navPoint id="n1" playOrder="1"><navLabel><text>{CH1}</text></navLabel><content src="texto/cap1.xhtml"/></navPoint>
<navPoint id="n3" playOrder="3"><navLabel><text>{CH3}</text></navLabel><content src="texto/cap3.xhtml"/></navPoint>
</navMap></ncx>"""


def opf(toc: str, spine_href: str = "texto/cap3.xhtml") -> str:
    nav = '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>' \
        if toc == "nav" else ""
    ncx = '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>' if toc == "ncx" else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:1b2c3d4e-0000-4000-8000-000000000001</dc:identifier>
    <dc:title>{TITLE}</dc:title><dc:creator>Ana Lima</dc:creator><dc:language>pt-BR</dc:language>
  </metadata>
  <manifest>{nav}{ncx}
    <item id="capa" href="texto/capa.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="texto/cap1.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="texto/cap2.xhtml" media-type="application/xhtml+xml"/>
    <item id="c3" href="{spine_href}" media-type="application/xhtml+xml"/>
    <item id="css" href="estilo.css" media-type="text/css"/>
  </manifest>
  <spine{' toc="ncx"' if toc == "ncx" else ""}>
    <itemref idref="capa"/><itemref idref="c1"/><itemref idref="c2"/><itemref idref="c3" linear="yes"/>
  </spine>
</package>"""


def epub(toc: str = "nav", spine_href: str = "texto/cap3.xhtml", extra: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml", CONTAINER)
        archive.writestr("OEBPS/content.opf", opf(toc, spine_href))
        if toc == "nav":
            archive.writestr("OEBPS/nav.xhtml", NAV)
        if toc == "ncx":
            archive.writestr("OEBPS/toc.ncx", NCX)
        archive.writestr("OEBPS/estilo.css", "p { margin: 0 }")
        for name, text in CHAPTERS.items():
            archive.writestr(f"OEBPS/texto/{name}", text)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return out.getvalue()


def chunks(result: Read) -> list:
    return chunk_documents([Document("d", result.title or "t", result.text, {}, "markdown")], 120, 20)


def sections(result: Read) -> dict[str, str]:
    """Each line of the chunks -> its chunk's section path (and no chunk has a page)."""
    found = chunks(result)
    assert all("page" not in c.metadata for c in found)
    return {line: c.metadata.get("section", "") for c in found for line in c.text.split("\n")}


def test_format_is_declared() -> None:
    fmt = FORMATS.get("epub")
    assert fmt.extensions == (".epub",) and fmt.read is read_epub and fmt.library == "lxml, trafilatura 2.3"
    assert format_for(Path("a.EPUB")).name == "epub"


@pytest.mark.parametrize("toc", ["nav", "ncx"])
def test_chapters_in_spine_order_with_their_headings_as_sections(tmp_path: Path, toc: str) -> None:
    path = tmp_path / "guia.epub"
    path.write_bytes(epub(toc))
    data = path.read_bytes()
    assert looks_like_epub(data)
    result = read_epub(data, path)
    assert result.title == TITLE and result.metadata == {"author": "Ana Lima"}
    assert result.pages == 0 and "<!-- page" not in result.text and result.warnings == ()
    found = sections(result)
    assert found[ACCESS] == CH1
    assert found[TERMS] == f"{CH1} › Prazos"
    assert found["Cargo: Prefeito; Salário: R$ 10.000"] == f"{CH1} › Prazos"
    assert found["Cargo: Vereador; Salário: R$ 6.000"] == f"{CH1} › Prazos"
    assert found[OMBUDS] == CH2
    for line in SPECIAL:
        assert found[line] == CH2
    assert found[APPEAL] == CH3  # named by the navigation document, or by the NCX
    lines = [line for c in chunks(result) for line in c.text.split("\n")]
    assert lines.index(ACCESS) < lines.index(TERMS) < lines.index(OMBUDS) < lines.index(APPEAL)


def test_a_spine_path_out_of_the_archive_is_refused(tmp_path: Path) -> None:
    for href in ("../../etc/passwd", "/etc/passwd", "../../../META-INF/x.xhtml", "http://exemplo.gov.br/a.xhtml"):
        with pytest.raises(Unreadable) as out:
            read_epub(epub(spine_href=href), tmp_path / "a.epub")
        assert out.value.reason == "unreadable" and "outside the EPUB" in str(out.value), href
    # a path that goes up and comes back inside is inside
    assert APPEAL in read_epub(epub(spine_href="../OEBPS/texto/cap3.xhtml"), tmp_path / "a.epub").text


def test_broken_and_empty_books_are_refused(tmp_path: Path) -> None:
    data = epub()
    with pytest.raises(Unreadable) as broken:
        read_epub(data[: len(data) // 2], tmp_path / "a.epub")
    assert broken.value.reason == "unreadable" and "\n" not in str(broken.value)
    assert not looks_like_epub(data[: len(data) // 2]) and not looks_like_epub(workbook())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:  # the mimetype, and nothing else
        archive.writestr("mimetype", "application/epub+zip")
    assert looks_like_epub(out.getvalue())
    with pytest.raises(Unreadable) as bare:
        read_epub(out.getvalue(), tmp_path / "a.epub")
    assert bare.value.reason == "unreadable" and "container" in str(bare.value)
    blank = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(epub())) as source, zipfile.ZipFile(blank, "w") as archive:
        for info in source.infolist():
            text = source.read(info)
            archive.writestr(info, CHAPTERS["capa.xhtml"] if info.filename.startswith("OEBPS/texto/") else text)
    with pytest.raises(Unreadable) as empty:
        read_epub(blank.getvalue(), tmp_path / "a.epub")
    assert empty.value.reason == "no_text"


def test_a_zip_bomb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    bomb = b"<p>" + b"a" * (40 * 1024 * 1024) + b"</p>"
    data = epub(spine_href="texto/bomba.xhtml", extra={"OEBPS/texto/bomba.xhtml": bomb})
    with pytest.raises(Unreadable) as out:
        read_epub(data, tmp_path / "a.epub")
    assert out.value.reason == "unreadable" and "ZIP bomb" in str(out.value)


def test_a_folder_of_each_format_is_read_and_counted(tmp_path: Path) -> None:
    (tmp_path / "apresentacoes").mkdir()
    (tmp_path / "apresentacoes" / "contas.pptx").write_bytes(deck())
    (tmp_path / "folha.xlsx").write_bytes(workbook())
    (tmp_path / "guia.epub").write_bytes(epub())
    (tmp_path / "falso.epub").write_bytes(workbook())  # a ZIP, but not an EPUB
    docs, report = read_corpus(tmp_path)
    by_id = {d.id: d for d in docs}
    assert sorted(by_id) == ["apresentacoes/contas", "folha", "guia"]
    assert {name: (c.files, c.documents, c.pages) for name, c in report.formats.items()} == \
        {"pptx": (1, 1, 3), "xlsx": (1, 1, 0), "epub": (1, 1, 0)}
    assert report.formats["pptx"].pages == 3
    assert [(s.path, s.reason) for s in report.skipped] == [("falso.epub", "unreadable")]
    assert by_id["guia"].title == TITLE and by_id["apresentacoes/contas"].title == TITLES[0]
    assert by_id["folha"].title == "folha"  # no title in the file: its name
    assert by_id["guia"].metadata["format"] == "epub" and by_id["folha"].metadata["format"] == "xlsx"
    chunked = chunk_documents(docs, 120, 20)
    pay = next(c for c in chunked if PAY in c.text.split("\n"))
    assert (pay.parent_id, pay.metadata["section"], pay.metadata["page"]) == ("apresentacoes/contas", TITLES[2], 3)
    assert any(c.parent_id == "folha" and c.metadata["section"] == "Contratos 2024" for c in chunked)
