"""What the AppTest files share: the main page's path, a page opened with query parameters, a tab opened, the
check that a run raised nothing and showed no error, and a message's text without its Markdown escapes."""

from __future__ import annotations

import re
from typing import Iterator

from helpers.paths import ROOT
from streamlit.testing.v1 import AppTest

APP = str(ROOT / "app.py")
EVALUATION_PAGE = str(ROOT / "pages" / "2_Evaluation.py")


def page(timeout: float = 120, **params: str) -> AppTest:
    """The main page run once with ``params`` as its URL's query parameters."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def open_tab(at: AppTest, tab: str, lang: str = "en") -> AppTest:
    """``at`` run again with one of the main page's tabs open (``tab_lists``, ``tab_judge``… as ui/i18n.py
    names their labels): only the open tab is drawn, as in the browser."""
    from ui.i18n import t

    at.session_state["view_tab"] = t(tab, lang)
    return at.run()


def assert_ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def plain(markdown: str) -> str:
    """The text of an escaped message (``refused\\: '/etc'`` → ``refused: '/etc'``): backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def walk(node) -> Iterator:
    yield node
    for child in (getattr(node, "children", None) or {}).values():
        yield from walk(child)


def rendered(at: AppTest) -> str:
    """Everything the page sends to the browser (every element's proto, sidebar included), lower-cased."""
    return "\n".join(str(getattr(node, "proto", "")) for node in walk(at._tree)).lower()
