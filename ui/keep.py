"""Widget values that outlive their widget.

Streamlit forgets a widget's value on a run that does not draw it, and a value set through the session state
before the widget was drawn comes back once the widget is gone: a widget inside a tab drawn only while that tab
is open (the Compare, Judge, Where and grid panels), or on the page the user left for the Evaluation page, would
reopen with an old value. Each such widget keeps a copy under ``_kept_<key>``: written by the user's change
(:func:`keep` as the widget's ``on_change``) or by the page (:func:`remember`), and put back as the widget's value
before it is drawn (:func:`restore`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

_UNSET = object()


def kept_key(key: str) -> str:
    return f"_kept_{key}"


def kept(key: str, default: Any = None) -> Any:
    """The kept value of the widget ``key`` (``default`` when it has none)."""
    return st.session_state.get(kept_key(key), default)


def restore(key: str, default: Any = _UNSET) -> None:
    """Before drawing the widget ``key``: its kept value as its value (else ``default``, kept from now on)."""
    ss = st.session_state
    if kept_key(key) in ss:
        ss[key] = ss[kept_key(key)]
    elif default is not _UNSET:
        ss[key] = ss[kept_key(key)] = default


def keep(key: str) -> None:
    """``on_change`` of the widget ``key``: the user's value is its kept value."""
    st.session_state[kept_key(key)] = st.session_state[key]


def remember(key: str, value: Any) -> None:
    """The page sets the widget ``key`` to ``value`` (its value and its kept value)."""
    st.session_state[key] = st.session_state[kept_key(key)] = value
