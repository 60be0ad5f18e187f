"""What reading a mixed collection costs, and what it reads: a Portuguese collection written here by the formats' own
writers (HTML laws in Windows-1252 with navigation and a footer, Markdown pages with static-site front matter, a
gazette as PDF with an outline, as DOCX and as ODT, a slide deck (PPTX), a payroll (XLSX), a Word 97 file, a
scanned PDF, a link leading out of the folder), read by the folder reader
(:func:`retrieval.ingest.corpus.read_corpus`) and chunked.

Prints the intake table ``index`` prints, then each reader's speed on 2 cores: pages/s for PDF, slides/s for
PPTX, rows/s for XLSX, documents/s for HTML, DOCX, ODT and Markdown (the files are synthetic: a measure of the readers, not of real data).

    python -m bench.ingest [--laws 300] [--pages 40] [--rounds 3] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from retrieval.ingest.corpus import chunk_documents, read_corpus
from retrieval.ingest.formats import FORMATS

ARTICLE = ("Art. {n}º Fica o Poder Executivo autorizado a contratar serviços de limpeza urbana, coleta seletiva e "
           "manutenção de praças no Município, observada a legislação de licitações e contratos administrativos. "
           "Parágrafo único. A contratação dependerá de dotação orçamentária própria e de parecer da Procuradoria.")


def law_html(n: int) -> bytes:
    articles = "".join(f"<p>{ARTICLE.format(n=a)}</p>" for a in range(1, 9))
    page = (f"<html><head><title>Lei Municipal nº {n}</title></head><body>"
            "<nav><a href='/'>Início</a> | <a href='/leis'>Legislação</a> | <a href='/contato'>Contato</a></nav>"
            "<div class='cookie'>Este site usa cookies. Aceitar</div>"
            f"<main><h1>Lei Municipal nº {n}, de 12 de março de 2024</h1><h2>Capítulo I</h2>{articles[:900]}"
            f"<h2>Capítulo II</h2>{articles[900:]}<table><tr><th>Cargo</th><th>Vencimento</th></tr>"
            "<tr><td>Agente de limpeza</td><td>R$ 2.100,00</td></tr></table></main>"
            "<footer>Prefeitura Municipal · Praça da Matriz, s/nº · Todos os direitos reservados</footer></body></html>")
    return page.encode("cp1252")


def page_md(n: int) -> str:
    return (f"---\ntitle: Conjunto de dados {n}\ndate: 2026-02-{1 + n % 28:02d}\nauthors: [ana, bruno]\n"
            f"categories: [dados, api]\nextra:\n  social: true\n---\n# Conjunto de dados {n}\n\n"
            + "\n\n".join(f"## Seção {s}\n\n{ARTICLE.format(n=s)}" for s in range(1, 4)) + "\n")


def gazette_pdf(pages: int) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out, pagesize=A4)
    c.setTitle("Diário Oficial do Município")
    for p in range(1, pages + 1):
        key = f"p{p}"
        c.bookmarkPage(key)
        c.addOutlineEntry(f"Seção {p}", key, level=0)
        c.setFont("Helvetica-Bold", 16)
        c.drawString(60, 780, f"Seção {p}")
        c.setFont("Helvetica", 10)
        y = 750
        for a in range(1, 7):
            text = ARTICLE.format(n=a + 6 * (p - 1))
            for start in range(0, len(text), 95):
                c.drawString(60, y, text[start:start + 95])
                y -= 13
            y -= 8
        c.showPage()
    c.save()
    return out.getvalue()


def scan_pdf() -> bytes:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out)
    c.rect(50, 50, 400, 600, fill=1)
    c.showPage()
    c.save()
    return out.getvalue()


def gazette_docx() -> bytes:
    import docx

    d = docx.Document()
    d.add_paragraph("Diário Oficial do Município", style="Title")
    for s in range(1, 4):
        d.add_heading(f"Seção {s}", 1)
        for a in range(1, 4):
            d.add_paragraph(ARTICLE.format(n=a))
        d.add_paragraph("Publique-se.", style="List Bullet")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def gazette_odt() -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    d = OpenDocumentText()
    for s in range(1, 4):
        d.text.addElement(H(outlinelevel=1, text=f"Seção {s}"))
        for a in range(1, 4):
            d.text.addElement(P(text=ARTICLE.format(n=a)))
    out = io.BytesIO()
    d.write(out)
    return out.getvalue()


def deck_pptx(slides: int = 6) -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for n in range(1, slides + 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Coleta seletiva: etapa {n}"
        slide.placeholders[1].text_frame.text = ARTICLE.format(n=n)[:180]
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def payroll_xlsx(rows: int = 200) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Folha de março"
    sheet.append(["Cargo", "Lotação", "Vencimento"])
    for n in range(rows):
        sheet.append([f"Agente de limpeza {n}", "Secretaria de Obras", 2100 + n])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def write_collection(root: Path, laws: int, pdf_pages: int) -> Path:
    (root / "leis").mkdir(parents=True)
    (root / "blog").mkdir()
    (root / "diario").mkdir()
    for n in range(laws):
        (root / "leis" / f"lei-{1000 + n}.html").write_bytes(law_html(1000 + n))
    for n in range(max(2, laws // 3)):
        (root / "blog" / f"dados-{n}.md").write_text(page_md(n), encoding="utf-8")
    (root / "diario" / "2024-03-12.pdf").write_bytes(gazette_pdf(pdf_pages))
    (root / "diario" / "2024-03-12.docx").write_bytes(gazette_docx())
    (root / "diario" / "2024-03-12.odt").write_bytes(gazette_odt())
    (root / "diario" / "digitalizado.pdf").write_bytes(scan_pdf())
    (root / "apresentacao.pptx").write_bytes(deck_pptx())
    (root / "folha.xlsx").write_bytes(payroll_xlsx())
    (root / "oficio-antigo.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))  # Word 97-2003
    os.symlink("/proc/self/environ", root / "ambiente.md")
    return root


def _rate(read: Callable[[bytes, Path], Any], files: list[tuple[bytes, Path]], units: Callable[[Any], int],
          rounds: int) -> float:
    best = float("inf")
    count = 0
    for _ in range(rounds):
        started = time.perf_counter()
        count = sum(units(read(data, path)) for data, path in files)
        best = min(best, time.perf_counter() - started)
    return count / best


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--laws", type=int, default=300)
    parser.add_argument("--pages", type=int, default=40, help="pages of the gazette PDF timed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = write_collection(Path(tmp) / "acervo", args.laws, 8)
        started = time.perf_counter()
        docs, report = read_corpus(root)
        read_s = time.perf_counter() - started
        chunks = chunk_documents(docs, 120, 30)
        report.count_chunks(chunks)
        print(report.table())
        print(f"read {len(docs):,} documents in {read_s:.2f} s, chunked into {len(chunks):,} chunks "
              f"(synthetic files: a measure of the readers, not of real data)")
        rates = {
            "pdf pages/s": _rate(FORMATS.get("pdf").read, [(gazette_pdf(args.pages), Path("g.pdf"))],
                                 lambda r: r.pages, args.rounds),
            "html documents/s": _rate(FORMATS.get("html").read,
                                      [(law_html(n), Path(f"{n}.html")) for n in range(50)], lambda r: 1, args.rounds),
            "docx documents/s": _rate(FORMATS.get("docx").read, [(gazette_docx(), Path(f"{n}.docx")) for n in range(20)],
                                      lambda r: 1, args.rounds),
            "odt documents/s": _rate(FORMATS.get("odt").read, [(gazette_odt(), Path(f"{n}.odt")) for n in range(20)],
                                     lambda r: 1, args.rounds),
            "pptx slides/s": _rate(FORMATS.get("pptx").read, [(deck_pptx(15), Path(f"{n}.pptx")) for n in range(5)],
                                   lambda r: r.pages, args.rounds),
            "xlsx rows/s": _rate(FORMATS.get("xlsx").read, [(payroll_xlsx(2000), Path("f.xlsx"))], lambda r: 2000,
                                 args.rounds),
            "markdown documents/s": _rate(FORMATS.get("markdown").read,
                                          [(page_md(n).encode(), Path(f"{n}.md")) for n in range(50)], lambda r: 1,
                                          args.rounds),
        }
        for name, rate in rates.items():
            print(f"{name}: {rate:,.1f}")
        out = {"intake": report.to_dict(), "read_s": read_s, "chunks": len(chunks), "rates": rates,
               "cores": os.cpu_count()}
        if args.json_out:
            args.json_out.parent.mkdir(parents=True, exist_ok=True)
            args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
        return out


if __name__ == "__main__":
    main()
