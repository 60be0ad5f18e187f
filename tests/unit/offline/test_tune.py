"""The tuner (retrieval/evaluation/tune.py) and the per-corpus default (retrieval/tuned.py), on a tiny synthetic
corpus with a fake embedder: a setting that clearly wins is found on dev, confirmed on held-out and adopted; a
corpus where nothing wins keeps the default; the budget stops the search; the adopted configuration is read by
the next request and removed by the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from retrieval.core.split import split_of
from retrieval.offline.tune import Step, decide, markdown, tune, write_outputs

N = 36  # pairs: 36 questions, of which 11 fall in the fixed held-out split
WEIGHTED = {"fusion": "weighted_rrf", "fusion_weights": "bm25=1.0,dense=0.5"}
STEPS = [Step("fusion", (WEIGHTED, {"fusion": "convex", "fusion_weights": "bm25=0.3"})),
         Step("rrf_k", ({"rrf_k": 30},))]


def _embedder(decoy_weight: float):
    """Passages: one axis per document (``decoy`` in the title → the pair's first axis). Questions ``alphaN
    betaN``: ``decoy_weight`` on the decoy's axis, 1 − that on the right document's (a small constant
    everywhere, so no vector is zero)."""
    from retrieval.backends.embedders import FunctionEmbedder

    def number(text: str) -> int | None:
        found = re.search(r"alpha(\d+)", text)
        return int(found.group(1)) if found else None

    def passages(texts: list[str]) -> np.ndarray:
        out = np.full((len(texts), 2 * N), 1e-3)
        for row, text in enumerate(texts):
            i = number(text)
            out[row, 2 * i + (0 if "decoy" in text.lower() else 1)] = 1.0
        return out

    def queries(texts: list[str]) -> np.ndarray:
        out = np.full((len(texts), 2 * N), 1e-3)
        for row, text in enumerate(texts):
            i = number(text)
            if i is not None:
                out[row, 2 * i], out[row, 2 * i + 1] = decoy_weight, 1.0 - decoy_weight
        return out

    return FunctionEmbedder(f"pairs-{decoy_weight}", queries, passages)


def _write(folder: Path) -> tuple[Path, Path]:
    """Pairs of documents: ``aNN`` (a decoy: shares one word with question NN) and ``bNN`` (the relevant one:
    shares both). BM25 ranks the right one first; the fake dense side ranks the decoy first."""
    docs, questions = [], []
    for i in range(N):
        docs.append({"id": f"a{i:02d}", "title": f"Decoy {i}", "text": f"alpha{i} gamma delta epsilon"})
        docs.append({"id": f"b{i:02d}", "title": f"Right {i}", "text": f"alpha{i} beta{i} zeta eta"})
        questions.append({"id": f"q{i:02d}", "question": f"alpha{i} beta{i}", "group": "pairs",
                          "relevant": [f"b{i:02d}"]})
    corpus, qpath = folder / "corpus.jsonl", folder / "questions.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    qpath.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    return corpus, qpath


def _base(folder: Path):
    from retrieval.settings import Settings

    return Settings(_env_file=None, chroma_path=folder / "chroma", reranker_model="none", support_gate=False,
                    evidence_model=False, min_similarity=-1.0, require_codes=False)


def _factory(corpus: Path, embedder):
    from retrieval.pipeline.workbench import Workbench

    cache = {}

    def open_bench(settings):
        key = settings.index_key()
        if key not in cache:
            bench = Workbench(settings, embedder=embedder, progress=False)
            bench.load_corpus(corpus)
            cache[key] = bench
        return cache[key]

    return open_bench


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    from retrieval.ingest.corpus import load_questions

    folder = tmp_path_factory.mktemp("tune")
    corpus, qpath = _write(folder)
    questions = load_questions(qpath)
    assert sum(split_of(q.id) == "heldout" for q in questions) == 11
    return folder, corpus, questions


def test_a_clear_winner_is_found_on_dev_confirmed_on_heldout_and_adopted(pairs, tmp_path, monkeypatch):
    from retrieval.offline import tuned
    from retrieval.offline.tune import adoption_record

    folder, corpus, questions = pairs
    base = _base(folder)
    open_bench = _factory(corpus, _embedder(0.7))
    record = tune(open_bench, base, questions, budget_s=600, steps=STEPS)
    search = record["search"]
    assert [c["name"] for c in search["candidates"]] == [
        "default", "fusion=weighted_rrf, fusion_weights=bm25=1.0,dense=0.5", "fusion=convex, fusion_weights=bm25=0.3",
        "fusion=weighted_rrf, fusion_weights=bm25=1.0,dense=0.5, rrf_k=30"]  # rrf_k tried from the fusion's winner
    dev = {c["name"]: c["dev"]["ndcg@10"] for c in search["candidates"]}
    assert dev["default"] == pytest.approx(1 / np.log2(3), abs=1e-4)  # the decoy wins RRF's tie: the right one at rank 2
    assert record["best"]["overrides"] == WEIGHTED  # rrf_k=30 ties it (1.0): the first found is kept
    assert record["questions"] == {"dev": 25, "heldout": 11, "all": 36}
    held = record["heldout"]["configs"]
    assert held["default"]["overall"]["ndcg@10"] == pytest.approx(1 / np.log2(3), abs=1e-4)
    assert held["tuned"]["overall"]["ndcg@10"] == pytest.approx(1.0)
    assert record["comparison"]["p_value"] < 0.05 and not record["comparison"]["lost_relevant"]
    assert record["recommended"] and record["overrides"] == WEIGHTED
    written = write_outputs(record, tmp_path / "out", base, str(corpus), "questions.jsonl", None)
    assert {p.name for p in written} == {"tune.json", "overrides.json", "configs.json", "app-query.txt", "tune.md"}
    assert json.loads((tmp_path / "out" / "overrides.json").read_text()) == WEIGHTED
    report = (tmp_path / "out" / "tune.md").read_text()
    assert "**Recommended**" in report and "Held-out check" in report and "ms / request" in report
    assert "fusion=weighted_rrf" in (tmp_path / "out" / "app-query.txt").read_text()  # not in a link: said so

    # adopted beside the index, read by the next request, shown in its notes, removed by the command
    stored = tuned.adopt(base, corpus, adoption_record(record))
    assert stored.parent == (folder / "tuned").resolve()
    adopted = tuned.load_adopted(base, corpus)
    assert adopted.overrides == WEIGHTED and adopted.questions == 36
    request, note = tuned.apply_adopted(base, base, adopted)
    bench = open_bench(base)
    trace = tuned.trace_note(bench.ask("alpha3 beta3", settings=request), note)
    assert trace.settings["fusion"] == "weighted_rrf" and trace.selected[0].parent_id == "b03"
    assert any(n["stage"] == "settings" and n["note"].startswith("tuned for this corpus on 36 questions, held-out "
                                                                 "ndcg@10 +") for n in trace.notes)
    chosen, note = tuned.apply_adopted(base.with_overrides(fusion="combsum"), base, adopted)
    assert chosen.fusion == "combsum" and "own fusion kept" in note  # a request's own choice wins

    from typer.testing import CliRunner

    from retrieval.cli import app

    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", str(folder / "chroma"))
    for key in ("RETRIEVAL_RERANKER_MODEL",):
        monkeypatch.delenv(key, raising=False)
    result = CliRunner().invoke(app, ["tune", "--remove", "--corpus", str(corpus)])
    assert result.exit_code == 0, result.output
    assert "removed" in result.output and not stored.exists()
    assert tuned.load_adopted(base, corpus) is None
    assert "no tuned configuration" in CliRunner().invoke(app, ["tune", "--remove", "--corpus", str(corpus)]).output


def test_nothing_wins_the_default_is_kept_and_the_report_says_why(pairs, tmp_path):
    folder, corpus, questions = pairs
    base = _base(folder)
    record = tune(_factory(corpus, _embedder(0.3)), base, questions, budget_s=600, steps=STEPS)
    assert {c["dev"]["ndcg@10"] for c in record["search"]["candidates"]} == {1.0}  # both sides agree: a tie
    assert record["best"]["name"] == "default" and record["heldout"] is None
    assert not record["recommended"] and record["overrides"] == {}
    assert "default was the best configuration on dev" in record["why"]
    assert "**Default kept**" in markdown(record, str(corpus), "questions.jsonl")


def test_the_budget_stops_the_search(pairs):
    folder, corpus, questions = pairs
    ticks = iter(range(0, 10_000, 100))  # every reading of the clock: 100 s later
    record = tune(_factory(corpus, _embedder(0.3)), _base(folder), questions, budget_s=50, steps=STEPS,
                  clock=lambda: float(next(ticks)))
    search = record["search"]
    assert search["evaluated"] == 1 and search["stopped_by_budget"]  # the default always runs, then nothing
    assert search["not_run_budget"] == ["fusion: fusion=weighted_rrf, fusion_weights=bm25=1.0,dense=0.5",
                                        "fusion: fusion=convex, fusion_weights=bm25=0.3", "rrf_k: rrf_k=30"]
    text = markdown(record, str(corpus), "questions.jsonl")
    assert "stopped by the budget" in text and "Left out by the budget (3)" in text
    # A search the budget cut short concludes nothing, and says what the whole search would need: the
    # default's 100 s, then 3 candidates at 100 s less what they share (the fake clock shares nothing).
    assert not record["recommended"] and record["overrides"] == {} and record["heldout"] is None
    assert search["estimate_s"] == pytest.approx(400.0, abs=1.0)
    assert record["why"] == ("default kept: the budget of 50 s covered 1 of 4 candidates; the whole search needs "
                             "about 400 s")
    assert "the default was the best" not in text
    from ui.evaluation.tune import decision_sentence

    assert decision_sentence(record, "en") == ("Nothing recommended: the budget of 50 s covered 1 of 4 candidates; "
                                               "the whole search needs about 400 s. Raise the budget and run it "
                                               "again.")


def test_a_template_whose_index_must_be_embedded_is_estimated_with_it_and_left_out_when_it_does_not_fit(pairs):
    """The passage template's candidate needs its corpus embedded again: the whole search's estimate counts
    that, and with too little budget left it alone is left out, saying why, while the others still run."""
    from retrieval.offline import tune as tuning

    folder, corpus, questions = pairs
    open_bench = _factory(corpus, _embedder(0.3))
    base = _base(folder)
    cost = tuning.embedding_seconds(open_bench, base, clock=iter(float(x) for x in range(0, 100, 1)).__next__)
    chunks = len(open_bench(base).state.chunks)
    assert cost(base) == 0.0                                        # the default's vectors are stored
    assert cost(base.with_overrides(passage_template="text")) == pytest.approx(chunks / 16, abs=0.1)  # 1 s/16

    ticks = iter(range(0, 10_000, 10))
    steps = [Step("passage_template", ({"passage_template": "text"},)), Step("rrf_k", ({"rrf_k": 30},))]
    found = tuning.search(open_bench, base, questions, budget_s=100, steps=steps, clock=lambda: float(next(ticks)),
                          embed_s=lambda s: 500.0 if s.passage_template == "text" else 0.0)
    assert [c["name"] for c in found.candidates] == ["default", "rrf_k=30"]
    assert found.not_run == ["passage_template: passage_template=text (its index must be embedded first, about "
                             "500 s: more than the budget leaves)"]
    assert not found.stopped_by_budget
    # the default's 10 s (two clock readings), then two candidates at 10 s each, plus 500 s of embedding
    assert found.estimate_s == pytest.approx(10 + 2 * 10 + 500, abs=1.0)


def _row(delta, p, lost=()):
    return {"metric": "ndcg@10", "delta": delta, "p_value": p, "lost_relevant": [{"id": i} for i in lost]}


def test_decision_needs_a_significant_heldout_gain_and_no_lost_document():
    assert decide(_row(0.04, 0.01)) == (True, "held-out ndcg@10 +0.0400 (p=0.0100), no relevant document lost")
    ok, why = decide(_row(0.04, 0.2))
    assert not ok and "not significant (p=0.2000; needs p < 0.05)" in why
    ok, why = decide(_row(0.04, 0.01, lost=["q7"]))
    assert not ok and "loses a relevant document the default had in its top 10 in 1 held-out question (q7)" in why
    ok, why = decide(_row(-0.01, 0.5, lost=["q1", "q2"]))
    assert not ok and "does not improve (-0.0100)" in why and "2 held-out questions" in why
    assert decide(None)[0] is False


def test_cli_commands_read_the_adopted_default_under_their_own_set(tmp_path, monkeypatch):
    from retrieval.cli.common import adopted
    from retrieval.offline import tuned
    from retrieval.settings import Settings

    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", str(tmp_path / "chroma"))
    corpus = tmp_path / "c.jsonl"
    base = Settings(_env_file=None)
    assert adopted(base, corpus) == (base, None)  # nothing stored: unchanged, no note
    tuned.adopt(base, corpus, {"overrides": {"rrf_k": 30, "overfetch": 8}, "questions": 50,
                               "heldout": {"metric": "ndcg@10", "delta": 0.02, "p_value": 0.03}})
    settings, note = adopted(base.with_overrides(overfetch=2), corpus)  # as after --set overfetch=2
    assert (settings.rrf_k, settings.overfetch) == (30, 2)
    assert note.startswith("tuned for this corpus on 50 questions, held-out ndcg@10 +0.020 (p=0.0300)")
    assert "own overfetch kept" in note
    other = Settings(_env_file=None, embedding_model="minilm")  # another index of the corpus: its own key
    assert tuned.load_adopted(other, corpus) is None
    tuned.tuned_path(base, corpus).write_text("{not json", encoding="utf-8")
    assert tuned.load_adopted(base, corpus) is None  # damaged: ignored (one log line), never a refusal
    assert adopted(base, corpus) == (base, None)


def test_a_damaged_tuned_file_is_ignored_with_one_log_line(tmp_path, monkeypatch, caplog):
    """A file cut short by a crash, edited by hand or naming settings that are no longer valid: the request
    runs on the base settings, and the log says so once per version of the file."""
    import logging
    import os
    import time

    from retrieval.offline import tuned
    from retrieval.settings import Settings

    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", str(tmp_path / "chroma"))
    corpus = tmp_path / "c.jsonl"
    base = Settings(_env_file=None)
    record = {"overrides": {"rrf_k": 30}, "questions": 50, "heldout": {"metric": "ndcg@10", "delta": 0.02}}
    path = tuned.adopt(base, corpus, record)
    assert tuned.load_adopted(base, corpus).overrides == {"rrf_k": 30}
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    for damaged in (path.read_text(encoding="utf-8")[:25], '{"overrides": {"rrf_k": -5}, "questions": 1}',
                    '{"overrides": {"no_such": 1}, "questions": 1, "heldout": {"delta": 0}}', "[]", "\x00\xff"):
        path.write_text(damaged, encoding="utf-8", errors="surrogateescape")
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="retrieval.offline.tuned"):
            assert tuned.load_adopted(base, corpus) is None
            assert tuned.load_adopted(base, corpus) is None  # the same file again: no second line
        lines = [r.getMessage() for r in caplog.records]
        assert len(lines) == 1 and "damaged and ignored" in lines[0] and "tune --remove" in lines[0], lines
        assert "\n" not in lines[0]
        time.sleep(0.01)  # the next version of the file gets its own line
    # orphans of interrupted saves: an old one is removed, a young one (a save in progress) kept
    old, young = path.parent / ".tuned-abc.tmp", path.parent / ".tuned-def.tmp"
    old.write_text("{", encoding="utf-8")
    young.write_text("{", encoding="utf-8")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    tuned.adopt(base, corpus, record)
    assert not old.exists() and young.exists()
    assert tuned.load_adopted(base, corpus).overrides == {"rrf_k": 30}


def test_app_query_carries_what_a_link_can():
    from retrieval.offline.tune import app_query
    from retrieval.settings import Settings

    query, outside = app_query({"rrf_k": 30, "reranker_model": "none", "fusion": "convex",
                                "fusion_weights": "bm25=0.7"}, Settings(_env_file=None), "data/x.jsonl")
    assert query == "corpus=data%2Fx.jsonl&rrf_k=30&reranker=none"
    assert outside == ["fusion=convex", "fusion_weights=bm25=0.7"]


def test_a_set_with_too_few_answerable_dev_questions_is_refused_in_one_line(pairs):
    from retrieval.offline.tune import MIN_DEV_QUESTIONS, search

    folder, corpus, questions = pairs
    few = [q for q in questions if split_of(q.id) == "dev"][: MIN_DEV_QUESTIONS - 1]
    with pytest.raises(ValueError) as refused:
        search(_factory(corpus, _embedder(0.3)), _base(folder), few, budget_s=60, steps=STEPS)
    assert str(refused.value) == ("tuning needs at least 5 answerable questions in the dev split; this set has 4 (of "
                                  "4 questions, about 70 % fall in dev): a search on so few would choose by chance")
