"""Tables over one trace (docs/contracts.md, "The trace"): the lists as rows and CSV, snippets with the
question's terms, the movement of the rerank, what it lost, timings, costs, queries, why a list is empty, and two
traces' finals side by side.

Everything here reads the typed view of a trace dict (:class:`~retrieval.pipeline.view.TraceView`, built from
``Trace.to_dict()``) and returns plain Python values (and reasons, rendered by the page in its language); nothing
is re-scored and nothing imports streamlit, so the app, the CLI, the reports and tests share these functions.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Literal, Mapping, Sequence

from ..core.reasons import Reason, declare, raw
from ..core.safecsv import csv_text
from ..core.text import tokenize
from ..ingest.location import LOCATION_KEYS
from ..learned.judge.features import FEATURE_DOCS
from ..pipeline.view import Item, TraceView
from ..stages.rerank.base import NONE_RAN
from ..stages.transforms import transform_names

#: The four ranked lists of a trace, in pipeline order, as (trace key, ranker name used by the fusion).
LISTS = ("lexical", "dense", "fused", "reranked")

#: Human names of score kinds found in traces. Unknown kinds are shown as they are.
SCORE_KIND_LABELS = {
    "bm25": "BM25 (unbounded, higher is better)",
    "cosine": "cosine similarity in [-1, 1]",
    "rrf": "RRF score Σ 1/(k + rank)",
    "none": "no score",
}

_WORD_RE = re.compile(r"\w+(?:-\w+)*", re.UNICODE)


# -- snippets ------------------------------------------------------------------------------------------------
def query_terms(question: str) -> frozenset[str]:
    """The question's BM25 tokens (same tokenizer as the index: folded, stopwords removed, code parts)."""
    return frozenset(tokenize(question or ""))


def highlight_segments(text: str, terms: Iterable[str]) -> list[tuple[str, bool]]:
    """Split ``text`` into ``(segment, is_hit)`` pieces, a word being a hit when one of its tokens is in
    ``terms``. Joining the segments gives ``text`` back unchanged."""
    wanted = frozenset(terms)
    out: list[tuple[str, bool]] = []
    last = 0
    for match in _WORD_RE.finditer(text):
        word = match.group()
        tokens = tokenize(word)
        if not wanted or not any(tok in wanted for tok in tokens):
            continue
        if "-" in word and tokens and tokens[0] not in wanted:
            # A code or compound matched only by some of its parts ("px" of PX-17): mark those parts only.
            pieces = [(m.start(), m.end()) for m in re.finditer(r"\w+", word)
                      if any(t in wanted for t in tokenize(m.group()))]
        else:
            pieces = [(0, len(word))]
        for start, end in pieces:
            start, end = match.start() + start, match.start() + end
            if start > last:
                out.append((text[last:start], False))
            out.append((text[start:end], True))
            last = end
    if last < len(text):
        out.append((text[last:], False))
    return out


