"""The reader's states computed at index time (retrieval/learned/reader/precompute.py), with the shipped reader on
the lab corpus: a question on an indexed corpus encodes no passage (counted, not timed); an index killed half-way
resumes without encoding again what was stored; a corpus whose states cannot fit is refused in one line; an
``sq8`` store scores within a hair of fp16's; two Workbenches of one process each read and write their own store.
Each Workbench reads through its own reader (its memory cache empty when it is made, the weights loaded once)."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.learned.reader import loader
from retrieval.learned.reader.loader import BackgroundStates
from retrieval.learned.reader.precompute import StatesDoNotFit
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings

QUESTION = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def bench_at(tmp_path, lab_bench, **overrides) -> Workbench:
    settings = Settings(chroma_path=tmp_path / "chroma", _env_file=None, **overrides)
    return Workbench(settings, embedder=lab_bench.embedder, progress=False)


def test_a_question_on_an_indexed_corpus_encodes_no_passage(tmp_path, lab_bench):
    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=True)
    bench.load_corpus(reader_states=True)
    reader, _ = bench.reader_store.reader()
    distinct = len({c.text for c in bench.state.chunks if c.text.strip()})
    assert reader.store.count() == distinct and reader.passages_encoded == distinct
    reader.clear()   # memory forgotten: what a new process has
    before = reader.passages_encoded
    trace = bench.ask(QUESTION, {"tenant": "lumen"})
    assert trace.tier == "full"
    assert reader.passages_encoded == before   # every candidate's states read from disk


def test_an_index_killed_half_way_resumes_without_encoding_again(tmp_path, lab_bench):
    """(fp16: a lossy codec is fitted on a first sample, stored at once; what follows resumes alike.)"""
    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=False, reader_state_codec="fp16")
    bench.load_corpus()
    distinct = len({c.text for c in bench.state.chunks if c.text.strip()})
    batches = iter(range(10))
    first = bench.store_reader_states(should_stop=lambda: next(batches) >= 1)   # killed after one batch
    assert first.stored == 64 and first.encoded == 64
    second = bench.store_reader_states()
    assert second.held_before == 64 and second.encoded == distinct - 64 and second.stored == distinct
    assert bench.store_reader_states().encoded == 0


def test_states_that_cannot_fit_are_refused_in_one_line(tmp_path, lab_bench):
    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=True, reader_state_mb=1.0, reader_state_codec="sq8")
    with pytest.raises(StatesDoNotFit) as caught:
        bench.load_corpus(reader_states=True)
    message = str(caught.value)
    assert "\n" not in message and "RETRIEVAL_READER_STATE_MB=1" in message and "as sq8" in message
    # the lab corpus' 81 chunks take about 4 MB as sq8, 0.87 MB as pq128x5, 0.78 MB as pq96x6, 0.7 MB as pq64
    assert "codecs that fit: pq128x5, pq96x6, pq64, pq32" in message
    assert bench.state is not None   # the index itself is current


def test_auto_stores_a_corpus_too_large_for_sq8_as_pq128x5(tmp_path, lab_bench):
    """At 2 MB the lab corpus' 81 chunks would take 6 MB as sq8 at 192 tokens each: ``auto`` (the default) stores
    them as pq128x5 (0.9 MB), says so, and a question reads them from disk; a Workbench of the same process made
    since (no corpus: sq8) keeps its own codec and does not move this one's requests off theirs, nor make it open
    its store again."""
    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=False, reader_state_mb=2.0)
    assert bench.settings.reader_state_codec == "auto" and bench.reader_store.choice.codec == "sq8"   # no corpus yet
    bench.load_corpus()
    report = bench.store_reader_states()
    distinct = len({c.text for c in bench.state.chunks if c.text.strip()})
    assert (report.codec, report.stored, report.encoded) == ("pq128x5", distinct, distinct)
    # 2 MB hold 28 passages of 192 tokens as sq8 (2,097,152 // 73,728)
    assert "auto: sq8 up to 28 passages under RETRIEVAL_READER_STATE_MB=2, pq128x5 past them" in report.line()
    reader, _ = bench.reader_store.reader()
    assert reader.store.codec.spec == "pq128x5" and reader.store.folder.name.endswith("-pq128x5")
    assert reader.store.size_bytes() < 2 * 2**20
    pq_store = reader.store
    other = bench_at(tmp_path, lab_bench, reader_states_at_index=False)   # another Workbench, the same folder
    assert other.reader_store.choice.codec == "sq8" and other.reader_store.reader()[0].store.codec.spec == "sq8"
    reader.clear()
    before = reader.passages_encoded
    assert bench.ask(QUESTION, {"tenant": "lumen"}).tier == "full"
    assert bench.reader_store.choice.codec == "pq128x5" and reader.passages_encoded == before
    assert bench.reader_store.reader()[0].store is pq_store   # opened once, never moved
    assert other.reader_store.reader()[0].store.codec.spec == "sq8" and other.reader_store.choice.codec == "sq8"


def test_sq8_states_score_as_fp16_within_a_hair(tmp_path, lab_bench):
    exact = bench_at(tmp_path / "a", lab_bench, reader_states_at_index=True, reader_state_codec="fp16")
    exact.load_corpus(reader_states=True)
    texts = list(exact.state.chunks)[:30]   # chunks: read as the index read them (their states are stored)
    reader, _ = exact.reader_store.reader()
    reference = reader.score(QUESTION, texts)
    fp16_bytes, passages = reader.store.size_bytes(), reader.store.count()
    compressed = bench_at(tmp_path / "b", lab_bench, reader_states_at_index=True, reader_state_codec="sq8")
    compressed.load_corpus(reader_states=True)
    reader, _ = compressed.reader_store.reader()
    assert reader.store.codec.spec == "sq8" and reader.store.row_bytes == 384
    assert reader.store.count() == passages and reader.store.size_bytes() * 2 == fp16_bytes   # half the room
    reader.clear()
    scores = reader.score(QUESTION, texts)
    assert np.abs(scores - reference).max() < 0.002
    assert list(np.argsort(-scores)[:5]) == list(np.argsort(-reference)[:5])


class _Counting:
    """The lab bench's embedder, counting the question texts it embeds."""

    def __init__(self, embedder):
        self.inner, self.name, self.queries = embedder, embedder.name, []
        self.query_tokens = embedder.query_tokens

    def embed_queries(self, texts):
        self.queries.extend(texts)
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts):
        return self.inner.embed_passages(texts)


