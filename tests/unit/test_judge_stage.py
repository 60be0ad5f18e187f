"""The judge inside the pipeline, on a synthetic corpus with a stand-in embedder and a model trained on it
(its figures mean nothing; the code paths are real): tier ``full`` with kind ``ltr``, contributions in the
trace, the support gate's record, the learned evidence sentences, and a missing model → ``rrf_only``."""

from __future__ import annotations

import pytest

pytest.importorskip("lightgbm")

from _judge_fixtures import fake_embedder, write_synthetic  # noqa: E402

from retrieval.corpus import load_questions  # noqa: E402
from retrieval.judge import train as T  # noqa: E402
from retrieval.judge.features import GATE_NAMES  # noqa: E402


@pytest.fixture(scope="module")
def bench_and_model(tmp_path_factory):
    from retrieval.pipeline import Workbench
    from retrieval.settings import Settings

    folder = tmp_path_factory.mktemp("judge-stage")
    corpus, qpath = write_synthetic(folder)
    model_dir = folder / "model"
    settings = Settings(chroma_path=folder / "chroma", judge_path=model_dir, min_similarity=-1.0, _env_file=None)
    bench = Workbench(settings, embedder=fake_embedder(), progress=False)
    bench.load_corpus(corpus)
    questions = load_questions(qpath)
    cases = T.collect(bench, questions, "synthetic", {q.id: "train" for q in questions})
    models, _ = T.fit(cases, seed=3)
    models.save(model_dir, "# synthetic test model\n")
    return Workbench(settings, embedder=bench.embedder, progress=False), corpus, model_dir


def test_missing_model_drops_to_rrf_only_with_the_reason(bench_and_model, tmp_path):
    bench, corpus, _ = bench_and_model
    bench.load_corpus(corpus)
    s = bench.settings.with_overrides(reranker_model=f"ltr:{tmp_path / 'absent'}")
    trace = bench.ask("Qual a garantia do aparelho alfa?", settings=s)
    assert trace.tier == "rrf_only"
    assert trace.tier_reason.startswith(f"reranker 'ltr:{tmp_path / 'absent'}' could not load: no judge model at")
    assert trace.reranked.items == ()
    assert trace.models["reranker_kind"] is None


def test_ltr_runs_in_the_full_tier_with_contributions(bench_and_model):
    bench, corpus, _ = bench_and_model
    bench.load_corpus(corpus)
    trace = bench.ask("Qual a garantia do aparelho alfa?", settings=bench.settings.with_overrides(reranker_model="ltr"))
    assert trace.tier == "full" and trace.models["reranker_kind"] == "ltr"
    assert "LambdaMART" in trace.tier_reason
    items = trace.reranked.items
    assert len(items) == min(len(trace.fused.items), bench.settings.reranker_max_input)
    for item in items:
        assert sum(item.feature_contributions.values()) == pytest.approx(item.score, abs=1e-4)
        assert item.fused_rank is not None
    assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)
    data = trace.to_dict()
    assert "feature_contributions" in data["reranked"]["items"][0]
    support = data["gate"]["support"]
    assert set(support["features"]) == set(GATE_NAMES)
    assert 0.0 <= support["best"] <= 1.0
    assert support["threshold"] > 0 and len(support["top_contributions"]) == 3
    assert support["passes"] is True and not trace.answer.abstained
    assert trace.answer.adapter == "local-extractive (learned evidence)"
    assert all(s["why"].startswith("evidence score") for s in trace.answer.sentences)
    assert set(trace.answer.citations) <= {f.chunk_id for f in trace.final}


def test_support_gate_refuses_in_plain_words(bench_and_model):
    bench, corpus, model_dir = bench_and_model
    bench.load_corpus(corpus)
    # A threshold no chunk can reach: the learned gate must refuse and say why, naming the missing word.
    import json

    manifest = json.loads((model_dir / "manifest.json").read_text())
    strict = model_dir.parent / "strict"
    strict.mkdir(exist_ok=True)
    for f in model_dir.iterdir():
        (strict / f.name).write_bytes(f.read_bytes())
    (strict / "manifest.json").write_text(json.dumps({**manifest, "support_threshold": 1.0}))  # a probability no chunk reaches
    s = bench.settings.with_overrides(reranker_model=f"ltr:{strict}")
    trace = bench.ask("Qual a garantia do aparelho zulu?", settings=s)
    assert trace.tier == "refusal" and trace.final == [] and trace.answer.abstained
    reason = trace.gate["reason"]
    assert reason.startswith("no selected chunk mentions 'zulu'; support ") and reason.endswith("< 1.00")
    assert trace.gate["support"]["passes"] is False


def test_support_gate_off_keeps_the_cosine_gate(bench_and_model):
    bench, corpus, _ = bench_and_model
    bench.load_corpus(corpus)
    s = bench.settings.with_overrides(reranker_model="none", support_gate=False, evidence_model=False)
    trace = bench.ask("Qual a garantia do aparelho alfa?", settings=s)
    assert trace.tier == "rrf_only" and "support" not in trace.gate
    assert trace.answer.adapter == "local-extractive"


def test_feature_contribution_rows_for_the_panel():
    from retrieval.views import feature_contribution_rows

    item = {"feature_contributions": {"cov_parent": 0.5, "dense_gap": -0.8, "bm25_norm": 0.1, "bias": -2.0}}
    rows = feature_contribution_rows(item, 2)
    assert [(r["feature"], r["contribution"]) for r in rows] == [("dense_gap", -0.8), ("cov_parent", 0.5)]
    assert rows[1]["meaning"].startswith("IDF-weighted coverage")


def test_support_threshold_setting_takes_effect_or_is_refused(bench_and_model):
    from retrieval.errors import InvalidSetting
    from retrieval.settings import Settings

    bench, corpus, _ = bench_and_model
    bench.load_corpus(corpus)
    question = "Qual a garantia do aparelho alfa?"
    base = bench.settings.with_overrides(reranker_model="ltr")
    model_p = bench.ask(question, settings=base).gate["support"]["best"]
    strict = bench.ask(question, settings=base.with_overrides(support_threshold=1.0))
    assert strict.tier == "refusal" and strict.gate["support"]["threshold"] == 1.0
    assert strict.gate["support"]["best"] == model_p  # the same P, a different threshold
    lenient = bench.ask(question, settings=base.with_overrides(support_threshold=0.0))
    assert lenient.tier == "full" and lenient.gate["support"]["passes"] is True
    with pytest.raises((InvalidSetting, ValueError), match="support gate is off"):
        Settings(support_gate=False, support_threshold=0.5, _env_file=None)
    with pytest.raises((InvalidSetting, ValueError)):
        Settings(support_threshold=1.5, _env_file=None)