def snippet(text: str, terms: Iterable[str], width: int = 280) -> tuple[str, bool, bool]:
    """A window of about ``width`` characters around the first hit (or the start).

    Returns:
        ``(window, cut_before, cut_after)``: the window's text and whether text was cut on each side.
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text, False, False
    segments = highlight_segments(text, terms)
    first_hit, position = None, 0
    for segment, hit in segments:
        if hit:
            first_hit = position
            break
        position += len(segment)
    start = 0 if first_hit is None else max(0, first_hit - width // 4)
    if first_hit is not None and start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < first_hit else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    return text[start:end], start > 0, end < len(text)


# -- relevance -----------------------------------------------------------------------------------------------
def relevance_of(parent_id: str, relevant: Sequence[str] | None, graded: Mapping[str, int] | None) -> str | None:
    """``"relevant"`` (labeled, or grade 3), ``"partial"`` (grade 1-2), ``"not labeled"``, or ``None`` when
    the question has no labels (not from a question set)."""
    if relevant is None:
        return None
    if parent_id in relevant:
        return "relevant"
    grade = (graded or {}).get(parent_id, 0)
    if grade >= 3:
        return "relevant"
    if grade > 0:
        return "partial"
    return "not labeled"


# -- tables --------------------------------------------------------------------------------------------------
def list_rows(trace: TraceView, name: str, relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """One row per item of the trace list ``name`` (``lexical``, ``dense``, ``fused``, ``reranked``).

    Columns: list, rank, chunk_id, parent_id, score, score_kind, relevance, then per list: ``terms`` (JSON of
    the per-term BM25 contributions), ``rank_bm25``/``rank_dense``/``rrf_bm25``/``rrf_dense`` and
    ``found_by`` (fused), ``fused_rank`` (reranked), then the chunk's place in its source: ``section``, ``page``,
    ``page_end`` (``None`` where it has none: an empty cell). Values are copied from the trace, never recomputed.
    """
    block = trace.ranked(name)
    kind = block.score_kind
    rows = []
    for item in block.items:
        row: dict[str, Any] = {"list": name, "rank": item.rank, "chunk_id": item.chunk_id,
                               "parent_id": item.parent_id, "score": item.score, "score_kind": kind,
                               "relevance": relevance_of(item.parent_id, relevant, graded)}
        if name == "lexical":
            row["terms"] = json.dumps(dict(item.terms), ensure_ascii=False, sort_keys=True)
        elif name == "fused":
            ranks, contributions = item.ranks, item.contributions
            for ranker in ("bm25", "dense"):
                row[f"rank_{ranker}"] = ranks.get(ranker)
                row[f"rrf_{ranker}"] = contributions.get(ranker)
            row["found_by"] = "+".join(sorted(ranks)) if ranks else ""
        elif name == "reranked":
            row["fused_rank"] = item.fused_rank
        row.update((key, item.where.get(key)) for key in LOCATION_KEYS)
        rows.append(row)
    return rows


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text (header from the union of keys, in first-seen order); ``None`` (or a missing key) becomes an
    empty cell, and a text cell a spreadsheet would run as a formula (an id ``=HYPERLINK(…)``) is written
    ``'=HYPERLINK(…)`` (:func:`retrieval.core.safecsv.safe_cell`)."""
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    return csv_text(columns or ["list"], ([row.get(c) for c in columns] for row in rows))


