"""HTML pages read as structure (retrieval/ingest/html.py): the encoding rule (a BOM, the page's declaration read as
browsers read it, UTF-8, Windows-1252 before any detector: Portuguese pages without a charset), the main content
without navigation, cookie banner and footer, h1-h3 as each chunk's section path, tables as ``Header: cell`` lines,
Markdown's special characters kept literally, a page of loose text or slides read whole, a page without text
refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents
from retrieval.ingest.formats import FORMATS, Read, Unreadable, format_for
from retrieval.ingest.html import decode_html, looks_like_html, read_html

ARTICLE = [
    "A Secretaria de Administração do Município publica as regras de contratação temporária aprovadas em 2023.",
    "A contratação temporária atende a necessidade de excepcional interesse público, por prazo determinado.",
    "O processo seletivo simplificado tem prova de títulos e entrevista, com edital publicado no Diário Oficial.",
    "Os contratos têm vigência de até doze meses, prorrogáveis uma única vez por igual período.",
]


def page(body: str, head: str = "<title>Contratação temporária</title>") -> str:
    return f"<!DOCTYPE html>\n<html lang=\"pt-BR\"><head>{head}</head><body>{body}</body></html>"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def read(path: Path) -> Read:
    return read_html(path.read_bytes(), path)


def chunks(result: Read) -> list:
    return chunk_documents([Document("d", result.title or "t", result.text, {}, "markdown")], 120, 20)


def sections(result: Read) -> dict[str, str]:
    """Each sentence of the chunks -> its chunk's section path."""
    return {line: c.metadata.get("section", "") for c in chunks(result) for line in c.text.split("\n")}


def test_format_is_declared() -> None:
    html = FORMATS.get("html")
    assert html.extensions == (".html", ".htm", ".xhtml") and html.read is read_html
    assert html.library == "trafilatura 2.3"
    assert format_for(Path("Lei.HTM")) is html
    assert looks_like_html(b"<html><body>x</body></html>")
    assert not looks_like_html(b"%PDF-1.7\x00\x00binary")
    assert looks_like_html("\ufeff<p>olá</p>".encode("utf-16"))


def test_windows_1252_without_declaration(tmp_path: Path) -> None:
    text = ("<h1>Lei nº 1.234</h1><p>O Município de São João regulamenta, no 1º artigo, a contratação de "
            "servidores "
            "por tempo determinado, nos termos do art. 37, inciso IX, da Constituição.</p>")
    data = page(text, "<title>Lei Municipal nº 1.234</title>").encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    result = read(write(tmp_path, "lei.html", data))
    assert result.title == "Lei nº 1.234"  # the heading that opens the page is its title, as a Markdown file's
    [chunk] = chunks(result)
    assert "section" not in chunk.metadata and "Lei nº 1.234" not in result.text
    for word in ("Município", "contratação", "1º", "São João"):
        assert word in chunk.text
    assert "\ufffd" not in chunk.text
    assert decode_html(data)[1] == "cp1252"


def test_declared_iso_8859_1_is_read_as_windows_1252(tmp_path: Path) -> None:
    body = "<p>A “contratação” de 2023 – prevista no edital – custará € 5.000,00 ao Município.</p>"
    head = '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><title>Edital</title>'
    result = read(write(tmp_path, "edital.htm", page(body, head).encode("cp1252")))
    joined = " ".join(c.text for c in chunks(result))
    assert "“contratação”" in joined and "–" in joined and "€ 5.000,00" in joined and "Município" in joined
    assert decode_html(page(body, '<meta charset="ISO-8859-1">').encode("cp1252"))[1] == "cp1252"


def test_utf8_with_bom(tmp_path: Path) -> None:
    data = "\ufeff".encode() + page("<p>Ação de fiscalização no Município: 5º relatório.</p>").encode("utf-8")
    result = read(write(tmp_path, "bom.html", data))
    assert [c.text for c in chunks(result)] == ["Ação de fiscalização no Município: 5º relatório."]
    assert result.title == "Contratação temporária"


