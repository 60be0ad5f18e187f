"""AppTest fixtures: every app test runs against one temporary Chroma store for the whole session.

The first test that renders the page indexes the lab corpus there (~20 s); later tests reuse both the
store and the app's cached Workbench (``st.cache_resource`` is process-wide).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def app_chroma_dir(chroma_dir: Path) -> Path:
    """The session's store (tests/conftest.py): indexed once for the integration, app and browser tests."""
    return chroma_dir


@pytest.fixture(autouse=True)
def app_env(app_chroma_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean RETRIEVAL_* environment pointing at the session's store (set before AppTest runs)."""
    import os

    for key in [k for k in os.environ if k.startswith("RETRIEVAL_") and k != "RETRIEVAL_READER_STATES_AT_INDEX"]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", str(app_chroma_dir))
    monkeypatch.chdir(ROOT)
    return app_chroma_dir
