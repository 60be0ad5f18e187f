"""The command line run as a user runs it, in a process of its own, and the check of its one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers.paths import ROOT


def run(*args: str, env_extra: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m retrieval *args`` in the project's folder, with no RETRIEVAL_* setting but ``env_extra``'s (and
    the suite's RETRIEVAL_READER_STATES_AT_INDEX)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RETRIEVAL_") or k == "RETRIEVAL_READER_STATES_AT_INDEX"}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "retrieval", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def one_error_line(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """The error of a run that failed as it should: exit code 2, one ``error: `` line on stderr holding every one
    of ``fragments``, no traceback. Returns the line."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    # Progress bars also write to stderr (by design); the error itself is one line, and the last.
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("embedding chunks")]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]
