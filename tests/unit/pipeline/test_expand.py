"""The expansion of a request (retrieval/pipeline/expand.py): a decomposed question's parts fused round robin, and
multi-hop inserting the chunk a code it followed leads to."""

from __future__ import annotations

import pytest
from helpers.tiny_index import items, tiny_state

from retrieval.core.types import Query, RankedList, RankerKey
from retrieval.pipeline.expand import Expansion, fuse_expanded, multi_hop
from retrieval.settings import Settings


@pytest.fixture()
def state(tmp_path):
    return tiny_state(tmp_path)


def test_decomposed_parts_fuse_round_robin_and_the_original_lists_say_so():
    s = Settings(_env_file=None)
    q1, q2 = Query("parte um", "decompose"), Query("parte dois", "decompose")
    lists = {RankerKey("bm25", "decompose", 1): (q1, RankedList("lexical", "bm25", items("a", "b"))),
             RankerKey("bm25", "decompose", 2): (q2, RankedList("lexical", "bm25", items("c", "b")))}
    lexical, dense, fused = fuse_expanded(RankedList("lexical", "bm25", items("d")),
                                          RankedList("dense", "cosine", items("d")), Expansion((q1, q2), lists), s)
    assert [i.parent_id for i in fused.items] == ["a", "c", "b"]  # each part's first, then the next
    assert lexical.unfused and dense.unfused and "d" not in {i.parent_id for i in fused.items}


def test_multi_hop_inserts_the_code_it_followed(state):
    s = Settings(_env_file=None).with_overrides(top_k=2)
    fused = RankedList("fused", "rrf", items("b", "a"))

    def search(text, hyde):
        from retrieval.stages.generate import Generated

        found = items("c", "b") if text == "PX-9" else ()
        return Generated(RankedList("lexical", "bm25", found), RankedList("dense", "cosine", ()), None, None)

    # The top two (b, a) mention PX-9 and PX-7; only PX-9's hop finds a chunk outside the top that holds it.
    hops = multi_hop("Quanto leva o reembolso?", s, state, fused, search)
    assert [i.parent_id for i in hops.fused.items] == ["b", "c", "a"]
    assert [q.text for q in hops.queries] == ["PX-9", "PX-7"] and hops.cost["retrieval_calls"] == 4
