"""A fake workbench for the evaluation runner's tests: three documents, and a bench that answers every question
with the same three chunks, so a run is computed by hand in milliseconds."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from retrieval.core.filters import field_types
from retrieval.core.types import Chunk, Document, Question, RankedList, ScoredItem


def Q(qid, relevant, filters=None, group="g"):
    return Question(qid, "?", group, tuple(relevant), dict(filters or {}))


DOCS = [Document("a1", "A", "O PX-7 é ativado em 24 horas.", {"tenant": "lumen"}),
        Document("a2", "B", "A garantia do PX-7 é de um ano.", {"tenant": "lumen"}),
        Document("b1", "C", "O VX-2 é ativado em 48 horas.", {"tenant": "ventura"})]


class FakeBench:
    """Answers every question with the chunks a1#0, a2#0, a1#1 (a1 at ranks 1 and 3), scores 0.9, 0.8, 0.7."""

    def __init__(self, docs=DOCS) -> None:
        chunks = [Chunk(f"{d.id}#{n}", d.id, n, d.title, d.text, dict(d.metadata), f"h{d.id}{n}")
                  for d in docs for n in (0, 1)]
        self.state = SimpleNamespace(corpus_path=Path("fake.jsonl"), chunks=chunks, documents=list(docs),
                                     field_types=field_types(chunks))

    def ask(self, question, filters, settings=None, lists=None):
        picks = [("a1#0", "a1", 0.9), ("a2#0", "a2", 0.8), ("a1#1", "a1", 0.7)]
        items = tuple(ScoredItem(c, p, r, s) for r, (c, p, s) in enumerate(picks, start=1))
        found = RankedList("fused", "rrf", items)
        return SimpleNamespace(selected=list(items), final=[], gated=[], answer=SimpleNamespace(abstained=True, citations=[],
                                                                                     text=""),
                               context_chunk_ids=[], tier="hybrid", timings_ms={"total": 1.0}, costs={},
                               variants=[], lexical=found, dense=found, fused=found,
                               reranked=RankedList("reranked", "x", ()))
