"""A constructed evaluation report, for the tests of what is exported from one (TREC runs, CSV, decision record,
the app's downloads)."""

from __future__ import annotations


def row(qid, group, relevant, ranked, scores, layer="ok", stage=None):
    """One question's row of a configuration."""
    return {"id": qid, "group": group, "split": "dev", "question": f"pergunta {qid}", "relevant": relevant,
            "final": ranked, "ranked": ranked, "scores": scores, "first_relevant_rank": 1, "abstained": False,
            "context": [f"{ranked[0]}#0"], "citations": [f"{ranked[0]}#0"], "tier": "rrf_only", "layer": layer,
            "stage": stage, "evidence_cut": False, "relevant_ranks": {"bm25": {relevant[0]: 3}, "dense": {}},
            "metrics": {"ndcg@2": 1.0}}


def config(tier, ndcg, wall, rows, stages):
    """One configuration's part of the report."""
    overall = {"ndcg@2": ndcg, "recall@2": 0.5, "mrr@2": ndcg, "hit_rate@2": 1.0, "precision@2": 0.5,
               "abstention_accuracy": 1.0, "questions": 2, "answerable": 2}
    return {"tier": tier, "settings": {"top_k": 2}, "overall": overall, "groups": {"code": overall},
            "diagnosis": {"overall": {"ok": 1, "coverage": 0, "ordering": 1, "generation": 0}, "stages": stages,
                          "groups": {}},
            "timings_ms": {"wall_total": wall, "standalone_estimate": wall + 500.0, "total_p50": 12.5,
                           "total_p95": 40.0}, "shared_lists": {"hits": 2, "misses": 2, "saved_ms": 500.0},
            "cost": {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0}, "questions": rows}


def evaluation_report() -> dict:
    """A two-configuration report (dense against hybrid, two questions each, one comparison), as ``eval`` writes it."""
    base_rows = [row("q1", "code", ["d1"], ["d1", "d2"], [0.032787, 0.016129]),
                 row("q2", "code", ["d3"], ["d4", "d3"], [0.5, 0.25], "ordering", "fusion")]
    cand_rows = [row("q1", "code", ["d1"], ["d2", "d5"], [0.9, 0.1], "ordering", "reranker"),
                 row("q2", "code", ["d3"], ["d3", "d4"], [0.8, 0.7])]
    comparison = {"baseline": "dense", "candidate": "hybrid", "metric": "ndcg@2", "delta": 0.1234,
                  "p_value": 0.0312, "improved": ["q2"], "worsened": ["q1"],
                  "by_group": {"code": {"questions": 2, "delta": 0.1234, "improved": ["q2"], "worsened": ["q1"]}},
                  "lost_relevant": [{"id": "q1", "group": "code", "lost": ["d1"]}],
                  "wins_on_mean_but_lost_relevant": True}
    return {"schema_version": "1.0", "corpus": "/data/x/corpus.jsonl", "questions": 2, "split": "all", "k": [2],
            "configs": {"dense": config("dense_only", 0.6, 1500.0, base_rows, {"ordering:fusion": 1}),
                        "hybrid": config("rrf_only", 0.7234, 2500.0, cand_rows, {"ordering:reranker": 1})},
            "comparisons": [comparison], "hypothesis": "hybrid finds the codes dense misses",
            "observed": ["hybrid vs dense: ndcg@2 +0.1234 (p=0.0312)"],
            "evidence_check": {"checked": 3, "questions": 2, "whole": 2,
                               "cut": [{"id": "q2", "parent": "d3", "span": "prazo de 30 dias"}], "not_in_parent": []}}
