"""Judgments and ratings are kept per (question set, question id, tenant): the attacker's cases.

Two teams' question sets both number a question ``q1`` (Lumen's is about the PX-7, Ventura's about the VT-3
code); the judgments file and the ratings file are shared. Ventura's save never changes Lumen's record, each
team reads back only its own grades, two sets of one user keep their ``q1`` apart, and a record written before
keys is found only by its text and filters, never by its id alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval.core.errors import CorpusError
from retrieval.ingest.corpus import load_questions
from retrieval.offline import judgments
from retrieval.offline.raters import (Rating, agreement, consensus, import_judgments, key_of, load_ratings,
                                      ratings_for, save_ratings)
from retrieval.core.types import Question

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"
VT3 = "O que é o erro VT-3 que aparece na maquininha?"
LUMEN = {"question_set": "teams/lumen.jsonl", "tenant": "lumen"}
VENTURA = {"question_set": "teams/ventura.jsonl", "tenant": "ventura"}


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_ventura_save_of_q1_never_changes_the_lumen_q1_record(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    assert judgments.save(path, PX7, {"lumen-px7-nao-ativado": 3, "lumen-px7-ativacao": 1}, {"tenant": "lumen"},
                          "q1", **LUMEN, allowed=frozenset({"lumen"})) == "q1"
    lumen_line = path.read_text(encoding="utf-8").splitlines()[0]
    # Ventura opens its own q1: nothing of Lumen's record is shown
    assert judgments.load(path, VT3, {"tenant": "ventura"}, "q1", **VENTURA, allowed=frozenset({"ventura"})) == {}
    saved = judgments.save(path, VT3, {"ventura-vt3": 3, "ventura-e42": 0}, {"tenant": "ventura"}, "q1",
                           **VENTURA, allowed=frozenset({"ventura"}))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == lumen_line and len(lines) == 2  # Lumen's record byte for byte; Ventura's question stored
    assert saved != "q1" and saved.startswith("judged-")  # ids stay unique: the file is still a question set
    assert records(path)[1]["_key"] == {"set": "teams/ventura.jsonl", "id": "q1", "tenant": "ventura"}
    assert {q.id: q.graded for q in load_questions(path)} == {
        "q1": {"lumen-px7-ativacao": 1, "lumen-px7-nao-ativado": 3}, saved: {"ventura-e42": 0, "ventura-vt3": 3}}
    assert judgments.load(path, PX7, {"tenant": "lumen"}, "q1", **LUMEN) == {"lumen-px7-ativacao": 1,
                                                                            "lumen-px7-nao-ativado": 3}
    assert judgments.load(path, VT3, {"tenant": "ventura"}, "q1", **VENTURA) == {"ventura-e42": 0, "ventura-vt3": 3}
    # Ventura re-judging its q1 replaces its own record only
    judgments.save(path, VT3, {"ventura-vt3": 2}, {"tenant": "ventura"}, "q1", **VENTURA)
    assert path.read_text(encoding="utf-8").splitlines()[0] == lumen_line
    assert judgments.load(path, VT3, {"tenant": "ventura"}, "q1", **VENTURA) == {"ventura-vt3": 2}


def test_one_set_holding_q1_for_two_tenants_keeps_two_records(tmp_path: Path) -> None:
    """The same set name and id, two tenants (a set edited between two saves): the tenant alone separates them."""
    path = tmp_path / "judgments.jsonl"
    judgments.save(path, "Como ativar?", {"lumen-a": 3}, {"tenant": "lumen"}, "q1", question_set="s", tenant="lumen")
    judgments.save(path, "Como ativar?", {"ventura-a": 1}, {"tenant": "ventura"}, "q1", question_set="s",
                   tenant="ventura")
    assert judgments.load(path, "Como ativar?", {"tenant": "lumen"}, "q1", question_set="s", tenant="lumen") == \
        {"lumen-a": 3}
    assert judgments.load(path, "Como ativar?", {"tenant": "ventura"}, "q1", question_set="s",
                          tenant="ventura") == {"ventura-a": 1}


def test_a_key_of_a_tenant_the_user_may_not_open_is_refused_before_the_file_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    judgments.save(path, PX7, {"lumen-px7-ativacao": 2}, {"tenant": "lumen"}, "q1", **LUMEN)
    before = path.read_bytes()
    for call in (lambda: judgments.load(path, PX7, {"tenant": "lumen"}, "q1", **LUMEN, allowed=frozenset({"ventura"})),
                 lambda: judgments.save(path, PX7, {"x": 0}, {"tenant": "lumen"}, "q1", **LUMEN,
                                        allowed=frozenset({"ventura"}))):
        with pytest.raises(CorpusError) as exc:
            call()
        text = str(exc.value)
        assert len(text.splitlines()) == 1 and "not one of yours" in text and "lumen" not in text
    assert path.read_bytes() == before


def test_two_sets_of_one_user_keep_their_q1_apart(tmp_path: Path) -> None:
    """Single-user mode, the worst case: both sets' q1 have the same text and the same filters."""
    path = tmp_path / "judgments.jsonl"
    a, b = judgments.set_name(tmp_path / "a.jsonl"), judgments.set_name(tmp_path / "b.jsonl")
    assert a != b and a.endswith("/a.jsonl")
    judgments.save(path, PX7, {"p1": 3}, {"tenant": "lumen"}, "q1", question_set=a, tenant="lumen")
    judgments.save(path, PX7, {"p2": 1}, {"tenant": "lumen"}, "q1", question_set=b, tenant="lumen")
    assert judgments.load(path, PX7, {"tenant": "lumen"}, "q1", question_set=a, tenant="lumen") == {"p1": 3}
    assert judgments.load(path, PX7, {"tenant": "lumen"}, "q1", question_set=b, tenant="lumen") == {"p2": 1}
    assert [r["_key"]["set"] for r in records(path)] == [a, b] and len({r["id"] for r in records(path)}) == 2
    # a question typed in the box (no set) is a third record, found by its text and filters
    judgments.save(path, PX7, {"p3": 2}, {"tenant": "lumen"}, tenant="lumen")
    assert judgments.load(path, PX7, {"tenant": "lumen"}, tenant="lumen") == {"p3": 2}
    assert len(records(path)) == 3


