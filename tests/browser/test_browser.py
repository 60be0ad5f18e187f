"""One real-browser smoke test: ``streamlit run app.py`` on a free port, Debian chromium through Playwright,
a question in the URL, the rank grid and (tab "Lists as cards") the four panels rendered, a second question
typed and submitted, a screenshot in ``artifacts/browser/app.png`` and the measured times in
``artifacts/browser/timings.txt``.

The server indexes the lab corpus into a fresh temporary Chroma store (~20-35 s on 2 cores); set
``RETRIEVAL_BROWSER_CHROMA`` to an existing store directory to reuse one while developing."""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

import pytest
from helpers.browser import CHROMIUM, CHROMIUM_ARGS, IDLE_JS, running_app, timing_caption, watch_runs
from helpers.paths import ROOT

ARTIFACTS = ROOT / "artifacts" / "browser"
PANELS = ("Lexical (BM25)", "Dense (cosine)", "Fused (RRF)", "Reranked")
QUESTION = "O PX-7 não foi ativado apesar do pagamento, o que faço?"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent: install it with "
                                "`apt-get install -y chromium` to run the browser test")


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
