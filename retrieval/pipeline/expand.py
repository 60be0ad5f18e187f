"""Query expansion stages: self-query filters, variant queries (rewrite, multi-query, HyDE, decomposition)
with their own generator lists, and multi-hop insertions after the fusion.

Each variant list is keyed by a :class:`~retrieval.core.types.RankerKey`; the fusion names them by
``str(key)`` (``bm25:rewrite``, ``dense:hyde``, …). HyDE text is a search hint only: it searches the dense
side and never reaches the context. A transform that loses a code, a negation or a condition is flagged, and
by default falls back to the original query.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from ..backends.state import IndexState
from ..core.codes import codes, has_code, invariant_flags, new_codes
from ..core.filters import Filters
from ..core.llm import LLMFailure
from ..core.reasons import Reason, declare, put, raw
from ..core.types import Query, RankedList, RankerKey, ScoredItem
from ..settings import Settings
from ..stages.fusion import fuse, round_robin
from ..stages.generate import Generated
from ..stages.select import dedup
from ..stages.transforms import TRANSFORMS, Glossary, LLMTransformer, Transform, checked, self_query_filters, transform_names

log = logging.getLogger(__name__)

NOT_RUN_DECOMPOSED = declare("expand.not_run_decomposed",
                             en="not run: the question was decomposed into sub-questions, which are fused on their own",
                             pt="não rodou: a pergunta foi decomposta em subperguntas, fundidas cada uma à parte")
DECOMPOSED = declare("expand.decomposed", en="the question was decomposed into sub-questions",
                     pt="a pergunta foi decomposta em subperguntas")
LLM_REFUSED = declare("expand.llm_refused", en="the LLM reply was refused ({why}); the local adapter wrote this query",
                      pt="a resposta do LLM foi recusada ({why}); o adaptador local escreveu esta consulta")
LLM_FAILED = declare("expand.llm_failed", en="the LLM failed ({why}); the local adapter wrote this query",
                     pt="o LLM falhou ({why}); o adaptador local escreveu esta consulta")

#: ``(text, hyde) → Generated``: the generators for one more query text, with the request's filters.
Search = Callable[[str, bool], Generated]


@dataclass(frozen=True)
class Expansion:
    """What the variant queries added: the queries, their lists, and each technique's cost."""

    queries: tuple[Query, ...] = ()
    lists: Mapping[RankerKey, tuple[Query, RankedList]] = field(default_factory=dict)
    techniques: Mapping[str, dict[str, Any]] = field(default_factory=dict)

    def ranked(self) -> dict[str, RankedList]:
        """Ranker name → list, for the fusion."""
        return {str(key): lst for key, (_, lst) in self.lists.items()}

    def decomposed_parts(self) -> list[tuple[str, int | None]]:
        """The sub-questions that searched (in order), when the question was decomposed into two or more."""
        parts = list(dict.fromkeys(k.query_part for k in self.lists if _splits(k.kind)))
        return parts if len(parts) >= 2 else []


def cost(retrieval_calls: int, llm_calls: int, started: float) -> dict[str, Any]:
    return {"retrieval_calls": retrieval_calls, "llm_calls": llm_calls, "input_tokens": 0, "output_tokens": 0,
            "ms": round((time.perf_counter() - started) * 1000, 3)}


def self_query(question: str, state: IndexState, flt: Filters, s: Settings) -> tuple[Filters, Query, dict]:
    """Filters drawn from the question's own words (``year 2024`` → ``year=2024``), narrowing ``flt``.

    Only the values of the request's tenant are candidates: a value that exists only in another tenant is
    never drawn (nor shown in the trace's queries)."""
    started = time.perf_counter()
    drawn = self_query_filters(question, state.filter_values(flt.get(s.tenant_field)), s.tenant_field)
    for key, values in drawn.items():
        flt = flt.narrowed(key, values)
    return flt, Query(question, "self_query", False, (), drawn), cost(0, 0, started)


