"""The evaluation page's exports panel (ui/evaluation/exports.py) with a document id holding a space: the page
raises nothing, every other download is offered, and only that configuration's TREC run is greyed out, saying
which id it cannot carry (escaped: the reason is shown as Markdown)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _panel() -> None:
    from types import SimpleNamespace

    from helpers.reports import evaluation_report
    from ui.evaluation import exports

    rep = evaluation_report()
    rep["configs"]["hybrid"]["questions"][1]["ranked"] = ["d 3", "d4"]
    exports.panel(SimpleNamespace(lang="en", report=rep, names=list(rep["configs"])), "hybrid")


def test_an_id_with_a_space_greys_out_its_run_alone() -> None:
    at = AppTest.from_function(_panel, default_timeout=60).run()
    assert not at.exception
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    assert [label for label, b in buttons.items() if b.disabled] == ["TREC run: hybrid"]
    assert len(buttons) == 7 and not buttons["TREC run: dense"].disabled
    assert "the docno 'd 3' holds U\\+0020 \\(SPACE\\)" in buttons["TREC run: hybrid"].help
