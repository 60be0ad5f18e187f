"""One real-browser smoke test: ``streamlit run app.py`` on a free port, Debian chromium through Playwright,
a question in the URL, the rank grid and (tab "Lists as cards") the four panels rendered, a second question
typed and submitted, a screenshot in ``artifacts/browser/app.png`` and the measured times in
``artifacts/browser/timings.txt``.

The server indexes the lab corpus into a fresh temporary Chroma store (~20-35 s on 2 cores); set
``RETRIEVAL_BROWSER_CHROMA`` to an existing store directory to reuse one while developing."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "artifacts" / "browser"
PANELS = ("Lexical (BM25)", "Dense (cosine)", "Fused (RRF)", "Reranked")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
QUESTION = "O PX-7 não foi ativado apesar do pagamento, o que faço?"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent: install it with "
                       "`apt-get install -y chromium` to run the browser test"),
]


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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, chroma_dir: Path):
    with running_app(tmp_path_factory, seed=chroma_dir) as (url, log):
        try:
            yield url
        finally:
            log.seek(0)
            print("streamlit log tail:\n" + log.read()[-3000:].decode(errors="replace"))


def test_four_panels_render_in_chromium(server: str) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    query = urllib.parse.urlencode({"q": QUESTION, "tenant": "lumen", "reranker": "bi-encoder:use-m3"})
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            started = time.perf_counter()
            page.goto(f"{server}/?{query}", wait_until="domcontentloaded")
            # The first load loads the models (and indexes the lab corpus when the session's store was not indexed
            # before this module: ~20 s). The first tab is the rank grid; the four lists are the tab "Lists as cards".
            page.get_by_role("heading", name="Rank grid").first.wait_for(timeout=240_000)
            page.get_by_role("tab", name="Lists as cards").click()
            for title in PANELS:
                page.get_by_role("heading", name=title).first.wait_for(timeout=240_000)
            page.wait_for_function(IDLE_JS, arg="", timeout=120_000)
            first_load_s = time.perf_counter() - started

            # A second question typed in the box and submitted: no reload of models or index.
            before = timing_caption(page)
            page.get_by_label("Question", exact=True).fill("Quanto tempo leva a ativação do PX-17?")
            watch_runs(page)
            started = time.perf_counter()
            page.get_by_role("button", name="Ask").click()
            page.wait_for_function(IDLE_JS, arg=before, timeout=120_000)
            second_s = time.perf_counter() - started
            server_side = timing_caption(page)
            # Streamlit scrolls inside its main container: grow the viewport to capture the whole page.
            height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
            page.set_viewport_size({"width": 1600, "height": min(int(height) + 40, 16000)})
            page.wait_for_timeout(800)
            page.screenshot(path=str(ARTIFACTS / "app.png"), full_page=True)

            page.get_by_role("tab", name="Lists as cards").click()  # the tab chosen may be reset by the redraw
            page.get_by_role("heading", name=PANELS[0]).first.wait_for(timeout=60_000)
            body = page.inner_text("body")
            for title in PANELS:
                assert title in body
            assert "Answered with" in body and "Why this tier" in body and "Answer" in body
            assert "ventura-" not in body
            assert "Quanto tempo leva a ativação do PX-17?" in page.input_value('input[aria-label="Question"]')
            print(f"first load {first_load_s:.1f} s; second question submit→rendered {second_s:.2f} s; {server_side}")
            (ARTIFACTS / "timings.txt").write_text(
                f"first_load_s={first_load_s:.2f}\nsecond_question_submit_to_rendered_s={second_s:.2f}\n"
                f"app: {server_side}\n")
        finally:
            browser.close()
