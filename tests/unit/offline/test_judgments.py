"""Judgments never lose a grade: one writer at a time (a lock held across read-merge-write), an atomic replace
that keeps the file's mode and symlink, other questions' lines kept byte for byte, and ids the format cannot
carry escaped (JSONL) or refused with one line (qrels, TREC runs)."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval.core.errors import CorpusError, InvalidId
from retrieval.ingest.corpus import id_problem
from retrieval.offline import judgments
from retrieval.offline import report as rep

#: Any code point, lone surrogates and line separators (U+0085, U+2028, U+2029, C0/C1) included.
ANY_TEXT = st.text(st.one_of(st.characters(exclude_categories=()),
                             st.sampled_from("\u2028\u2029\x85\r\n\t \x0b\x1c\x00\x7f\ud800\udfff\ufeff\u3000#")),
                   max_size=12)
GRADES = st.dictionaries(ANY_TEXT, st.sampled_from(judgments.GRADES), max_size=4)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _records(path: Path) -> list[dict]:
    """The file as the strictest reader sees it: str.splitlines() (which also cuts at U+0085, U+2028 …)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- JSONL: any Unicode round-trips, one line per record for every reader ---------------------------------------
@FAST
@given(st.lists(st.tuples(ANY_TEXT, ANY_TEXT, GRADES), min_size=1, max_size=4, unique_by=lambda t: t[1]))
def test_jsonl_round_trips_any_unicode_one_line_per_record(items) -> None:
    from hypothesis import assume

    from retrieval.ingest.corpus import id_problem

    # ids the loader refuses (a control, format or separator character) are refused by save too (tested below)
    items = [(q, qid, g) for q, qid, g in items if not (qid and id_problem(qid)) and not any(map(id_problem, g))]
    assume(items)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions.jsonl"
        saved = [(judgments.save(path, question, grades, {"tenant": question}, qid or None), question, grades)
                 for question, qid, grades in items]
        ids = [s[0] for s in saved]
        records = _records(path)  # would raise if a record were cut in two
        assert len(records) == len(set(ids))
        for sid, question, grades in saved:
            if ids.count(sid) == 1:  # two questions may share a generated id (same text and filters)
                assert judgments.load(path, question, {"tenant": question}, sid) == grades
        assert b"\xe2\x80\xa8" not in path.read_bytes() and b"\xc2\x85" not in path.read_bytes()


def test_jsonl_escapes_line_separators_and_reads_back() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "q.jsonl"
        question, qid = "linha\u2028dois\u0085três\u2029", "id-x"
        judgments.save(path, question, {"p": 2}, qid=qid)
        judgments.save(path, "outra", {"p": 1})
        text = path.read_text(encoding="utf-8")
        assert "\\u2028" in text and "\\u0085" in text and "\\u2029" in text
        assert len(text.splitlines()) == 2
        assert judgments.load(path, question, qid=qid) == {"p": 2}
        from retrieval.core.errors import InvalidId
        from retrieval.ingest.corpus import load_questions

        assert {q.id for q in load_questions(str(path))} >= {qid}
        before = path.read_bytes()
        for bad_qid, grades in (("id\u2028x\x85", {"p": 1}), ("id-y", {"p\u2028": 1}), ("id\u200bz", {"p": 1})):
            with pytest.raises(InvalidId, match="nothing written"):  # ids the loader refuses: never saved
                judgments.save(path, "mais uma", grades, qid=bad_qid)
        assert path.read_bytes() == before


