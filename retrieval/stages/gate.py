"""The gate: does any final chunk support an answer?

Two steps, so the decision is pure and testable without a store:

* :func:`question_cosines` reads what the decision needs: the cosine between the question and each selected
  chunk (the dense window's value where the chunk is in it, else from its stored vector — lexical-only
  finds), or says why cosines are unavailable (then the BM25 gate decides).
* :func:`decide` keeps the chunks whose cosine ≥ ``min_similarity`` (BM25 ≥ ``min_bm25`` without cosines),
  then applies code identity (``require_codes``): when the question names a code (``PX-70``) that no kept
  chunk contains, nothing passes — topical similarity is not identity.

The result is a frozen :class:`GateResult`; its :meth:`~GateResult.to_dict` is the trace's ``gate``. Each gate is
declared once in :data:`GATES` (its label, the setting of its threshold, how its value is written); the learned
support gate, which reads the judge, is :func:`retrieval.stages.judge.apply_support_gate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..backends.reads import StoreRead, read_vectors
from ..core.codes import codes, has_code
from ..core.kinds import Registry, Text
from ..core.reasons import Reason, declare, put
from ..core.types import Chunk, FinalItem, RankedList, ScoredItem


@dataclass(frozen=True)
class Gate:
    """A gate, declared once.

    Attributes:
        name: the gate's kind in the trace (``gate.kind``; ``cosine + learned support (…)`` when both decided).
        label: the gate on a page.
        threshold: the setting that holds its threshold (``None``: it has none).
        value_spec: how a chunk's value under this gate is written (``.3f`` for a cosine).
        measure: what that value is, on a page ("cosine" / "cosseno"); the name where it is ``None``.
    """

    name: str
    label: Text
    threshold: str | None
    value_spec: str = ".3f"
    measure: Text | None = None


#: The gates, in the order a request meets them.
GATES: Registry[Gate] = Registry("gate")
COSINE = GATES.declare(Gate("cosine", Text("cosine gate", "portão de cosseno"), "min_similarity", ".3f",
                            Text("cosine", "cosseno")))
BM25 = GATES.declare(Gate("bm25", Text("BM25 gate (lexical_only)", "portão BM25 (lexical_only)"), "min_bm25", ".2f"))
CODES = GATES.declare(Gate("codes", Text("code identity", "identidade de códigos"), None))
SUPPORT = GATES.declare(Gate("learned support", Text("learned support gate", "portão de suporte aprendido"),
                             "support_threshold", ".2f", Text("learned support", "suporte aprendido")))

NONE_PASSED = declare("gate.none_passed", en="no chunk passed the gate ({kind} ≥ {threshold}; best {best:.3f})",
                      pt="nenhum trecho passou o portão ({kind} ≥ {threshold}; melhor {best:.3f})")
NO_CANDIDATE = declare("gate.no_candidate", en="no candidate to answer from", pt="nenhum candidato de onde responder")
MISSING_CODES = declare("gate.missing_codes",
                        en="the question names {codes!l}, which no final chunk contains (code identity gate)",
                        pt="a pergunta cita {codes!l}, que nenhum trecho final contém (portão de identidade de "
                           "códigos)")
BM25_USED = declare("gate.bm25_used", en="{why}; BM25 gate used", pt="{why}; usado o portão BM25")


@dataclass(frozen=True)
class Cosines:
    """Question-to-chunk cosines for the selected chunks (``None`` values: no vector), or why none exist."""

    values: Mapping[str, float | None]
    available: bool
    note: Reason | None = None


@dataclass(frozen=True)
class GateResult:
    """The gate's decision: the chunks that passed (``final``) and why the others did not."""

    final: tuple[FinalItem, ...]
    kind: str
    threshold: float
    rejected: int
    missing_codes: tuple[str, ...]
    reason: Reason
    note: Reason | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "threshold": self.threshold, "rejected": self.rejected,
                                "missing_codes": list(self.missing_codes), "reason": "ok", "note": None}
        if not self.final:
            put(data, "reason", self.reason)
        return put(data, "note", self.note)


def question_cosines(selected: Sequence[ScoredItem], dense: RankedList, q_vec: np.ndarray | None,
                     store: Any, read_before: Mapping[str, np.ndarray] | None = None) -> Cosines:
    """Cosines of the selected chunks: reused from the dense window, else from their stored vectors (those the
    request has already read, ``read_before``: the judge's, else read now).

    Without a query vector (``lexical_only``) or when the store read fails, ``available`` is false and the
    BM25 gate decides (the failure is in ``note``).
    """
    if q_vec is None:
        return Cosines({}, False)
    known: dict[str, float | None] = {i.chunk_id: i.score for i in dense.items}
    before = read_before or {}
    wanted = [i.chunk_id for i in selected if i.chunk_id not in known]
    unread = [cid for cid in wanted if cid not in before]
    read = read_vectors(store, unread) if store is not None else StoreRead({})
    if read.value is None:  # fall back to the BM25 gate, and say so
        return Cosines({}, False, BM25_USED(why=read.reason))
    vectors = {**{cid: before[cid] for cid in wanted if cid in before}, **read.value}
    for cid in wanted:
        known[cid] = float(vectors[cid] @ q_vec) if cid in vectors else None
    return Cosines(known, True)


def decide(selected: Sequence[ScoredItem], cosines: Cosines, lexical: RankedList, chunks: Mapping[str, Chunk],
           question: str, min_similarity: float, min_bm25: float, require_codes: bool,
           known_codes: frozenset[str] = frozenset()) -> GateResult:
    """Keep the selected chunks that support an answer (see the module docstring); pure.

    ``known_codes`` are the letters-only codes of the request's own tenant (a hyphenated word is a code only
    with evidence: a digit, an acronym, or being one of these; see :func:`retrieval.stages.transforms.codes` and
    :meth:`retrieval.pipeline.index.IndexState.codes_of`)."""
    bm25 = {i.chunk_id: i.score for i in lexical.items}
    final: list[FinalItem] = []
    rejected, values = 0, []
    for item in selected:
        sim = cosines.values.get(item.chunk_id) if cosines.available else None
        if cosines.available:
            passes, value = sim is not None and sim >= min_similarity, sim
        else:
            value = bm25.get(item.chunk_id, 0.0)
            passes = value >= min_bm25
        values.append(value)
        if passes:
            final.append(FinalItem(item.chunk_id, item.parent_id, len(final) + 1, item.score, sim,
                                   chunks[item.chunk_id].text, bm25.get(item.chunk_id)))
        else:
            rejected += 1
    kind, threshold = (COSINE.name, min_similarity) if cosines.available else (BM25.name, min_bm25)
    best = max((v for v in values if v is not None), default=None)
    reason = NONE_PASSED(kind=kind, threshold=threshold, best=best) if best is not None else NO_CANDIDATE()
    missing: list[str] = []
    if final and require_codes:
        texts = [chunks[f.chunk_id].indexed_text for f in final]
        missing = [c for c in codes(question, known_codes) if not any(has_code(t, c) for t in texts)]
        if missing:
            rejected += len(final)
            final = []
            reason = MISSING_CODES(codes=missing)
    return GateResult(tuple(final), kind, threshold, rejected, tuple(missing), reason, cosines.note)
