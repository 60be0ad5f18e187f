"""Pure view helpers over the trace dict (DESIGN.md, "Trace"): tables, diffs, snippets and URL parameters.

Everything here reads the JSON-shaped dict returned by ``Trace.to_dict()`` and returns plain Python values;
nothing is re-scored and nothing imports streamlit, so the app, the CLI and tests can share these functions.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any, Iterable, Mapping, Sequence

from ..core.errors import RetrievalError
from ..core.filters import build_filters
from ..core.text import tokenize
from ..learned.judge.features import FEATURE_DOCS
from ..stages.judge import MAX_NAMED_WORDS, readable_pair
from ..stages.rerank import RerankerSpec
from ..stages.transforms import TECHNIQUES

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
    if start:
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
def list_rows(trace: Mapping[str, Any], name: str, relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """One row per item of the trace list ``name`` (``lexical``, ``dense``, ``fused``, ``reranked``).

    Columns: list, rank, chunk_id, parent_id, score, score_kind, relevance, then per list: ``terms`` (JSON of
    the per-term BM25 contributions), ``rank_bm25``/``rank_dense``/``rrf_bm25``/``rrf_dense`` and
    ``found_by`` (fused), ``fused_rank`` (reranked). Values are copied from the trace, never recomputed.
    """
    block = trace.get(name) or {}
    kind = block.get("score_kind")
    rows = []
    for item in block.get("items") or []:
        row: dict[str, Any] = {"list": name, "rank": item["rank"], "chunk_id": item["chunk_id"],
                               "parent_id": item["parent_id"], "score": item["score"], "score_kind": kind,
                               "relevance": relevance_of(item["parent_id"], relevant, graded)}
        if name == "lexical":
            row["terms"] = json.dumps(item.get("terms") or {}, ensure_ascii=False, sort_keys=True)
        elif name == "fused":
            ranks, contributions = item.get("ranks") or {}, item.get("contributions") or {}
            for ranker in ("bm25", "dense"):
                row[f"rank_{ranker}"] = ranks.get(ranker)
                row[f"rrf_{ranker}"] = contributions.get(ranker)
            row["found_by"] = "+".join(sorted(ranks)) if ranks else ""
        elif name == "reranked":
            row["fused_rank"] = item.get("fused_rank")
        rows.append(row)
    return rows


def rows_to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text (header from the union of keys, in first-seen order); ``None`` becomes an empty cell."""
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns or ["list"], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return buffer.getvalue()


