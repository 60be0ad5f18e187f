"""Documents the upload tests share, written by the formats' own well-kept writers."""

from __future__ import annotations

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
