"""The answer's context beside the final list (retrieval/stages/select.py, ``siblings``): a final document's other
chunks that the ranked list holds, at most ``per_parent`` each, in the list's order, after the final chunks."""

from __future__ import annotations

from retrieval.core.types import Chunk, FinalItem, RankedList, ScoredItem
from retrieval.stages.select import siblings


def _chunk(cid: str) -> Chunk:
    return Chunk(cid, cid.split("#")[0], int(cid.split("#")[1]), "t", f"text of {cid}", {}, cid)


def _list(stage: str, ids: list[str], scores: list[float]) -> RankedList:
    return RankedList(stage, "score", tuple(ScoredItem(c, c.split("#")[0], r, s)
                                            for r, (c, s) in enumerate(zip(ids, scores), start=1)))


IDS = ["lei#0", "lei#2", "dec#1", "lei#1", "out#0", "dec#0", "lei#3"]
CHUNKS = {c: _chunk(c) for c in IDS}
RANKED = _list("reranked", IDS, [9, 8, 7, 6, 5, 4, 3])
DENSE = _list("dense", ["lei#1", "dec#1"], [0.87, 0.85])
LEXICAL = _list("lexical", ["lei#1", "out#0"], [11.5, 3.0])
FINAL = (FinalItem("lei#0", "lei", 1, 9, 0.88, "x"), FinalItem("dec#1", "dec", 2, 7, 0.85, "y"))


def test_the_final_documents_other_chunks_come_after_the_final_ones_in_the_lists_order() -> None:
    got = siblings(FINAL, RANKED, CHUNKS, 1, DENSE, LEXICAL)
    assert [(f.chunk_id, f.rank, f.sibling_of, f.similarity, f.bm25) for f in got] == [
        ("lei#2", 3, 1, None, None), ("dec#0", 4, 2, None, None)]
    two = siblings(FINAL, RANKED, CHUNKS, 2, DENSE, LEXICAL)
    assert [(f.chunk_id, f.rank, f.sibling_of, f.similarity, f.bm25) for f in two] == [
        ("lei#2", 3, 1, None, None), ("lei#1", 4, 1, 0.87, 11.5), ("dec#0", 5, 2, None, None)]
    assert two[1].text == "text of lei#1" and two[1].to_dict()["sibling_of"] == 1
    assert "sibling_of" not in FINAL[0].to_dict()  # the final chunks' JSON is as it was
    assert "out#0" not in {f.chunk_id for f in two}  # a document that is not final adds nothing


def test_nothing_is_added_when_off_or_when_nothing_is_final() -> None:
    assert siblings(FINAL, RANKED, CHUNKS, 0, DENSE, LEXICAL) == ()
    assert siblings((), RANKED, CHUNKS, 2, DENSE, LEXICAL) == ()
