"""The memory ceiling's arithmetic (retrieval/core/memory.py): the caches take what the models and the corpus
leave, and a corpus that cannot fit is refused in one line."""

from __future__ import annotations

import pytest

from retrieval.core import memory
from retrieval.core.memory import MemoryDoesNotFit, plan_memory


def test_no_ceiling_keeps_the_default_caches():
    plan = plan_memory(0, 10_000)
    assert plan.cache_tokens == memory.DEFAULT_CACHE_TOKENS == 400_000
    assert plan.corpus_mb == pytest.approx(10_000 * memory.CHUNK_KB / 1024)
    assert "(no ceiling)" in plan.line()


def test_the_reader_cache_takes_what_is_left(monkeypatch):
    monkeypatch.setattr(memory, "MODELS_MB", 1000.0)
    monkeypatch.setattr(memory, "CHUNK_KB", 10.24)        # 100 chunks = 1 MB
    plan = plan_memory(1000.0 + 1.0 + 96.0, 100)            # 96 MB left
    assert plan.cache_tokens == 96 * 2**20 // 768 == 131_072
    assert plan.total_mb == pytest.approx(1097.0)
    assert plan.line() == ("memory: about 1,097 MB of RETRIEVAL_MEMORY_MB=1,097: models 1,000 MB, 100 chunks "
                           "1.0 MB, reader cache 96 MB (131,072 tokens)")
    assert plan_memory(10_000.0, 100).cache_tokens == memory.DEFAULT_CACHE_TOKENS   # never above the default


def test_a_corpus_that_cannot_fit_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(memory, "MODELS_MB", 1000.0)
    monkeypatch.setattr(memory, "CHUNK_KB", 10.0)
    with pytest.raises(MemoryDoesNotFit) as caught:
        plan_memory(1500.0, 100_000)                        # 977 MB of chunks alone
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("a corpus of 100,000 chunks needs about 1,993 MB of memory")
    assert "RETRIEVAL_MEMORY_MB=1,500" in message
    plan_memory(2000.0, 100_000)                            # 23 MB left: fits
