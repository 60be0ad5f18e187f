"""The trace JSON names where each chunk sits in its source (issue 41): a real :class:`Trace` whose chunks carry a
page, a last page and a section path puts them in every item of every list of ``to_dict()``, and the views that
read the dict (the rank grid, the lists' CSV, the question report) show them."""

from __future__ import annotations

import csv
import io

from retrieval.core.reasons import raw
from retrieval.core.types import Chunk, FinalItem, Query, RankedList, RankerKey, ScoredItem
from retrieval.explain import grid, report_html, tables
from retrieval.pipeline.expand import variants
from retrieval.pipeline.trace import Trace, chunk_locations
from retrieval.pipeline.view import TraceView
from retrieval.stages.answer import Answer
from retrieval.stages.fusion import rrf

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict

SECTION = "Capítulo I › Seção II"
PLACED = {"section": SECTION, "page": 4, "page_end": 5}


def chunk(cid: str, **metadata) -> Chunk:
    return Chunk(cid, cid.split("#")[0], 0, "Diário Oficial, 12/03/2024", "texto", metadata, "h")


#: diario#1 runs over pages 4-5 of Seção II; diario#0 is on page 3, before any heading; faq#0 (a JSONL
#: document) has no place.
CHUNKS = {c.chunk_id: c for c in (chunk("diario#1", section=SECTION, page=4, page_end=5, tenant="x"),
                                  chunk("diario#0", page=3), chunk("faq#0", tenant="x"))}


def lst(stage: str, kind: str, ids: list[str], **extra) -> RankedList:
    return RankedList(stage, kind, tuple(ScoredItem(cid, cid.split("#")[0], r, 1.0 / r, **extra)
                                         for r, cid in enumerate(ids, start=1)))


def a_trace() -> Trace:
    lex, den = lst("lexical", "bm25", ["diario#1", "faq#0"]), lst("dense", "cosine", ["faq#0", "diario#0"])
    fused = rrf({"bm25": lex, "dense": den})
    reranked = lst("reranked", "cosine", ["diario#0", "faq#0", "diario#1"], fused_rank=1)
    rewrite = Query("texto reescrito", "rewrite")
    extra = {RankerKey("bm25", "rewrite"): (rewrite, lst("lexical", "bm25", ["diario#1"])),
             RankerKey("dense", "rewrite"): (rewrite, lst("dense", "cosine", ["faq#0"]))}
    final = [FinalItem("diario#1", "diario", 1, 0.5, 0.9, "texto"), FinalItem("faq#0", "faq", 2, 0.4, 0.8, "texto")]
    lost = [{"chunk_id": "diario#1", "parent_id": "diario", "fused_rank": 1, "reranked_rank": 3, "reader": None}]
    ids = [i.chunk_id for x in (lex, den, fused, reranked) for i in x.items] + ["missing#0"]
    return Trace(question="Qual o prazo do recurso?", settings={"top_k": 2, "rrf_k": 60, "dedup": "chunk"},
                 models={}, index_id="idx", queries=[Query("Qual o prazo do recurso?", "original"), rewrite],
                 filters={}, tier="rrf_only", tier_why=raw("no reranker"), lexical=lex, dense=den, fused=fused,
                 reranked=reranked, final=final, lost_by_reranker=lost,
                 answer=Answer("O prazo é de cinco dias [1].", [], ["diario#1"], False, "extractive"),
                 timings_ms={}, costs={}, variants=variants(extra), selected=tuple(fused.items[:2]),
                 locations=chunk_locations(CHUNKS, ids))


def test_chunk_locations_reads_only_the_ids_given_and_leaves_out_chunks_without_a_place() -> None:
    assert chunk_locations(CHUNKS, ["diario#1", "diario#0", "faq#0", "diario#1", "missing#0"]) == {
        "diario#1": PLACED, "diario#0": {"page": 3}}
    assert chunk_locations(CHUNKS, ["faq#0"]) == {}


def test_every_item_of_every_list_carries_its_chunks_page_and_section() -> None:
    data = a_trace().to_dict()
    items = [*(i for name in ("lexical", "dense", "fused", "reranked") for i in data[name]["items"]),
             *data["selected"], *data["final"], *data["lost_by_reranker"],
             *(i for v in data["variants"] for side in ("lexical", "dense") for i in v[side]["items"])]
    assert {i["chunk_id"] for i in items} == {"diario#1", "diario#0", "faq#0"}
    for item in items:
        where = {k: item[k] for k in ("section", "page", "page_end") if k in item}
        assert where == {"diario#1": PLACED, "diario#0": {"page": 3}, "faq#0": {}}[item["chunk_id"]], item
    final = data["final"][0]
    assert (final["chunk_id"], final["page"], final["page_end"], final["section"]) == ("diario#1", 4, 5, SECTION)
    fused = {i["chunk_id"]: i for i in data["fused"]["items"]}
    assert fused["diario#1"]["page"] == 4 and fused["diario#1"]["section"] == SECTION
    assert fused["diario#1"]["ranks"] == {"bm25": 1} and fused["diario#1"]["rank"] == 2  # its own keys kept
    assert "tenant" not in final and "locations" not in data  # the place only, and no field of its own


def test_the_views_of_the_dict_show_the_place() -> None:
    data = a_trace().to_dict()
    rows = {r["chunk_id"]: r for r in grid.grid_rows(view(data))}
    assert rows["diario#1"]["where"] == PLACED and rows["diario#0"]["where"] == {"page": 3}
    assert rows["faq#0"]["where"] == {}
    fused = list(csv.DictReader(io.StringIO(tables.lists_csv(view(data))["fused"])))
    by = {r["chunk_id"]: r for r in fused}
    assert (by["diario#1"]["page"], by["diario#1"]["page_end"], by["diario#1"]["section"]) == ("4", "5", SECTION)
    assert (by["faq#0"]["page"], by["faq#0"]["section"]) == ("", "")
    document = report_html.question_report(view(data), "pt")
    assert f"pp. 4-5 · {SECTION}" in document and "p. 3" in document
