"""The check every refusal passes: its message is one line."""

from __future__ import annotations


def one_line(exc: BaseException) -> str:
    """``exc``'s message, asserted non-empty and one line."""
    text = str(exc)
    assert text and "\n" not in text, repr(text)
    return text
