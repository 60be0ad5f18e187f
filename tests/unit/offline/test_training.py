"""Judge training on a synthetic corpus with a stand-in embedder (figures mean nothing; the code paths are
real): leave-the-evidence-out never leaks, the split is by parent, a seeded run is reproducible."""

from __future__ import annotations

import pytest

import lightgbm  # noqa: E402,F401 - pinned: a missing package fails here, it never skips

from helpers.fakes import HashEmbedder  # noqa: E402
from helpers.judge import write_synthetic  # noqa: E402

from retrieval.ingest.corpus import load_questions  # noqa: E402
from retrieval.core.types import RankedList, ScoredItem  # noqa: E402
from retrieval.offline import training as T  # noqa: E402


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    folder = tmp_path_factory.mktemp("judge")
    corpus, qpath = write_synthetic(folder)
    settings = Settings(chroma_path=folder / "chroma", _env_file=None)
    bench = Workbench(settings, embedder=HashEmbedder(), progress=False)
    bench.load_corpus(corpus)
    questions = load_questions(qpath)
    # Every question trains (a synthetic split), so the reproducibility check has data in both folds.
    splits = {q.id: "train" for q in questions}
    return questions, T.collect(bench, questions, "synthetic", splits)


def test_leave_evidence_out_by_hand():
    lst = RankedList("lexical", "bm25", (ScoredItem("a#0", "a", 1, 3.0, terms={"x": 3.0}),
                                         ScoredItem("b#0", "b", 2, 2.0, terms={"x": 2.0}),
                                         ScoredItem("a#1", "a", 3, 1.0, terms={"x": 1.0}),
                                         ScoredItem("c#0", "c", 4, 0.5, terms={"x": 0.5})))
    out = T.leave_evidence_out({"bm25": lst}, ["a"], 1)["bm25"]
    assert [(i.chunk_id, i.rank, i.score) for i in out.items] == [("b#0", 1, 2.0)]


def test_leave_evidence_out_never_leaks_into_lists_or_rows(traced):
    questions, cases = traced
    leave_out = [c for c in cases if c.kind == "leave_out"]
    assert len(leave_out) == sum(1 for q in questions if q.relevant) == 24
    for c in leave_out:
        removed = set(c.question.relevant)
        for lst in (c.inp.lexical, c.inp.dense, c.inp.fused):
            assert not {i.parent_id for i in lst.items} & removed
        assert not set(c.rows.parent_ids) & removed
        assert not {cid.split("#")[0] for cid in c.inp.vectors} & removed
        assert c.support_labels.sum() == 0 and c.rank_labels.sum() == 0
    # The answerable twin of each case does hold its relevant parent (the removal is what made it unanswerable).
    answerable = {c.question.id: c for c in cases if c.kind == "answerable"}
    assert all(set(answerable[c.question.id].rows.parent_ids) & set(c.question.relevant) for c in leave_out)
    assert all(answerable[c.question.id].support_labels.sum() >= 1 for c in leave_out)


def test_split_is_by_parent():
    from retrieval.core.split import split_of
    from retrieval.core.types import Question

    qs = [Question(f"q{i}", "x", "g", (f"p{i % 7}",)) for i in range(60)]
    splits = T.assign_splits(qs)
    trained = {p for q in qs if splits[q.id] == "train" for p in q.relevant}
    held = {p for q in qs if splits[q.id] == "heldout" for p in q.relevant}
    assert not trained & held
    assert all((splits[q.id] == "heldout") == (split_of(q.id) == "heldout") for q in qs)


@pytest.mark.slow
def test_seeded_training_is_reproducible(traced):
    _, cases = traced
    a, info_a = T.fit(cases, seed=11)
    b, info_b = T.fit(cases, seed=11)
    assert a.reranker.booster.model_to_string() == b.reranker.booster.model_to_string()
    assert a.threshold == b.threshold and info_a["support_kind"] == info_b["support_kind"]
    assert info_a["calibration"] == info_b["calibration"]


def test_sentence_labels_by_hand():
    assert T.sentence_label("A bateria dura oito horas sem recarga.", ["dura oito horas"]) == 1
    assert T.sentence_label("Consulte o manual.", ["dura oito horas"]) == 0
    # A sentence that lies inside a longer span counts.
    assert T.sentence_label("Ela dura oito horas", ["a bateria ela dura oito horas sem recarga"]) == 1
