"""The timer that fills a trace's ``timings_ms``, each stage inside an OpenTelemetry span.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Iterator


def tracer() -> Any:
    from opentelemetry import trace

    return trace.get_tracer("retrieval")


class StageTimer:
    """Times named stages in milliseconds, each inside an OpenTelemetry span ``retrieval.<name>``.

    A stage that did not run is recorded as ``None`` (never 0): see :meth:`skip`.
    """

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.timings: dict[str, float | None] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[Any]:
        start = time.perf_counter()
        with tracer().start_as_current_span(f"retrieval.{name}") as span:
            yield span
        self.timings[name] = round((time.perf_counter() - start) * 1000, 3)

    def skip(self, *names: str) -> None:
        for name in names:
            self.timings[name] = None

    def finish(self) -> dict[str, float | None]:
        """The timings with ``total`` (the whole request) and ``other`` (what no named stage holds)."""
        total = (time.perf_counter() - self.started) * 1000
        named = sum(v for k, v in self.timings.items() if isinstance(v, (int, float)) and k in TOP_LEVEL_STAGES)
        self.timings["other"] = round(max(0.0, total - named), 3)
        self.timings["total"] = round(total, 3)
        return dict(self.timings)


#: Stages that do not overlap one another (``other`` = total minus their sum). The variant queries' searches
#: are inside ``transforms`` (and the hops' inside ``multi_hop``); ``load_reranker`` is the first request's
#: loading of a reranker model.
TOP_LEVEL_STAGES = frozenset({"validate", "load_reranker", "plan", "lexical", "embed_query", "dense", "transforms",
                              "fusion", "multi_hop", "judge_features", "rerank", "dedup", "gate",
                              "answer"})


class Eta:
    """Seconds left of a long run (an index' embedding) from its progress so far: the rate since the first report
    (which may come after a slow start: reading, a model's load), applied to what is left. ``None`` until two
    reports have come."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._first: tuple[float, int] | None = None

    def update(self, done: int, total: int) -> float | None:
        now = self._clock()
        if self._first is None or done < self._first[1]:
            self._first = (now, done)
            return None
        at, first_done = self._first
        if done <= first_done or now <= at:
            return None
        return max(0.0, (total - done) * (now - at) / (done - first_done))
