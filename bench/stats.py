"""Percentiles as the benchmark reports them."""

from __future__ import annotations

from typing import Sequence


def pct(values: Sequence[float], p: float) -> float | None:
    if not len(values):
        return None
    ordered = sorted(values)
    return round(float(ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]), 3)
