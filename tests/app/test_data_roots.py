"""The app on a shared server: a link or a box reads and writes only inside the data roots, refuses in one line
and keeps answering on the lab corpus; rerankers come from a list, never from a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.apptest import APP, assert_ok, open_tab, page, plain
from streamlit.testing.v1 import AppTest

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"
EVAL_PAGE = str(Path(APP).parent / "pages" / "2_Evaluation.py")


def url_warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning if plain(w.value).startswith("URL parameter ignored: ")]


def answers_on_the_lab_corpus(at: AppTest) -> None:
    assert "Rank grid" in [s.value for s in at.subheader]
    grid = at.dataframe[0].value  # the rank grid: the lab corpus' ids
    assert len(grid) and grid["chunk_id"].str.startswith("lumen-").all()


def test_a_corpus_outside_the_roots_in_the_url_is_refused_in_one_line() -> None:
    at = page(corpus="/etc", q="x", tenant="lumen")
    assert not at.exception and not at.error, [e.value for e in at.error]
    (line,) = url_warnings(at)
    assert line.startswith("URL parameter ignored: corpus: refused: '/etc' is not a file or folder inside the "
                           "data roots (RETRIEVAL_DATA_ROOTS: ") and "\n" not in line
    assert at.text_input(key="corpus_input").value == ""  # the lab corpus
    assert "corpus" not in at.query_params
    assert "Answer" in [s.value for s in at.subheader]  # it still answers
    again = page(corpus="/no-such-folder", q="x", tenant="lumen")
    assert url_warnings(again) == [line.replace("'/etc'", "'/no-such-folder'")]  # nothing said of what exists


def test_a_judgments_file_outside_the_roots_in_the_url_is_refused_and_never_written(tmp_path: Path) -> None:
    target = tmp_path / "x.jsonl"
    tmp_x = Path("/tmp/x.jsonl")
    existed = tmp_x.exists()
    at = page(q=PX7, tenant="lumen", judgments=str(target))
    assert_ok(at)
    (line,) = url_warnings(at)
    assert line.startswith(f"URL parameter ignored: judgments: refused: '{target}' is not a file, or a new file "
                           "in an existing folder, inside the write roots") and "\n" not in line
    answers_on_the_lab_corpus(at)
    at = open_tab(at, "tab_judge")
    assert at.text_input(key="judgments_path").value.endswith("judgments/judgments.jsonl")  # the default
    at.text_input(key="judgments_path").set_value("/tmp/x.jsonl").run()
    errors = [plain(e.value) for e in at.error]
    assert errors == [errors[0]] and errors[0].startswith("refused: '/tmp/x.jsonl' is not a file, or a new file")
    assert at.button(key="judge_save").disabled
    assert not target.exists() and tmp_x.exists() == existed


def test_a_link_cannot_make_the_app_rewrite_the_lab_set() -> None:
    """Writes are narrower than reads: the lab set is a data root's file, but no write root's."""
    lab_set = Path(APP).parent / "data" / "lab" / "questions.jsonl"
    before = lab_set.read_bytes()
    at = open_tab(page(q=PX7, tenant="lumen", judgments="data/lab/questions.jsonl"), "tab_judge")
    assert_ok(at)
    (line,) = url_warnings(at)
    assert line.startswith("URL parameter ignored: judgments: refused: 'data/lab/questions.jsonl' is not a file, or "
                           "a new file in an existing folder, inside the write roots (RETRIEVAL_WRITE_ROOTS: ")
    assert at.text_input(key="judgments_path").value.endswith("judgments/judgments.jsonl")
    at.text_input(key="judgments_path").set_value(str(lab_set)).run()  # the box: refused the same way
    assert [plain(e.value) for e in at.error][0].startswith(f"refused: '{lab_set}' is not a file, or a new file")
    assert at.button(key="judge_save").disabled
    assert lab_set.read_bytes() == before


def test_corpus_and_question_boxes_refuse_devices_and_outside_paths_and_keep_the_lab_corpus() -> None:
    at = page(q=PX7, tenant="lumen")
    assert_ok(at)
    at.text_input(key="corpus_input").set_value("/dev/zero").run()
    (error,) = [plain(e.value) for e in at.error]
    assert error.startswith("refused: '/dev/zero' is not a file or folder inside the data roots") and \
        error.endswith("; still using the lab corpus.")
    answers_on_the_lab_corpus(at)
    at.text_input(key="corpus_input").set_value("").run()
    at.text_input(key="questions_input").set_value("../../../../etc/passwd").run()
    (error,) = [plain(e.value) for e in at.error]
    assert error.startswith("refused: '../../../../etc/passwd' is not a file or folder inside the data roots")
    answers_on_the_lab_corpus(at)


def test_questions_in_the_url_outside_the_roots_are_refused() -> None:
    at = page(questions="/etc/passwd")
    assert_ok(at)
    (line,) = url_warnings(at)
    assert line.startswith("URL parameter ignored: questions: refused: '/etc/passwd' is not a file or folder inside")
    assert at.text_input(key="questions_input").value == ""


def test_a_corpus_inside_a_configured_root_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "backup.md").write_text("---\ntitle: Backup\n---\nO backup noturno roda às 2h.\n", encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))
    at = page(corpus=str(folder))
    assert_ok(at)
    assert not url_warnings(at)
    assert any(c.value.startswith("1 documents · 1 chunks") for c in at.caption)
    monkeypatch.setenv("RETRIEVAL_MAX_INPUT_BYTES", "10")  # the size guard, before reading
    at = page(corpus=str(folder))
    (line,) = url_warnings(at)
    assert line.startswith("URL parameter ignored: corpus: refused: the files under ") and "input limit" in line


@pytest.mark.parametrize("raw", ["/etc", "../../..", "ltr:/etc", "no-such-org/model"])
def test_a_reranker_path_in_the_url_is_ignored_without_a_word_on_the_filesystem(raw: str) -> None:
    at = page(reranker=raw)
    assert_ok(at)
    (line,) = url_warnings(at)
    assert line == (f"URL parameter ignored: reranker=`{raw}` is not one of this app's rerankers "
                    "(`ltr`, `none`, `reader`, `bi-encoder:use-m3`); using ltr")
    assert at.radio(key="rerank_mode").value == "ltr"
    assert at.radio(key="rerank_mode").options == [
        "Learned ranker (LambdaMART over BM25, dense, coverage and reader features)", "Off",
        "Reader (token-level match over e5, offline)", "Bi-encoder rescoring (use-m3, offline)"]
    assert all(t.key != "rerank_custom" for t in at.text_input)  # no free-text model box


def test_the_configured_cross_encoders_are_the_only_other_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRIEVAL_APP_RERANKERS", "org/cross-a,org/cross-b")
    at = page(reranker="org/cross-b")
    assert_ok(at)
    assert not url_warnings(at)
    assert at.radio(key="rerank_mode").value == "cross-encoder"
    assert at.selectbox(key="rerank_cross").options == ["org/cross-a", "org/cross-b"]
    assert at.selectbox(key="rerank_cross").value == "org/cross-b"


def test_the_evaluation_page_refuses_my_set_outside_the_roots() -> None:
    at = AppTest.from_file(EVAL_PAGE, default_timeout=120).run()
    at.radio(key="ev_set").set_value("custom")
    at.text_input(key="ev_corpus").set_value("/etc")
    at.text_input(key="ev_questions").set_value("/etc/passwd")
    at.button[0].click().run()
    assert not at.exception
    (error,) = [plain(e.value) for e in at.error]
    assert error.startswith("The evaluation did not run: refused: '/etc' is not a file or folder inside the data "
                            "roots") and "\n" not in error
    assert set(at.selectbox(key="ev_reranker").options) == {
        "bi-encoder:use-m3 (offline rescoring, not a cross-encoder)", "none",
        "ltr (the learned ranker, as hybrid+ltr)", "reader (late interaction over e5, offline, as hybrid+reader)"}


def test_the_reranker_list_is_the_servers_own() -> None:
    from retrieval.core.errors import InvalidSetting
    from retrieval.explain import links
    from retrieval.settings import Settings

    base = Settings(_env_file=None, app_rerankers="org/a, org/b,org/a")
    assert links.app_rerankers(base) == ("ltr", "none", "reader", "bi-encoder:use-m3", "org/a", "org/b")
    assert links.app_rerankers(base.with_overrides(reranker_model="org/c"))[-1] == "org/c"
    assert links.app_rerankers(base.with_overrides(reranker_model="ltr:models/judge"))[0] == "ltr:models/judge"
    assert links.app_rerankers(base.with_overrides(reranker_model="off"))[:4] == ("ltr", "none", "reader",
                                                                                 "bi-encoder:use-m3")
    assert links.app_rerankers(base.with_overrides(reranker_model="reader:int8"))[2] == "reader:int8"
    for bad in ("ltr:/etc", "none", "bi-encoder:e5-small"):
        with pytest.raises(InvalidSetting, match="app_rerankers"):
            base.with_overrides(app_rerankers=bad)
