"""What a training writes beside its models: the manifest (choices, training sets, figures by part) and the
model card read from it."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...core.defaults import MIN_SIMILARITY
from ...learned.judge.features import CANDIDATE_NAMES, GATE_NAMES, SENTENCE_NAMES, feature_set_version
from ...learned.judge.models import FAQUAD_ATTRIBUTION, RERANKER_LABEL
from ..evaluation.metrics import brief, label
from .cases import RERANK_WINDOW, TOP_K, WINDOW


def training_manifest(info: Mapping[str, Any], sets: Sequence[Mapping[str, Any]], metrics: dict[str, Any],
                      strongest: list[tuple[str, float]], seconds: float, traced: float) -> dict[str, Any]:
    """The manifest of a fit: the choices made (``info``), the training sets, the figures by part, the strongest
    features and the times (the model folder's copy also gets the feature set version and the threshold)."""
    return {"training": info, "training_sets": list(sets), "metrics": metrics,
            "strongest_features": strongest,
            "training_seconds": round(seconds, 1), "tracing_seconds": round(traced, 1),
            "window": WINDOW, "rerank_window": RERANK_WINDOW, "top_k": TOP_K,
            "attribution": FAQUAD_ATTRIBUTION}


def model_card(manifest: Mapping[str, Any]) -> str:
    m = manifest
    lines = [
        "# Judge models: learned reranker, support gate, evidence sentences", "",
        f"Reranker kind `ltr`: {RERANKER_LABEL}. Support: P(the selected context supports an answer), "
        f"{m['training']['support_kind']} over {len(GATE_NAMES)} question-level features of the final chunks; "
        f"the gate passes when P ≥ {m['support_threshold']:.3f}. "
        f"Evidence: {m['training']['evidence_kind']} over context sentences.", "",
        f"Feature set `{feature_set_version()}` ({len(CANDIDATE_NAMES)} candidate features, "
        f"{len(SENTENCE_NAMES)} sentence features, {len(GATE_NAMES)} gate features; see "
        "`retrieval/learned/judge/features.py`). Contributions are in "
        "raw LambdaMART score units (reranker) and log-odds (support), not probabilities.", "",
        "## Training data", "",
    ]
    for t in m["training_sets"]:
        lines.append(f"- `{t['corpus_name']}`: corpus sha256 `{t['corpus_sha256'][:16]}…`, questions sha256 "
                     f"`{t['questions_sha256'][:16]}…`; {t['questions']} questions, "
                     f"{t['train_questions']} trained on, {t['heldout_questions']} held out")
    lines += ["", "Split by parent: held-out questions are the evaluation's fixed held-out split; a dev question is "
              "trained on only when none of its relevant parents is relevant to a held-out question. Unanswerable "
              "cases: the set's unanswerable questions plus leave-the-evidence-out cases (an answerable question "
              "with its relevant parents removed from every list); a leave-out case whose remaining candidates "
              "still hold a gold answer span (another parent repeats the answer) is not trained on.", "",
              f"Seed {m['training']['seed']}; training took {m['training_seconds']:.0f} s on 2 cores "
              f"(tracing {m.get('tracing_seconds', 0):.0f} s of it).", "",
              "## Metrics by part", "",
              "`train` was trained on (in-sample, shown for the fit); `dev_other` (dev questions whose parents are "
              "also held-out parents) and `heldout` (the evaluation's held-out split) were never trained on. "
              f"Gates: *learned* = P(support) ≥ threshold alone; *learned+cos* = learned and the cosine ({MIN_SIMILARITY:.2f}) "
              "and code checks together (what the pipeline runs); *cosine* = the cosine and code checks alone. "
              "Each cell: answered share of answerable / abstained share of unanswerable (n) / abstained share of "
              "leave-the-evidence-out cases (n) / the same for clean leave-out cases, those whose remaining "
              "candidates hold no gold answer span (n).", ""]
    lines += _metrics_table(m["metrics"])
    lines += _operating_table(m["metrics"], m["support_threshold"])
    lines += ["", "## Strongest reranker features (mean |contribution| over held-out candidates, raw LambdaMART units)", ""]
    lines += [f"- `{name}`: {value}" for name, value in m.get("strongest_features", [])]
    lines += ["", "## Attribution", "",
              f"Trained in part on {FAQUAD_ATTRIBUTION}. The FaQuAD texts are not redistributed in this folder; "
              "these model files are derived from them under the same licence's attribution terms.", ""]
    return "\n".join(lines)


def _operating_table(metrics: Mapping[str, Mapping[str, Any]], chosen: float) -> list[str]:
    parts = [(part, r["operating_points"]) for part, r in metrics.items() if r.get("operating_points")]
    if not parts:
        return []
    rows = ["", f"## Support gate operating points (learned gate alone; the shipped threshold is {chosen:.3f}; "
            "`RETRIEVAL_SUPPORT_THRESHOLD` picks another)", "",
            "Each cell: answered share of answerable / abstained share of unanswerable / of leave-out / of clean "
            "leave-out cases.", "", "| part | " + " | ".join(f"{p['threshold']:.2f}" for p in parts[0][1]) + " |",
            "|" + " --- |" * (len(parts[0][1]) + 1)]
    for part, points in parts:
        rows.append(f"| {part} | " + " | ".join(
            f"{p['answered_answerable']} / {p['abstained_unanswerable']} / {p['abstained_leave_out']} / "
            f"{p['abstained_leave_out_clean']}" for p in points) + " |")
    return rows


def _metrics_table(metrics: Mapping[str, Mapping[str, Any]]) -> list[str]:
    names = brief(10)
    rows = ["| part | answerable | " + "".join(f"{label(n)} rrf → ltr | " for n in names) + "lost | "
            "gate learned | gate learned+cos | gate cosine | evidence span share: extractive → model "
            "(rrf context) / model (ltr context) |", "|" + " --- |" * (7 + len(names))]

    def gate(g: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        return (f"{g['answered_answerable']} / {g['abstained_unanswerable']} ({r['n_unanswerable']}) / "
                f"{g['abstained_leave_out']} ({r['n_leave_out']}) / {g.get('abstained_leave_out_clean')} "
                f"({r.get('n_leave_out_clean')})")

    for part, r in metrics.items():
        ev = r["evidence_span_share"]
        both = r.get("support_and_cosine_gate") or r["support_gate"]
        figures = "".join(f"{(r.get(n) or {}).get('rrf')} → {(r.get(n) or {}).get('ltr')} | " for n in names)
        rows.append(f"| {part} | {r['n_answerable']} | {figures}"
                    f"{r['lost_relevant']} | {gate(r['support_gate'], r)} | {gate(both, r)} | "
                    f"{gate(r['cosine_gate'], r)} | {ev['extractive_rrf_context']} → {ev['model_rrf_context']} / "
                    f"{ev['model_ltr_context']} (n={ev['n']}) |")
    groups = [(part, g, v) for part, r in metrics.items() for g, v in (r.get("ndcg@10_by_group") or {}).items()]
    if groups:
        rows += ["", "nDCG@10 by group, rrf → ltr:", "", "| part | group | n | rrf | ltr |", "| --- | --- | --- | --- | --- |"]
        rows += [f"| {part} | {g} | {v['n']} | {v['rrf']} | {v['ltr']} |" for part, g, v in groups]
    return rows