def test_a_record_written_before_keys_matches_only_the_same_text_and_filters(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    old = json.dumps({"id": "q1", "question": PX7, "group": "judged", "relevant": ["lumen-px7-ativacao"],
                      "filters": {"tenant": "lumen"}, "graded": {"lumen-px7-ativacao": 2}}, ensure_ascii=False)
    path.write_text(old + "\n", encoding="utf-8")
    # Ventura's q1 (another text, another tenant): not matched by the id, and the old line is left as it was
    assert judgments.load(path, VT3, {"tenant": "ventura"}, "q1", **VENTURA) == {}
    judgments.save(path, VT3, {"ventura-vt3": 3}, {"tenant": "ventura"}, "q1", **VENTURA)
    assert path.read_text(encoding="utf-8").splitlines()[0] == old
    # the same text under another tenant's filters: not matched either
    assert judgments.load(path, PX7, {"tenant": "ventura"}, "q1", question_set="x", tenant="ventura") == {}
    # Lumen's q1 (same text and filters): found, and its save writes the key into that record (id kept)
    assert judgments.load(path, PX7, {"tenant": "lumen"}, "q1", **LUMEN) == {"lumen-px7-ativacao": 2}
    judgments.save(path, PX7, {"lumen-px7-ativacao": 3}, {"tenant": "lumen"}, "q1", **LUMEN)
    first = records(path)[0]
    assert first["id"] == "q1" and first["graded"] == {"lumen-px7-ativacao": 3}
    assert first["_key"] == {"set": "teams/lumen.jsonl", "id": "q1", "tenant": "lumen"}
    assert len(records(path)) == 2


def test_a_qrels_file_holds_one_set_and_tenant_and_refuses_another_naming_neither(tmp_path: Path) -> None:
    path = tmp_path / "judged.qrels"
    judgments.save(path, PX7, {"lumen-px7-ativacao": 2}, {"tenant": "lumen"}, "q1", **LUMEN)
    assert path.read_text(encoding="utf-8") == "q1 0 lumen-px7-ativacao 2\n"  # what TREC tools read: unchanged
    assert json.loads((tmp_path / "judged.qrels.key.json").read_text(encoding="utf-8")) == {
        "set": "teams/lumen.jsonl", "tenant": "lumen"}
    for call in (lambda: judgments.load(path, VT3, {"tenant": "ventura"}, "q1", **VENTURA),
                 lambda: judgments.save(path, VT3, {"ventura-vt3": 3}, {"tenant": "ventura"}, "q1", **VENTURA)):
        with pytest.raises(CorpusError) as exc:
            call()
        text = str(exc.value)
        assert len(text.splitlines()) == 1 and "another question set's or tenant's" in text
        assert "lumen" not in text and "ventura" not in text
    assert path.read_text(encoding="utf-8") == "q1 0 lumen-px7-ativacao 2\n"
    assert judgments.load(path, PX7, {"tenant": "lumen"}, "q1", **LUMEN) == {"lumen-px7-ativacao": 2}
    # a qrels file written before (lines, no sidecar) still serves unkeyed use, and refuses a keyed question
    old = tmp_path / "old.qrels"
    old.write_text("q1 0 d1 1\n", encoding="utf-8")
    assert judgments.load(old, "", qid="q1") == {"d1": 1}
    with pytest.raises(CorpusError, match="written without a question set or tenant"):
        judgments.save(old, VT3, {"ventura-vt3": 3}, {"tenant": "ventura"}, "q1", **VENTURA)
    assert old.read_text(encoding="utf-8") == "q1 0 d1 1\n" and not (tmp_path / "old.qrels.key.json").exists()


# -- ratings (Team judging) -------------------------------------------------------------------------------
def q(qid: str, text: str, tenant: str) -> Question:
    return Question(qid, text, "judged", (), {"tenant": tenant})


def test_two_tenants_ratings_of_q1_never_group_and_each_sees_only_its_own(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"

    def rate(rater: str, grade: int, note: str, text: str, who: dict, parent: str = "d1") -> Rating:
        return Rating("q1", text, parent, grade, rater, note, {"tenant": who["tenant"]}, **who)

    save_ratings(path, [rate("alice@example.com", 3, "lumen: responde", PX7, LUMEN),
                        rate("lia@example.com", 1, "lumen: parcial", PX7, LUMEN)])
    save_ratings(path, [rate("bob@example.com", 0, "ventura: segredo", VT3, VENTURA),
                        rate("vera@example.com", 2, "ventura: outro", VT3, VENTURA)])
    # a rater of both teams re-grading Ventura's q1 d1 never replaces their Lumen grade of q1 d1
    save_ratings(path, [rate("alice@example.com", 1, "ventura também", VT3, VENTURA)])
    everything = load_ratings(path)
    assert len(everything) == 5
    assert [r.grade for r in everything if r.rater == "alice@example.com"] == [3, 1]
    # the library keeps the two q1 apart: two items, two consensus questions with unique ids
    merged = consensus(everything)
    assert len(merged) == 2 and all(k.startswith("q1~") for k in merged)
    assert sorted((e["key"]["tenant"], e["graded"]["d1"]) for e in merged.values()) == [("lumen", 1), ("ventura", 1)]
    # the page's view: Lumen's q1 of Lumen's set only (Ventura's raters, grades and notes left out)
    lumen = ratings_for(everything, [q("q1", PX7, "lumen")], "teams/lumen.jsonl", "tenant", frozenset({"lumen"}))
    assert sorted((r.rater, r.grade, r.note) for r in lumen) == [("alice@example.com", 3, "lumen: responde"),
                                                                 ("lia@example.com", 1, "lumen: parcial")]
    found = agreement(lumen)
    assert found["raters"] == ["alice@example.com", "lia@example.com"]
    assert found["disagreements"] == [{"qid": "q1", "parent": "d1", "spread": 2,
                                       "grades": {"alice@example.com": 3, "lia@example.com": 1},
                                       "notes": {"alice@example.com": "lumen: responde",
                                                 "lia@example.com": "lumen: parcial"}}]
    assert consensus(lumen) == {"q1": {"question": PX7, "filters": {"tenant": "lumen"}, "graded": {"d1": 1},
                                       "key": {"set": "teams/lumen.jsonl", "id": "q1", "tenant": "lumen"},
                                       "raters": {"d1": ["alice@example.com", "lia@example.com"]}}}
    # a Lumen question listed for a user of Ventura only: nothing comes through the tenant check
    assert ratings_for(everything, [q("q1", PX7, "lumen")], "teams/lumen.jsonl", "tenant",
                       frozenset({"ventura"})) == []
    # the same id in Ventura's set under Lumen's name: another key, nothing of Lumen's
    assert ratings_for(everything, [q("q1", PX7, "lumen")], "teams/ventura.jsonl", "tenant") == []


def test_two_sets_ratings_of_q1_stay_apart_and_old_lines_match_by_text_and_filters(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    save_ratings(path, [Rating("q1", PX7, "d1", 3, "ana", filters={"tenant": "lumen"}, question_set="a.jsonl",
                               tenant="lumen"),
                        Rating("q1", PX7, "d1", 0, "ana", filters={"tenant": "lumen"}, question_set="b.jsonl",
                               tenant="lumen")])
    old = [{"qid": "q1", "question": PX7, "filters": {"tenant": "lumen"}, "parent": "d2", "grade": 2, "rater": "ana"},
           {"qid": "q1", "question": VT3, "filters": {"tenant": "ventura"}, "parent": "d9", "grade": 1,
            "rater": "bob", "note": "ventura antigo"}]
    with path.open("a", encoding="utf-8") as f:
        f.writelines(json.dumps(rec, ensure_ascii=False) + "\n" for rec in old)
    everything = load_ratings(path)
    assert [r.keyed for r in everything] == [True, True, False, False]
    in_a = ratings_for(everything, [q("q1", PX7, "lumen")], "a.jsonl", "tenant")
    in_b = ratings_for(everything, [q("q1", PX7, "lumen")], "b.jsonl", "tenant")
    # each set: its own keyed grade, and the old line of the same text and filters (never Ventura's old q1)
    assert sorted((r.parent, r.grade, r.question_set) for r in in_a) == [("d1", 3, "a.jsonl"), ("d2", 2, "a.jsonl")]
    assert sorted((r.parent, r.grade, r.question_set) for r in in_b) == [("d1", 0, "b.jsonl"), ("d2", 2, "b.jsonl")]
    assert key_of(q("q1", PX7, "lumen"), "a.jsonl", "tenant") == ("a.jsonl", "q1", "lumen")
    # the CLI's whole-file view: the two old q1 of two tenants are two questions too
    assert len(consensus(everything)) == 4
    # re-grading d2 in set a replaces the old line of the same text and filters, and no other line
    save_ratings(path, [Rating("q1", PX7, "d2", 3, "ana", filters={"tenant": "lumen"}, question_set="a.jsonl",
                               tenant="lumen")])
    after = load_ratings(path)
    assert sorted((r.parent, r.grade, r.question_set) for r in after) == [
        ("d1", 0, "b.jsonl"), ("d1", 3, "a.jsonl"), ("d2", 3, "a.jsonl"), ("d9", 1, None)]


def test_imported_judgments_keep_the_key_their_file_recorded(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    judgments.save(path, PX7, {"lumen-a": 3}, {"tenant": "lumen"}, "q1", **LUMEN)
    judgments.save(path, VT3, {"ventura-a": 1}, {"tenant": "ventura"}, "q1", **VENTURA)
    imported = import_judgments(path, rater="page")
    assert sorted((r.question_set, r.qid, r.tenant, r.parent) for r in imported) == [
        ("teams/lumen.jsonl", "q1", "lumen", "lumen-a"), ("teams/ventura.jsonl", "q1", "ventura", "ventura-a")]
    qrels = tmp_path / "j.qrels"
    judgments.save(qrels, VT3, {"ventura-b": 2}, {"tenant": "ventura"}, "q1", **VENTURA)
    assert [(r.question_set, r.tenant) for r in import_judgments(qrels)] == [("teams/ventura.jsonl", "ventura")]
