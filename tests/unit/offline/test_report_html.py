"""The reports to hand over (retrieval/report_html.py): each is one HTML document that parses, holds what it
must (the answer, every grid row's chunk id, the decision and judged@k), runs no script and escapes every value
of the trace or the report."""

from __future__ import annotations

import copy
from html.parser import HTMLParser

import pytest
from helpers.traces import grid_trace

from retrieval.explain import grid, report_html
from retrieval.offline import report_html as evaluation_html
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict

EVIL = "<img src=x onerror=alert(1)>"


class Collect(HTMLParser):
    """Every start tag and its attributes, and the document's text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in {"meta", "br", "img", "input", "link"}:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, (tag, self.open[-5:])
        self.open.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(document: str) -> Collect:
    parser = Collect()
    parser.feed(document)
    parser.close()
    assert parser.open == []  # every element closed, in order
    return parser


def a_trace() -> dict:
    t = grid_trace()  # its answer: "Abra um chamado [1]." citing a#1
    t["question"] = "O PX-7 não foi ativado?"
    return t


def assert_safe(parser: Collect) -> None:
    tags = {tag for tag, _ in parser.tags}
    assert "script" not in tags and "img" not in tags and "iframe" not in tags
    assert not any(name.startswith("on") for _, attrs in parser.tags for name in attrs)
    assert not any("http" in (value or "") for _, attrs in parser.tags for value in attrs.values())


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_question_report_holds_the_answer_and_every_grid_row(lang: str) -> None:
    t = a_trace()
    document = report_html.question_report(view(t), lang, relevant=["a"])
    parser = parse(document)
    assert_safe(parser)
    text = "".join(parser.text)
    assert "Abra um chamado [1]." in text and t["question"] in text
    for row in grid.grid_rows(view(t)):
        assert row["chunk_id"] in text
    assert "1/(60 + 1)" in text  # a#1's RRF term, dense #1
    assert "cov_chunk" in text  # the reranker's feature contributions of the final item
    assert ("Rank grid" if lang == "en" else "Grade de posições") in text


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_question_report_names_each_chunks_page_and_section(lang: str) -> None:
    t = a_trace()
    place = {"section": "Capítulo I › Seção II", "page": 4, "page_end": 5}
    for name in ("lexical", "dense", "fused", "reranked"):  # a#1 runs over pages 4-5 of Seção II
        t[name]["items"] = [{**i, **place} if i["chunk_id"] == "a#1" else i for i in t[name]["items"]]
    t["final"] = [{**i, **place} for i in t["final"]]
    t["answer"]["citations"] = ["a#1"]
    parser = parse(report_html.question_report(view(t), lang))
    assert_safe(parser)
    text = "".join(parser.text)
    assert text.count("a#1 · pp. 4-5 · Capítulo I › Seção II") == 2  # the citation and the provenance heading
    assert ("where (page · section)" if lang == "en" else "onde (página · seção)") in text  # the grid's column
    plain = "".join(parse(report_html.question_report(view(a_trace()), lang)).text)
    assert "pp. " not in plain and "where (page" not in plain and "onde (página" not in plain  # no place, no column


def test_a_hostile_id_is_escaped_in_the_question_report() -> None:
    t = a_trace()
    t = copy.deepcopy(t)
    for name in ("lexical", "dense", "fused", "reranked"):
        for i in t[name]["items"]:
            if i["chunk_id"] == "b#0":
                i["chunk_id"], i["parent_id"] = EVIL + "#0", EVIL
    t["selected"] = [i if i["chunk_id"] != "b#0" else {**i, "chunk_id": EVIL + "#0"} for i in t["selected"]]
    t["tier_reason"] = EVIL
    document = report_html.question_report(view(t), "en")
    assert EVIL not in document
    assert "&lt;img src=x onerror=alert(1)&gt;" in document
    parser = parse(document)
    assert_safe(parser)
    assert EVIL + "#0" in "".join(parser.text)  # shown as text


def an_evaluation() -> dict:
    def row(qid, ranked, unjudged, ndcg):
        return {"id": qid, "group": "g", "question": f"{qid}?", "relevant": ["a"], "ranked": ranked,
                "layer": "ok", "stage": None, "metrics": {"ndcg@10": ndcg},
                "judged": {"k": 10, "share": 1 - len(unjudged) / len(ranked), "unjudged": unjudged}}

    def config(tier, ndcg, judged, rows):
        return {"tier": tier, "overall": {"ndcg@10": ndcg, "judged@10": judged, "recall@10": 1.0},
                "questions": rows}

    return {"corpus": "/x/data/lab/corpus.jsonl", "questions": 2, "split": "heldout", "k": [10],
            "hypothesis": EVIL, "comparisons": [], "question_problems": [],
            "configs": {"bm25": config("lexical_only", 0.5, 0.75, [row("q1", ["a", "x"], ["x"], 0.5),
                                                                     row(EVIL, ["a"], [], 1.0)]),
                        "hybrid": config("rrf_only", 0.9, 1.0, [row("q1", ["a"], [], 1.0),
                                                                 row(EVIL, ["a"], [], 1.0)])}}


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_evaluation_report_holds_the_decision_judged_coverage_and_escapes(lang: str) -> None:
    document = evaluation_html.evaluation_report(an_evaluation(), lang)
    assert EVIL not in document and "&lt;img src=x onerror=alert(1)&gt;" in document
    parser = parse(document)
    assert_safe(parser)
    text = "".join(parser.text)
    assert "bm25" in text and "hybrid" in text and "0.7500" in text  # judged@10 beside nDCG@10
    assert "x?" in text  # the unjudged parent is marked in the per-question table
    assert ("fictitious" in text) if lang == "en" else ("fictício" in text)
    assert ("judged@10 of bm25 is 0.75" in text) if lang == "en" else ("julgados@10 de bm25 é 0.75" in text)
    bars = [attrs["style"] for tag, attrs in parser.tags if tag == "span" and "bar" in attrs.get("class", "")]
    assert "width:50.0px" in bars and "width:100.0px" in bars


def test_report_module_does_not_import_streamlit() -> None:
    source = open(report_html.__file__, encoding="utf-8").read()
    assert "import streamlit" not in source and "<script" not in source


def test_the_label_caveat_counts_questions_not_the_kinds_of_problem():
    from retrieval.offline.report_html import _caveats

    base = {"configs": {"a": {"overall": {}}}, "questions": 200, "comparisons": []}
    none = {kind: [] for kind in ("tenant_not_in_corpus", "relevant_not_in_corpus", "relevant_in_other_tenant")}
    assert _caveats({**base, "question_problems": {"questions": 0, **none}}, "en", 10) == []
    two = {"questions": 2, **none, "relevant_not_in_corpus": [{"id": "q1"}, {"id": "q2"}]}
    (line,) = _caveats({**base, "question_problems": two}, "en", 10)
    assert line.startswith("2 question(s) have labels")
