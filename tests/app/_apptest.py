"""What the AppTest files share: the main page's path, a page opened with query parameters, and the check
that a run raised nothing and showed no error."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def page(timeout: float = 120, **params: str) -> AppTest:
    """The main page run once with ``params`` as its URL's query parameters."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
