"""The defaults that more than one floor writes down: each is a setting's default (``retrieval/settings.py`` reads
it from here) and the default of the functions, views and backends that take the same value, so a change is made
once. Chosen by measurement (see docs/measurements.md)."""

from __future__ import annotations

#: RRF's constant k (Cormack et al., 2009): ``1 / (k + rank)``, ranks starting at 1.
RRF_K = 60
#: Chunks in the final list.
TOP_K = 5
#: Each generator returns ``OVERFETCH × TOP_K`` candidates.
OVERFETCH = 4
#: The cosine gate on the final chunks.
MIN_SIMILARITY = 0.80
#: Seconds one LLM call may take in all.
LLM_TIMEOUT_S = 60.0
