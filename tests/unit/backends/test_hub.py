"""``models pull``: one line when no model hub is reachable (offline mode respected, closed endpoint)."""

from __future__ import annotations

import pytest

from retrieval.backends.hub import DEFAULT_CROSS_ENCODER, FALLBACK_CROSS_ENCODER, HubUnreachable, check_hub


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


def test_a_cross_encoder_not_on_disk_is_refused_before_loading(tmp_path, monkeypatch):
    from retrieval.backends.hub import on_disk
    from retrieval.stages.rerank import LoadContext, load_reranker

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))  # an empty cache: nothing is on disk
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    assert on_disk(str(tmp_path / "model")) is True  # a local model folder
    assert on_disk(str(tmp_path)) is False           # a folder without config.json
    assert on_disk("BAAI/bge-reranker-v2-m3") is False
    reranker, reason = load_reranker("BAAI/bge-reranker-v2-m3")
    assert reranker is None
    assert reason.text() == ("reranker 'BAAI/bge-reranker-v2-m3' is not on disk (not in the Hugging Face cache "
                      f"{tmp_path / 'empty-cache'}): fetch it with `python -m retrieval models pull "
                      "BAAI/bge-reranker-v2-m3` where a model hub is reachable, or set RETRIEVAL_ALLOW_DOWNLOADS=true")
    # A path must be a model folder: an empty folder, a file and a missing path are refused at once.
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.bin").write_text("x")
    for path, why in ((tmp_path / "empty", "a folder without config.json, not a model folder"),
                      (tmp_path / "file.bin", "a file, not a model folder"),
                      (tmp_path / "nowhere", "no such file or folder")):
        reranker, reason = load_reranker(str(path), LoadContext(allow_downloads=True))
        assert reranker is None and reason.text().startswith(f"reranker '{path}' cannot load: {why}")
    # A model the cache does hold passes the check (a folder laid out as the hub client writes it).
    snap = tmp_path / "empty-cache" / "models--org--tiny" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    (tmp_path / "empty-cache" / "models--org--tiny" / "refs").mkdir()
    (tmp_path / "empty-cache" / "models--org--tiny" / "refs" / "main").write_text("abc")
    assert on_disk("org/tiny") is True
