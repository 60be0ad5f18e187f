"""Judgments and ratings per tenant, in the served app: the attacker's cases under an access policy (Alice may
open ``lumen``, Bob ``ventura``; the identity from Streamlit's login, AppTest's ``user``).

Two teams' question sets (``team-a.jsonl``: Lumen's PX-7 question, ``team-b.jsonl``: Ventura's VT-3 question)
both number their question ``q1``; the judgments file and the ratings file are shared. On the Judge tab Bob's
``q1`` shows nothing of Alice's record and his save leaves it byte for byte; on the Team judging page Alice sees
only her tenant's raters, grades, notes and queue, and the consensus she downloads holds no Ventura question.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.apptest import APP, assert_ok, open_tab, rendered
from streamlit.testing.v1 import AppTest

from retrieval.offline import judgments
from retrieval.offline.raters import Rating, load_ratings, save_ratings

ROOT = Path(__file__).resolve().parents[2]
JUDGING = str(ROOT / "pages" / "3_Judging.py")
PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"
VT3 = "O que é o erro VT-3 que aparece na maquininha?"
POLICY = "users:\n  alice@example.com: [lumen]\n  bob@example.com: [ventura]\ndefault: []\n"


@pytest.fixture
def teams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The policy, two question sets that both number their question ``q1``, and a write root for the files."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    sets, out = tmp_path / "sets", tmp_path / "out"
    sets.mkdir(), out.mkdir()
    (sets / "team-a.jsonl").write_text(json.dumps({"id": "q1", "question": PX7, "relevant": ["lumen-px7-nao-ativado"],
                                                   "filters": {"tenant": "lumen"}}, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    (sets / "team-b.jsonl").write_text(json.dumps({"id": "q1", "question": VT3, "relevant": ["ventura-vt3"],
                                                   "filters": {"tenant": "ventura"}}, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_ACCESS_POLICY", str(policy))
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", os.pathsep.join([str(sets), str(ROOT / "data")]))
    monkeypatch.setenv("RETRIEVAL_WRITE_ROOTS", str(out))
    return {"a": sets / "team-a.jsonl", "b": sets / "team-b.jsonl", "out": out}


def signed_in(email: str, script: str = APP, **state: str) -> AppTest:
    at = AppTest.from_file(script, default_timeout=300)
    at.user = {"is_logged_in": True, "email": email}
    for key, value in state.items():
        at.session_state[key] = value
    return at


# -- the Judge tab ----------------------------------------------------------------------------------------------
def judge_tab(email: str, qset: Path, question: str, tenant: str, jfile: Path) -> AppTest:
    at = signed_in(email)
    at.query_params.update({"questions": str(qset), "q": question, "tenant": tenant, "judgments": str(jfile)})
    at = open_tab(at.run(), "tab_judge")
    assert_ok(at)
    return at


def grade_radios(at: AppTest) -> dict[str, object]:
    return {r.label[len("Grade · "):].strip("`"): r for r in at.radio if r.label.startswith("Grade · ")}


def test_a_ventura_q1_on_the_judge_tab_never_shows_or_changes_the_lumen_q1_record(teams) -> None:
    jfile = teams["out"] / "judgments.jsonl"
    alice = judge_tab("alice@example.com", teams["a"], PX7, "lumen", jfile)
    radios = grade_radios(alice)
    lumen_grades = dict(zip(list(radios)[:2], (3, 1)))
    for parent, grade in lumen_grades.items():
        radios[parent].set_value(grade)
    alice.run()
    alice.button(key="judge_save").click().run()
    assert_ok(alice)
    lumen_line = jfile.read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(lumen_line)["id"] == "q1" and json.loads(lumen_line)["graded"] == lumen_grades
    assert json.loads(lumen_line)["_key"] == {"set": judgments.set_name(teams["a"]), "id": "q1", "tenant": "lumen"}

    bob = judge_tab("bob@example.com", teams["b"], VT3, "ventura", jfile)
    radios = grade_radios(bob)
    assert all(r.value == "not judged" for r in radios.values())  # nothing of Lumen's q1 shown
    assert f"**Judged 0 of {len(radios)} pooled** · saved in the file: 0" in [m.value for m in bob.markdown]
    assert "lumen" not in rendered(bob)
    ventura_grades = dict(zip(list(radios)[:2], (2, 0)))
    for parent, grade in ventura_grades.items():
        radios[parent].set_value(grade)
    bob.run()
    bob.button(key="judge_save").click().run()
    assert_ok(bob)
    lines = jfile.read_text(encoding="utf-8").splitlines()
    assert lines[0] == lumen_line and len(lines) == 2  # Lumen's record byte for byte; Ventura's q1 stored apart
    ventura = json.loads(lines[1])
    assert ventura["question"] == VT3 and ventura["graded"] == ventura_grades and ventura["id"] != "q1"
    assert ventura["_key"] == {"set": judgments.set_name(teams["b"]), "id": "q1", "tenant": "ventura"}

    # a new session of each: each sees its own grades only
    again = {p: r.value for p, r in grade_radios(judge_tab("bob@example.com", teams["b"], VT3, "ventura",
                                                             jfile)).items()}
    assert {p: g for p, g in again.items() if g != "not judged"} == ventura_grades
    again = {p: r.value for p, r in grade_radios(judge_tab("alice@example.com", teams["a"], PX7, "lumen",
                                                             jfile)).items()}
    assert {p: g for p, g in again.items() if g != "not judged"} == lumen_grades


# -- the Team judging page --------------------------------------------------------------------------------------
def judging_page(email: str, qset: Path, ratings: Path) -> AppTest:
    at = signed_in(email, JUDGING, jd_questions=str(qset), jd_ratings=str(ratings)).run()
    assert_ok(at)
    return at


def rate(at: AppTest, grades: list[int], note: str) -> AppTest:
    for grade in grades:
        next(r for r in at.radio if r.key and r.key.startswith("jd_grade_")).set_value(grade)
        next(a for a in at.text_area if a.key and a.key.startswith("jd_note_")).set_value(f"{note} {grade}")
        at.run()
        next(b for b in at.button if b.label == "Save and next").click().run()
        assert_ok(at)
    return at


def test_the_judging_page_shows_only_the_users_tenant_and_the_download_holds_no_other(teams, monkeypatch) -> None:
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1 import app_test

    storages: list[MemoryMediaFileStorage] = []

    class Recording(MemoryMediaFileStorage):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            storages.append(self)

    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", Recording)
    path = teams["out"] / "ratings.jsonl"
    # Bob rates Ventura's q1 on the page; a second Ventura rater disagrees on the first candidate
    rate(judging_page("bob@example.com", teams["b"], path), [3, 0], "segredo da ventura")
    bob_lines = load_ratings(path)
    assert [(r.rater, r.qid, r.tenant, r.question_set) for r in bob_lines] == \
        [("bob@example.com", "q1", "ventura", judgments.set_name(teams["b"]))] * 2
    save_ratings(path, [Rating("q1", VT3, bob_lines[0].parent, 1, "vera@example.com", "nota confidencial vera",
                               {"tenant": "ventura"}, question_set=judgments.set_name(teams["b"]),
                               tenant="ventura")])
    # Alice rates Lumen's q1 (the same id); her first grade is of Lumen's own candidate, never Bob's grade
    alice = judging_page("alice@example.com", teams["a"], path)
    assert next(r for r in alice.radio if r.key and r.key.startswith("jd_grade_")).value is None
    assert any("0 of them graded by you" in p.proto.text for p in alice.get("progress"))
    rate(alice, [2, 1], "lumen diz")
    save_ratings(path, [Rating("q1", PX7, r.parent, 0, "lia@example.com", "lia discorda", {"tenant": "lumen"},
                               question_set=r.question_set, tenant="lumen")
                        for r in load_ratings(path) if r.rater == "alice@example.com"])
    alice = judging_page("alice@example.com", teams["a"], path)

    kappas = [f.value for f in alice.dataframe if "kappa" in f.value.columns]
    assert len(kappas) == 1 and list(kappas[0]["rater_a"]) == ["alice@example.com"]
    assert list(kappas[0]["rater_b"]) == ["lia@example.com"] and list(kappas[0]["pairs"]) == [2]
    queue = [f.value for f in alice.dataframe if "spread" in f.value.columns][0]
    assert list(queue["question"]) == ["q1", "q1"] and sorted(queue["spread"]) == [1, 2]
    assert all(set(g.split(", ")) <= {"alice@example.com 2", "alice@example.com 1", "lia@example.com 0"}
               for g in queue["grades"])
    assert sorted(queue["notes"]) == ["alice@example.com: lumen diz 1 · lia@example.com: lia discorda",
                                      "alice@example.com: lumen diz 2 · lia@example.com: lia discorda"]
    assert any(c.value.startswith("2 raters, 4 grades.") for c in alice.caption)
    page = rendered(alice)
    for needle in ("bob@example.com", "vera@example.com", "segredo", "confidencial", "vt-3", "ventura"):
        assert needle not in page, needle

    storage = storages[-1]
    button = next(b for b in alice.get("download_button") if b.proto.label.startswith("Consensus judgments"))
    download = storage.get_file(button.proto.url.rsplit("/", 1)[1]).content.decode("utf-8")
    records = [json.loads(line) for line in download.splitlines()]
    assert [(r["id"], r["question"], r["filters"]) for r in records] == [("q1", PX7, {"tenant": "lumen"})]
    assert records[0]["_key"] == {"set": judgments.set_name(teams["a"]), "id": "q1", "tenant": "lumen"}
    assert sorted(records[0]["raters"].values()) == [["alice@example.com", "lia@example.com"]] * 2
    assert "VT-3" not in download and "ventura" not in download.lower() and "bob@" not in download

    # Alice naming Ventura's set: none of its questions is hers, so nothing of it (or of its ratings) is shown
    other = judging_page("alice@example.com", teams["b"], path)
    assert [i.value for i in other.info] == ["No question to judge in this set."]
    assert not [f for f in other.dataframe if "spread" in f.value.columns or "kappa" in f.value.columns]
    assert any(c.value.startswith("0 raters, 0 grades.") for c in other.caption)
    page = rendered(other)
    for needle in ("bob@example.com", "vera@example.com", "segredo", "confidencial", "vt-3"):
        assert needle not in page, needle
