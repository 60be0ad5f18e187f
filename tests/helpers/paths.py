"""Paths the tests share: the project's folder and FaQuAD's, next to it where it is installed."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAQUAD = ROOT.parent / "shared" / "data" / "faquad"
