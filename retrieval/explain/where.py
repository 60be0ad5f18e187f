"""Where is my document? For one chunk (or every chunk of one parent) and one trace: its rank and score in
each list, or why it is absent, and what fusion, the reranker and the gate would have given it.

Reasons, in the order they are checked for each generator list:

* ``filtered``: a filter of the request removes it (which field, the chunk's value, the allowed values);
* lexical ``no_token``: no question token in its indexed text (both token sets are returned);
* ``outside_window``: the generator ranks it N, after the window of ``overfetch × top_k``;
* dense ``hnsw_miss``: the approximate (HNSW) search did not return it although its exact cosine would
  rank it M inside the window;
* ``in_list``: present, with rank and score.

The dense side reads the store twice per pick, bounded and guarded (:func:`retrieval.backends.store.read_vectors`):
the stored vectors of the picked chunks only (at most :data:`MAX_WHERE_CHUNKS`), and the store's nearest
:data:`DEEP_WINDOW` chunks under the request's filters; a chunk's exact cosine is ranked among those (never a
scan of the tenant: Chroma refuses one read of ~100k chunks). A read that fails leaves the dense entry
``unknown``, with the store's reason.

Then: the RRF score its two ranks (even outside the windows) would give and the fused rank that score would
take; the reranker score (when a reranker object is passed); the gate (cosine ≥ threshold, and the code
identity check: every code the question names must be in the chunk). Nothing of the trace is changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping, Sequence

import numpy as np

from ..backends.store import read_vectors, read_window
from ..ingest.location import location
from ..core.codes import codes
from ..core.defaults import RRF_K, TOP_K
from ..core.filters import Filters, typed
from ..core.reasons import Reason, declare, raw
from ..core.text import tokenize
from ..learned.reader.loader import LoadedReader
from ..pipeline.view import TraceView

#: The picked chunks whose stored vectors one "Where is my document?" reads at most (one store call).
MAX_WHERE_CHUNKS = 64
NEAREST_UNAVAILABLE = declare("where.nearest_unavailable", en="the store's nearest chunks unavailable: {error}",
                              pt="os trechos mais próximos do repositório indisponíveis: {error}")
#: The store's nearest chunks (under the request's filters) among which a picked chunk's exact cosine is ranked.
DEEP_WINDOW = 1000


@dataclass(frozen=True)
class DenseEvidence:
    """What the dense explanation reads from the store, once per pick: the picked chunks' cosines to the
    question (exact, from their stored vectors), the store's nearest chunks (chunk id, cosine; best first),
    or why they are unavailable.

    Attributes:
        read: the chunk ids whose vectors were asked for (the first :data:`MAX_WHERE_CHUNKS` of the pick).
        full: ``nearest`` holds :data:`DEEP_WINDOW` chunks, so a cosine below its last has an unknown rank.
        note: why the store could not be read (the reason of the guarded read), else ``None``.
    """

    cosines: Mapping[str, float]
    nearest: tuple[tuple[str, float], ...]
    read: frozenset[str]
    full: bool = False
    note: Reason | None = None


def dense_evidence(state: Any, trace: TraceView, chunk_ids: Sequence[str],
                   query_vector: np.ndarray | None) -> DenseEvidence | None:
    """Read what the dense explanation of ``chunk_ids`` needs (``None`` without a query vector or a store).

    Only the chunks the request's filters allow are read, at most :data:`MAX_WHERE_CHUNKS` of them; both
    reads are guarded, so a failing store gives a ``note`` instead of an exception.
    """
    if query_vector is None or state.store is None:
        return None
    flt = _filters(trace)
    wanted = [cid for cid in dict.fromkeys(chunk_ids)
              if cid in state.chunk_by_id and _filter_reason(flt, state.chunk_by_id[cid].metadata) is None]
    wanted = wanted[:MAX_WHERE_CHUNKS]
    if not wanted:
        return DenseEvidence({}, (), frozenset())
    q = np.asarray(query_vector, dtype=np.float32)
    vectors = read_vectors(state.store, wanted)
    if vectors.value is None:
        return DenseEvidence({}, (), frozenset(wanted), note=vectors.reason)
    cosines = {cid: float(np.asarray(v, dtype=np.float32) @ q) for cid, v in vectors.value.items()}
    near = read_window(state.store, q, flt, DEEP_WINDOW, NEAREST_UNAVAILABLE)
    if near.value is None:
        return DenseEvidence(cosines, (), frozenset(wanted), note=near.reason)
    nearest = tuple((i.chunk_id, float(i.score)) for i in near.value.items)
    return DenseEvidence(cosines, nearest, frozenset(wanted), len(nearest) >= DEEP_WINDOW)


def targets(state: Any, wanted: str) -> list[str]:
    """Chunk ids for ``wanted``: a chunk id, or every chunk of a parent id (in position order)."""
    if wanted in state.chunk_by_id:
        return [wanted]
    return [c.chunk_id for c in state.chunks if c.parent_id == wanted]


def search_targets(state: Any, text: str, limit: int = 50,
                   tenants: Collection[Any] | None = None) -> list[tuple[str, str]]:
    """``(parent_id, title)`` of parents whose id or title contains ``text`` (accent- and case-folded).

    Args:
        tenants: only parents of these tenants (values of the tenant field, exact in value and type), so a
            user never finds another tenant's ids or titles; ``None``: every parent.
    """
    needle = " ".join(tokenize(text)) if text.strip() else ""
    raw = text.strip().casefold()
    field = state.lexical.tenant_field if tenants is not None else ""
    wanted = {typed(t) for t in tenants} if tenants is not None else set()
    out = []
    for doc in state.documents:
        if tenants is not None and (field not in doc.metadata or typed(doc.metadata[field]) not in wanted):
            continue
        hay = f"{doc.id} {doc.title}"
        if not raw or raw in hay.casefold() or (needle and needle in " ".join(tokenize(hay))):
            out.append((doc.id, doc.title))
            if len(out) >= limit:
                break
    return out


def _filters(trace: TraceView) -> Filters:
    clauses = []
    for key, value in trace.filters.items():
        clauses.append((key, tuple(value) if isinstance(value, list) else (value,)))
    return Filters(tuple(clauses))


def _filter_reason(flt: Filters, metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    for key, values in flt.clauses:
        if key not in metadata or metadata[key] not in values:
            return {"field": key, "value": metadata.get(key), "allowed": list(values)}
    return None


def _rank_in(trace: TraceView, name: str, chunk_id: str) -> dict[str, Any] | None:
    items = trace.final if name == "final" else trace.ranked(name).items
    return next(({"rank": i.rank, "score": i.score} for i in items if i.chunk_id == chunk_id), None)


def _window(trace: TraceView) -> int:
    return int(trace.settings.top_k or TOP_K) * int(trace.settings.overfetch or 1)


def _has_code(text: str, code: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", text, re.IGNORECASE) is not None


def explain(state: Any, trace: TraceView, chunk_id: str, query_vector: np.ndarray | None = None,
            reranker: Any = None, evidence: DenseEvidence | None = None,
            reader: Callable[[], LoadedReader] | None = None) -> dict[str, Any]:
    """The whereabouts of ``chunk_id`` in ``trace`` (the view of a ``Trace.to_dict()`` of a request on ``state``).

    Args:
        state: the loaded index the trace was produced on (``chunk_by_id``, ``lexical``, ``store``).
        query_vector: the question's embedding (the same model as the store), for exact cosine ranks;
            without it the dense explanation only says whether the chunk is in the list.
        reranker: an object with ``score(question, passages)`` (``retrieval.stages.rerank``), or ``None``.
        evidence: the store reads of the pick (:func:`dense_evidence`), read for this chunk alone when
            ``None``.
        reader: ``() -> LoadedReader(reader or None, why)``: the Workbench's reader
            (:meth:`~retrieval.learned.reader.loader.ReaderStore.reader`), or ``None`` (the reader is not read).

    Returns:
        ``{"chunk_id", "parent_id", "where", "lists": {name: {"status", ...}}, "fusion", "rerank", "gate"}``;
        ``where``: the chunk's place in its source (:func:`retrieval.ingest.location.location`, ``{}`` if none).

    Raises:
        KeyError: ``chunk_id`` is not a chunk of ``state``.
    """
    chunk = state.chunk_by_id[chunk_id]
    question = trace.question
    settings = trace.settings
    window = _window(trace)
    flt = _filters(trace)
    blocked = _filter_reason(flt, chunk.metadata)
    out: dict[str, Any] = {"chunk_id": chunk_id, "parent_id": chunk.parent_id, "window": window,
                           "where": location(chunk.metadata), "lists": {}}
    out["lists"]["lexical"], lex_rank = _lexical_entry(state, trace, chunk, question, flt, blocked, window)
    if evidence is None and not blocked:
        evidence = dense_evidence(state, trace, [chunk_id], query_vector)
    out["lists"]["dense"], dense_rank, cosine = _dense_entry(trace, chunk, blocked, window, evidence)
    for name in ("fused", "reranked", "final"):  # as they are
        got = _rank_in(trace, name, chunk_id)
        out["lists"][name] = {"status": "in_list", **got} if got else {"status": "absent"}
    out["fusion"] = _fusion_entry(trace, chunk_id, lex_rank, dense_rank, blocked)
    out["rerank"] = _rerank_entry(trace, chunk, question, reranker, blocked)
    out["reader"] = _reader_entry(chunk, question, blocked, reader)
    threshold = settings.min_similarity
    named = codes(question) if settings.require_codes is not False else []
    missing = [c for c in named if not _has_code(chunk.indexed_text, c)]
    support = trace.gate.support
    learned = None
    if support.best is not None:  # the learned gate decides for the whole context, not per chunk
        learned = {"p_support": support.best, "threshold": support.threshold, "passes": support.passes,
                   "read_this_chunk": chunk_id in support.chunks}
    out["gate"] = {"cosine": cosine, "threshold": threshold,
                   "passes_similarity": None if cosine is None or threshold is None else cosine >= threshold,
                   "codes": named, "missing_codes": missing, "learned": learned}
    return out


def _lexical_entry(state: Any, trace: TraceView, chunk: Any, question: str, flt: Any, blocked: Any,
                   window: int) -> tuple[dict[str, Any], int | None]:
    """The chunk in the BM25 list: its rank, or why it is absent (filter, no shared token, outside the
    window: its rank in the whole tenant index); and the rank the fusion would read."""
    lex = _rank_in(trace, "lexical", chunk.chunk_id)
    q_tokens = sorted(set(tokenize(question)))
    c_tokens = sorted(set(tokenize(chunk.indexed_text)))
    lex_rank = lex["rank"] if lex else None
    note = Reason.from_dict(trace.lexical.note.code)
    if lex:
        return {"status": "in_list", **lex}, lex_rank
    if blocked:
        return {"status": "filtered", **blocked}, lex_rank
    if note is not None and note.code == "list.skipped":
        return {"status": "skipped", "note": note}, lex_rank
    if not set(q_tokens) & set(c_tokens):
        return {"status": "no_token", "question_tokens": q_tokens, "chunk_tokens": c_tokens}, lex_rank
    full = state.lexical.search(question, flt, len(state.chunks))
    found = next((i for i in full.items if i.chunk_id == chunk.chunk_id), None)
    if not found:
        return {"status": "no_token", "question_tokens": q_tokens, "chunk_tokens": c_tokens}, None
    return ({"status": "outside_window", "rank": found.rank, "score": found.score, "window": window,
             "shared_tokens": sorted(set(q_tokens) & set(c_tokens))}, found.rank)


def _dense_entry(trace: TraceView, chunk: Any, blocked: Any, window: int,
                 evidence: DenseEvidence | None) -> tuple[dict[str, Any], int | None, float | None]:
    """The chunk in the dense list, or why it is absent (filter, outside the window, or an HNSW miss: its
    exact cosine would rank it inside the window); the rank the fusion would read and its cosine.

    Its exact cosine is ranked among the store's nearest :data:`DEEP_WINDOW` chunks (``evidence``); below the
    last of a full list its rank is unknown (``rank`` ``None``, ``beyond`` the list's length)."""
    chunk_id = chunk.chunk_id
    den = _rank_in(trace, "dense", chunk_id)
    dense_rank = den["rank"] if den else None
    cosine = den["score"] if den else None
    note = Reason.from_dict(trace.dense.note.code)
    exact_rank, beyond = None, False
    mine = evidence.cosines.get(chunk_id) if evidence is not None and not blocked else None
    if mine is not None and evidence is not None and evidence.note is None:
        cosine = mine if cosine is None else cosine
        others = [(cid, s) for cid, s in evidence.nearest if cid != chunk_id]
        if evidence.full and chunk_id not in dict(evidence.nearest) and others and mine < others[-1][1]:
            beyond = True
        else:
            exact_rank = 1 + sum(1 for cid, s in others if s > mine or (s == mine and cid < chunk_id))
    if den:
        entry = {"status": "in_list", **den, "exact_rank": exact_rank}
        if evidence is not None and evidence.note is not None:  # in the list, but the store could not be read
            entry["note"] = evidence.note
        return entry, dense_rank, cosine
    if blocked:
        return {"status": "filtered", **blocked}, dense_rank, cosine
    if note is not None and note.code == "list.skipped":
        return {"status": "skipped", "note": note}, dense_rank, cosine
    if beyond and evidence is not None:  # beyond is read from the evidence
        return ({"status": "outside_window", "rank": None, "score": cosine, "window": window,
                 "beyond": len(evidence.nearest)}, None, cosine)
    if exact_rank is None:
        return {"status": "unknown", "note": _unknown_why(chunk_id, evidence)}, dense_rank, cosine
    if exact_rank <= window:
        return {"status": "hnsw_miss", "exact_rank": exact_rank, "cosine": cosine}, exact_rank, cosine
    return {"status": "outside_window", "rank": exact_rank, "score": cosine, "window": window}, exact_rank, cosine


def _unknown_why(chunk_id: str, evidence: DenseEvidence | None) -> Reason:
    """Why a chunk's exact cosine rank is unknown."""
    if evidence is None:
        return NO_VECTOR()
    if evidence.note is not None:
        return RANK_UNKNOWN(why=evidence.note)
    if chunk_id not in evidence.read:
        return NOT_READ(limit=MAX_WHERE_CHUNKS)
    return NOT_STORED()


def _fusion_entry(trace: TraceView, chunk_id: str, lex_rank: int | None, dense_rank: int | None,
                  blocked: Any) -> dict[str, Any]:
    """What RRF would have given the chunk from the ranks it has (or would have) in each list."""
    if blocked:
        return {"status": "filtered"}
    k = int(trace.settings.rrf_k or RRF_K)
    used = {r for item in trace.fused.items for r in item.ranks}
    ranks = {}
    if lex_rank is not None and ("bm25" in used or not used):
        ranks["bm25"] = lex_rank
    if dense_rank is not None and ("dense" in used or not used):
        ranks["dense"] = dense_rank
    score = sum(1.0 / (k + r) for r in ranks.values())
    fused_scores = [i.score for i in trace.fused.items if i.chunk_id != chunk_id]
    would = 1 + sum(1 for s in fused_scores if s > score) if ranks else None
    return {"status": "computed", "rrf_k": k, "ranks": ranks,
            "contributions": {r: round(1.0 / (k + v), 6) for r, v in ranks.items()},
            "score": round(score, 6), "would_rank": would,
            "top_k": trace.settings.top_k, "note": RRF_ONLY_NOTE()}


def _rerank_entry(trace: TraceView, chunk: Any, question: str, reranker: Any, blocked: Any) -> dict[str, Any]:
    """What the reranker gives (or would give) the chunk."""
    if reranker is None or blocked:
        return {"status": "filtered" if blocked else "not_run"}
    items = trace.reranked.items
    if not hasattr(reranker, "score"):
        # A reranker that does not read passages (the learned ranker scores the window's feature rows).
        mine = [i for i in items if i.chunk_id == chunk.chunk_id]
        return ({"status": "computed", "score": mine[0].score, "would_rank": mine[0].rank} if mine
                else {"status": "not_run", "note": OUTSIDE_LTR()})
    value = float(np.asarray(reranker.score(question, [chunk.indexed_text]))[0])
    others = [i.score for i in items if i.chunk_id != chunk.chunk_id]
    return {"status": "computed", "score": value,
            "would_rank": 1 + sum(1 for s in others if s > value) if others else None}


def _reader_entry(chunk: Any, question: str, blocked: Any,
                  reader: Callable[[], LoadedReader] | None) -> dict[str, Any]:
    """The reader's score of the chunk (its text against the question), whatever the reranker: how well the
    chunk reads as an answer, beside where the rankers put it. Never for a chunk the request's filters exclude."""
    if blocked:
        return {"status": "filtered"}
    if reader is None:
        return {"status": "not_run"}
    loaded = reader()
    if loaded.reader is None:
        return {"status": "unavailable", "note": loaded.why}
    return {"status": "computed", "score": round(float(loaded.reader.score(question, [chunk])[0]), 4)}


def explain_many(state: Any, trace: TraceView, chunk_ids: Sequence[str],
                 query_vector: np.ndarray | None = None, reranker: Any = None,
                 reader: Callable[[], LoadedReader] | None = None) -> list[dict[str, Any]]:
    """:func:`explain` for each of ``chunk_ids`` (a picked document's chunks), with the store read once for
    all of them (:func:`dense_evidence`: at most :data:`MAX_WHERE_CHUNKS` vectors, guarded)."""
    evidence = dense_evidence(state, trace, chunk_ids, query_vector)
    return [explain(state, trace, cid, query_vector, reranker, evidence, reader) for cid in chunk_ids]


IN_LIST = declare("where.in_list", en="rank {rank}, score {score:.4f}", pt="posição {rank}, nota {score:.4f}")
IN_LIST_EXACT = declare("where.in_list_exact", en="rank {rank}, score {score:.4f} (exact cosine rank {exact})",
                        pt="posição {rank}, nota {score:.4f} (posição exata pelo cosseno {exact})")
IN_LIST_UNKNOWN = declare("where.in_list_unknown", en="rank {rank}, score {score:.4f} (exact cosine rank unknown: {why})",
                          pt="posição {rank}, nota {score:.4f} (posição exata pelo cosseno desconhecida: {why})")
FILTERED = declare("where.filtered", en="removed by the filter {field!c}: the chunk has {value!c}, the request allows "
                   "{allowed!l}", pt="removido pelo filtro {field!c}: o trecho tem {value!c}, o pedido aceita {allowed!l}")
NO_TOKEN = declare("where.no_token", en="no question token in its text — question tokens: {question!l} · chunk tokens: "
                   "{chunk!l}{more}", pt="nenhum token da pergunta no texto — tokens da pergunta: {question!l} · tokens "
                   "do trecho: {chunk!l}{more}")
BEYOND = declare("where.beyond", en="ranked after the store's nearest {beyond}, outside the window of {window} (cosine "
                 "{score:.4f})", pt="depois dos {beyond} mais próximos do repositório, fora da janela de {window} "
                 "(cosseno {score:.4f})")
OUTSIDE = declare("where.outside", en="ranked {rank}, outside the window of {window} (score {score:.4f})",
                  pt="posição {rank}, fora da janela de {window} (nota {score:.4f})")
HNSW_MISS = declare("where.hnsw_miss", en="not returned by the HNSW search, although its exact cosine {cosine:.4f} "
                    "would rank it {rank}", pt="não devolvido pela busca HNSW, embora seu cosseno exato {cosine:.4f} o "
                    "pusesse em {rank}")
ABSENT = declare("where.absent", en="absent", pt="ausente")
SKIPPED = declare("where.skipped", en="skipped", pt="pulada")
NO_VECTOR = declare("where.no_vector", en="no query vector or stored vector to compute its exact cosine",
                    pt="sem vetor da pergunta ou vetor armazenado para calcular seu cosseno exato")
RANK_UNKNOWN = declare("where.rank_unknown", en="its exact cosine rank is unknown: {why}",
                       pt="sua posição exata pelo cosseno é desconhecida: {why}")
NOT_READ = declare("where.not_read", en="its stored vector was not read: a pick reads at most {limit} chunks of one "
                   "document (pick this chunk on its own)", pt="seu vetor armazenado não foi lido: uma escolha lê no "
                   "máximo {limit} trechos de um documento (escolha este trecho sozinho)")
NOT_STORED = declare("where.not_stored", en="no stored vector for this chunk", pt="sem vetor armazenado para este trecho")
OUTSIDE_LTR = declare("where.outside_ltr", en="outside the learned ranker's window: it scores the request's candidates "
                      "from their features, not a passage on its own", pt="fora da janela do ranqueador aprendido: ele "
                      "avalia os candidatos do pedido pelas características, não uma passagem sozinha")
RRF_ONLY_NOTE = declare("where.rrf_only", en="RRF only, whatever the fusion setting",
                        pt="só RRF, qualquer que seja a fusão configurada")
MORE = declare("where.more", en=" …", pt=" …")
NONE = declare("where.none", en="", pt="")


def describe(entry: Mapping[str, Any], list_name: str) -> Reason:
    """One list entry of :func:`explain` in words (a reason: English for the CLI, the page's language there)."""
    status = entry.get("status")
    if status == "in_list":
        if entry.get("exact_rank"):
            return IN_LIST_EXACT(rank=entry["rank"], score=entry["score"], exact=entry["exact_rank"])
        if entry.get("note") is not None:
            return IN_LIST_UNKNOWN(rank=entry["rank"], score=entry["score"], why=entry["note"])
        return IN_LIST(rank=entry["rank"], score=entry["score"])
    if status == "filtered":
        return FILTERED(field=entry["field"], value=repr(entry["value"]), allowed=[repr(v) for v in entry["allowed"]])
    if status == "no_token":
        return NO_TOKEN(question=entry["question_tokens"], chunk=entry["chunk_tokens"][:60],
                        more=MORE() if len(entry["chunk_tokens"]) > 60 else NONE())
    if status == "outside_window" and entry.get("rank") is None:
        return BEYOND(beyond=entry.get("beyond"), window=entry.get("window"), score=entry["score"])
    if status == "outside_window":
        return OUTSIDE(rank=entry["rank"], window=entry.get("window"), score=entry["score"])
    if status == "hnsw_miss":
        return HNSW_MISS(cosine=entry["cosine"], rank=entry["exact_rank"])
    if status == "skipped":
        return entry.get("note") or SKIPPED()
    if status == "absent":
        return ABSENT()
    return entry.get("note") or raw(str(status))
