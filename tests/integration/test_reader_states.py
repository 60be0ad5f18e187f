"""The reader's states computed at index time (retrieval/learned/reader/precompute.py), with the shipped reader on
the lab corpus: a question on an indexed corpus encodes no passage (counted, not timed); an index killed half-way
resumes without encoding again what was stored; a corpus whose states cannot fit is refused in one line; an
``sq8`` store scores within a hair of fp16's."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.learned.reader import loader
from retrieval.learned.reader.precompute import StatesDoNotFit
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings

QUESTION = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


@pytest.fixture()
def fresh_reader(monkeypatch):
    """The shared reader loaded anew for the test (its memory cache empty), and forgotten after."""
    monkeypatch.setattr(loader, "_shared", None)
    yield
    loader._shared = None


def bench_at(tmp_path, lab_bench, **overrides) -> Workbench:
    settings = Settings(chroma_path=tmp_path / "chroma", _env_file=None, **overrides)
    return Workbench(settings, embedder=lab_bench.embedder, progress=False)


def test_a_question_on_an_indexed_corpus_encodes_no_passage(tmp_path, lab_bench, fresh_reader):
    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=True)
    bench.load_corpus(reader_states=True)
    reader, _ = loader.shared_reader()
    distinct = len({c.text for c in bench.state.chunks if c.text.strip()})
    assert reader.store.count() == distinct and reader.passages_encoded == distinct
    reader.clear()   # memory forgotten: what a new process has
    before = reader.passages_encoded
    trace = bench.ask(QUESTION, {"tenant": "lumen"})
    assert trace.tier == "full"
    assert reader.passages_encoded == before   # every candidate's states read from disk


def test_an_index_killed_half_way_resumes_without_encoding_again(tmp_path, lab_bench, fresh_reader):
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


def test_states_that_cannot_fit_are_refused_in_one_line(tmp_path, lab_bench, fresh_reader):
    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=True, reader_state_mb=1.0, reader_state_codec="sq8")
    with pytest.raises(StatesDoNotFit) as caught:
        bench.load_corpus(reader_states=True)
    message = str(caught.value)
    assert "\n" not in message and "RETRIEVAL_READER_STATE_MB=1" in message and "as sq8" in message
    # the lab corpus' 81 chunks take about 4 MB as sq8, 0.87 MB as pq128x5, 0.78 MB as pq96x6, 0.7 MB as pq64
    assert "codecs that fit: pq128x5, pq96x6, pq64, pq32" in message
    assert bench.state is not None   # the index itself is current


def test_auto_stores_a_corpus_too_large_for_sq8_as_pq128x5(tmp_path, lab_bench, fresh_reader):
    """At 2 MB the lab corpus' 81 chunks would take 6 MB as sq8 at 192 tokens each: ``auto`` (the default) stores
    them as pq128x5 (0.9 MB), says so, and a question reads them from disk; a Workbench of the same process made
    since (no corpus: sq8) does not move this one's requests off its codec, and the reader moved between the two
    keeps each store open rather than opening it at each move."""
    from retrieval.learned.reader.states import store_choice

    bench = bench_at(tmp_path, lab_bench, reader_states_at_index=False, reader_state_mb=2.0)
    assert bench.settings.reader_state_codec == "auto" and store_choice().codec == "sq8"   # nothing loaded yet
    bench.load_corpus()
    report = bench.store_reader_states()
    distinct = len({c.text for c in bench.state.chunks if c.text.strip()})
    assert (report.codec, report.stored, report.encoded) == ("pq128x5", distinct, distinct)
    # 2 MB hold 28 passages of 192 tokens as sq8 (2,097,152 // 73,728)
    assert "auto: sq8 up to 28 passages under RETRIEVAL_READER_STATE_MB=2, pq128x5 past them" in report.line()
    reader, _ = loader.shared_reader()
    assert reader.store.codec.spec == "pq128x5" and reader.store.folder.name.endswith("-pq128x5")
    assert reader.store.size_bytes() < 2 * 2**20
    other = bench_at(tmp_path, lab_bench, reader_states_at_index=False)   # another Workbench: the choice moves
    assert store_choice().codec == "sq8"
    sq8_store = loader.shared_reader()[0].store
    reader.clear()
    before = reader.passages_encoded
    assert bench.ask(QUESTION, {"tenant": "lumen"}).tier == "full"
    assert store_choice().codec == "pq128x5" and reader.passages_encoded == before
    pq_store = reader.store
    other._use_state_store()   # back and forth: each store opened once, then kept open
    assert loader.shared_reader()[0].store is sq8_store
    bench._use_state_store()
    assert loader.shared_reader()[0].store is pq_store and pq_store.codec.spec == "pq128x5"


def test_sq8_states_score_as_fp16_within_a_hair(tmp_path, lab_bench, fresh_reader):
    exact = bench_at(tmp_path / "a", lab_bench, reader_states_at_index=True, reader_state_codec="fp16")
    exact.load_corpus(reader_states=True)
    texts = list(exact.state.chunks)[:30]   # chunks: read as the index read them (their states are stored)
    reader, _ = loader.shared_reader()
    reference = reader.score(QUESTION, texts)
    fp16_bytes, passages = reader.store.size_bytes(), reader.store.count()
    compressed = bench_at(tmp_path / "b", lab_bench, reader_states_at_index=True, reader_state_codec="sq8")
    compressed.load_corpus(reader_states=True)
    reader, _ = loader.shared_reader()
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


def test_the_default_request_encodes_its_question_once(tmp_path, lab_bench, fresh_reader):
    """The dense search takes the question's vector from the reader's pass: the embedder is not called, the
    reader encodes the question once, and the trace says where the vector came from; the same vector the
    embedder gives, to a hair, so the dense list is the embedder's."""
    counting = _Counting(lab_bench.embedder)   # not wrapped again (one_pass off): its calls are counted
    settings = Settings(chroma_path=tmp_path / "chroma", _env_file=None, reader_states_at_index=False, one_pass=False)
    bench = Workbench(settings, embedder=counting, progress=False)
    bench.state = lab_bench.state
    reader, _ = loader.shared_reader()
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


