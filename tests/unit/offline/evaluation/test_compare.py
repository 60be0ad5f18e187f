"""The comparison's statistics on cases small enough to count by hand."""

from __future__ import annotations

import pytest

from retrieval.offline.evaluation.compare import holm, paired_p


def test_the_paired_randomization_test_counts_the_sign_flips() -> None:
    # Three questions, each 1.0 better: of the 2**3 swaps only "none" and "all" reach |mean| = 1.
    assert paired_p([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]) == pytest.approx(2 / 8, abs=0.02)
    # One question better by 1, one worse by 1: every swap reaches |mean| ≥ 0.
    assert paired_p([0.0, 1.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert paired_p([0.3, 0.4], [0.3, 0.4]) == 1.0 and paired_p([0.1], [0.9]) is None


def test_holm_adjusts_one_metrics_p_values_over_the_candidates() -> None:
    # sorted 0.01, 0.03, 0.04 → 3·0.01, max(2·0.03, 0.03), max(1·0.04, 0.06)
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.2, None]) == [0.2, None] and holm([]) == []


def test_the_same_pair_gets_the_same_p_at_every_run() -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    a = rng.random(244)
    b = a + rng.normal(0.01, 0.05, 244)
    first = paired_p(a.tolist(), b.tolist())
    assert [paired_p(a.tolist(), b.tolist()) for _ in range(3)] == [first] * 3
    assert 0.0 < first < 1.0
