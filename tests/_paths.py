"""Paths shared by the tests (a plain module: several conftest.py files exist, so none is imported by name)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAQUAD = ROOT.parent / "shared" / "data" / "faquad"