def test_a_memory_ceiling_sizes_the_readers_cache_or_refuses_the_corpus(tmp_path, lab_bench, fresh_reader,
                                                                        monkeypatch):
    from retrieval.core import memory
    from retrieval.core.memory import MemoryDoesNotFit

    monkeypatch.setattr(loader, "_cache_tokens", None)
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
    reader, _ = loader.shared_reader()
    assert reader.cache_tokens == bench.memory.cache_tokens          # the shared reader took it
    assert bench.ask(QUESTION, {"tenant": "lumen"}).tier == "full"


def test_the_background_pass_says_where_it_stands(tmp_path, lab_bench, fresh_reader, monkeypatch):
    """What the app's sidebar reads while the reader stores a corpus' states in the background: the count, then
    the closing figures (a corpus that cannot fit: its one-line refusal)."""
    monkeypatch.setattr(loader, "_background", loader.BackgroundStates())
    bench_at(tmp_path, lab_bench, reader_states_at_index=False)   # its state folder: empty
    seen = []
    real = loader.store_corpus_states

    def spying(reader, texts, should_stop, on_progress):
        return real(reader, texts, should_stop=should_stop,
                    on_progress=lambda *a: (on_progress(*a), seen.append(loader.background_states())))

    monkeypatch.setattr(loader, "store_corpus_states", spying)
    texts = [c.text for c in lab_bench.state.chunks]
    distinct = len({t for t in texts if t.strip()})
    loader.store_in_background(texts).join()
    assert seen[0].running and seen[0].total == distinct and seen[-1].done == distinct
    now = loader.background_states()
    assert (now.running, now.stored, now.passages, now.codec, now.error) == (False, distinct, distinct, "sq8", "")

    loader._shared = None
    bench_at(tmp_path / "small", lab_bench, reader_states_at_index=False, reader_state_mb=1.0)
    loader.store_in_background(texts).join()
    assert loader.background_states().error.startswith(f"the reader states of {distinct} passages need")
