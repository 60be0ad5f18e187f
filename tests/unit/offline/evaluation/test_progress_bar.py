"""The command line's progress bar (retrieval/offline/evaluation/runner.py, ``TqdmProgress``) shows the count it is
told: a message sent with the same count (the tuner's estimate of the whole search) moves nothing, and a phase
that counts from 1 again (the learned ranker's held-out check after its tracing) starts the bar over."""

from __future__ import annotations

from retrieval.offline.evaluation.runner import TqdmProgress


def test_the_bar_shows_the_count_it_is_told_never_more() -> None:
    bar = TqdmProgress("tuning", close_at_total=False)
    seen = []
    for done, total, name in [(1, 4, "default"), (1, 4, "estimated whole search: 9 s"), (2, 4, "a"), (3, 3, "b"),
                              (1, 2, "held-out"), (2, 2, "held-out")]:
        bar(done, total, name)
        seen.append((bar._bar.n, bar._bar.total))
    bar.close()
    assert seen == [(1, 4), (1, 4), (2, 4), (3, 3), (1, 2), (2, 2)]
