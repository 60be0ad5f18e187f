"""The Team judging page under AppTest: one question and one candidate at a time, each grade saved with its rater
and note, two raters' kappa and the queue of the candidates they graded differently; in both languages."""

from __future__ import annotations

from pathlib import Path

from helpers.apptest import assert_ok
from streamlit.testing.v1 import AppTest

from retrieval.offline.raters import load_ratings

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "3_Judging.py")


def judge(tmp_path: Path, rater: str, grades: list[int], lang: str = "en") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params["lang"] = lang
    at.run()
    at.text_input(key="jd_rater").set_value(rater)
    at.text_input(key="jd_ratings").set_value(str(tmp_path / "ratings.jsonl")).run()
    assert_ok(at)
    for grade in grades:
        radio = next(r for r in at.radio if r.key and r.key.startswith("jd_grade_"))
        radio.set_value(grade)
        note = next(a for a in at.text_area if a.key and a.key.startswith("jd_note_"))
        note.set_value(f"{rater} deu {grade}")
        at.run()  # the button is enabled once a grade is chosen
        next(b for b in at.button if b.label in ("Save and next", "Salvar e seguir")).click().run()
        assert_ok(at)
    return at


def test_two_raters_grade_one_candidate_at_a_time_and_see_their_agreement(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RETRIEVAL_WRITE_ROOTS", str(tmp_path))
    at = judge(tmp_path, "ana", [3, 0, 1])
    assert any(p.proto.text.startswith("Question 1 of ") and "candidate 4 of" in p.proto.text for p in at.get("progress"))
    saved = load_ratings(tmp_path / "ratings.jsonl")
    assert [(r.rater, r.grade, r.note) for r in saved] == [("ana", 3, "ana deu 3"), ("ana", 0, "ana deu 0"),
                                                            ("ana", 1, "ana deu 1")]
    assert any(c.value.startswith("1 rater, 3 grades. ") for c in at.caption)  # one rater: no plural
    assert len({r.parent for r in saved}) == 3 and len({r.qid for r in saved}) == 1
    at = judge(tmp_path, "bruno", [3, 1, 1], lang="pt")
    assert at.title[0].value == "Julgamento em equipe"
    kappas = [f.value for f in at.dataframe if "kappa" in f.value.columns]
    assert len(kappas) == 1 and list(kappas[0]["pairs"]) == [3]
    # ana 3 0 1, bruno 3 1 1: observed 2/3; chance (1/3·1/3 + 1/3·0 + 1/3·2/3) = 1/3; κ = (2/3 − 1/3) / (2/3)
    assert abs(kappas[0]["kappa"][0] - 0.5) < 1e-4
    queue = [f.value for f in at.dataframe if "spread" in f.value.columns]
    assert len(queue) == 1 and len(queue[0]) == 1 and queue[0]["grades"][0] == "ana 0, bruno 1"
    assert "bruno: bruno deu 1" in queue[0]["notes"][0]


def test_the_candidates_come_from_the_corpus_chosen_and_a_question_it_cannot_ask_is_one_line(tmp_path,
                                                                                             monkeypatch) -> None:
    """A folder corpus of the user's (inside the data roots) with its own questions: the candidate shown is one
    of its documents; a question without a tenant on the multi-tenant lab corpus is refused in one line, and
    the next question can still be judged."""
    import json

    folder = tmp_path / "leis"
    folder.mkdir()
    (folder / "zona-azul.md").write_text("---\ntitle: Zona Azul\n---\nO estacionamento na Zona Azul vale por até "
                                         "2 (duas) horas.\n", encoding="utf-8")
    (folder / "iss.md").write_text("---\ntitle: ISS\n---\nA alíquota do ISS é de 5% sobre o serviço.\n",
                                   encoding="utf-8")
    questions = tmp_path / "perguntas.jsonl"
    questions.write_text(json.dumps({"id": "z1", "question": "Quanto tempo vale a Zona Azul?",
                                     "relevant": ["zona-azul"]}, ensure_ascii=False) + "\n", encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))
    monkeypatch.setenv("RETRIEVAL_WRITE_ROOTS", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.run()
    at.text_input(key="jd_rater").set_value("ana")
    at.text_input(key="jd_ratings").set_value(str(tmp_path / "ratings.jsonl"))
    at.text_input(key="jd_corpus").set_value(str(folder))
    at.text_input(key="jd_questions").set_value(str(questions)).run()
    assert_ok(at)
    shown = " ".join(m.value for m in at.markdown)
    assert "zona-azul" in shown and "Quanto tempo vale a Zona Azul?" in shown, shown[-2000:]

    lab_questions = tmp_path / "sem-inquilino.jsonl"
    lab_questions.write_text(json.dumps({"id": "t1", "question": "Quanto tempo leva a ativação do PX-17?",
                                         "relevant": ["lumen-px17-ativacao"]}) + "\n", encoding="utf-8")
    at.text_input(key="jd_corpus").set_value("")
    at.text_input(key="jd_questions").set_value(str(lab_questions)).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("This question cannot be pooled on this corpus: "), errors
    assert "tenant" in errors[0] and "\n" not in errors[0]


def test_the_page_counts_the_corpus_labels_and_says_what_the_last_ranker_training_gained(tmp_path, monkeypatch) -> None:
    """The lab set's 44 questions (33 answerable, 50 judged pairs) and a rater's grades of new pairs count as labels; the last training's held-out figures and its state are shown once a training is recorded."""
    import json

    from retrieval.core.paths import LAB_CORPUS
    from retrieval.offline import learn
    from retrieval.serving import roots
    from retrieval.settings import load_settings

    monkeypatch.setenv("RETRIEVAL_WRITE_ROOTS", str(tmp_path))
    monkeypatch.setattr(roots, "DEFAULT_JUDGMENTS", tmp_path / "none.jsonl")
    root = learn.ranker_root(load_settings(), LAB_CORPUS)
    (root / learn.LAST).unlink(missing_ok=True)
    at = judge(tmp_path, "ana", [3, 0])  # lab-001's relevant parent (judged in the set too), then a new parent
    labels = next(c.value for c in at.caption if c.value.startswith("Labels for a learned ranker"))
    # the question set's 50 judged pairs and the new one; the relevant parent's grade 3 is the set's own
    assert "44 questions, 33 answerable, 51 judged pairs; 24 in the training part" in labels
    assert any(c.value == "No ranker has been learned from this corpus' labels yet." for c in at.caption)

    root.mkdir(parents=True, exist_ok=True)
    (root / learn.LAST).write_text(json.dumps({
        "trained_at": "20261206T150000Z", "folder": str(root / "x"), "labels": {"train": 24}, "recommended": False,
        "heldout": {"default": {"ndcg@10": 0.932}, "learned": {"ndcg@10": 0.867}},
        "comparison": {"delta": -0.065, "p_value": 0.1282}}), encoding="utf-8")
    try:
        at.run()
        assert ("Last training (20261206T150000Z, 24 questions): held-out nDCG@10 0.932 → 0.867 (-0.0650, "
                "p=0.1282); not recommended: the default is kept.") in [c.value for c in at.caption]
    finally:
        (root / learn.LAST).unlink()
