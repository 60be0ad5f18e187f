"""What the AppTest files share: the main page's path, a page opened with query parameters, the check that a
run raised nothing and showed no error, and a message's text without its Markdown escapes."""

from __future__ import annotations

import re
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


def plain(markdown: str) -> str:
    """The text of an escaped message (``refused\\: '/etc'`` → ``refused: '/etc'``): backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)