def test_encoding_rule() -> None:
    words = "Município de São João: contratação nº 5"
    # a declaration the bytes do not decode under is ignored (with a warning), Windows-1252 decides
    text, encoding, warnings = decode_html(f'<meta charset="utf-8"><p>{words}</p>'.encode("cp1252"))
    assert words in text and encoding == "cp1252" and warnings
    # a declared encoding is used as declared
    text, encoding, _ = decode_html(f'<meta charset="iso-8859-15"><p>{words} €</p>'.encode("iso-8859-15"))
    assert f"{words} €" in text and encoding == "iso8859-15"
    # UTF-8 that decodes strictly is UTF-8; UTF-16 with a BOM is UTF-16
    assert decode_html(f"<p>{words}</p>".encode())[:2] == (f"<p>{words}</p>", "utf-8")
    assert decode_html("\ufeff<p>olá</p>".encode("utf-16-le"))[0] == "<p>olá</p>"
    # bytes Windows-1252 cannot decode (0x81) go to the detector, never fail
    text, encoding, _ = decode_html(b"<p>\x81\x8d caf\xe9</p>")
    assert text and encoding not in ("utf-8", "cp1252")


def test_boilerplate_left_out(tmp_path: Path) -> None:
    body = f"""
    <header class="site-header"><h1 class="logo">Prefeitura de Vila Nova</h1></header>
    <nav class="menu"><ul><li><a href="/">Página inicial do portal</a></li>
        <li><a href="/servicos">Serviços ao cidadão</a></li>
        <li><a href="/ouvidoria">Fale com a ouvidoria</a></li></ul></nav>
    <div id="cookie-banner" class="lgpd-aviso"><p>Este site utiliza cookies para melhorar a sua navegação.</p>
        <button>Aceitar cookies</button></div>
    <main><article><h1>Contratação temporária</h1>{"".join(f"<p>{s}</p>" for s in ARTICLE)}</article></main>
    <footer class="rodape"><p>Praça Central, 1 – Vila Nova – Todos os direitos reservados.</p></footer>"""
    result = read(write(tmp_path, "noticia.html", page(body).encode()))
    joined = "\n".join(c.text for c in chunks(result))
    for sentence in ARTICLE:
        assert sentence in joined
    for noise in ("Página inicial", "Serviços ao cidadão", "ouvidoria", "cookies", "Aceitar", "Praça Central",
                  "direitos reservados", "Prefeitura de Vila Nova"):
        assert noise not in joined and noise not in result.text
    assert result.title == "Contratação temporária"
    assert {c.metadata.get("section") for c in chunks(result)} == {None}  # the title opens no section


def test_headings_are_section_paths(tmp_path: Path) -> None:
    body = f"""<article>
    <h1>Lei de Contratações</h1><p>{ARTICLE[0]}</p>
    <h2>Capítulo I – Disposições gerais</h2><p>{ARTICLE[1]}</p>
    <h3>Seção I – Dos prazos</h3><p>{ARTICLE[3]}</p>
    <h2>Capítulo II – Do processo seletivo</h2><p>{ARTICLE[2]}</p>
    </article>"""
    result = read(write(tmp_path, "lei.html", page(body).encode()))
    found = sections(result)
    assert result.title == "Lei de Contratações"  # the page's title: never repeated in a section path
    assert found[ARTICLE[0]] == ""
    assert found[ARTICLE[1]] == "Capítulo I – Disposições gerais"
    assert found[ARTICLE[3]] == "Capítulo I – Disposições gerais › Seção I – Dos prazos"
    assert found[ARTICLE[2]] == "Capítulo II – Do processo seletivo"


def test_headings_kept_on_a_page_without_semantic_containers(tmp_path: Path) -> None:
    """An old municipal page laid out by a table, its law in one cell, with no article or main: trafilatura alone
    keeps its paragraphs without its headings (or the whole table as one row)."""
    articles = "".join(f"<p>Art. {n}º O Município fica autorizado a contratar serviços de limpeza urbana pelo "
                       f"prazo de {n} meses, observada a legislação federal.</p>" for n in range(1, 6))
    body = f"""<table width="100%" border="0"><tr><td colspan="2"><img src="brasao.gif"> PREFEITURA MUNICIPAL</td></tr>
    <tr><td width="20%"><a href="/">Início</a><br><a href="/leis">Leis</a><br><a href="/decretos">Decretos</a></td>
    <td><h1>LEI Nº 1.234, DE 10 DE MAIO DE 2001</h1><h2>CAPÍTULO I</h2>{articles}
    <h2>CAPÍTULO II</h2><p>Art. 9º Esta lei entra em vigor na data de sua publicação.</p></td></tr>
    <tr><td colspan="2">Rua XV de Novembro, 100 - Centro</td></tr></table>"""
    result = read(write(tmp_path, "lei.htm", page(body).encode("cp1252")))
    found = sections(result)
    first = "Art. 1º O Município fica autorizado a contratar serviços de limpeza urbana pelo prazo de 1 meses, " \
            "observada a legislação federal."
    assert found[first] == "LEI Nº 1.234, DE 10 DE MAIO DE 2001 › CAPÍTULO I"
    assert found["Art. 9º Esta lei entra em vigor na data de sua publicação."] == \
        "LEI Nº 1.234, DE 10 DE MAIO DE 2001 › CAPÍTULO II"
    assert "|" not in result.text  # the layout table is not a table