def expand(question: str, s: Settings, state: IndexState, search: Search) -> Expansion:
    """Run the requested ``variants`` transforms (rewrite, multi_query, hyde, decompose): each variant query gets
    its own lists (same filters)."""
    wanted = [TRANSFORMS.get(t) for t in s.transforms if t in transform_names("variants")]
    if not wanted:
        return Expansion()
    glossary = Glossary.load(s.glossary_path or state.corpus_path.parent / "glossary.json")
    llm = None
    if s.llm_configured:
        llm = LLMTransformer.from_settings(s)  # RETRIEVAL_LLM_TIMEOUT and the reply bound apply here too
    queries: list[Query] = []
    lists: dict[RankerKey, tuple[Query, RankedList]] = {}
    techniques: dict[str, dict[str, Any]] = {}
    # A decomposed question is fused part by part (round robin over the sub-questions), which has no place for
    # rewrite / multi-query / HyDE lists: a transform that splits runs first, and when it splits the question the
    # others are not searched (nor paid for) and say so in their query's flags and in costs.techniques.
    wanted.sort(key=lambda t: not t.splits)
    for transform in wanted:
        technique = transform.name
        started = time.perf_counter()
        if not transform.splits and len({k.query_part for k in lists if _splits(k.kind)}) >= 2:
            queries.append(Query(question, technique, False, ("skipped:decomposed",)))
            techniques[technique] = put(cost(0, 0, started), "skipped", NOT_RUN_DECOMPOSED())
            continue
        before = dict(llm.costs) if llm else None
        texts, fallback = variant_texts(transform, question, glossary, llm)
        calls = 0
        lost: tuple[str, ...] = ()
        if transform.splits and texts:
            # Sub-questions each hold a part: the invariants must hold over all of them together.
            lost = invariant_flags(question, " ".join(texts))
            if lost and s.transform_fallback:
                texts = [question]
        for n, text in enumerate(texts, start=1):
            if transform.splits:
                query = Query(text, technique, False, lost + (("fallback:original",) if text == question else ()))
            else:
                query = checked(question, text, technique, s.transform_fallback,
                                hypothesis_only=transform.hypothesis_only)
            queries.append(query)
            if query.text == question and not query.hypothesis_only:
                continue  # fell back to (or equals) the original, already searched
            found = search(query.text, transform.hypothesis_only)
            variant = None if len(texts) == 1 else n
            for side, lst in (("bm25", found.lexical), ("dense", found.dense)):
                if lst.skipped is None:
                    lists[RankerKey(side, technique, variant)] = (query, lst)
                    calls += 1
        llm_costs = ({k: (None if v is None else v - (before[k] or 0)) for k, v in llm.costs.items()}
                     if llm and before is not None else {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0})
        techniques[technique] = put({**cost(calls, 0, started), **llm_costs}, "fallback", fallback)
    return Expansion(tuple(queries), lists, techniques)


def _splits(kind: str) -> bool:
    return kind in TRANSFORMS and TRANSFORMS.get(kind).splits


def variant_texts(transform: Transform, question: str, glossary: Glossary,
                  llm: Any) -> tuple[list[str], Reason | None]:
    """The variant query texts of one transform (the LLM's when one is configured and the transform declares a
    prompt, else the local adapter's), and why the local adapter wrote them although an LLM is configured
    (``None`` when it is not a fallback)."""
    technique = transform.name
    fallback = None
    if llm is not None and transform.prompt is not None:
        try:
            text = llm.run(technique, question)
            return ([line.strip(" -•") for line in text.splitlines() if line.strip()] if transform.several
                    else [text]), None
        except LLMFailure as exc:  # its reason is in our words: never the server's text, the URL or the key
            fallback = (LLM_REFUSED if exc.refused else LLM_FAILED)(why=exc.reason)
        except Exception as exc:  # noqa: BLE001 - the local adapter takes over, and the trace says so
            # The class only: a server's message may quote the request, and the key never reaches the trace.
            fallback = LLM_FAILED(why=raw(exc.__class__.__name__))
        if fallback:
            log.warning("LLM %s: %s", technique, fallback.text())
    assert transform.local is not None  # a variants transform declares its local texts (Transform checks it)
    return transform.local(question, glossary), fallback


