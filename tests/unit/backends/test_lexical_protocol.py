"""The lexical protocol: both BM25 engines and the Milvus backend answer the statistics the judge reads."""

from __future__ import annotations

import pytest

from retrieval.backends.lexical import Lexical, LexicalIndex
from retrieval.backends.milvus import MilvusLexical
from retrieval.core.types import Chunk
from retrieval.learned.judge.features import tenant_stats


def chunk(cid: str, text: str, tenant: str) -> Chunk:
    return Chunk(cid, cid.split("#")[0], 0, "", text, {"tenant": tenant}, cid)


CHUNKS = [chunk("a#0", "O PX-7 não ativa", "lumen"), chunk("b#0", "PX-7 ativa com o cabo", "lumen"),
          chunk("c#0", "cabo azul", "lumen"), chunk("d#0", "PX-7 na ventura", "ventura")]


@pytest.mark.parametrize("engine", ["bm25s", "rank-bm25"])
def test_document_frequencies_count_each_tokens_chunks_per_tenant(engine: str) -> None:
    index = LexicalIndex(CHUNKS, "tenant", engine)
    n, df = index.document_frequencies("lumen")
    assert n == 3 and (df("px-7"), df("cabo"), df("azul"), df("ventura"), df("zzz")) == (2, 2, 1, 0, 0)
    assert index.document_frequencies("ventura")[0] == 1 and index.document_frequencies("nobody")[0] == 0
    stats = tenant_stats(index, "lumen")
    assert stats.n_docs == 3 and stats.doc_freq("px-7") == 2
    assert stats.idf("azul") == pytest.approx(0.9808292530117263)  # ln(1 + (3 − 1 + 0.5) / (1 + 0.5))


def test_both_backends_implement_the_protocol() -> None:
    for cls in (LexicalIndex, MilvusLexical):
        assert all(callable(getattr(cls, name, None)) for name in ("size", "search", "document_frequencies")), cls
    assert set(Lexical.__dict__) >= {"size", "search", "document_frequencies"}
