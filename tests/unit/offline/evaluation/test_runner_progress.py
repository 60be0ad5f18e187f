"""The Evaluation page's progress line: where a question-major run stands (it once read "question -46/44")."""

from __future__ import annotations

from retrieval.offline.evaluation.runner import evaluate_configs, progress_position
from ui.i18n import t


def test_question_major_counts_give_the_question_and_the_configuration() -> None:
    names = ["dense", "hybrid"]
    # 44 questions × 2 configurations, question-major: dense q1, hybrid q1, dense q2, …
    assert progress_position(1, 88, "dense", names) == {"number": 1, "n": 2, "q": 1, "per": 44, "done": 1,
                                                         "total": 88}
    assert progress_position(2, 88, "hybrid", names)["q"] == 1
    assert progress_position(3, 88, "dense", names)["q"] == 2
    at = progress_position(48, 88, "hybrid", names)  # the page used to write "question -20/44" here
    assert (at["number"], at["q"]) == (2, 24)
    assert progress_position(88, 88, "hybrid", names) == {"number": 2, "n": 2, "q": 44, "per": 44, "done": 88,
                                                          "total": 88}


def test_every_count_stays_in_its_range() -> None:
    names = ["dense", "hybrid", "hybrid+ltr"]
    for done in range(-5, 140):
        for name in names + ["unknown"]:
            at = progress_position(done, 132, name, names)
            assert 0 <= at["done"] <= at["total"] == 132
            assert 0 <= at["q"] <= at["per"] == 44
            assert 0 <= at["number"] <= at["n"] == 3
            assert (at["q"] == 0) == (at["done"] == 0)
    assert progress_position(5, 0, "dense", names)["done"] == 0
    assert progress_position(3, 3, "x", [])["per"] == 3  # no names: one configuration


def test_the_line_of_a_real_run_moves_forward_and_stays_in_range() -> None:
    """Every call of a real run (the fake workbench of test_evaluation_reading), read as the page reads it."""
    from helpers.runner import FakeBench, Q

    from retrieval.offline.evaluation import Config
    from retrieval.settings import Settings

    bench, calls = FakeBench(), []
    configs = [Config("base", {"dedup": "chunk"}), Config("other", {"dedup": "chunk", "top_k": 3}),
               Config("third", {"top_k": 2})]
    questions = [Q(f"q{i}", ["a1"], {"tenant": "lumen"}) for i in range(5)]
    evaluate_configs(lambda s: bench, Settings(_env_file=None), questions, configs, ks=(1, 3), share_lists=False,
                     progress=lambda done, total, name: calls.append((done, total, name)))
    names = [c.name for c in configs]
    seen = [progress_position(done, total, name, names) for done, total, name in calls]
    assert len(seen) == 15 and seen[-1]["done"] == seen[-1]["total"] == 15
    assert [(a["q"], a["number"]) for a in seen[:4]] == [(1, 1), (1, 2), (1, 3), (2, 1)]
    assert [a["q"] for a in seen] == sorted(a["q"] for a in seen) and seen[-1]["q"] == seen[-1]["per"] == 5
    line = t("ev_progress", "en", name=calls[4][2], **seen[4])
    assert line == "configuration 2/3 `other` · question 2/5 · 5/15 requests"
    assert "-" not in t("ev_progress", "pt", name="base", **progress_position(-3, 15, "base", names))