def test_the_default_request_encodes_its_question_once(tmp_path, lab_bench):
    """The dense search takes the question's vector from the reader's pass: the embedder is not called, the
    reader encodes the question once, and the trace says where the vector came from; the same vector the
    embedder gives, to a hair, so the dense list is the embedder's."""
    counting = _Counting(lab_bench.embedder)   # not wrapped again (one_pass off): its calls are counted
    settings = Settings(chroma_path=tmp_path / "chroma", _env_file=None, reader_states_at_index=False, one_pass=False)
    bench = Workbench(settings, embedder=counting, progress=False)
    bench.state = lab_bench.state
    reader, _ = bench.reader_store.reader()
    trace = bench.ask(QUESTION, {"tenant": "lumen"})
    assert trace.tier == "full" and trace.cache == {"query_vector": "miss", "query_vector_from": "reader"}
    assert counting.queries == [] and reader.questions_encoded == 1
    shared = bench.question_vector(QUESTION, "reader")
    assert float(shared @ counting.inner.embed_queries([QUESTION])[0]) > 0.999
    again = bench.ask(QUESTION, {"tenant": "lumen"})
    assert again.cache["query_vector"] == "hit" and reader.questions_encoded == 1
    assert [i.chunk_id for i in again.dense.items] == [i.chunk_id for i in trace.dense.items]

    apart = bench.ask(QUESTION, {"tenant": "lumen"}, settings=settings.with_overrides(shared_question_pass=False))
    assert apart.cache == {"query_vector": "miss", "query_vector_from": "embedder"} and counting.queries == [QUESTION]
    assert [i.chunk_id for i in apart.dense.items][:10] == [i.chunk_id for i in trace.dense.items][:10]
    naive = bench.ask(QUESTION, {"tenant": "lumen"},
                      settings=settings.with_overrides(reranker_model="none", support_gate=False, evidence_model=False))
    assert naive.cache["query_vector_from"] == "embedder" and reader.questions_encoded == 1   # no reader: no pass
    # a question the reader's vocabulary splits otherwise (Cyrillic, read letter by letter): embedded apart
    cyrillic = bench.ask("Какой срок гарантии?", {"tenant": "lumen"})
    assert cyrillic.cache["query_vector_from"] == "embedder" and counting.queries[-1] == "Какой срок гарантии?"


