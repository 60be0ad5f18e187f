"""What an upload costs, from the analyst's click to the first answer: a 10-page Portuguese PDF (written here by
reportlab) added to a user's collection as the app's uploader adds it (:func:`retrieval.serving.uploads.add_uploads`:
checked, written, read, indexed with the embedding model already loaded, as it is in a running app), then one question
asked over it. Then a second file, to show that only the new one is read and embedded.

    python -m bench.upload [--pages 10] [--json-out FILE]

Prints seconds for each step on this machine (2 cores: embedding is most of it) and the chunks embedded.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from pathlib import Path

from retrieval.pipeline.workbench import Workbench
from retrieval.serving.uploads import add_uploads
from retrieval.settings import Settings

CLAUSES = ["O contratado deverá manter regularidade fiscal durante toda a vigência do contrato.",
           "A fiscalização será exercida por servidor designado pela Secretaria de Administração.",
           "Os pagamentos serão feitos em até trinta dias após o atesto da nota fiscal.",
           "O reajuste observará a variação do IPCA, contada da data da proposta.",
           "As penalidades incluem advertência, multa e suspensão do direito de licitar."]


def report_pdf(pages: int, tag: str = "") -> bytes:
    """A ``pages``-page report, about 300 words a page, one heading a page; page 7 holds the fact asked."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    for page in range(1, pages + 1):
        pdf.setFont("Helvetica-Bold", 15)
        pdf.drawString(60, 790, f"Cláusula {page}{tag}")
        pdf.setFont("Helvetica", 10)
        lines = [f"{page}.{n} {CLAUSES[(page + n) % len(CLAUSES)]}" for n in range(24)]
        if page == 7:
            lines[10] = "7.10 A garantia contratual corresponde a cinco por cento do valor global do contrato."
        for n, line in enumerate(lines):
            pdf.drawString(60, 765 - 14 * n, line)
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "w"
        root.mkdir()
        settings = Settings(write_roots=str(root), chroma_path=Path(tmp) / "chroma", _env_file=None,
                            reader_states_at_index=False)
        started = time.perf_counter()
        bench = Workbench(settings, progress=False)
        bench.question_vector("aquecimento")  # the model loaded and warm, as in a running app
        model_s = time.perf_counter() - started
        stages: dict[str, float] = {}
        clock = [time.perf_counter()]

        def on_file(name: str, stage: str, done: int, total: int) -> None:
            if stage in ("read", "indexed") and stage not in stages:
                stages[stage] = time.perf_counter() - clock[0]

        def index(folder: Path, on_progress=None):
            return bench.load_corpus(folder, on_progress=on_progress)

        first_pdf = report_pdf(args.pages)
        clock[0] = time.perf_counter()
        added = add_uploads(settings, "local", [("Contrato de limpeza.pdf", first_pdf)], index, on_file=on_file)
        indexed_s = time.perf_counter() - clock[0]
        asked = time.perf_counter()
        trace = bench.ask("Qual é o percentual da garantia contratual?").to_dict()
        ask_s = time.perf_counter() - asked
        top = trace["final"][0] if trace["final"] else {}
        chunks = added.chunks
        second = time.perf_counter()
        again = add_uploads(settings, "local", [("Contrato de vigilância.pdf", report_pdf(args.pages, "-B"))],
                            index)
        second_s = time.perf_counter() - second
        sync = bench.state.sync
    figures = {
        "pages": args.pages, "pdf_bytes": len(first_pdf), "model_load_s": round(model_s, 2),
        "read_s": round(stages.get("read", 0.0), 2), "indexed_s": round(indexed_s, 2), "first_answer_s": round(ask_s, 2),
        "click_to_answer_s": round(indexed_s + ask_s, 2), "chunks": sum(chunks.values()),
        "top_page": top.get("page"), "tier": trace["tier"],
        "second_file_s": round(second_s, 2), "second_file_embedded": sync.added if sync else None,
        "second_file_chunks": sum(again.chunks.values()),
    }
    print(f"10-page PDF: read in {figures['read_s']} s, indexed in {figures['indexed_s']} s "
          f"({figures['chunks']} chunks), first answer in {figures['first_answer_s']} s: "
          f"{figures['click_to_answer_s']} s from the click (model already loaded: {figures['model_load_s']} s at start); "
          f"answered {figures['tier']} from page {figures['top_page']}")
    print(f"a second file: {figures['second_file_s']} s, {figures['second_file_embedded']} chunks embedded "
          f"(its own {figures['second_file_chunks']}; the first file's were not embedded again)")
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(figures, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
