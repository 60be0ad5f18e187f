"""The evaluation (retrieval/offline/evaluation) on the lab corpus with the real embedding model: it scores the list
the pipeline kept, opens one index per index-level configuration, and leaves the shared Workbench as it was."""

from __future__ import annotations

import pytest

from retrieval.offline.evaluation import Config, bench_factory, evaluate_configs
from retrieval.settings import Settings

pytestmark = pytest.mark.integration


def test_evaluation_scores_the_list_the_pipeline_kept_with_mmr(lab_bench, lab_questions, ranx_compiled):
    """Regression: with MMR on, the evaluation rebuilt top_k without MMR and scored a list the pipeline never kept."""
    questions = [q for q in lab_questions if q.relevant][:10]
    report = evaluate_configs(lambda s: lab_bench, lab_bench.settings, questions,
                              [Config("mmr0", {"mmr_lambda": 0.0})], ks=(5,))
    s = lab_bench.settings.with_overrides(mmr_lambda=0.0, top_k=5)
    reordered = 0
    for row, q in zip(report["configs"]["mmr0"]["questions"], questions):
        trace = lab_bench.ask(q.question, q.filters, settings=s)
        kept = [i.parent_id for i in trace.selected]
        assert row["ranked"] == kept
        plain = list(dict.fromkeys(i.parent_id for i in trace.fused.items))[:5]
        reordered += kept != plain
    assert reordered > 0  # MMR at λ = 0 does reorder these lists, so the check above can fail


def test_contextual_configuration_gets_its_own_index(monkeypatch):
    """Regression: a configuration with ``contextual=true`` reused the plain index (the same cache key)."""
    opened = []

    class Recorder:
        def __init__(self, settings, progress=True):
            self.settings = settings
            opened.append(settings.contextual)

        def load_corpus(self, corpus):
            return None

    monkeypatch.setattr("retrieval.offline.evaluation.runner.Workbench", Recorder)
    open_bench = bench_factory("corpus.jsonl", progress=False)
    base = Settings(_env_file=None)
    plain, ctx = open_bench(base), open_bench(base.with_overrides(contextual=True))
    again = open_bench(base.with_overrides(top_k=9))  # a request-level difference shares the index
    assert plain is not ctx and again is plain and opened == [False, True]


def test_evaluation_leaves_the_shared_workbench_untouched(lab_bench, lab_questions, ranx_compiled):
    """Regression: the evaluation set and unset a list cache on the shared Workbench, where another session reads."""
    before = dict(vars(lab_bench))
    seen = []

    def progress(done, total, name):
        seen.append(dict(vars(lab_bench)) == before)

    evaluate_configs(lambda s: lab_bench, lab_bench.settings, lab_questions[:6],
                     [Config("hybrid", {}), Config("rrf30", {"rrf_k": 30})], ks=(5,), progress=progress)
    assert seen == [True] * 12 and dict(vars(lab_bench)) == before
