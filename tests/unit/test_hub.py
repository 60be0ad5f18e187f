"""``models pull``: one line when no model hub is reachable (offline mode respected, closed endpoint)."""

from __future__ import annotations

import pytest

from retrieval.hub import DEFAULT_CROSS_ENCODER, FALLBACK_CROSS_ENCODER, HubUnreachable, check_hub


def test_offline_mode_is_respected(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnreachable, match="^no model hub is reachable: HF_HUB_OFFLINE is set"):
        check_hub()


def test_closed_endpoint_is_unreachable(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens here
    with pytest.raises(HubUnreachable) as info:
        check_hub(timeout_s=1.0)
    message = str(info.value)
    assert message.startswith("no model hub is reachable (http://127.0.0.1:9: ") and "\n" not in message


def test_the_adr_models_are_the_defaults():
    assert (DEFAULT_CROSS_ENCODER, FALLBACK_CROSS_ENCODER) == ("BAAI/bge-reranker-v2-m3", "BAAI/bge-reranker-base")
