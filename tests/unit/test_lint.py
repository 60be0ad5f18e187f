"""The code reads clean to pyflakes and pycodestyle (ruff, settings in pyproject.toml): unused imports, undefined
names, shadowed definitions and unused variables fail the suite. mypy is ``make typecheck`` (docs/testing.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

def test_ruff_finds_nothing() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
