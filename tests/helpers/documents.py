"""Documents the tests share, written by the formats' own well-kept writers: a PDF gazette, a workbook and a slide
deck."""

from __future__ import annotations

import datetime as dt
import io


def gazette_pdf() -> bytes:
    """A 3-page PDF written by reportlab: each page a heading, one fact of its own and 15 lines of other matters
    (a page is more than one chunk)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    facts = ["O Conselho Municipal reúne-se na primeira segunda-feira de cada mês.",
             "A taxa de inscrição no concurso de jardinagem é de quarenta e dois reais.",
             "O prazo para recorrer da multa de trânsito é de trinta dias corridos."]
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setTitle("Diário Oficial do Município")
    for number, fact in enumerate(facts, 1):
        pdf.setFont("Helvetica-Bold", 16)
        pdf.drawString(72, 780, f"Seção {number}")
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, 750, fact)
        for line in range(15):
            pdf.drawString(72, 730 - 14 * line, f"Item {number}.{line}: a ata {line} da sessão {number} foi lida e "
                                                 "aprovada sem emendas pelos presentes.")
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def save(book) -> bytes:
    """An openpyxl workbook's bytes."""
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def workbook(title: str = "") -> bytes:
    """A payroll sheet (a title line, a spacer column, dates, numbers, booleans, Markdown characters), an empty
    sheet and a contracts sheet."""
    import openpyxl

    book = openpyxl.Workbook()
    book.properties.title = title
    pay = book.active
    pay.title = "Folha de Pagamento"
    pay.append(["Folha de pagamento de março de 2024"])  # a title line above the table
    pay.append([])
    pay.append([None, "Cargo", "Salário", "Admissão", "Carga horária", "Efetivo"])  # column A a spacer
    pay.append([None, "Prefeito", "R$ 10.000", dt.datetime(2021, 1, 1), 40, True])
    pay.append([None, "Secretário de Saúde", "R$ 8.500,50", dt.datetime(2022, 3, 15, 9, 30), 37.5, False])
    pay.append([None, "Assessor *especial* #1", "<b>R$ 4.000</b> & extras", dt.date(2023, 7, 1), 20.0, None])
    book.create_sheet("Vazia")
    contracts = book.create_sheet("Contratos 2024")
    contracts.append(["Número", "Objeto", "Valor"])
    contracts.append(["12/2024", "Merenda escolar", 150000.75])
    contracts.append(["13/2024", "- Transporte | escolar", 98000])
    return save(book)


OPENING = "A Prefeitura Municipal de Santa Rita apresenta a prestação de contas do exercício de 2023."
REVENUE = "A receita corrente líquida cresceu oito por cento em relação ao ano anterior."
PAY = "A remuneração dos agentes políticos foi fixada pela lei municipal nº 1.234."
NOTE = "Lembrar a Câmara de que o reajuste depende de lei específica."
SPECIAL = ["Use *asterisco* e _sublinhado_ sem ênfase.", "# não é um título", "A tag <b> e a entidade &amp; ficam."]
TITLES = ["Prestação de Contas 2023", "Receitas do Município", "Remuneração dos Cargos"]


def deck(core_title: str = "", notes: bool = True) -> bytes:
    """Three slides (a title slide, bullets and a text box, a table with Markdown characters) and speaker notes."""
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    presentation.core_properties.title = core_title
    presentation.core_properties.author = "Joana Ribeiro"
    first = presentation.slides.add_slide(presentation.slide_layouts[0])  # Title Slide
    first.shapes.title.text = TITLES[0]
    first.placeholders[1].text = OPENING
    second = presentation.slides.add_slide(presentation.slide_layouts[1])  # Title and Content
    second.shapes.title.text = TITLES[1]
    body = second.placeholders[1].text_frame
    body.text = "Impostos municipais"
    for text, level in (("IPTU e ISS", 1), ("Transferências", 0), ("FPM e ICMS", 1)):
        paragraph = body.add_paragraph()
        paragraph.text, paragraph.level = text, level
    box = second.shapes.add_textbox(Inches(1), Inches(6), Inches(8), Inches(1))
    box.text_frame.text = REVENUE
    third = presentation.slides.add_slide(presentation.slide_layouts[5])  # Title Only
    third.shapes.title.text = TITLES[2]
    box = third.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(0.5))
    box.text_frame.text = PAY
    table = third.shapes.add_table(3, 2, Inches(0.5), Inches(2.5), Inches(9), Inches(1.5)).table
    for r, row in enumerate([("Cargo", "Salário"), ("Prefeito", "R$ 10.000"), ("Vice-prefeito", "R$ 7.500")]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    box = third.shapes.add_textbox(Inches(0.5), Inches(5), Inches(9), Inches(2))
    box.text_frame.text = SPECIAL[0]
    for line in SPECIAL[1:]:
        box.text_frame.add_paragraph().text = line
    if notes:
        third.notes_slide.notes_text_frame.text = NOTE
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()