def test_a_file_with_raw_separators_written_before_stays_writable(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    old = '{"id": "a", "question": "um\u2028dois\u0085", "relevant": ["x"], "graded": {"x": 1}, "filters": {}}\n'
    path.write_text(old, encoding="utf-8")
    judgments.save(path, "nova", {"y": 3})
    assert path.read_bytes().startswith(old.encode())
    assert judgments.load(path, "um\u2028dois\u0085", qid="a") == {"x": 1}
    assert judgments.load(path, "nova") == {"y": 3}


# -- qrels: ids that cannot be one field are refused with one line -------------------------------------------
@FAST
@given(ANY_TEXT, GRADES)
def test_qrels_round_trip_or_one_line_refusal(qid, grades) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judged.qrels"
        path.write_text("t9 0 d9 3\n", encoding="utf-8")
        qid = qid or judgments.question_id("q")  # no id given: the generated one
        # refused: what one TREC field cannot carry, and what no id may hold (format characters print alike)
        bad = [v for v in [qid, *grades] if judgments.trec_field_problem(v) or id_problem(v)] or (
            [qid] if qid.startswith("#") else [])
        if bad:
            with pytest.raises(InvalidId) as exc:
                judgments.save(path, "q", grades, qid=qid)
            assert len(str(exc.value).splitlines()) == 1 and "nothing written" in str(exc.value)
            assert path.read_text(encoding="utf-8") == "t9 0 d9 3\n"
        else:
            assert judgments.save(path, "q", grades, qid=qid) == qid
            assert judgments.load(path, "q", qid=qid) == grades
            assert judgments.load(path, "q", qid="t9") == {"d9": 3}


@pytest.mark.parametrize("qid, doc", [("a b", "d"), ("t1", "d\tx"), ("t1", "d\nx"), ("t\u2028", "d"),
                                      ("t1", "d\x00"), ("t1", ""), ("#t", "d"), ("t1", "d\u3000")])
def test_qrels_refuses_whitespace_and_control_ids_naming_them(tmp_path, qid, doc) -> None:
    path = tmp_path / "j.qrels"
    with pytest.raises(InvalidId) as exc:
        judgments.save(path, "q", {doc: 1}, qid=qid)
    text = str(exc.value)
    bad = qid if judgments.trec_field_problem(qid) or qid.startswith("#") else doc
    assert len(text.splitlines()) == 1 and str(path) in text and repr(bad) in text
    assert not path.exists()


def test_qrels_keeps_comments_and_crlf_lines(tmp_path) -> None:
    path = tmp_path / "j.qrels"
    old = b"# judged by hand\r\nt1 0 d1 1\r\nt2 0 d9 3\r\n"
    path.write_bytes(old)
    judgments.save(path, "q", {"d2": 2}, qid="t1")
    assert path.read_bytes() == b"# judged by hand\r\nt2 0 d9 3\r\nt1 0 d2 2\r\n"


# -- the file itself: mode, symlink, other lines byte for byte, failed replace ------------------------------
def test_mode_is_kept_and_a_new_file_gets_the_umask_default(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("", encoding="utf-8")
    os.chmod(path, 0o640)
    judgments.save(path, "um", {"p": 1})
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    old = os.umask(0o022)
    try:
        judgments.save(tmp_path / "new.qrels", "um", {"p": 1}, qid="t1")
        judgments.save(tmp_path / "new.jsonl", "um", {"p": 1})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.qrels").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "new.jsonl").stat().st_mode) == 0o644


@pytest.mark.parametrize("name", ["q.jsonl", "q.qrels"])
def test_a_symlink_stays_a_link_and_its_target_is_written(tmp_path, name) -> None:
    real = tmp_path / "data" / name
    real.parent.mkdir()
    real.write_text("", encoding="utf-8")
    link = tmp_path / f"link-{name}"
    link.symlink_to(real)
    judgments.save(link, "um", {"p": 2}, qid="t1")
    judgments.save(link, "dois", {"p": 1}, qid="t2")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert judgments.load(real, "um", qid="t1") == {"p": 2} and judgments.load(link, "dois", qid="t2") == {"p": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", link.name]  # nothing left beside the link


def test_crlf_lines_of_other_questions_are_kept_byte_for_byte(tmp_path) -> None:
    path = tmp_path / "q.jsonl"
    a = b'{"id": "a", "question": "Um?", "relevant": ["x"], "graded": {"x": 2}, "filters": {}}\r\n'
    b = b'{"id": "b",   "question": "Dois?", "relevant": [], "filters": {}}\n'
    c = b'{"id": "c", "question": "Tr\xc3\xaas?", "relevant": ["z"], "filters": {}}\r\n'
    path.write_bytes(a + b + c)
    judgments.save(path, "Dois?", {"y": 3}, qid="b")  # a record written before keys: found by text and filters
    lines = path.read_bytes().split(b"\n")
    assert lines[0] + b"\n" == a and lines[2] + b"\n" == c and lines[3] == b""
    assert json.loads(lines[1])["graded"] == {"y": 3} and not lines[1].endswith(b"\r")
    judgments.save(path, "Um?", {"x": 0})  # a CRLF record stays CRLF; a new record follows the last ending
    judgments.save(path, "Quatro?", {"w": 1})
    lines = path.read_bytes().split(b"\n")
    assert lines[0].endswith(b"\r") and json.loads(lines[0])["graded"] == {"x": 0}
    assert lines[2] + b"\n" == c and lines[3].endswith(b"\r") and json.loads(lines[3])["question"] == "Quatro?"


def test_a_writer_failing_before_the_replace_leaves_the_original_intact(tmp_path, monkeypatch) -> None:
    path = tmp_path / "q.jsonl"
    original = b'{"id": "a", "question": "Um?", "relevant": ["x"], "filters": {}}\n'
    path.write_bytes(original)

    def killed(*_args, **_kwargs):
        raise OSError("killed between writing the temporary file and replacing")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", killed)
        with pytest.raises(OSError, match="killed"):
            judgments.save(path, "Dois?", {"p": 1})
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl", "q.jsonl.lock"]  # no temporary file left
    judgments.save(path, "Dois?", {"p": 1})  # the lock was released
    assert judgments.load(path, "Dois?") == {"p": 1}


def test_a_writer_that_cannot_get_the_lock_writes_nothing(tmp_path, monkeypatch) -> None:
    import fcntl

    path = tmp_path / "q.qrels"
    path.write_text("t1 0 d1 1\n", encoding="utf-8")
    monkeypatch.setattr(judgments, "LOCK_TIMEOUT_S", 0.2)
    with open(tmp_path / "q.qrels.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(CorpusError, match="another writer") as exc:
            judgments.save(path, "q", {"d2": 2}, qid="t2")
    assert len(str(exc.value).splitlines()) == 1
    assert path.read_text(encoding="utf-8") == "t1 0 d1 1\n"


def test_a_read_only_file_is_not_replaced(tmp_path, monkeypatch) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("", encoding="utf-8")
    os.chmod(path, 0o444)
    if os.geteuid() == 0:  # root may write through any mode: ask as a user would be answered
        monkeypatch.setattr(os, "access", lambda *_a, **_k: False)
    with pytest.raises(CorpusError, match="read-only .mode 0444"):
        judgments.save(path, "q", {"p": 1})
    assert path.read_text(encoding="utf-8") == ""


# -- concurrency: two processes, two sessions -----------------------------------------------------------------
def _save_many(path: str, prefix: str, n: int, start) -> None:
    start.wait()
    for i in range(n):
        judgments.save(path, f"{prefix} pergunta {i}?", {f"{prefix}-{i}": i % 4})


# Each writer is a fresh interpreter (not multiprocessing's spawn, which re-imports the parent's __main__:
# after an AppTest in the same session that is a Streamlit page script).
_WRITER = """
import os, sys, time
from retrieval.offline import judgments
path, prefix, go = sys.argv[1], sys.argv[2], sys.argv[3]
while not os.path.exists(go):
    time.sleep(0.005)
for i in range(100):
    judgments.save(path, f"{prefix} pergunta {i}?", {f"{prefix}-{i}": i % 4})
"""


@pytest.mark.parametrize("name", ["q.jsonl", "q.qrels"])
def test_two_processes_saving_at_once_lose_nothing(tmp_path, name) -> None:
    import subprocess
    import sys

    path, go = str(tmp_path / name), tmp_path / "go"
    root = Path(judgments.__file__).resolve().parents[2]
    workers = [subprocess.Popen([sys.executable, "-c", _WRITER, path, p, str(go)], cwd=root)
               for p in ("A", "B")]
    go.touch()  # both start writing at once
    codes = [w.wait(120) for w in workers]
    assert codes == [0, 0]
    for p in ("A", "B"):
        for i in range(100):
            assert judgments.load(path, f"{p} pergunta {i}?") == {f"{p}-{i}": i % 4}
    if name.endswith(".jsonl"):
        assert len(_records(Path(path))) == 200
    else:
        assert len(Path(path).read_text(encoding="utf-8").splitlines()) == 200


def test_two_sessions_of_one_process_saving_at_once_lose_nothing(tmp_path) -> None:
    path = str(tmp_path / "q.jsonl")
    start = threading.Event()
    threads = [threading.Thread(target=_save_many, args=(path, p, 50, start)) for p in ("A", "B")]
    for t in threads:
        t.start()
    start.set()
    for t in threads:
        t.join(60)
    assert len(_records(Path(path))) == 100


# -- TREC run export ------------------------------------------------------------------------------------------
def _report(qid: str, doc: str) -> dict:
    return {"configs": {"hybrid run": {"questions": [{"id": qid, "ranked": [doc, "d2"], "scores": [0.9, 0.1]}]}}}


@pytest.mark.parametrize("qid, doc, bad", [("q 1", "d1", "q 1"), ("q1", "d\t1", "d\t1"), ("q1", "d\n1", "d\n1"),
                                           ("q\u2028", "d1", "q\u2028"), ("q1", "", "")])
def test_trec_run_refuses_ids_it_cannot_carry_naming_them(qid, doc, bad) -> None:
    with pytest.raises(InvalidId) as exc:
        rep.trec_run(_report(qid, doc), "hybrid run")
    text = str(exc.value)
    assert len(text.splitlines()) == 1 and repr(bad) in text and "hybrid_run" in text


def test_trec_run_keeps_good_ids_and_any_unicode_that_is_not_whitespace() -> None:
    assert rep.trec_run(_report("qé-1", "dø#1"), "hybrid run") == ("qé-1 Q0 dø#1 1 0.900000 hybrid_run\n"
                                                                  "qé-1 Q0 d2 2 0.100000 hybrid_run\n")
    bad_name = rep.trec_run({"configs": {"a\x00b\x85": _report("q", "d")["configs"]["hybrid run"]}}, "a\x00b\x85")
    assert bad_name.split()[5] == "a_b" and len(bad_name.splitlines()) == 2


def test_the_temporary_files_of_an_interrupted_save_are_removed_by_the_next_save(tmp_path) -> None:
    """A save killed between writing its temporary file and renaming it leaves ``.<name>.<hex>.tmp``; the next
    save, holding the lock (so no other save is writing), removes every such file of that name and no other."""
    from retrieval.offline import judgments

    path = tmp_path / "judged.jsonl"
    judgments.save(path, "q?", {"d1": 2})
    orphans = [tmp_path / f".judged.jsonl.{h}.tmp" for h in ("0123456789ab", "ba9876543210")]
    for orphan in orphans:
        orphan.write_text('{"half": ', encoding="utf-8")
    other = tmp_path / ".other.jsonl.0123456789ab.tmp"
    other.write_text("x", encoding="utf-8")
    judgments.save(path, "q?", {"d1": 3})
    assert not any(o.exists() for o in orphans) and other.exists()
    assert judgments.load(path, "q?") == {"d1": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.jsonl.0123456789ab.tmp", "judged.jsonl",
                                                           "judged.jsonl.lock"]
