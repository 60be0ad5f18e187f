"""Failure diagnosis: which layer (coverage, ordering, generation) each question's outcome belongs to,
and the evidence check (gold spans cut by the chunking)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Collection, Iterable, Mapping, Sequence

from ...ingest.chunking import document_text
from ...core.errors import RetrievalError
from ...core.filters import build_filters, field_types, typed
from ...core.tenants import may_open
from ...core.text import fold
from ...core.types import Chunk, Document, Question
from ...pipeline.trace import Trace
from ...stages.select import dedup
from .metrics import relevant_grades

#: The kinds of :func:`question_problems`, in the order they are reported.
PROBLEMS = ("tenant_not_in_corpus", "relevant_not_in_corpus", "relevant_in_other_tenant")

#: The diagnosis layers, in the order the lab reads them.
LAYERS = ("ok", "coverage", "ordering", "generation")


_MARKER = re.compile(r"\[\d+\]")
_THOUSANDS = re.compile(r"(?<=\d)[.\u00a0\u202f ](?=\d{3}(?!\d))")   # 1.200,00 and 1 200,00 as 1200,00
_EDGE = re.compile("^[\\s.,;:!?\"'\u201c\u201d\u2018\u2019\u00ab\u00bb\u2014\u2013-]+|[\\s.,;:!?\"'\u201c\u201d\u2018\u2019\u00ab\u00bb\u2014\u2013-]+$")


def span_key(text: str) -> str:
    """``text`` as an answer span is compared: citation markers removed, case and accents folded, thousands
    separators dropped from numbers, whitespace collapsed, punctuation stripped from both ends."""
    folded = fold(_MARKER.sub(" ", text))
    return _EDGE.sub("", " ".join(_THOUSANDS.sub("", folded).split()))


def answer_holds_span(answer: str, spans: Iterable[str]) -> bool | None:
    """Whether the answer's text holds one of the question's labelled answer spans (:func:`span_key` on both);
    ``None`` when the question has no span."""
    keys = [k for k in (span_key(a) for a in spans if a) if k]
    if not keys:
        return None
    text = span_key(answer)
    return any(k in text for k in keys)


def diagnose(q: Question, trace: Trace, mode: str, top_k: int) -> tuple[str, str | None]:
    """The layer of a question's outcome: ``ok``, ``coverage``, ``ordering`` or ``generation``, and a stage.

    * coverage: no relevant chunk among any generator's candidates (query, representation or index).
    * ordering: a relevant chunk was a candidate but is not in the final list; stage ``fusion``,
      ``reranker`` or ``gate``.
    * generation: a relevant chunk was in the context but the answer did not cite it or abstained; for an
      unanswerable question, an answer was given (stage ``gate``); where the question carries ``answers``,
      an answer that cites a relevant chunk but holds none of the spans (:func:`answer_holds_span`) is a
      generation failure too (stage ``span``: the right document, not the fact).
    """
    relevant = set(q.relevant)
    answer = trace.answer
    if not relevant:
        return ("ok", None) if answer.abstained else ("generation", "gate")
    final_parents = {f.parent_id for f in trace.final}
    if final_parents & relevant:
        cited = {trace.final[[f.chunk_id for f in trace.final].index(c)].parent_id for c in answer.citations
                 if c in trace.context_chunk_ids}
        if cited & relevant:
            return ("generation", "span") if answer_holds_span(answer.text, q.answers) is False else ("ok", None)
        return "generation", "abstained" if answer.abstained else "answer"
    candidates = {i.parent_id for lst in (trace.lexical, trace.dense) for i in lst.items}
    for variant in trace.variants:
        for side in ("lexical", "dense"):
            candidates |= {i["parent_id"] for i in variant.get(side, {}).get("items", [])}
    if not candidates & relevant:
        return "coverage", "candidates"
    fused_top = {i.parent_id for i in dedup(trace.fused.items, mode)[:top_k]}
    if not fused_top & relevant:
        return "ordering", "fusion"
    if trace.reranked.items:
        reranked_top = {i.parent_id for i in dedup(trace.reranked.items, mode)[:top_k]}
        if not reranked_top & relevant:
            return "ordering", "reranker"
    return "ordering", "gate"


def evidence_check(questions: Sequence[Question], chunks: Sequence[Chunk],
                   documents: Sequence[Document] | None = None) -> dict[str, Any]:
    """Does each gold span survive whole inside some subchunk of its relevant parent?

    For every answerable question with ``answers``, each span is looked up (whitespace collapsed, Unicode
    NFC, case folded) in the subchunks of the question's relevant parents. A span found in a parent's text
    but in none of its subchunks was **cut** by the chunking: a coverage failure no search can fix. A span
    found in no relevant parent at all is listed under ``not_in_parent`` (a labeling problem, or the parser
    lost it). Without ``documents`` (``None``) a span found in no subchunk counts as cut.

    Returns:
        ``{"checked": spans, "questions": questions checked, "whole": spans found whole,
        "cut": [{"id", "parent", "span"}], "not_in_parent": [{"id", "parents", "span"}]}``.
    """
    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFC", text).split()).casefold()

    pieces: dict[str, list[str]] = {}
    for chunk in chunks:
        pieces.setdefault(chunk.parent_id, []).append(norm(chunk.text))
    parents = {d.id: norm(document_text(d)) for d in documents or ()}  # a Markdown parent as plain text
    checked, questions_checked, cut, absent = 0, 0, [], []
    for q in questions:
        spans = [a for a in q.answers if a and a.strip()]
        if not q.relevant or not spans:
            continue
        questions_checked += 1
        for span in spans:
            checked += 1
            wanted = norm(span)
            if any(wanted in piece for p in q.relevant for piece in pieces.get(p, ())):
                continue
            holders = [p for p in q.relevant if wanted in parents.get(p, "")]
            if holders or documents is None:
                cut.append({"id": q.id, "parent": holders[0] if holders else q.relevant[0], "span": span})
            else:
                absent.append({"id": q.id, "parents": list(q.relevant), "span": span})
    return {"checked": checked, "questions": questions_checked, "whole": checked - len(cut) - len(absent),
            "cut": cut, "not_in_parent": absent}


def question_problems(questions: Sequence[Question], documents: Sequence[Document],
                      types: Mapping[str, set[type]], tenant_field: str) -> dict[str, Any]:
    """Labels that no retrieval can satisfy: such a question scores 0 whatever the configuration does.

    * ``tenant_not_in_corpus``: the question's tenant (typed as its request types it) is no document's;
    * ``relevant_not_in_corpus``: a relevant id (grade > 0) is no document's id;
    * ``relevant_in_other_tenant``: a relevant document belongs to another tenant than the question's (the
      request never searches there).

    Their scoring is left as it is (the label is the user's to fix); the report counts and lists them. A
    question whose filters its own request refuses (an unknown field, no tenant in a multi-tenant corpus) is
    left to that refusal.

    Returns:
        ``{"questions": distinct questions with a problem, <kind>: [{"id", …}]}`` for each of :data:`PROBLEMS`.
    """
    tenant_of = {d.id: d.metadata.get(tenant_field) for d in documents}
    tenants = {typed(t) for t in tenant_of.values() if t is not None}
    out: dict[str, Any] = {kind: [] for kind in PROBLEMS}
    for q in questions:
        try:
            named = build_filters(q.filters, types, tenant_field).get(tenant_field)
        except RetrievalError:
            named = None
        tenant = named[0] if named else None
        if tenant is not None and typed(tenant) not in tenants:
            out["tenant_not_in_corpus"].append({"id": q.id, "tenant": tenant})
        wanted = list(relevant_grades(q))
        missing = [d for d in wanted if d not in tenant_of]
        if missing:
            out["relevant_not_in_corpus"].append({"id": q.id, "relevant": missing})
        if tenant is not None:
            elsewhere = {d: tenant_of[d] for d in wanted if d in tenant_of and typed(tenant_of[d]) != typed(tenant)}
            if elsewhere:
                out["relevant_in_other_tenant"].append({"id": q.id, "tenant": tenant, "relevant": elsewhere})
    out = {"questions": len({e["id"] for kind in PROBLEMS for e in out[kind]}), **out}
    return out


def visible_corpus(documents: Sequence[Document], chunks: Sequence[Chunk], types: Mapping[str, set[type]],
                   tenant_field: str, tenants: Collection[str] | None
                   ) -> tuple[Sequence[Document], Sequence[Chunk], Mapping[str, set[type]]]:
    """The documents, chunks and field types the report's label checks may read for a user of ``tenants``.

    Under an access policy (``tenants``: the user's tenants, written forms) a multi-tenant corpus is cut to
    the documents of those tenants, and the field types to what their chunks carry, so that
    :func:`question_problems` and :func:`evidence_check` read another tenant's document exactly as an id
    not in the corpus. ``None`` (single-user mode, the CLI) or a corpus without tenants: all of it.
    """
    if tenants is None or tenant_field not in types:
        return documents, chunks, types
    docs = [d for d in documents if tenant_field in d.metadata and may_open(d.metadata[tenant_field], tenants)]
    kept = {d.id for d in docs}
    parts = [c for c in chunks if c.parent_id in kept]
    return docs, parts, field_types(parts)


def first_ranks(items: Iterable[Any], wanted: set[str]) -> dict[str, int]:
    """Parent → the 1-based rank of its first chunk in a list (only parents in ``wanted``)."""
    out: dict[str, int] = {}
    for item in items:
        if item.parent_id in wanted and item.parent_id not in out:
            out[item.parent_id] = item.rank
    return out


def span_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Answerable questions with labelled spans (``checked``) and those whose answer holds one (``held``)."""
    checked = [r for r in rows if r.get("answer_span") is not None]
    return {"checked": len(checked), "held": sum(1 for r in checked if r["answer_span"])}


def layer_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per layer (and per layer:stage), overall and per group, and the answers that hold a span."""
    def count(part: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        out = {layer: 0 for layer in LAYERS}
        for r in part:
            out[r["layer"]] += 1
        return out

    stages: dict[str, int] = {}
    for r in rows:
        if r["layer"] != "ok":
            key = f"{r['layer']}:{r['stage']}"
            stages[key] = stages.get(key, 0) + 1
    groups = sorted({r["group"] for r in rows})
    return {"overall": count(rows), "stages": dict(sorted(stages.items())), "answer_spans": span_counts(rows),
            "groups": {g: count([r for r in rows if r["group"] == g]) for g in groups}}
