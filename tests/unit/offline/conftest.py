"""The offline tests score runs with ranx: its functions are compiled once for the session, before the first of
them (tests/conftest.py, ``ranx_compiled``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _ranx(ranx_compiled) -> None:
    """Every test here runs after ranx is compiled."""
