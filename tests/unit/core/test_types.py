"""The request's value types (retrieval/core/types.py): ranker keys as the trace names them, a list's status, and
the passage a chunk gives each template."""

from __future__ import annotations

import pytest
from helpers.tiny_index import items

from retrieval.core.types import Chunk, RankedList, RankerKey


def test_ranker_keys_print_as_the_trace_names():
    assert [str(k) for k in (RankerKey("bm25"), RankerKey("dense", "hyde"), RankerKey("bm25", "multi_query", 2),
                             RankerKey("dense", "multi_hop", hop=1, code="PX-9"))] == \
        ["bm25", "dense:hyde", "bm25:multi_query#2", "dense:hop1:PX-9"]


def test_list_status_is_a_field_printed_as_the_old_note():
    skipped = RankedList("lexical", "bm25", (), skipped="hybrid switched off")
    unfused = RankedList("lexical", "bm25", items("a"), unfused="decomposed")
    assert (skipped.fusable, unfused.fusable, RankedList("x", "y").fusable) == (False, False, True)
    assert skipped.to_dict()["note"] == "skipped: hybrid switched off"
    assert unfused.to_dict()["note"] == "searched but not fused: decomposed"


def test_passage_templates():
    chunk = Chunk("p#0", "p", 0, "Prazo de entrega", "Chega em 5 dias.", {}, "h", context="Contexto.")
    assert [chunk.passage(t) for t in ("title-newline", "title-period", "text")] == [
        "Prazo de entrega\nContexto.\nChega em 5 dias.", "Prazo de entrega. Contexto. Chega em 5 dias.",
        "Contexto. Chega em 5 dias."]
    assert Chunk("q#0", "q", 0, "Como?", "Assim.", {}, "h").passage("title-period") == "Como? Assim."
    with pytest.raises(ValueError, match="unknown passage template"):
        chunk.passage("html")
