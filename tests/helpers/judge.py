"""A synthetic corpus and question set for the judge's tests (training it, and running it in a request)."""

from __future__ import annotations

import json
from pathlib import Path


TOPICS = [
    ("garantia", "A garantia do aparelho {n} cobre defeitos de fabricação por doze meses.",
     "Qual a garantia do aparelho {n}?", "cobre defeitos de fabricação por doze meses"),
    ("entrega", "A entrega do aparelho {n} leva cinco dias úteis para capitais.",
     "Quanto tempo leva a entrega do aparelho {n}?", "leva cinco dias úteis para capitais"),
    ("bateria", "A bateria do aparelho {n} dura oito horas sem recarga.",
     "Quanto dura a bateria do aparelho {n}?", "dura oito horas sem recarga"),
]
WORDS = ["alfa", "bravo", "charlie", "delta", "eco", "foxtrote", "golfe", "hotel"]


def write_synthetic(folder: Path) -> tuple[Path, Path]:
    """A synthetic corpus (8 devices × 3 topics, one parent each, with filler sentences) and its questions,
    including two unanswerable ones. Synthetic: its figures are not a benchmark of real data."""
    docs, questions = [], []
    for n in WORDS:
        for topic, text, question, span in TOPICS:
            pid = f"{n}-{topic}"
            filler = f"O modelo {n} é vendido em lojas. Consulte o manual do {n} para detalhes."
            docs.append({"id": pid, "title": f"{n.title()} {topic}", "text": f"{filler} {text.format(n=n)}",
                         "metadata": {}})
            questions.append({"id": f"q-{pid}", "question": question.format(n=n), "group": topic,
                              "relevant": [pid], "filters": {}, "answers": [span]})
    questions += [{"id": "q-none-1", "question": "Qual o preço do seguro contra roubo do aparelho?",
                   "group": "unanswerable", "relevant": [], "filters": {}},
                  {"id": "q-none-2", "question": "O aparelho funciona debaixo d'água?", "group": "unanswerable",
                   "relevant": [], "filters": {}}]
    corpus = folder / "corpus.jsonl"
    qpath = folder / "questions.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    qpath.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    return corpus, qpath