def lists_csv(trace: Mapping[str, Any], relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> dict[str, str]:
    """The four lists as CSV texts, keyed by list name."""
    return {name: rows_to_csv(list_rows(trace, name, relevant, graded)) for name in LISTS}


def contribution_rows(trace: Mapping[str, Any], limit: int | None = None) -> list[dict[str, Any]]:
    """Long-format rows for a stacked bar of RRF contributions: one row per (fused item, ranker)."""
    rows = []
    for item in (trace.get("fused") or {}).get("items", [])[:limit]:
        ranks = item.get("ranks") or {}
        for ranker, value in (item.get("contributions") or {}).items():
            rows.append({"fused_rank": item["rank"], "chunk_id": item["chunk_id"], "ranker": ranker,
                         "contribution": value, "ranker_rank": ranks.get(ranker),
                         "single_ranker": len(ranks) == 1})
    return rows


#: Plain-word labels of the support gate's features (en, pt), for the chart; the trace keeps the ids.
GATE_LABELS: dict[str, tuple[str, str]] = {
    "g_cov_best": ("question covered by the best chunk", "pergunta coberta pelo melhor trecho"),
    "g_cov_union": ("question covered by all chunks", "pergunta coberta por todos os trechos"),
    "g_parent_cov_best": ("question covered by the best document", "pergunta coberta pelo melhor documento"),
    "g_focus_cov_best": ("focus words in the best chunk", "palavras-foco no melhor trecho"),
    "g_focus_cov_top": ("focus words in the first chunk", "palavras-foco no primeiro trecho"),
    "g_focus_missing": ("focus words in no chunk", "palavras-foco em nenhum trecho"),
    "g_focus_missing_n": ("how many focus words are in no chunk", "quantas palavras-foco não estão em trecho algum"),
    "g_sentence_cov": ("question covered by one or two sentences", "pergunta coberta por uma ou duas frases"),
    "g_bigram_best": ("question word pairs kept together", "pares de palavras da pergunta juntos"),
    "g_proximity_best": ("question words close together", "palavras da pergunta próximas"),
    "g_cos_best": ("best dense cosine", "melhor cosseno denso"),
    "g_cos_peak": ("best cosine's lead over the window", "vantagem do melhor cosseno sobre a janela"),
    "g_unseen_index": ("question words unseen in the index", "palavras da pergunta ausentes do índice"),
    "g_code_match": ("question's codes found", "códigos da pergunta encontrados"),
    "g_code_conflict": ("another code of the same prefix", "outro código do mesmo prefixo"),
    "g_reader_best": ("best reader score", "melhor nota do leitor"),
    "g_reader_peak": ("best reader score's lead over the window", "vantagem da melhor nota do leitor sobre a janela"),
    "g_reader_sentence": ("best reader score of one sentence", "melhor nota do leitor para uma frase"),
    "bias": ("model baseline (bias)", "base do modelo (viés)"),
}


def support_rows(trace: Mapping[str, Any], lang: str = "en") -> list[dict[str, Any]]:
    """Rows for the support gate's bar chart: one per gate feature that moved the log-odds, strongest first,
    then the model's baseline (bias), so the bars visibly sum to the log-odds. Each row has the feature id,
    a plain-word label in ``lang``, its value and what it measures. Empty when the learned gate did not run."""

    support = (trace.get("gate") or {}).get("support") or {}
    values = support.get("features") or {}
    contributions = support.get("contributions") or {}
    col = 1 if lang == "pt" else 0

    def row(name: str, value: float, direction: str) -> dict[str, Any]:
        return {"feature": name, "label": GATE_LABELS.get(name, (name, name))[col], "contribution": value,
                "value": values.get(name), "meaning": FEATURE_DOCS[name].doc if name in FEATURE_DOCS else
                "the log-odds with every feature at its training average", "direction": direction}

    rows = [row(name, value, "for answering" if value > 0 else "against answering")
            for name, value in contributions.items() if name != "bias" and abs(value) >= 1e-4]
    rows.sort(key=lambda r: -abs(r["contribution"]))
    if rows and "bias" in contributions:
        rows.append(row("bias", contributions["bias"], "baseline"))
    return rows


_SUPPORT_TEXTS = {
    "en": {"answers": "answers", "abstains": "abstains", "line": "P(support) {p} {op} threshold {t}: the learned gate "
           "{verdict}", "missing": " — no selected chunk mentions {words}", "although": ", although no selected chunk "
           "mentions {words}", "nothing": " — the question names nothing to look for"},
    "pt": {"answers": "responde", "abstains": "se abstém", "line": "P(suporte) {p} {op} limiar {t}: o portão "
           "aprendido {verdict}", "missing": " — nenhum trecho selecionado menciona {words}", "although": ", embora "
           "nenhum trecho selecionado mencione {words}", "nothing": " — a pergunta não nomeia nada a procurar"},
}


def support_summary(trace: Mapping[str, Any], lang: str = "en") -> str | None:
    """One line, in ``lang`` (en / pt): P(support) against the threshold and the verdict, with the words no
    selected chunk mentions; ``None`` when the learned gate did not run (its note then says why)."""

    support = (trace.get("gate") or {}).get("support") or {}
    if support.get("best") is None:
        return support.get("note")
    texts = _SUPPORT_TEXTS.get(lang, _SUPPORT_TEXTS["en"])
    passes = bool(support.get("passes"))
    p, t = readable_pair(float(support["best"]), float(support["threshold"]))
    line = texts["line"].format(p=p, op="≥" if passes else "<", t=t, verdict=texts["answers" if passes else "abstains"])
    missing = support.get("missing_tokens") or []
    if missing:
        words = ", ".join(repr(w) for w in missing[:MAX_NAMED_WORDS]) + (" …" if len(missing) > MAX_NAMED_WORDS else "")
        line += texts["although" if passes else "missing"].format(words=words)
    elif not passes and "names nothing" in str(support.get("reason", "")):
        line += texts["nothing"]
    return line + "."


def _fused_kept(trace: Mapping[str, Any]) -> set[str]:
    """Chunk ids the fused list would have sent on: deduplicated as the request was (by parent, or by chunk),
    then its first ``top_k`` — the counterpart, before the rerank, of the final list."""
    settings = trace.get("settings") or {}
    top_k = int(settings.get("top_k") or 0)
    key = "chunk_id" if settings.get("dedup") == "chunk" else "parent_id"
    seen: set[str] = set()
    kept: list[str] = []
    for item in sorted((trace.get("fused") or {}).get("items") or [], key=lambda i: i["rank"]):
        if item[key] not in seen:
            seen.add(item[key])
            kept.append(item["chunk_id"])
    return set(kept[:top_k])


def movement_rows(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows for a fused → reranked slope chart (two per reranked item), with a status per item.

    An item is *in* after the rerank exactly when it is in the trace's ``final`` list (the chunks the answer
    used: after the dedup by parent, the top_k cut or MMR, and the gate), and *in* before it when the fused list,
    deduplicated the same way, holds it in its first ``top_k``. Status: ``stayed in`` (in both), ``moved in``
    (final only), ``fell out`` (fused only: the reranker, the dedup or the gate dropped it) or ``stayed out``.
    A chunk whose parent has a better-ranked chunk is out after the dedup whatever its raw rank.
    ``final_rank`` is the item's place in the final list (``None`` when out). Empty when no rerank ran.
    """
    final = {item["chunk_id"]: item["rank"] for item in trace.get("final") or []}
    before_in = _fused_kept(trace)
    rows = []
    for item in (trace.get("reranked") or {}).get("items") or []:
        before, after = item.get("fused_rank"), item["rank"]
        if before is None:
            continue
        was_in, is_in = item["chunk_id"] in before_in, item["chunk_id"] in final
        status = ("stayed in" if was_in else "moved in") if is_in else ("fell out" if was_in else "stayed out")
        for stage, rank in (("fused", before), ("reranked", after)):
            rows.append({"chunk_id": item["chunk_id"], "parent_id": item["parent_id"], "stage": stage,
                         "rank": rank, "status": status, "fused_rank": before, "reranked_rank": after,
                         "final_rank": final.get(item["chunk_id"])})
    return rows


def lost_rows(trace: Mapping[str, Any], relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """``lost_by_reranker`` with its ranks before and after and the item's label."""
    return [{"chunk_id": e["chunk_id"], "parent_id": e["parent_id"], "fused_rank": e.get("fused_rank"),
             "reranked_rank": e.get("reranked_rank"), "reader": e.get("reader"),
             "relevance": relevance_of(e["parent_id"], relevant, graded)}
            for e in trace.get("lost_by_reranker") or []]


#: Stages whose time is already inside another stage of the trace (not added again to the sum).
NESTED_STAGES = frozenset({"multi_hop"})
UNATTRIBUTED = "outside any stage (e.g. model loading)"


def timing_rows(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per-stage timings in ms as in the trace; ``None`` means not measured (never shown as 0).

    When the trace has a ``total``, a row :data:`UNATTRIBUTED` holds ``total − Σ stages`` (rounded to 0.1 ms),
    so every millisecond of the request is in a named row.
    """
    timings = trace.get("timings_ms") or {}
    rows = [{"stage": stage, "ms": value} for stage, value in timings.items() if stage != "total"]
    total = timings.get("total")
    if total is not None:
        staged = sum(v for k, v in timings.items() if k != "total" and k not in NESTED_STAGES and v is not None)
        rows.append({"stage": UNATTRIBUTED, "ms": round(max(0.0, total - staged), 1)})
        rows.append({"stage": "total", "ms": total})
    return rows


def unattributed_ms(trace: Mapping[str, Any]) -> float | None:
    """``total − Σ stages`` of the trace in ms (``None`` without a total)."""
    return next((r["ms"] for r in timing_rows(trace) if r["stage"] == UNATTRIBUTED), None)


def cost_rows(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Scalar costs of the request (``None`` = not measured); per-technique costs are in :func:`technique_rows`."""
    return [{"cost": name, "value": value} for name, value in (trace.get("costs") or {}).items()
            if name != "techniques"]


def technique_rows(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per query transform that ran: extra retrieval calls, LLM calls, tokens and wall time (ms)."""
    return [{"technique": name, **values} for name, values in ((trace.get("costs") or {}).get("techniques") or {}).items()]


def query_rows(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The original and every transformed query, with what each lost (flags) and the lists it produced."""
    rankers: dict[tuple[str, str], list[str]] = {}
    for variant in trace.get("variants") or []:
        q = variant.get("query") or {}
        rankers.setdefault((q.get("kind", ""), q.get("text", "")), []).extend(variant.get("rankers") or [])
    rows = []
    for q in trace.get("queries") or []:
        rows.append({"kind": q["kind"], "query": q["text"], "hypothesis_only": q["hypothesis_only"],
                     "flags": ", ".join(q.get("flags") or []), "filters_added": q.get("filters_added"),
                     "rankers": ", ".join(rankers.get((q["kind"], q["text"]), ["bm25", "dense"] if q["kind"] == "original" else []))})
    return rows


def empty_reason(trace: Mapping[str, Any], name: str) -> str:
    """Why the list ``name`` of the trace is empty, from the trace's own notes, tier and models."""
    block = trace.get(name) or {}
    tier, reason = trace.get("tier"), trace.get("tier_reason")
    if name == "reranked":
        models = trace.get("models") or {}
        if not models.get("reranker"):
            return "no rerank ran: no reranker configured (reranker off)"
        status = models.get("reranker_status")
        if status and status != "loaded":
            return f"no rerank ran: {status}"
        if block.get("note"):
            return f"{block['note']} (tier {tier}: {reason})"
        return f"no rerank ran (tier {tier}: {reason})"
    if block.get("note"):
        return str(block["note"])
    if name == "lexical":
        return "no chunk of the filtered corpus shares a BM25 term with the question (zero scores are not listed)"
    if name == "dense":
        return "the vector store returned no chunk for these filters"
    return f"nothing to fuse (tier {tier}: {reason})"


# -- A/B -----------------------------------------------------------------------------------------------------
def diff_finals(a: Mapping[str, Any], b: Mapping[str, Any], key: str = "chunk_id") -> dict[str, Any]:
    """Compare the ``final`` lists of two traces (e.g. hybrid vs dense-only) by ``key``.

    Returns:
        ``{"only_a": [{id, rank}], "only_b": [{id, rank}], "both": [{id, rank_a, rank_b, moved}],
        "same": bool, "overlap": |both| / |a ∪ b| (1.0 when both are empty)}``; ``moved`` is
        ``rank_a - rank_b`` (positive: ranked higher in b).
    """
    rank_a = {item[key]: item["rank"] for item in a.get("final") or []}
    rank_b = {item[key]: item["rank"] for item in b.get("final") or []}
    only_a = [{"id": k, "rank": r} for k, r in rank_a.items() if k not in rank_b]
    only_b = [{"id": k, "rank": r} for k, r in rank_b.items() if k not in rank_a]
    both = [{"id": k, "rank_a": r, "rank_b": rank_b[k], "moved": r - rank_b[k]}
            for k, r in rank_a.items() if k in rank_b]
    union = len(set(rank_a) | set(rank_b))
    same = list(rank_a) == list(rank_b)
    return {"only_a": only_a, "only_b": only_b, "both": both, "same": same,
            "overlap": (len(both) / union) if union else 1.0}


# -- URL parameters ------------------------------------------------------------------------------------------
RERANKER_OFF = "none"
LANGUAGES = ("en", "pt")
#: The main page's tabs as a link names them (``tab=lists``), in the page's order.
VIEW_TABS = ("grid", "lists", "movement", "compare", "judge", "where", "timings")
RERANKER_BI = "bi-encoder:use-m3"
RERANKER_READER = "reader"


def canonical_reranker(spec: str) -> str:
    """``spec`` stripped, with every spelling of "no reranker" (``''``, ``off``, ``none``) as :data:`RERANKER_OFF`."""
    spec = (spec or "").strip()
    return RERANKER_OFF if spec.lower() in {"", "none", "off"} else spec


def app_rerankers(settings: Any) -> tuple[str, ...]:
    """The rerankers the app offers, its only choices: a link or a box never names a model path or folder.

    The learned ranker, off, the reader (late interaction over the installed e5 weights), the bi-encoder
    rescoring, then the cross-encoders the deployer named (``app_rerankers``) and ``reranker_model`` when it
    is a cross-encoder. The learned-ranker, reader and bi-encoder slots take the server's own spec when
    ``reranker_model`` is of that kind (``ltr:FOLDER``, ``reader:int8``, ``bi-encoder:e5-small``), so the
    server's default is always a choice.

    Args:
        settings: the server's :class:`~retrieval.settings.Settings`.

    Returns:
        Reranker specs (``RETRIEVAL_RERANKER_MODEL`` values), without repeats.
    """

    server = canonical_reranker(settings.reranker_model)
    kind = RerankerSpec.parse(server).kind
    ltr = server if kind == "ltr" else "ltr"
    reader = server if kind == "reader" else RERANKER_READER
    bi = server if kind == "bi-encoder" else RERANKER_BI
    cross = list(settings.app_reranker_names) + ([server] if kind == "cross-encoder" else [])
    return tuple(dict.fromkeys([ltr, RERANKER_OFF, reader, bi, *cross]))


@dataclass(frozen=True)
class ViewParams:
    """Everything a shared link carries: the question, the corpus and question set, filters and settings.

    ``filters`` maps a metadata field (other than the tenant) to the chosen values as strings.
    """

    q: str = ""
    corpus: str = ""
    questions: str = ""
    tenant: str = ""
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    top_k: int = 5
    overfetch: int = 4
    rrf_k: int = 60
    reranker: str = RERANKER_OFF
    dense_only: bool = False
    min_similarity: float = 0.80
    ab: bool = True
    rows: int = 10
    transforms: tuple[str, ...] = ()
    mmr: float | None = None
    lang: str = "en"
    judgments: str = ""
    #: The tab open under the answer (one of :data:`VIEW_TABS`).
    tab: str = "grid"
    #: Configuration B of the Compare tab (``b_…`` in the URL); ``None`` = B's default (A's value, except
    #: dense-only, which B flips).
    b_dense_only: bool | None = None
    b_reranker: str | None = None
    b_top_k: int | None = None
    b_rrf_k: int | None = None
    b_overfetch: int | None = None
    b_min_similarity: float | None = None


_FILTER_PREFIX = "f."
#: The Compare tab's configuration B: ``b_<name>`` parameters, validated as ``<name>`` is.
B_PREFIX = "b_"
B_SETTINGS = ("dense_only", "reranker", "top_k", "rrf_k", "overfetch", "min_similarity")
_BOUNDS = {"top_k": (1, 50), "overfetch": (1, 20), "rrf_k": (1, 1000), "rows": (1, 100)}


def _to_bool(raw: str) -> bool:
    return raw.strip().lower() in {"1", "true", "yes", "on"}


#: A field with more values than this gets a text box (values typed, comma-separated) instead of a picker.
PICKER_MAX_VALUES = 200


def typed_filter_values(text: str, options: Sequence[Any]) -> tuple[list[Any], list[str]]:
    """The values typed for a field with too many values for a picker, matched against the tenant's own.

    ``"2019, 2021, x"`` with options ``[2019, 2020, 2021]`` → ``([2019, 2021], ["x"])``: each comma-separated
    piece is matched by its text to a value the tenant's documents carry (so its type is the value's own);
    what matches none is returned for the caller to name back, never dropped without a word.
    """
    by_text = {str(v): v for v in options}
    pieces = dict.fromkeys(p.strip() for p in text.split(","))  # each piece once, by its text (1 and True differ)
    found = [by_text[p] for p in pieces if p and p in by_text]
    unknown = [p for p in pieces if p and p not in by_text]
    return found, unknown


def link_filter_problems(pending: Mapping[str, Sequence[str]], offered: Mapping[str, Sequence[Any]],
                         tenant: Sequence[Any], types: Mapping[str, set[type]], tenant_field: str,
                         tenant_types: Any = None) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """A link's filters (``f.<field>=``) checked against what the pickers offer for the request's tenant.

    A field the tenant's documents do not carry is checked as the request would check it
    (:func:`retrieval.core.filters.build_filters` with the tenant's own fields), so its refusal names only that
    tenant's fields, never one that exists only in another tenant; a value no document of the tenant carries
    is named back as the link wrote it (the tenant's other values are not listed). Neither is dropped without a
    word, and each is said once: what is refused leaves the pending filters.

    Args:
        pending: the link's filters not yet applied (field → values as written).
        offered: the pickers' fields and values for this tenant (:meth:`IndexState.filter_values`).
        tenant: the chosen tenant (one value), or empty on a corpus without tenants.
        types, tenant_field, tenant_types: as :func:`retrieval.core.filters.build_filters` takes them.

    Returns:
        ``(the pending filters left for the pickers, one "f.<field>: <why>" line per refusal)``.
    """

    where = f" with {tenant_field}={tenant[0]!r}" if tenant else ""
    kept: dict[str, tuple[str, ...]] = {}
    problems = []
    for name, raw in pending.items():
        if name not in offered:
            try:
                build_filters([(tenant_field, value) for value in tenant[:1]] + [(name, list(raw))],
                              types, tenant_field, tenant_types)
            except RetrievalError as exc:
                problems.append(f"{_FILTER_PREFIX}{name}: {exc}")
            continue
        if name == tenant_field:
            kept[name] = tuple(raw)
            continue
        known = {str(v) for v in offered[name]}
        missing = [v for v in raw if v not in known]
        if missing:
            shown = ", ".join(repr(v) for v in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                                               else "")
            problems.append(f"{_FILTER_PREFIX}{name}: no document{where} has {name} {shown}")
        kept[name] = tuple(v for v in raw if v in known)
    return kept, problems


def params_from_query(query: Mapping[str, Sequence[str]], defaults: ViewParams) -> tuple[ViewParams, list[str]]:
    """Parse URL parameters (each key → its values) over ``defaults``.

    Returns:
        The parameters, and one message per value that was ignored (unparsable or out of range).
    """
    problems: list[str] = []
    values: dict[str, Any] = {}
    filters: dict[str, tuple[str, ...]] = {}
    for key, raw_values in query.items():
        raw_list = [raw_values] if isinstance(raw_values, str) else list(raw_values)
        if not raw_list:
            continue
        raw = raw_list[-1]
        if key.startswith(_FILTER_PREFIX) and len(key) > len(_FILTER_PREFIX):
            filters[key[len(_FILTER_PREFIX):]] = tuple(dict.fromkeys(v for v in raw_list if v != ""))
            continue
        # b_top_k is read as top_k is, and stored under its own name
        name = key[len(B_PREFIX):] if key.startswith(B_PREFIX) and key[len(B_PREFIX):] in B_SETTINGS else key
        stored = key
        default = getattr(defaults, key, None)
        if default is None and name != key:
            default = "B's default"
        if name in {"q", "corpus", "questions", "tenant", "reranker", "judgments"}:
            values[stored] = raw
        elif key == "tab":
            if raw in VIEW_TABS:
                values[key] = raw
            else:
                problems.append(f"tab={raw[:40]!r} is not one of {', '.join(VIEW_TABS)}; using {defaults.tab}")
        elif key == "lang":
            if raw in LANGUAGES:
                values[key] = raw
            else:
                problems.append(f"lang={raw!r} is not one of {', '.join(LANGUAGES)}; using {defaults.lang}")
        elif name in _BOUNDS:
            low, high = _BOUNDS[name]
            try:
                number = int(raw)
            except ValueError:
                problems.append(f"{key}={raw!r} is not an integer; using {default}")
                continue
            if not low <= number <= high:
                problems.append(f"{key}={number} is outside [{low}, {high}]; using {default}")
                continue
            values[stored] = number
        elif name == "min_similarity":
            try:
                number = float(raw)
            except ValueError:
                problems.append(f"{key}={raw!r} is not a number; using {default}")
                continue
            if not math.isfinite(number) or not -1.0 <= number <= 1.0:
                problems.append(f"{key}={number} is outside [-1, 1]; using {default}")
                continue
            values[stored] = number
        elif name in {"dense_only", "ab"}:
            values[stored] = _to_bool(raw)
        elif key == "transforms":

            chosen = tuple(dict.fromkeys(t.strip() for t in raw.split(",") if t.strip()))
            unknown = [t for t in chosen if t not in TECHNIQUES]
            if unknown:
                problems.append(f"transforms: unknown {', '.join(unknown)}; ignored")
            values[key] = tuple(t for t in chosen if t in TECHNIQUES)
        elif key == "mmr":
            try:
                number = float(raw)
            except ValueError:
                problems.append(f"mmr={raw!r} is not a number; MMR off")
                continue
            if not 0.0 <= number <= 1.0:
                problems.append(f"mmr={number} is outside [0, 1]; MMR off")
                continue
            values[key] = number
    if filters:
        values["filters"] = filters
    return replace(defaults, **values), problems


def params_to_query(params: ViewParams, defaults: ViewParams) -> dict[str, str | list[str]]:
    """URL parameters for ``params``: only values that differ from ``defaults`` (plus the question)."""
    out: dict[str, str | list[str]] = {}
    for f in fields(ViewParams):
        value, default = getattr(params, f.name), getattr(defaults, f.name)
        if f.name == "filters":
            for name, chosen in sorted(value.items()):
                if chosen:
                    out[_FILTER_PREFIX + name] = list(chosen)
            continue
        if value == default and f.name != "q":
            continue
        if f.name == "q" and not value:
            continue
        if f.name == "transforms":
            out[f.name] = ",".join(value)
            continue
        out[f.name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


def feature_contribution_rows(item: Mapping[str, Any], n: int = 6) -> list[dict[str, Any]]:
    """The ``n`` largest (by magnitude) feature contributions of a learned-ranker item, largest first:
    ``{feature, contribution, meaning}`` (raw LambdaMART units; the bias is left out)."""

    contributions = {k: v for k, v in (item.get("feature_contributions") or {}).items() if k != "bias"}
    top = sorted(contributions.items(), key=lambda kv: -abs(kv[1]))[:n]
    return [{"feature": k, "contribution": round(float(v), 4),
             "meaning": FEATURE_DOCS[k].doc if k in FEATURE_DOCS else ""} for k, v in top]
