"""Abstention thresholds calibrated on a corpus' dev questions and adopted only where held-out says so, on a bench
whose requests abstain exactly as the pipeline's gates do (best final cosine below ``min_similarity``, or
P(support) below the support threshold)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from retrieval.core.split import split_of
from retrieval.core.types import Question
from retrieval.offline.evaluation.calibrate import calibrate_abstention
from retrieval.settings import Settings

MODEL_THRESHOLD = 0.2


@dataclass
class Bench:
    """``question text → (best cosine, P(support))``; asks abstain as the two gates would."""

    points: dict[str, tuple[float, float]]
    asked: list[tuple[str, float, float | None]] = field(default_factory=list)

    def ask(self, question, filters, settings):
        cos, p = self.points[question]
        threshold = MODEL_THRESHOLD if settings.support_threshold is None else settings.support_threshold
        self.asked.append((question, settings.min_similarity, settings.support_threshold))
        abstained = cos < settings.min_similarity or p < threshold
        final = [] if abstained else [SimpleNamespace(similarity=cos)]
        if settings.min_similarity <= -1.0:   # the open-gates request shows its chunks whatever the support
            final = [SimpleNamespace(similarity=cos)]
        return SimpleNamespace(final=final, gated=final, gate={"support": {"best": p, "threshold": MODEL_THRESHOLD}},
                               answer=SimpleNamespace(abstained=abstained))


def _questions(n: int, unanswerable_cos: float, answerable_cos: float = 0.90):
    qs, points = [], {}
    for i in range(n):
        answerable = i % 2 == 0
        text = f"pergunta {i}"
        qs.append(Question(f"q{i}", text, "g", ("doc",) if answerable else ()))
        points[text] = (answerable_cos if answerable else unanswerable_cos, 0.6)
    return qs, points


def test_a_cosine_gate_that_separates_the_corpus_is_chosen_on_dev_and_adopted_on_held_out() -> None:
    qs, points = _questions(60, unanswerable_cos=0.85)
    held = [q for q in qs if split_of(q.id) == "heldout"]
    unanswerable_held = sum(not q.relevant for q in held)
    result = calibrate_abstention(lambda s: Bench(points), Settings(_env_file=None), qs)
    assert 0.85 < result["cosine"]["chosen"] < 0.90 and result["cosine"]["current"] == 0.80
    assert result["support"]["current"] == MODEL_THRESHOLD
    dev = [q for q in qs if split_of(q.id) == "dev"]
    assert result["dev"]["current"] == round(sum(bool(q.relevant) for q in dev) / len(dev), 4)   # answers all
    assert result["dev"]["chosen"] == 1.0
    assert result["heldout"]["gained"] == unanswerable_held and result["heldout"]["lost"] == 0
    assert result["heldout"]["p_value"] == pytest.approx(2 * 0.5 ** unanswerable_held, abs=1e-4)
    assert result["recommended"] and result["overrides"]["min_similarity"] == result["cosine"]["chosen"]
    assert result["why"].startswith(f"held-out abstention accuracy +{unanswerable_held} questions")


def test_thresholds_that_cannot_separate_are_kept_and_a_set_without_unanswerable_questions_is_refused() -> None:
    qs, points = _questions(60, unanswerable_cos=0.90)    # nothing tells the two kinds apart
    dev = [q for q in qs if split_of(q.id) == "dev"]
    assert sum(not q.relevant for q in dev) > sum(bool(q.relevant) for q in dev)   # dev: abstaining on all wins
    result = calibrate_abstention(lambda s: Bench(points), Settings(_env_file=None), qs)
    assert result["cosine"]["chosen"] > 0.90   # dev's choice: abstain on everything …
    held = result["heldout"]                   # … which held-out refuses
    assert held["gained"] < held["lost"] and not result["recommended"] and result["overrides"] == {}
    assert result["why"] == (f"current thresholds kept: held-out abstention accuracy does not improve "
                             f"({held['gained']} questions gained, {held['lost']} lost)")
    same = {text: (0.90, 0.6) if int(text.split()[-1]) % 2 == 0 else (0.5, 0.6) for text in points}
    kept = calibrate_abstention(lambda s: Bench(same), Settings(_env_file=None).with_overrides(min_similarity=0.7),
                                qs)   # the current gate already separates them: nothing moves
    assert kept["why"] == "the current thresholds were the best on dev: nothing to confirm on held-out"
    answerable = [q for q in qs if q.relevant]
    with pytest.raises(ValueError, match="needs answerable and unanswerable questions"):
        calibrate_abstention(lambda s: Bench(points), Settings(_env_file=None), answerable)


def test_adopted_thresholds_are_stored_read_back_and_named_in_the_trace_note(tmp_path) -> None:
    from retrieval.offline import tuned
    from retrieval.offline.tune import adoptable, adoption_record

    base = Settings(_env_file=None, chroma_path=tmp_path / "chroma")
    record = {"recommended": False, "overrides": {}, "comparison": None, "metric": "ndcg@10",
              "questions": {"all": 60, "dev": 42, "heldout": 18}, "search": {"evaluated": 3},
              "abstention": {"recommended": True, "overrides": {"min_similarity": 0.875, "support_threshold": 0.2},
                             "heldout": {"questions": 18, "gained": 9, "lost": 0, "p_value": 0.0039,
                                         "current": 0.5, "chosen": 1.0},
                             "dev": {"questions": 42, "current": 0.5, "chosen": 1.0}}}
    assert adoptable(record)
    stored = adoption_record(record)
    assert stored["overrides"] == {"min_similarity": 0.875, "support_threshold": 0.2} and "heldout" not in stored
    tuned.adopt(base, tmp_path / "c.jsonl", stored)
    adopted = tuned.load_adopted(base, tmp_path / "c.jsonl")
    assert adopted is not None and adopted.heldout_delta is None and adopted.abstention_gain == 9
    assert adopted.note() == ("tuned for this corpus on 60 questions, held-out abstention +9 questions (p=0.0039): "
                              "min_similarity=0.875, support_threshold=0.2")
    request, note = tuned.apply_adopted(base, base, adopted)
    assert (request.min_similarity, request.support_threshold) == (0.875, 0.2) and note == adopted.note()
    assert not adoptable({**record, "abstention": {**record["abstention"], "recommended": False}})
