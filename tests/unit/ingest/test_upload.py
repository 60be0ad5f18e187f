"""What a browser upload may bring in (retrieval.ingest.upload.accept): each refusal code from a crafted file or
archive (a path in the name, a control character, a long name, a PDF that is not one, too many pages, zip slip, a
link member, a nested archive, a ZIP bomb, an archive expanding past the room left, hidden members, an empty
archive), and the good files accepted with their format and their folders."""

from __future__ import annotations

import io
import zipfile

import pytest
from reportlab.pdfgen import canvas

from retrieval.ingest.formats import FORMATS
from retrieval.ingest.upload import (MAX_MEMBERS, MAX_NAME_CHARS, Incoming, Limits, Refusal, accept,
                                     accepted_extensions, shown_name)

LIMITS = Limits()
MD = "# Lei 8.666\n\nNormas gerais sobre licitações e contratos administrativos.\n".encode("utf-8")


def pdf_bytes(pages: int = 1) -> bytes:
    """A real PDF of ``pages`` pages, one line of text on each (reportlab)."""
    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    for n in range(1, pages + 1):
        c.drawString(72, 800, f"Pagina {n} do relatorio de auditoria")
        c.showPage()
    c.save()
    return buf.getvalue()


def zip_bytes(members: list[tuple[str | zipfile.ZipInfo, bytes]],
              compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buf.getvalue()


def only_refusal(name: str, data: bytes, limits: Limits = LIMITS, room: int | None = None) -> Refusal:
    kept, refused = accept(name, data, limits, room)
    assert kept == []
    assert len(refused) == 1, refused
    return refused[0]


# --- names -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../x.pdf", "a\\b.pdf", "docs/lei.md", "/etc/passwd.md", ".."])
def test_a_name_holding_a_path_is_refused(name: str) -> None:
    refusal = only_refusal(name, MD)
    assert refusal.code == "name_path"
    assert refusal.name == name


def test_a_name_with_a_control_character_is_refused_and_shown_escaped() -> None:
    refusal = only_refusal("lei\x1b[31m.md", MD)
    assert refusal.code == "name_control"
    assert refusal.name == "lei\\x1b[31m.md"
    assert "\x1b" not in refusal.line("en")
    assert refusal.line("en") == "lei\\x1b[31m.md: its name holds control characters"


def test_a_name_over_the_limit_is_refused_and_shown_cut() -> None:
    name = "a" * 296 + ".pdf"
    refusal = only_refusal(name, pdf_bytes())
    assert refusal.code == "name_long"
    assert refusal.values == {"n": 300, "max": MAX_NAME_CHARS}
    assert refusal.reason("en") == "its name has 300 characters (at most 200)"
    assert refusal.name == "a" * (MAX_NAME_CHARS + 20) + "…"
    # one character under the limit is taken
    kept, refused = accept("a" * (MAX_NAME_CHARS - 3) + ".md", MD, LIMITS)
    assert refused == [] and len(kept) == 1


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_name_is_refused(name: str) -> None:
    assert only_refusal(name, MD).code == "name_empty"


# --- single files ------------------------------------------------------------------------------------------------

def test_a_good_markdown_file_is_accepted_with_its_format() -> None:
    kept, refused = accept("Lei 8666.md", MD, LIMITS)
    assert refused == []
    assert len(kept) == 1
    item = kept[0]
    assert isinstance(item, Incoming)
    assert (item.name, item.fmt.name, item.data, item.archive, item.folders) == ("Lei 8666.md", "markdown", MD, "",
                                                                                  ())
    assert item.shown == "Lei 8666.md"


def test_a_good_pdf_is_accepted() -> None:
    data = pdf_bytes(3)
    kept, refused = accept("Relatório.PDF", data, LIMITS)
    assert refused == []
    assert [(k.name, k.fmt.name, k.data) for k in kept] == [("Relatório.PDF", "pdf", data)]


def test_a_pdf_whose_bytes_are_not_pdf_is_a_mismatch() -> None:
    refusal = only_refusal("scan.pdf", b"<html><body>not a pdf</body></html>")
    assert refusal.code == "mismatch"
    assert refusal.line("en") == "scan.pdf: its bytes are not PDF, whatever its extension says"


def test_the_portuguese_line_of_a_refusal() -> None:
    refusal = only_refusal("scan.pdf", b"GIF89a not a pdf")
    assert refusal.line("pt") == "scan.pdf: seus bytes não são PDF, diga o que disser a extensão"


def test_a_pdf_over_the_page_limit_is_refused_and_one_at_it_taken() -> None:
    data = pdf_bytes(3)
    refusal = only_refusal("longo.pdf", data, Limits(pdf_pages=2))
    assert refusal.code == "pages"
    assert refusal.values == {"pages": "3", "limit": "2"}
    assert refusal.line("pt") == "longo.pdf: 3 páginas, acima do limite de 2 páginas por PDF"
    kept, refused = accept("longo.pdf", data, Limits(pdf_pages=3))
    assert refused == [] and len(kept) == 1


def test_a_damaged_pdf_is_unreadable() -> None:
    data = pdf_bytes(1)
    refusal = only_refusal("quebrado.pdf", data[:40])  # the header survives (the sniff passes), the rest is gone
    assert refusal.code == "unreadable"
    assert refusal.values["detail"]  # pypdf's one line, never empty


def test_an_unknown_extension_is_refused_naming_the_accepted() -> None:
    refusal = only_refusal("programa.exe", b"MZ\x90\x00")
    assert refusal.code == "format"
    assert refusal.values["ext"] == ".exe"
    assert refusal.values["accepted"] == ", ".join(accepted_extensions())
    assert only_refusal("LEIAME", MD).values["ext"] == "(no extension)"


def test_a_file_over_the_size_limit_is_refused() -> None:
    refusal = only_refusal("grande.md", b"a" * 2048, Limits(file_bytes=1024))
    assert refusal.code == "too_large"
    assert refusal.values == {"mb": "0.0", "limit": "0.0"}
    kept, _ = accept("grande.md", b"a" * 1024, Limits(file_bytes=1024))
    assert len(kept) == 1


def test_accepted_extensions_are_the_formats_and_zip() -> None:
    got = accepted_extensions()
    assert {".pdf", ".docx", ".zip", ".md", ".html"} <= set(got)
    declared = tuple(dict.fromkeys(ext for f in FORMATS for ext in f.extensions))
    assert got == declared + (".zip",)
    assert len(got) == len(set(got))


# --- archives ----------------------------------------------------------------------------------------------------

def test_a_zip_of_a_folder_is_accepted_with_its_folders() -> None:
    data = zip_bytes([("leis/lei.md", MD), ("leis/", b"")])
    kept, refused = accept("acervo.zip", data, LIMITS)
    assert refused == []
    assert len(kept) == 1
    item = kept[0]
    assert (item.name, item.fmt.name, item.data, item.archive, item.folders) == ("lei.md", "markdown", MD,
                                                                                  "acervo.zip", ("leis",))
    assert item.shown == "acervo.zip › leis/lei.md"


def test_a_zip_keeps_its_good_members_and_names_each_bad_one() -> None:
    link = zipfile.ZipInfo("atalho.md")
    link.create_system = 3
    link.external_attr = 0o120777 << 16
    data = zip_bytes([("a/lei.md", MD), ("../fora.md", MD), (link, b"/etc/passwd"), ("inner.zip", zip_bytes([])),
                      ("notas.exe", b"MZ")])
    kept, refused = accept("misto.zip", data, LIMITS)
    assert [(k.name, k.folders) for k in kept] == [("lei.md", ("a",))]
    assert [(r.name, r.code) for r in refused] == [("misto.zip › ../fora.md", "zip_path"),
                                                   ("misto.zip › atalho.md", "zip_link"),
                                                   ("misto.zip › inner.zip", "zip_nested"),
                                                   ("misto.zip › notas.exe", "format")]


@pytest.mark.parametrize("member", ["../evil.md", "leis/../../evil.md", "/etc/evil.md", "leis\\evil.md",
                                    "C:evil.md"])
def test_zip_slip_is_refused(member: str) -> None:
    refusal = only_refusal("slip.zip", zip_bytes([(member, MD)]))
    assert refusal.code == "zip_path"
    assert refusal.name == f"slip.zip › {member}"
    assert refusal.line("en") == f"slip.zip › {member}: a path leaving the archive's folder (zip slip)"


def test_a_symlink_member_is_refused() -> None:
    info = zipfile.ZipInfo("lei.md")
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    refusal = only_refusal("links.zip", zip_bytes([(info, b"../../etc/passwd")]))
    assert refusal.code == "zip_link"
    # the same member as a regular file is taken
    regular = zipfile.ZipInfo("lei.md")
    regular.create_system = 3
    regular.external_attr = 0o100644 << 16
    kept, refused = accept("links.zip", zip_bytes([(regular, MD)]), LIMITS)
    assert refused == [] and [k.name for k in kept] == ["lei.md"]


@pytest.mark.parametrize("member", ["inner.zip", "pasta/dados.tar.gz", "x.7z", "y.RAR"])
def test_a_nested_archive_is_refused(member: str) -> None:
    assert only_refusal("outer.zip", zip_bytes([(member, b"PK\x03\x04 whatever")])).code == "zip_nested"


def test_a_zip_bomb_member_is_refused_by_its_ratio() -> None:
    data = zip_bytes([("bomba.txt", b"\0" * (5 * 2**20))])
    assert len(data) < 50_000  # ~5 MB of zeros compress to a few KB
    refusal = only_refusal("bomba.zip", data)
    assert refusal.code == "zip_ratio"
    ratio = int(refusal.values["ratio"].replace(",", ""))
    assert ratio > 100
    assert refusal.reason("en") == f"expands to {refusal.values['ratio']} times its compressed size (a ZIP bomb?)"


def test_a_zip_expanding_past_the_room_left_is_refused_whole() -> None:
    data = zip_bytes([("a.md", MD), ("b.md", MD + b"more")])
    expanded = len(MD) * 2 + 4
    refusal = only_refusal("cheio.zip", data, room=expanded - 1)
    assert refusal.code == "zip_total"
    assert refusal.name == "cheio.zip"
    assert refusal.values == {"mb": "0.0", "left": "0.0"}
    kept, refused = accept("cheio.zip", data, LIMITS, expanded)
    assert refused == [] and [k.name for k in kept] == ["a.md", "b.md"]


def test_the_room_defaults_to_the_collection_limit() -> None:
    data = zip_bytes([("a.md", b"x" * 5000)])
    assert only_refusal("a.zip", data, Limits(collection_bytes=4999)).code == "zip_total"
    assert len(accept("a.zip", data, Limits(collection_bytes=5000))[0]) == 1


@pytest.mark.parametrize("member", ["__MACOSX/leis/._lei.md", "__MACOSX/lei.md", ".DS_Store.md", "leis/.oculto/a.md"])
def test_hidden_members_are_refused(member: str) -> None:
    kept, refused = accept("mac.zip", zip_bytes([("leis/lei.md", MD), (member, MD)]), LIMITS)
    assert [k.name for k in kept] == ["lei.md"]
    assert [(r.name, r.code) for r in refused] == [(f"mac.zip › {member}", "hidden")]


def test_an_empty_zip_is_refused() -> None:
    assert only_refusal("vazio.zip", zip_bytes([])).code == "zip_empty"
    assert only_refusal("pastas.zip", zip_bytes([("leis/", b""), ("leis/2024/", b"")])).code == "zip_empty"


def test_a_zip_that_is_not_one_is_refused() -> None:
    refusal = only_refusal("falso.zip", b"this is not an archive")
    assert refusal.code == "zip_bad"
    assert refusal.values["detail"] == "File is not a zip file"


def test_a_zip_listing_too_many_members_is_refused_before_reading_one() -> None:
    data = zip_bytes([(f"m{n}.md", b"") for n in range(MAX_MEMBERS + 1)], zipfile.ZIP_STORED)
    refusal = only_refusal("muitos.zip", data)
    assert refusal.code == "zip_members"
    assert refusal.values == {"n": f"{MAX_MEMBERS + 1:,}", "max": f"{MAX_MEMBERS:,}"}


def test_a_member_whose_bytes_lie_about_its_format_is_a_mismatch() -> None:
    refusal = only_refusal("x.zip", zip_bytes([("docs/scan.pdf", b"not a pdf at all")]))
    assert (refusal.name, refusal.code) == ("x.zip › docs/scan.pdf", "mismatch")


def test_a_member_with_a_control_character_is_refused_by_name() -> None:
    refusal = only_refusal("x.zip", zip_bytes([("lei\x1b.md", MD)]))
    assert (refusal.name, refusal.code) == ("x.zip › lei\\x1b.md", "name_control")


def test_shown_name_escapes_every_control_character() -> None:
    assert shown_name("a\nb\u202ec") == "a\\x0ab\\u202ec"