def lists_csv(trace: TraceView, relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> dict[str, str]:
    """The four lists as CSV texts, keyed by list name."""
    return {name: rows_to_csv(list_rows(trace, name, relevant, graded)) for name in LISTS}


def contribution_rows(trace: TraceView, limit: int | None = None) -> list[dict[str, Any]]:
    """Long-format rows for a stacked bar of RRF contributions: one row per (fused item, ranker)."""
    rows = []
    for item in trace.fused.items[:limit]:
        ranks = item.ranks
        for ranker, value in item.contributions.items():
            rows.append({"fused_rank": item.rank, "chunk_id": item.chunk_id, "ranker": ranker,
                         "contribution": value, "ranker_rank": ranks.get(ranker),
                         "single_ranker": len(ranks) == 1})
    return rows










def dedup_key(trace: TraceView, item: Item) -> str:
    """What the request deduplicated ``item`` by: its chunk id (``dedup=chunk``), else its parent id."""
    return item.chunk_id if trace.settings.dedup == "chunk" else item.parent_id


def _fused_kept(trace: TraceView) -> set[str]:
    """Chunk ids the fused list would have sent on: deduplicated as the request was (by parent, or by chunk),
    then its first ``top_k`` — the counterpart, before the rerank, of the final list."""
    top_k = int(trace.settings.top_k or 0)
    seen: set[str] = set()
    kept: list[str] = []
    for item in sorted(trace.fused.items, key=lambda i: i.rank):
        if dedup_key(trace, item) not in seen:
            seen.add(dedup_key(trace, item))
            kept.append(item.chunk_id)
    return set(kept[:top_k])


def movement_rows(trace: TraceView) -> list[dict[str, Any]]:
    """Rows for a fused → reranked slope chart (two per reranked item), with a status per item.

    An item is *in* after the rerank exactly when the gate passed it (:attr:`~retrieval.pipeline.view.TraceView.gated`:
    the trace's ``final`` list after the dedup by parent, the top_k cut or MMR, and the gate; not a chunk
    ``context_siblings`` added), and *in* before it when the fused list, deduplicated the same way, holds it in its
    first ``top_k``. Status: ``stayed in`` (in both), ``moved in``
    (final only), ``fell out`` (fused only: the reranker, the dedup or the gate dropped it) or ``stayed out``.
    A chunk whose parent has a better-ranked chunk is out after the dedup whatever its raw rank.
    ``final_rank`` is the item's place in the final list (``None`` when out). Empty when no rerank ran.
    """
    final = {item.chunk_id: item.rank for item in trace.gated}
    before_in = _fused_kept(trace)
    rows = []
    for item in trace.reranked.items:
        before, after = item.fused_rank, item.rank
        if before is None:
            continue
        was_in, is_in = item.chunk_id in before_in, item.chunk_id in final
        status = ("stayed in" if was_in else "moved in") if is_in else ("fell out" if was_in else "stayed out")
        for stage, rank in (("fused", before), ("reranked", after)):
            rows.append({"chunk_id": item.chunk_id, "parent_id": item.parent_id, "stage": stage,
                         "rank": rank, "status": status, "fused_rank": before, "reranked_rank": after,
                         "final_rank": final.get(item.chunk_id)})
    return rows


def lost_rows(trace: TraceView, relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """``lost_by_reranker`` with its ranks before and after, the item's label and its place in its source
    (``where``: :func:`retrieval.ingest.location.location`, ``{}`` where it has none)."""
    return [{"chunk_id": e.chunk_id, "parent_id": e.parent_id, "fused_rank": e.fused_rank,
             "reranked_rank": e.reranked_rank, "reader": e.reader,
             "relevance": relevance_of(e.parent_id, relevant, graded), "where": dict(e.where)}
            for e in trace.lost_by_reranker]


#: Stages whose time is already inside another stage of the trace (not added again to the sum).
NESTED_STAGES = frozenset(transform_names("hops"))
UNATTRIBUTED = "outside any stage (e.g. model loading)"


def timing_rows(trace: TraceView) -> list[dict[str, Any]]:
    """Per-stage timings in ms as in the trace; ``None`` means not measured (never shown as 0).

    When the trace has a ``total``, a row :data:`UNATTRIBUTED` holds ``total − Σ stages`` (rounded to 0.1 ms),
    so every millisecond of the request is in a named row.
    """
    timings = trace.timings_ms
    rows = [{"stage": stage, "ms": value} for stage, value in timings.items() if stage != "total"]
    total = timings.get("total")
    if total is not None:
        staged = sum(v for k, v in timings.items() if k != "total" and k not in NESTED_STAGES and v is not None)
        rows.append({"stage": UNATTRIBUTED, "ms": round(max(0.0, total - staged), 1)})
        rows.append({"stage": "total", "ms": total})
    return rows


def unattributed_ms(trace: TraceView) -> float | None:
    """``total − Σ stages`` of the trace in ms (``None`` without a total)."""
    return next((r["ms"] for r in timing_rows(trace) if r["stage"] == UNATTRIBUTED), None)


def cost_rows(trace: TraceView) -> list[dict[str, Any]]:
    """Scalar costs of the request (``None`` = not measured); per-technique costs are in :func:`technique_rows`."""
    return [{"cost": name, "value": value} for name, value in trace.costs.items()]


def technique_rows(trace: TraceView) -> list[dict[str, Any]]:
    """One row per query transform that ran: extra retrieval calls, LLM calls, tokens and wall time (ms)."""
    return [{"technique": name, **values} for name, values in trace.techniques.items()]


def query_rows(trace: TraceView) -> list[dict[str, Any]]:
    """The original and every transformed query, with what each lost (flags) and the lists it produced."""
    rankers: dict[tuple[str, str], list[str]] = {}
    for variant in trace.variants:
        rankers.setdefault((variant.query.kind, variant.query.text), []).extend(variant.rankers)
    rows = []
    for q in trace.queries:
        rows.append({"kind": q.kind, "query": q.text, "hypothesis_only": q.hypothesis_only,
                     "flags": ", ".join(q.flags), "filters_added": q.filters_added,
                     "rankers": ", ".join(rankers.get((q.kind, q.text), ["bm25", "dense"] if q.kind == "original" else []))})
    return rows


OFF_IN_APP = declare("empty.reranker_off", en="no reranker configured (reranker off)",
                    pt="nenhum reranqueador configurado (reranqueador desligado)")
IN_TIER = declare("empty.in_tier", en="{note} (tier {tier}: {why})", pt="{note} (nível {tier}: {why})")
NO_RERANK_IN_TIER = declare("empty.no_rerank_in_tier", en="no rerank ran (tier {tier}: {why})",
                            pt="nenhum rerank rodou (nível {tier}: {why})")
NO_BM25_MATCH = declare("empty.no_bm25_match", en="no chunk of the filtered corpus shares a BM25 term with the "
                        "question (zero scores are not listed)",
                        pt="nenhum trecho do corpus filtrado tem termo BM25 da pergunta (notas zero não são listadas)")
NO_DENSE = declare("empty.no_dense", en="the vector store returned no chunk for these filters",
                   pt="o repositório de vetores não devolveu trecho para estes filtros")
NOTHING_TO_FUSE = declare("empty.nothing_to_fuse", en="nothing to fuse (tier {tier}: {why})",
                          pt="nada a fundir (nível {tier}: {why})")


def empty_reason(trace: TraceView, name: str) -> Reason:
    """Why the list ``name`` of the trace is empty, from the trace's own notes, tier and models."""
    tier = str(trace.tier)
    why = trace.tier_reason.reason() or raw("")
    note = trace.ranked(name).note.reason()
    if name == "reranked":
        models = trace.models
        if not models.reranker:
            return NONE_RAN(why=OFF_IN_APP())
        status = models.reranker_status.text
        if status and status != "loaded":
            return NONE_RAN(why=models.reranker_status.reason())
        if note is not None:
            return IN_TIER(note=note, tier=tier, why=why)
        return NO_RERANK_IN_TIER(tier=tier, why=why)
    if note is not None:
        return note
    if name == "lexical":
        return NO_BM25_MATCH()
    if name == "dense":
        return NO_DENSE()
    return NOTHING_TO_FUSE(tier=tier, why=why)


# -- A/B -----------------------------------------------------------------------------------------------------
def diff_finals(a: TraceView, b: TraceView, key: Literal["chunk_id", "parent_id"] = "chunk_id") -> dict[str, Any]:
    """Compare the ``final`` lists of two traces (e.g. hybrid vs dense-only) by ``key`` (chunk or parent id).

    Returns:
        ``{"only_a": [{id, rank}], "only_b": [{id, rank}], "both": [{id, rank_a, rank_b, moved}],
        "same": bool, "overlap": |both| / |a ∪ b| (1.0 when both are empty)}``; ``moved`` is
        ``rank_a - rank_b`` (positive: ranked higher in b).
    """
    rank_a = {(item.chunk_id if key == "chunk_id" else item.parent_id): item.rank for item in a.final}
    rank_b = {(item.chunk_id if key == "chunk_id" else item.parent_id): item.rank for item in b.final}
    only_a = [{"id": k, "rank": r} for k, r in rank_a.items() if k not in rank_b]
    only_b = [{"id": k, "rank": r} for k, r in rank_b.items() if k not in rank_a]
    both = [{"id": k, "rank_a": r, "rank_b": rank_b[k], "moved": r - rank_b[k]}
            for k, r in rank_a.items() if k in rank_b]
    union = len(set(rank_a) | set(rank_b))
    same = list(rank_a) == list(rank_b)
    return {"only_a": only_a, "only_b": only_b, "both": both, "same": same,
            "overlap": (len(both) / union) if union else 1.0}
























def feature_contribution_rows(contributions: Mapping[str, float], n: int = 6) -> list[dict[str, Any]]:
    """The ``n`` largest (by magnitude) feature contributions of a learned-ranker item (its
    ``feature_contributions``), largest first: ``{feature, contribution, meaning}`` (raw LambdaMART units; the bias
    is left out)."""

    contributions = {k: v for k, v in contributions.items() if k != "bias"}
    top = sorted(contributions.items(), key=lambda kv: -abs(kv[1]))[:n]
    return [{"feature": k, "contribution": round(float(v), 4),
             "meaning": FEATURE_DOCS[k].doc if k in FEATURE_DOCS else ""} for k, v in top]
