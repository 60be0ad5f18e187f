"""Shared models under several threads: a forward pass runs outside any process-wide lock where its engine is
re-entrant, a model loads once, and a load holds up only the callers of that model."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from retrieval.backends.embedders import FunctionEmbedder
from retrieval.core.loadonce import LoadOnce
from retrieval.stages.generate import QueryEncoder


def _vectors(texts: list[str]) -> np.ndarray:
    return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_the_query_encoder_embeds_for_two_requests_at_once():
    """Two requests embedding different questions meet inside the embedder: neither waits for the other."""
    inside = threading.Barrier(2, timeout=5)

    def query(texts):
        inside.wait()  # raises BrokenBarrierError if the second call cannot get in while the first is inside
        return _vectors(texts)

    encoder = QueryEncoder(FunctionEmbedder("both", query, _vectors, thread_safe=True))
    results, errors = {}, []

    def ask(text):
        try:
            results[text] = encoder.query(text)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(t,)) for t in ("a", "bb")]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    assert {t: cached for t, (_, cached) in results.items()} == {"a": False, "bb": False}
    assert encoder.query("a")[1] is True  # cached once embedded
    np.testing.assert_allclose(encoder.query("bb")[0], _vectors(["bb"])[0] / np.linalg.norm(_vectors(["bb"])[0]))


def test_an_engine_that_is_not_reentrant_serialises_its_own_calls():
    busy, overlaps = threading.Lock(), []

    def query(texts):
        if not busy.acquire(blocking=False):
            overlaps.append(texts)
            return _vectors(texts)
        time.sleep(0.02)
        busy.release()
        return _vectors(texts)

    embedder = FunctionEmbedder("serial", query, query)  # thread_safe defaults to False
    threads = [threading.Thread(target=embedder.embed_queries, args=([str(i)],)) for i in range(6)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert overlaps == []


def test_load_once_loads_each_key_once_and_a_slow_load_holds_up_only_its_own_key():
    cache: LoadOnce[str, int] = LoadOnce()
    calls, release = [], threading.Event()

    def slow():
        calls.append("slow")
        assert release.wait(5)
        return 1

    threads = [threading.Thread(target=cache.get, args=("slow", slow)) for _ in range(3)]
    [t.start() for t in threads]
    while not calls:  # the slow load has started
        time.sleep(0.005)
    assert cache.get("fast", lambda: 2) == 2  # not held up by the slow key's load:
    assert all(t.is_alive() for t in threads) and not release.is_set()  # it is still loading
    release.set()
    [t.join() for t in threads]
    assert calls == ["slow"] and cache.get("slow", slow) == 1 and "slow" in cache


def test_load_once_keeps_nothing_when_the_load_raises_and_drops_the_oldest_past_its_limit():
    cache: LoadOnce[str, int] = LoadOnce(limit=2)
    with pytest.raises(RuntimeError):
        cache.get("a", lambda: (_ for _ in ()).throw(RuntimeError("no")))
    assert "a" not in cache
    assert cache.get("a", lambda: 1) == 1
    cache.get("b", lambda: 2)
    cache.get("c", lambda: 3)
    assert "a" not in cache and "b" in cache and "c" in cache
