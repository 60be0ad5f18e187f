"""What the browser tests share: chromium and its flags, an app (or ``retrieval serve``) started on a free port and
stopped after, and the page scripts that tell when a run has settled and read its timing line."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from helpers.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


IDLE_JS = """prev => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const el = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .find(e => e.innerText.includes('Submit → page laid out'));
  // A new timing line, or a run seen to start since watch_runs (the same question asked twice may lay out
  // in the same milliseconds: its line can repeat word for word).
  return !!el && (el.innerText !== prev || window.__workbenchRan === true);
}"""

WATCH_JS = """() => {
  window.__workbenchRan = false;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return;
  if (window.__workbenchWatch) window.__workbenchWatch.disconnect();
  window.__workbenchWatch = new MutationObserver(() => {
    if (app.getAttribute('data-test-script-state') === 'running') window.__workbenchRan = true;
  });
  window.__workbenchWatch.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


def watch_runs(page) -> None:
    """From now on IDLE_JS also counts a run of the script seen to start (call it just before the click)."""
    page.evaluate(WATCH_JS)


def timing_caption(page) -> str:
    return page.evaluate("""() => {
      const el = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
        .find(e => e.innerText.includes('Submit → page laid out'));
      return el ? el.innerText : '';
    }""")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200 and response.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer 'ok' within {timeout_s} s")


@contextmanager
def running_app(tmp_path_factory: pytest.TempPathFactory, extra_env: dict[str, str] | None = None,
                seed: Path | None = None, workers: int = 0) -> Iterator[tuple[str, Any]]:
    """``streamlit run app.py`` on a free port, healthy: ``(url, log file)``; stopped (then killed) on exit.
    With ``workers``, ``python -m retrieval serve --workers N`` instead: N app processes behind its balancer.

    The store is a temporary folder of its own: a copy of ``seed`` (the session's store, which the app tests
    indexed before, with the reader's passage states beside it) where given, so the server finds the lab corpus
    indexed instead of embedding it again; ``RETRIEVAL_BROWSER_CHROMA`` names one to use as it is while
    developing. ``extra_env`` adds variables (``RETRIEVAL_DATA_ROOTS`` for a test's own files).
    """
    port = free_port()
    chroma = os.environ.get("RETRIEVAL_BROWSER_CHROMA")
    if not chroma:
        folder = tmp_path_factory.mktemp("browser-store")
        chroma = str(folder / "chroma")
        if seed is not None and seed.is_dir():
            shutil.copytree(seed, chroma)
            if (seed.parent / "reader-states").is_dir():
                shutil.copytree(seed.parent / "reader-states", folder / "reader-states")
    log = tempfile.TemporaryFile()
    env = {**os.environ, "RETRIEVAL_CHROMA_PATH": chroma, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    command = ([sys.executable, "-m", "retrieval", "serve", "--workers", str(workers), "--port", str(port),
                "--no-index"] if workers else
               [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address",
                "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"])
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc)
        yield f"http://127.0.0.1:{port}", log
    finally:
        proc.terminate()  # `serve` stops its workers too
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
