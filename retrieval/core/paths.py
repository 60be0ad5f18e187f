"""Where the project lives: its folder, and its own lab corpus and question set (the default of ``ask`` and of
the app)."""

from __future__ import annotations

from pathlib import Path

#: The project folder (the one that holds ``retrieval/``, ``data/``, ``models/``).
PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: The project's own lab corpus and its labeled questions (the default corpus of ``ask`` and of the app).
LAB_CORPUS = PROJECT_ROOT / "data" / "lab" / "corpus.jsonl"
LAB_QUESTIONS = PROJECT_ROOT / "data" / "lab" / "questions.jsonl"
