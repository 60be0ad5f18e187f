"""The Team judging page under AppTest: one question and one candidate at a time, each grade saved with its rater
and note, two raters' kappa and the queue of the candidates they graded differently; in both languages."""

from __future__ import annotations

from pathlib import Path

from _apptest import assert_ok
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
