"""Evaluation over labeled questions: metrics per group and per question, layer diagnosis, comparisons.

* :mod:`.configs`: named configurations, the fixed dev / held-out split.
* :mod:`.runner`: every question once per configuration (:func:`evaluate_configs`), the report rows.
* :mod:`.metrics`: the declared ranking metrics (:data:`METRICS`), their ranx values per question and their
  aggregates.
* :mod:`.compare`: paired significance tests, per-group deltas, lost relevant documents.
* :mod:`.diagnose`: the failure layer of each question, the evidence check.
* :mod:`.calibrate`: the cosine gate chosen on dev, judged on held-out.
* :mod:`.sweep`: the top-k sweep (recall and redundancy by k).

Exports of a report are in :mod:`retrieval.offline.report`.
"""

from ...core.split import split_of
from .calibrate import calibrate_gate
from .compare import compare, observed
from .configs import Config, named_configs, resolve_configs, select_split
from .diagnose import LAYERS, diagnose, evidence_check
from .metrics import METRICS, Metric, aggregate, scores
from .runner import TqdmProgress, bench_factory, evaluate_configs

__all__ = ["LAYERS", "METRICS", "Config", "Metric", "TqdmProgress", "aggregate", "bench_factory", "named_configs",
           "calibrate_gate", "compare", "diagnose", "evaluate_configs", "evidence_check", "observed",
           "resolve_configs", "scores", "select_split", "split_of",
           # the modules the pages read besides these names
           "metrics", "runner", "sweep"]
