"""The stage timer (retrieval/core/timing.py): a skipped stage, and a total that holds every stage."""

from __future__ import annotations

import pytest

from retrieval.core.timing import StageTimer


def test_timer_accounts_for_the_whole_request():
    timer = StageTimer()
    with timer.stage("lexical"):
        pass
    timer.skip("rerank")
    t = timer.finish()
    assert t["rerank"] is None and t["other"] == pytest.approx(t["total"] - t["lexical"], abs=1e-3)
