"""The ETA of a long run: what is left at the rate since the first report."""

from __future__ import annotations

import pytest

from retrieval.core.timing import Eta


def test_the_eta_is_what_is_left_at_the_rate_since_the_first_report():
    now = [100.0]
    eta = Eta(clock=lambda: now[0])
    assert eta.update(64, 1000) is None          # one report: no rate yet (the first batch carried the start-up)
    now[0] = 104.0
    assert eta.update(128, 1000) == pytest.approx(872 * 4 / 64)   # 16 chunks/s since the first report
    now[0] = 105.0
    assert eta.update(1000, 1000) == 0.0
    assert eta.update(10, 500) is None           # a new run (done went back): starts again
