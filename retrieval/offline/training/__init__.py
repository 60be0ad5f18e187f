"""Training the judge from real traces (``python -m retrieval train``).

1. **Traces.** Every labeled question runs through :meth:`Workbench.ask` with no reranker and the gate
   disabled (``min_similarity=-1``, ``require_codes`` off) and a wide generator window (``wide``); the
   lists are then cut to the request window (``window``, the default 4 × 5 = 20) and fused again by RRF, so
   each case holds exactly what a default request would hand the judge.
2. **Cases.** An answerable question gives one ranking/support case; unanswerable questions (empty
   ``relevant``) give support negatives; and each answerable question also gives a
   **leave-the-evidence-out** case: the same question with its relevant parents removed from both
   generators' lists before the cut (what a request that filtered those parents out would have seen), an
   unanswerable case by construction.
3. **Split by parent.** A question is held out when the evaluation's fixed split (``split_of``) says so;
   it is trained on only when it is in the dev split *and* none of its relevant parents is relevant to a
   held-out question. So ``eval --split heldout`` measures questions whose parents the models never saw.
   Inside the training part a calibration part (20 % of its parents) chooses boosting rounds, the support
   model's kind and the threshold; the final models are refit on the whole training part.
4. **Labels.** Ranking: the parent's grade (``graded``, else 1) plus 1 for a chunk holding a gold answer
   span. Support: a chunk of a relevant parent that holds a gold span (every chunk of the parent when no
   span is given or none is found). Evidence: a context sentence that holds a gold span (or lies inside one).

Seeded and deterministic (``deterministic=True``, fixed seeds): the same inputs give the same model files.

The package, a module per job: :mod:`.cases` (the traces turned into cases, their labels and the split),
:mod:`.fitting` (the LightGBM and logistic fits, the support threshold), :mod:`.measuring` (the figures of a
fit on cases), :mod:`.card` (the manifest and the model card), :mod:`.run` (``train``: trace, fit, measure and
write the model folder).
"""

from .card import model_card, training_manifest
from .cases import (MIN_TRAIN_QUESTIONS, RERANK_WINDOW, SEED, TOP_K, WIDE, WINDOW, Case, assign_splits, build_case,
                    collect, contains_span, cut, dedup_parents, leave_evidence_out, sentence_label,
                    training_readiness)
from .fitting import BINARY_PARAMS, MIN_ANSWERED, RANK_PARAMS, RankerOnly, _fit_ranker, fit
from .measuring import (GATE_KINDS, OPERATING_THRESHOLDS, Orders, choose_evidence, cosine_gate_abstains,
                        final_indexes, gate_kinds, gate_row, gate_shares, ltr_order, measure, operating_points,
                        strongest_features, support_of)
from .run import TrainResult, _hash_file, fit_and_write, train

__all__ = ["BINARY_PARAMS", "GATE_KINDS", "MIN_ANSWERED", "MIN_TRAIN_QUESTIONS", "OPERATING_THRESHOLDS", "RANK_PARAMS",
           "RERANK_WINDOW", "SEED", "TOP_K", "WIDE", "WINDOW", "Case", "Orders", "RankerOnly", "TrainResult",
           "_fit_ranker", "_hash_file", "assign_splits", "build_case", "choose_evidence", "collect", "contains_span",
           "cosine_gate_abstains", "cut", "dedup_parents", "final_indexes", "fit", "fit_and_write", "gate_kinds",
           "gate_row", "gate_shares", "leave_evidence_out", "ltr_order", "measure", "model_card",
           "operating_points", "sentence_label", "strongest_features", "support_of", "train", "training_manifest",
           "training_readiness"]