def fuse_expanded(lexical: RankedList, dense: RankedList, expansion: Expansion,
                  s: Settings) -> tuple[RankedList, RankedList, RankedList]:
    """The fusion of the original lists and the variants' lists: ``(lexical, dense, fused)``.

    A question decomposed into two or more sub-questions fuses each part on its own and interleaves the
    parts round-robin, so each part gets its own top candidates; the original lists are then searched but
    not fused (and say so).
    """
    parts = expansion.decomposed_parts()
    if parts:
        lexical, dense = replace(lexical, unfused=DECOMPOSED()), replace(dense, unfused=DECOMPOSED())
    ranked = {name: lst for name, lst in (("bm25", lexical), ("dense", dense)) if lst.fusable}
    ranked.update(expansion.ranked())
    if not parts:
        return lexical, dense, fuse(ranked, s.fusion, s.rrf_k, s.fusion_weight_map)
    by_part = [{str(k): lst for k, (_, lst) in expansion.lists.items() if k.query_part == part} for part in parts]
    return lexical, dense, round_robin([fuse(p, s.fusion, s.rrf_k, s.fusion_weight_map) for p in by_part])


@dataclass(frozen=True)
class Hops:
    """What multi-hop did: the fused list (with insertions), the hop queries and lists, and its cost."""

    fused: RankedList
    queries: tuple[Query, ...]
    lists: Mapping[RankerKey, tuple[Query, RankedList]]
    cost: dict[str, Any]


def multi_hop(question: str, s: Settings, state: IndexState, fused: RankedList, search: Search) -> Hops:
    """Follow codes that the top results mention but the question does not, hop by hop (≤ max_hops; at
    most two codes a hop; stop early when a hop brings no new code).

    Each hop searches the code (BM25 + dense, same filters) and inserts its best chunk that contains the
    code and whose parent is not already in the top_k right after the chunk that mentioned it, so the
    original ranking is kept and only the missing link is added. Inserted items keep the RRF score,
    contributions and ranks of their hop's lists (the list's score kind says so).
    """
    started, calls, seen = time.perf_counter(), 0, codes(question)
    items = list(fused.items)
    queries: list[Query] = []
    lists: dict[RankerKey, tuple[Query, RankedList]] = {}
    inserted = False
    for hop in range(1, s.max_hops + 1):
        top = dedup(items, s.dedup)[: s.top_k]
        found = [(code, item) for item in top for code in new_codes([state.chunk_by_id[item.chunk_id].text], seen)]
        found = [(c, i) for n, (c, i) in enumerate(found) if c not in {x for x, _ in found[:n]}][:2]
        if not found:
            break
        for code, referrer in found:
            seen.append(code)
            query = Query(code, "multi_hop", False, ())
            queries.append(query)
            hop_found = search(code, False)
            hop_lists = {}
            for side, lst in (("bm25", hop_found.lexical), ("dense", hop_found.dense)):
                if lst.skipped is None:
                    key = RankerKey(side, "multi_hop", hop=hop, code=code)
                    lists[key] = (query, lst)
                    hop_lists[str(key)] = lst
                    calls += 1
            top_parents = {i.parent_id for i in dedup(items, s.dedup)[: s.top_k]}
            best = next((i for i in fuse(hop_lists, s.fusion, s.rrf_k, s.fusion_weight_map).items
                         if i.parent_id not in top_parents
                         and has_code(state.chunk_by_id[i.chunk_id].indexed_text, code)), None)
            # The referrer itself may be the hop's best (an earlier insertion pushed it out of the top_k):
            # it is already in the list, next to nothing it could be inserted after.
            if best is None or best.chunk_id == referrer.chunk_id:
                continue
            items = [i for i in items if i.chunk_id != best.chunk_id]
            at = next(n for n, i in enumerate(items) if i.chunk_id == referrer.chunk_id) + 1
            items.insert(at, best)
            inserted = True
    spent = cost(calls, 0, started)
    if not inserted:
        return Hops(fused, tuple(queries), lists, spent)
    out = RankedList("fused", f"{fused.score_kind} + multi-hop insertions (hop items keep their hop score)",
                     tuple(ScoredItem(i.chunk_id, i.parent_id, rank, i.score, contributions=i.contributions,
                                      ranks=i.ranks) for rank, i in enumerate(items, start=1)))
    return Hops(out, tuple(queries), lists, spent)


def variants(lists: Mapping[RankerKey, tuple[Query, RankedList]]) -> list[dict[str, Any]]:
    """Trace entries, one per extra query: ``{query, lexical, dense, rankers}`` with the ranker names used."""
    by_query: dict[int, dict[str, Any]] = {}
    for key, (query, lst) in lists.items():
        entry = by_query.setdefault(id(query), {"query": query.to_dict(), "rankers": []})
        entry["lexical" if key.side == "bm25" else "dense"] = lst.to_dict()
        entry["rankers"].append(str(key))
    return list(by_query.values())