def test_table_rows_as_lines(tmp_path: Path) -> None:
    body = f"""<article><h1>Quadro de pessoal</h1><h2>Remuneração</h2><p>{ARTICLE[0]}</p>
    <table><thead><tr><th>Cargo</th><th>Salário</th></tr></thead>
    <tbody><tr><td>Prefeito</td><td>R$ 20.000,00</td></tr><tr><td>Vice-prefeito</td><td>R$ 15.000,00</td></tr>
    </tbody></table><p>{ARTICLE[1]}</p></article>"""
    result = read(write(tmp_path, "tabela.html", page(body).encode()))
    found = sections(result)
    assert found["Cargo: Prefeito; Salário: R$ 20.000,00"] == "Remuneração"
    assert found["Cargo: Vice-prefeito; Salário: R$ 15.000,00"] == "Remuneração"


def test_lists(tmp_path: Path) -> None:
    body = f"""<article><h1>Edital</h1><h2>Documentos exigidos</h2><p>{ARTICLE[2]}</p>
    <ul><li>Carteira de identidade e CPF</li><li>Comprovante de residência
        <ul><li>conta de luz ou de água</li></ul></li><li>Diploma registrado</li></ul></article>"""
    result = read(write(tmp_path, "lista.html", page(body).encode()))
    assert "- Carteira de identidade e CPF\n- Comprovante de residência\n  - conta de luz ou de água\n" \
           "- Diploma registrado" in result.text
    found = sections(result)
    assert found["conta de luz ou de água"] == "Documentos exigidos"


def test_markdown_characters_come_through_literally(tmp_path: Path) -> None:
    lines = ["Use *asterisco* e _sublinhado_ sem ênfase.", "# não é um título", "1. não é uma lista",
             "A tag <b> e a entidade &amp; aparecem como escritas.", "- nem isto é item", "[colchetes](e parênteses)"]
    escaped = "".join(f"<p>{s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</p>" for s in lines)
    result = read(write(tmp_path, "especial.html", page(f"<article><p>{ARTICLE[0]}</p>{escaped}</article>").encode()))
    texts = "\n".join(c.text for c in chunks(result)).split("\n")
    for line in lines:
        assert line in texts


def test_short_page_and_slides_read_whole(tmp_path: Path) -> None:
    result = read(write(tmp_path, "curta.html", b"<p>Reuni\xe3o adiada.</p>"))
    assert [c.text for c in chunks(result)] == ["Reunião adiada."] and result.title == ""
    slides = "".join(f'<section class="slide"><h2>Meta {n}</h2><div class="ponto">Reduzir a fila {n}</div></section>'
                     for n in range(1, 4))
    result = read(write(tmp_path, "slides.html", page(slides).encode()))
    found = sections(result)
    assert found["Reduzir a fila 1"] == "Meta 1" and found["Reduzir a fila 3"] == "Meta 3"


@pytest.mark.parametrize("data", [
    b"", page("").encode(), page("<script>var x = 1;</script><style>p{}</style>").encode(),
    b"<html><head><title>Somente t\xedtulo</title></head><body> </body></html>"])
def test_page_without_text_is_refused(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(Unreadable) as caught:
        read(write(tmp_path, "vazia.html", data))
    assert caught.value.reason == "no_text"


def test_page_rendered_by_script_reads_its_json_ld(tmp_path: Path) -> None:
    """A page whose article is only in its JSON-LD (a page saved before its script ran): trafilatura's text, which
    the page's own blocks do not hold, is what is read."""
    data = json.dumps({"@context": "https://schema.org", "@type": "NewsArticle", "headline": "Contratação",
                       "articleBody": " ".join(ARTICLE * 2)}, ensure_ascii=False)
    head = f'<title>Notícia</title><script type="application/ld+json">{data}</script>'
    result = read(write(tmp_path, "spa.html", page('<div id="app">Carregando…</div>', head).encode()))
    joined = " ".join(c.text for c in chunks(result))
    assert ARTICLE[0] in joined and ARTICLE[3] in joined and "@context" not in joined
