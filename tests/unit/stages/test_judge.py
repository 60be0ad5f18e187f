"""The judge inside the pipeline, on a synthetic corpus with a stand-in embedder and a model trained on it
(its figures mean nothing; the code paths are real): tier ``full`` with kind ``ltr``, contributions in the
trace, the support gate's record, the learned evidence sentences, and a missing model → ``rrf_only``."""

from __future__ import annotations

import pytest

import lightgbm  # noqa: E402,F401 - pinned: a missing package fails here, it never skips

from helpers.fakes import HashEmbedder  # noqa: E402
from helpers.judge import write_synthetic  # noqa: E402

from retrieval.ingest.corpus import load_questions  # noqa: E402
from retrieval.learned.judge.features import GATE_NAMES  # noqa: E402
from retrieval.offline import training as T  # noqa: E402


@pytest.fixture(scope="module")
def bench_and_model(tmp_path_factory):
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    folder = tmp_path_factory.mktemp("judge-stage")
    corpus, qpath = write_synthetic(folder)
    model_dir = folder / "model"
    settings = Settings(chroma_path=folder / "chroma", judge_path=model_dir, min_similarity=-1.0, _env_file=None)
    bench = Workbench(settings, embedder=HashEmbedder(), progress=False)
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
    from retrieval.explain.tables import feature_contribution_rows

    item = {"feature_contributions": {"cov_parent": 0.5, "dense_gap": -0.8, "bm25_norm": 0.1, "bias": -2.0}}
    rows = feature_contribution_rows(item["feature_contributions"], 2)
    assert [(r["feature"], r["contribution"]) for r in rows] == [("dense_gap", -0.8), ("cov_parent", 0.5)]
    assert rows[1]["meaning"].startswith("IDF-weighted coverage")


def test_support_threshold_setting_takes_effect_or_is_refused(bench_and_model):
    from retrieval.core.errors import InvalidSetting
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


def test_widening_past_the_window_reads_the_stored_vectors_of_lexical_only_finds():
    # c#0 is a lexical-only find beyond a window of 1: the window's input holds no vector for it, so a
    # widened run must read it from the store (cos 0.9), not leave the "unknown" 0.
    from dataclasses import replace as dc_replace

    import numpy as np
    from ..learned.judge.test_features import DOCS, QUESTION  # the hand-built three-chunk case

    from retrieval.backends.lexical import LexicalIndex
    from retrieval.core.filters import Filters
    from retrieval.core.types import Chunk, RankedList, ScoredItem
    from retrieval.learned.judge.features import JudgeInput, TextView, tenant_stats
    from retrieval.learned.reader.loader import ReaderStore
    from retrieval.stages.fusion import rrf
    from retrieval.stages.judge import JudgeRun

    chunks = [Chunk(f"{d.id}#0", d.id, 0, d.title, d.text, {}, d.id) for d in DOCS]
    lexical = LexicalIndex(chunks, "tenant")
    lex = lexical.search(QUESTION, Filters(()), 20)
    dense = RankedList("dense", "cosine", (ScoredItem("a#0", "a", 1, 0.8), ScoredItem("b#0", "b", 2, 0.6)))
    fused = rrf({"bm25": lex, "dense": dense}, 60)
    inp = JudgeInput(QUESTION, lex, dense, fused, np.array([1.0, 0.0]), {}, TextView.build(chunks, DOCS),
                     tenant_stats(lexical))
    c_rank = [i.chunk_id for i in fused.items].index("c#0")
    stored = {"c#0": np.array([0.9, np.sqrt(1 - 0.81)])}
    reader = ReaderStore(None).reader   # the process' weights, states in memory only
    run = JudgeRun.of(inp, c_rank, reader, fetch=lambda ids: {k: stored[k] for k in ids if k in stored})
    assert "c#0" not in run.index
    run.widen(["c#0"])
    assert run.rows.column("dense_cos")[run.index["c#0"]] == pytest.approx(0.9)
    assert -1.0 <= run.inp.reader["c#0"] <= 1.0 and run.inp.reader["c#0"] != 0.0   # scored by the reader handed in
    unfetched = JudgeRun.of(dc_replace(inp), c_rank, reader)  # no store: the cosine stays unknown (0)
    unfetched.widen(["c#0"])
    assert unfetched.rows.column("dense_cos")[unfetched.index["c#0"]] == 0.0

    # A store that fails the read: the guarded read says why, the rows stay as they were, and the support
    # decision is not made (its gate drops, saying why) rather than scoring an unknown cosine as 0.
    from types import SimpleNamespace

    from retrieval.stages.judge import support_decision

    def fails(ids):
        raise ConnectionError("store gone")

    broken = JudgeRun.of(dc_replace(inp), c_rank, reader, fetch=fails)
    assert broken.widen(["c#0"]).text() == "the judge's stored vectors unavailable: ConnectionError: store gone"
    assert "c#0" not in broken.index
    models = SimpleNamespace(threshold=0.5, support=SimpleNamespace(kind="logistic"))
    decision = support_decision(models, broken, [ScoredItem("c#0", "c", 1, 1.0)], QUESTION)
    assert decision["passes"] is None and decision["best"] is None
    assert decision["note"] == "not applied: the judge's stored vectors unavailable: ConnectionError: store gone"


def test_gate_features_of_chunks_beyond_the_window_read_their_stored_vectors(bench_and_model):
    # A rerank window of 2 with top_k 5: three selected chunks lie beyond the window. Their cosines come from
    # the store (as the gate's own cosine check reads them), not the 0 of "unknown".
    bench, corpus, _ = bench_and_model
    bench.load_corpus(corpus)
    s = bench.settings.with_overrides(reranker_model="none", reranker_max_input=2, top_k=5, min_similarity=-1.0,
                                      support_threshold=0.0)  # the gate passes: this test reads its features
    trace = bench.ask("Qual a garantia do aparelho alfa?", settings=s)
    support = trace.gate["support"]
    assert len(support["chunks"]) == len(trace.final) > 2
    best = max(f.similarity for f in trace.final if f.similarity is not None)
    assert support["features"]["g_cos_best"] == pytest.approx(best, abs=1e-4)


def test_without_the_reader_the_learned_stages_drop_with_its_reason(bench_and_model, monkeypatch):
    """The judge reads the reader's scores: a reader that cannot load drops the learned ranker and gate to
    rrf_only with the reason, and the request still answers."""
    bench, corpus, _ = bench_and_model
    bench.load_corpus(corpus)
    monkeypatch.setattr(bench.reader_store, "model",
                        lambda precision: (None, "reranker 'reader' could not load: OSError: damaged"))
    trace = bench.ask("Qual a garantia do aparelho alfa?", settings=bench.settings.with_overrides(reranker_model="ltr"))
    assert trace.tier == "rrf_only"
    assert "the judge reads the reader's scores, which are unavailable" in trace.tier_reason
    assert "damaged" in trace.tier_reason
    assert trace.reranked.items == () and trace.final  # answered from the fused list
