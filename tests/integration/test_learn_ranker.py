"""A ranker learned from the lab set's labels (retrieval/offline/learn.py) on the real pipeline: it traces only the
training part, keeps the shipped support gate and evidence model byte for byte, records its held-out check, and
loads as ``reranker_model=ltr:<folder>``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS
from retrieval.core.split import split_of
from retrieval.offline import learn
from retrieval.offline.tune import decide


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_lab_labels_train_a_ranker_beside_the_shipped_gate_and_check_it_on_held_out(lab_bench, settings,
                                                                                        monkeypatch) -> None:
    traced = []
    original = learn.collect

    def spy(bench, questions, *args, **kwargs):
        traced.extend(q.id for q in questions)
        return original(bench, questions, *args, **kwargs)

    monkeypatch.setattr(learn, "collect", spy)
    labels = learn.read_label_files([LAB_QUESTIONS])
    record = learn.learn_ranker(lambda corpus, s: lab_bench, settings, LAB_CORPUS, labels, warm=False)

    assert len(traced) == record["cases"] == record["labels"]["train"] == 24
    assert not [q for q in traced if split_of(q) == "heldout"]
    assert record["shipped"] == []  # the shipped set is this corpus: read once, as its labels
    folder = Path(record["folder"])
    shipped = Path(settings.judge_path)
    for role in ("support", "evidence"):
        (mine,) = [p for p in folder.iterdir() if p.stem == role]
        assert _sha(mine) == _sha(shipped / mine.name)
    assert _sha(folder / "reranker.txt") != _sha(shipped / "reranker.txt")
    held = record["heldout"]
    assert held["default"]["questions"] == held["learned"]["questions"] == 10
    assert (record["recommended"], record["why"]) == decide({**record["comparison"], "metric": "ndcg@10"})
    assert "24 answerable questions of the training part" in (folder / "model_card.md").read_text(encoding="utf-8")
    assert learn.last_training(settings, LAB_CORPUS)["folder"] == str(folder)
    trace = lab_bench.ask("Qual o prazo de ativação do PX-17?", {"tenant": "lumen"},
                          settings=settings.with_overrides(reranker_model=f"ltr:{folder}"))
    assert trace.tier == "full" and trace.reranked is not None and trace.reranked.items
