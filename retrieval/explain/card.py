"""The provenance card of one chunk of a trace (its typed view, :class:`~retrieval.pipeline.view.TraceView`):
every signal the trace holds for it.

BM25 per term, the cosine and dense rank, the fused score's terms as the fusion method declares them (RRF: ``w / (k
+ r)`` per list, Cormack, Clarke and Büttcher, 2009, ranks from 1, ``k`` the request's ``rrf_k``; CombSUM and the
convex combination and ranx's weighted sums: each list's weighted normalized score; CombMNZ and ISR: the number of
lists times each list's min-max score or 1/rank²; CombMAX: the largest min-max score; BordaFuse: each list's
rank points), the reranker's score and, for a reranker whose
items carry them, each feature's contribution (raw LambdaMART units: they sum, with the bias, to the score; not a
probability), and the gate's decision. Plain values; the page writes them in its language.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.analysis import stem_groups
from ..core.defaults import RRF_K
from ..pipeline.view import TraceView
from ..stages.fusion import METHODS, Term, parse_weights
from ..stages.gate import BM25, COSINE
from .grid import by_id, grid_rows, movement


# -- one chunk's provenance ----------------------------------------------------------------------------------
def _method(trace: TraceView) -> Any:
    name = trace.settings.fusion or "rrf"
    return METHODS.get(name) if name in METHODS else None


def _k(trace: TraceView) -> Any:
    """The request's ``rrf_k`` (the default where the trace has none)."""
    return RRF_K if trace.settings.rrf_k is None else trace.settings.rrf_k


def rrf_terms(trace: TraceView, chunk_id: str) -> list[dict[str, Any]]:
    """The fused item's terms, one per ranker that found it (the order of the trace):
    ``{ranker, rank, k, weight, value, recorded, lists}`` (``lists``: how many lists hold the chunk).

    For a rank-based method (its declaration's ``rank_based``: RRF, weighted RRF) ``value`` is the formula
    ``weight / (k + rank)`` with ``k`` the request's ``rrf_k`` and ranks from 1, ``weight`` read back by the
    method (1 for plain RRF); for a score-based one (CombSUM, the convex combination) ``value`` is ``None`` and
    ``weight`` is the list's weight. ``recorded`` is the contribution the fusion wrote. Empty when the fused list
    does not hold the chunk.
    """
    method = _method(trace)
    k = _k(trace)
    item = by_id(trace, "fused").get(chunk_id)
    if item is None:
        return []
    weights = _weights(trace)
    ranks, contributions = item.ranks, item.contributions
    out = []
    for ranker, recorded in contributions.items():
        term = Term(ranker, ranks.get(ranker), k, recorded, weights, len(contributions))
        weight = method.term_weight(term) if method is not None else 1.0
        value = weight / (k + term.rank) if method is not None and method.rank_based and term.rank is not None else None
        out.append({"ranker": ranker, "rank": term.rank, "k": k, "weight": weight, "value": value,
                    "recorded": recorded, "lists": term.lists})
    return out


def _weights(trace: TraceView) -> dict[str, float]:
    try:
        return parse_weights(str(trace.settings.fusion_weights or ""))
    except ValueError:
        return {}


def term_formula(trace: TraceView, term: Mapping[str, Any], lang: str = "en") -> str:
    """One term of the card's formula as the trace's fusion method writes it (``1/(60 + 3)``, ``0.5·1/(60 + 3)``,
    ``0.3·0.8123``), numbers in ``lang``."""
    method = _method(trace)
    t = Term(term["ranker"], term["rank"], term["k"], term["recorded"], _weights(trace),
             term.get("lists", 1))
    return method.formula(t, lang) if method is not None else str(term["recorded"])


def written_terms(terms: Sequence[str], analyzer: str | None, question: str) -> list[str]:
    """BM25 terms as the card shows them: under a stemming analyser (the request's ``bm25_analyzer``) each stem
    with the question's words that reduce to it, ``praz (prazo, prazos)``; a term as it is otherwise, or where it
    is a word as written (a code, a number, a word the stemmer leaves whole)."""
    groups = stem_groups(question, analyzer or "fold")   # {} under fold: every term as it is
    out = []
    for term in terms:
        words = [w for w in groups.get(term, []) if w != term]
        out.append(f"{term} ({', '.join(words)})" if words else term)
    return out


def provenance(trace: TraceView, chunk_id: str, relevant: Sequence[str] | None = None,
               graded: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Every signal the trace holds for one chunk, for its provenance card.

    Returns:
        ``{"row": its grid row, "bm25": {rank, score, terms: [(term, contribution)] largest first} | None,
        "dense": {rank, cosine, cosine_from}, "fusion": {method, k, rank, score, terms: rrf_terms} | None,
        "rerank": {kind, score_kind, rank, score, fused_rank, move, features: [(feature, contribution)] by
        magnitude, bias} | None, "gate": {...}}``. ``gate``: ``decision`` is ``passed`` (in the final list),
        ``refused`` (read by the gate, not kept) or ``not_read`` (cut before the gate), with ``kind``
        (``cosine``/``bm25``), the chunk's ``value`` and the ``threshold``, ``reason`` when the whole request
        was refused, and the learned support gate's request-level verdict (``support``) when it ran.

    Raises:
        KeyError: no list of the trace holds ``chunk_id``.
    """
    row = next((r for r in grid_rows(trace, relevant, graded) if r["chunk_id"] == chunk_id), None)
    if row is None:
        raise KeyError(chunk_id)
    lex = by_id(trace, "lexical").get(chunk_id)
    fus = by_id(trace, "fused").get(chunk_id)
    rer = by_id(trace, "reranked").get(chunk_id)
    bm25 = None
    if lex is not None:
        scored = sorted(lex.terms.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = written_terms([term for term, _ in scored], trace.settings.bm25_analyzer, trace.question)
        bm25 = {"rank": lex.rank, "score": lex.score,
                "terms": [(label, value) for label, (_, value) in zip(shown, scored)]}
    method = _method(trace)
    fusion = None if fus is None else {
        "method": trace.settings.fusion or "rrf", "rank_based": bool(method and method.rank_based),
        "k": _k(trace), "rank": fus.rank, "score": fus.score, "terms": rrf_terms(trace, chunk_id)}
    rerank = None
    if rer is not None:
        contributions = dict(rer.feature_contributions)
        bias = contributions.pop("bias", None)
        rerank = {"kind": trace.models.reranker_kind, "score_kind": trace.reranked.score_kind, "rank": rer.rank,
                  "score": rer.score, "fused_rank": rer.fused_rank, "move": movement(rer.fused_rank, rer.rank),
                  "features": sorted(contributions.items(), key=lambda kv: (-abs(kv[1]), kv[0])), "bias": bias}
    gate = trace.gate
    kind = BM25.name if str(gate.kind or "").startswith(BM25.name) else COSINE.name
    value = row["cosine"] if kind == COSINE.name else row["bm25"]
    decision = {"final": "passed", "gate": "refused"}.get(row["fate"], "not_read")
    gate_view: dict[str, Any] = {"decision": decision, "kind": kind, "value": value, "threshold": gate.threshold,
                                 "reason": row["fate_detail"].get("reason")}
    support = gate.support
    if support.best is not None:
        gate_view["support"] = {"p": support.best, "threshold": support.threshold, "passes": support.passes,
                                "read": chunk_id in support.chunks}
    return {"row": row, "bm25": bm25, "dense": {"rank": row["dense_rank"], "cosine": row["cosine"],
                                                "cosine_from": row["cosine_from"]},
            "fusion": fusion, "rerank": rerank, "gate": gate_view}