def test_a_memory_ceiling_sizes_the_readers_cache_or_refuses_the_corpus(tmp_path, lab_bench):
    from retrieval.core import memory
    from retrieval.core.memory import MemoryDoesNotFit

    embedded = []

    class Refusing:   # the refusal comes before any chunk is embedded
        name = lab_bench.embedder.name

        def embed_passages(self, texts):
            embedded.extend(texts)
            return lab_bench.embedder.embed_passages(texts)

    tight = Workbench(Settings(chroma_path=tmp_path / "a" / "chroma", _env_file=None, reader_states_at_index=False,
                               memory_mb=memory.MODELS_MB), embedder=Refusing(), progress=False)
    with pytest.raises(MemoryDoesNotFit) as caught:
        tight.load_corpus()
    assert "a corpus of 81 chunks needs about" in str(caught.value) and tight.state is None and embedded == []
    ceiling = memory.MODELS_MB + 81 * memory.CHUNK_KB / 1024 + 48.0     # 48 MB left for the caches
    # the lab bench's own store: nothing to embed again
    bench = Workbench(lab_bench.settings.with_overrides(memory_mb=ceiling), embedder=lab_bench.embedder,
                      progress=False)
    bench.load_corpus()
    assert bench.memory.cache_tokens == 48 * 2**20 // memory.TOKEN_BYTES
    reader, _ = bench.reader_store.reader()
    assert reader.cache_tokens == bench.memory.cache_tokens          # this Workbench's reader took it
    assert lab_bench.reader_store.reader()[0].cache_tokens == memory.DEFAULT_CACHE_TOKENS   # the other's did not
    assert bench.ask(QUESTION, {"tenant": "lumen"}).tier == "full"


def test_the_background_pass_says_where_it_stands(tmp_path, lab_bench, monkeypatch):
    """What the app's sidebar reads while the reader stores a corpus' states in the background: the count, then
    the closing figures (a corpus that cannot fit: its one-line refusal, on that Workbench alone)."""
    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=True)   # its state folder: empty
    bench.state = lab_bench.state
    assert bench.background_states() == BackgroundStates()   # nothing ran yet
    seen = []
    real = loader.store_corpus_states

    def spying(reader, texts, should_stop, on_progress, choice):
        return real(reader, texts, should_stop=should_stop, choice=choice,
                    on_progress=lambda *a: (on_progress(*a), seen.append(bench.background_states())))

    monkeypatch.setattr(loader, "store_corpus_states", spying)
    distinct = len({c.text for c in lab_bench.state.chunks if c.text.strip()})
    bench.read_states_in_background().join()
    assert seen[0].running and seen[0].total == distinct and seen[-1].done == distinct
    now = bench.background_states()
    assert (now.running, now.stored, now.passages, now.codec, now.error) == (False, distinct, distinct, "sq8", "")

    small = bench_at(tmp_path / "small", lab_bench, reader_states_at_index=True, reader_state_mb=1.0)
    small.state = lab_bench.state
    small.read_states_in_background().join()
    assert small.background_states().error.startswith(f"the reader states of {distinct} passages need")
    assert bench.background_states() == now   # the other Workbench's pass stands as it ended


def test_two_workbenches_of_one_process_each_read_and_write_their_own_store(tmp_path, lab_bench, lab_questions):
    """Questions asked in turn on two Workbenches whose states live in different folders and codecs: each one's
    reader stores what it encoded in its own folder alone, and encodes a question's candidates the other read
    before (nothing is shared but the weights); a third Workbench on the first one's folder reads them from disk."""
    one = bench_at(tmp_path / "one", lab_bench, reader_states_at_index=False, reader_state_codec="fp16")
    two = bench_at(tmp_path / "two", lab_bench, reader_states_at_index=False, reader_state_codec="sq8")
    one.state = two.state = lab_bench.state
    a, b = one.reader_store.reader()[0], two.reader_store.reader()[0]
    assert a is not b and a.encoder is b.encoder   # the weights loaded once
    first, second = lab_questions[0], lab_questions[1]
    encoded = []
    for bench, q in ((one, first), (two, second), (one, second), (two, first)):
        reader = bench.reader_store.reader()[0]
        before = reader.passages_encoded
        assert bench.ask(q.question, dict(q.filters)).tier == "full"
        encoded.append(reader.passages_encoded - before)
    assert all(n > 0 for n in encoded)   # each question's candidates encoded by each Workbench, once
    assert a.store.codec.spec == "fp16" and b.store.codec.spec == "sq8"
    assert sorted(p.name for p in (tmp_path / "one" / "reader-states").iterdir()) == [a.store.folder.name]
    assert sorted(p.name for p in (tmp_path / "two" / "reader-states").iterdir()) == [b.store.folder.name]
    assert a.store.count() == a.passages_encoded == encoded[0] + encoded[2]   # fp16 keeps every passage it read
    assert 0 < b.store.count() <= b.passages_encoded == encoded[1] + encoded[3]

    three = bench_at(tmp_path / "one", lab_bench, reader_states_at_index=False, reader_state_codec="fp16")
    three.state = lab_bench.state
    c = three.reader_store.reader()[0]
    assert c.store.folder == a.store.folder and c.store is not a.store
    assert three.ask(first.question, dict(first.filters)).tier == "full" and c.passages_encoded == 0
