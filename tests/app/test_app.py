"""The main page under AppTest: real corpus, real models, real store (no mocks of our code)."""

from __future__ import annotations

import re

import pytest
from _apptest import assert_ok, page, plain
from streamlit.testing.v1 import AppTest

PANELS = ("Lexical (BM25)", "Dense (cosine)", "Fused (RRF)", "Reranked")
PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def texts(at: AppTest) -> str:
    """Every rendered element's protobuf, as text (labels, values, markdown, table and chart data)."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


#: The tier line: a sentence in bold, then the tier's badge (ui.layout.tier_badge).
TIER_LINE = re.compile(r"^\*\*[^*]+\*\* :\w+-badge\[(full|rrf_only|dense_only|lexical_only|refusal)\]$")


def subheaders(at: AppTest) -> list[str]:
    return [s.value for s in at.subheader]


def tier_line(at: AppTest) -> str:
    """The tier in plain words with its badge, then its recorded reason (the caption under it)."""
    lines = [m.value for m in at.markdown if TIER_LINE.match(m.value)]
    assert len(lines) == 1, lines
    reasons = [c.value for c in at.caption if c.value.startswith("Why this tier: ")]
    return "\n".join(lines + reasons)


def test_question_in_url_renders_the_four_panels_tier_and_answer() -> None:
    at = page(q=PX7, tenant="lumen")
    assert_ok(at)
    heads = subheaders(at)
    for title in PANELS:  # the learned ranker (ltr) is the default reranker: the Reranked column shows
        assert any(h.startswith(title) for h in heads), heads
    assert "Answer" in heads and "Rank movement" in heads and "Evidence lost by the reranker" in heads
    assert "full" in tier_line(at)  # the learned ranker (ltr) is the default reranker
    assert any(c.value.startswith("Answered by `local-extractive") for c in at.caption)
    assert any("Extractive answer" in c.value for c in at.caption)  # the adapter says so, in the interface language
    # A labeled question: relevance marks, and the submit → rendered time measured in the app.
    assert any("✓ relevant" in m.value for m in at.markdown)
    assert any(c.value.startswith("Submit → page laid out") for c in at.caption)
    # The learned ranker ran: no "no rerank ran" notice, and each reranked item says why it moved.
    assert not any("no reranker configured" in i.value for i in at.info)
    assert any(e.label == "Why it moved (learned ranker)" for e in at.expander)
    # Fused panel: per-ranker contributions as a chart; downloads of the trace and the four lists.
    assert len(at.get("vega_lite_chart")) >= 1
    assert [b.label for b in at.get("download_button")] == [
        "Download this question's report (HTML)", "Trace (JSON)", "lexical (CSV)", "dense (CSV)", "fused (CSV)", "reranked (CSV)"]


def test_tenant_lumen_never_shows_a_ventura_chunk() -> None:
    at = page(q="Quanto tempo leva a ativação do PX-17?", tenant="lumen", top_k="10", rows="40")
    assert_ok(at)
    rendered = texts(at)
    assert "lumen-" in rendered
    assert "ventura-" not in rendered


def test_dense_only_toggle_gives_dense_only_and_writes_the_url() -> None:
    at = page(q=PX7, tenant="lumen")
    at.toggle(key="dense_only").set_value(True).run()
    assert_ok(at)
    assert ":violet-badge[dense_only]" in tier_line(at)
    assert any(i.value.startswith("Empty — skipped") for i in at.info)  # the lexical panel says why
    assert at.query_params.get("dense_only") == "true"
    assert at.query_params.get("q") == PX7 and at.query_params.get("tenant") == "lumen"


def test_high_min_similarity_abstains() -> None:
    at = page(q=PX7, tenant="lumen", min_similarity="0.99")
    assert_ok(at)
    assert ":red-badge[refusal]" in tier_line(at)
    assert any(w.value.startswith("**Abstained.**") for w in at.warning)


def test_multi_tenant_corpus_requires_a_tenant() -> None:
    at = page(q=PX7)
    assert_ok(at)
    assert any("pick a tenant" in w.value for w in at.warning)
    assert not any(h.startswith("Lexical") for h in subheaders(at))


def test_picking_a_labeled_question_sets_question_and_tenant() -> None:
    at = page()
    at.selectbox(key="picked").set_value("lab-004").run()
    assert_ok(at)
    assert at.text_input(key="question").value == "O que significa o erro E-42 no PX-7?"
    assert at.selectbox(key="tenant").value == "lumen"
    assert any("Labeled question `lab-004`" in c.value for c in at.caption)


@pytest.mark.parametrize("spec, tier", [("bi", "full"), ("reader", "full"), ("cross", "rrf_only")])
def test_reranker_toggle(spec: str, tier: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The app offers the cross-encoders its deployer names (no model path is typed on the page).
    monkeypatch.setenv("RETRIEVAL_APP_RERANKERS", "no-such-org/no-such-cross-encoder")
    at = page(q=PX7, tenant="lumen")
    at.radio(key="rerank_mode").set_value(spec)
    if spec == "cross":
        at.run()
        at.selectbox(key="rerank_cross").set_value("no-such-org/no-such-cross-encoder")
    at.run()
    assert_ok(at)
    line = tier_line(at)
    assert f"-badge[{tier}]" in line
    if spec == "bi":
        assert "bi\\-encoder" in line  # named honestly: a bi-encoder rescoring, not a cross-encoder
        assert any(h == "Reranked (bi-encoder)" for h in subheaders(at))
    elif spec == "reader":
        assert any(h == "Reranked (reader)" for h in subheaders(at)), subheaders(at)
    else:
        assert "is not on disk" in line and "models pull" in line
        assert any("is not on disk" in i.value for i in at.info)  # the empty reranked panel says why


def test_bad_corpus_path_keeps_the_previous_corpus(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(q=PX7, tenant="lumen")
    at.text_input(key="corpus_input").input("/nonexistent/corpus.jsonl").run()  # outside the data roots
    assert not at.exception
    assert [plain(e.value).split(" is not ")[0] for e in at.error] == ["refused: '/nonexistent/corpus.jsonl'"]
    assert any(h.startswith("Lexical") for h in subheaders(at))  # still answering from the lab corpus
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))  # inside a root, but not a corpus
    (tmp_path / "broken.jsonl").write_text("{not json\n", encoding="utf-8")
    at = page(q=PX7, tenant="lumen")
    at.text_input(key="corpus_input").input(str(tmp_path / "broken.jsonl")).run()
    assert not at.exception
    assert any("Could not load this corpus" in e.value for e in at.error)
    assert any(h.startswith("Lexical") for h in subheaders(at))


def test_typed_question_and_ab_comparison() -> None:
    at = page(tenant="lumen")
    at.text_input(key="question").input("Quanto tempo leva a ativação do PX-17?")
    next(b for b in at.button if b.label == "Ask").click().run()
    assert_ok(at)
    assert any(c.value.startswith("Both measured warm") for c in at.caption)  # the Compare tab: A and B
    assert at.query_params.get("q") == "Quanto tempo leva a ativação do PX-17?"


def test_punctuation_only_question_is_an_error_not_a_traceback() -> None:
    at = page(q="?!...", tenant="lumen")
    assert not at.exception
    assert any("no letters or digits" in e.value for e in at.error)
    assert not any(h.startswith("Lexical") for h in subheaders(at))


def test_transforms_in_url_show_queries_flags_and_costs() -> None:
    at = page(q="O PX-7 nao foi ativado apesar do pgto", tenant="lumen", transforms="rewrite,hyde,self_query",
              mmr="1.0", ab="false")
    assert_ok(at)
    assert "Queries" in subheaders(at)
    frames = [f.value for f in at.dataframe]
    queries = next(f for f in frames if "hypothesis_only" in f.columns)
    assert list(queries["kind"]) == ["original", "self_query", "rewrite", "hyde"]
    assert list(queries["hypothesis_only"]) == [False, False, False, True]
    assert queries["query"].iloc[2] == "O PX-7 não foi ativado apesar do pagamento"
    techniques = next(f for f in frames if "technique" in f.columns)
    assert set(techniques["technique"]) == {"self_query", "rewrite", "hyde"}
    assert at.sidebar.multiselect(key="transforms").value == ["rewrite", "hyde", "self_query"]
    # HyDE text never reaches the answer or its cited chunks: it shows only as the hyde query itself.
    shown = [m.value for m in at.markdown if "HIPÓTESE" in m.value]
    assert shown and all(v.startswith("**hyde** (hypothesis only)") for v in shown)


def test_support_gate_panel_says_why_it_abstained() -> None:
    # A question about something no lumen document mentions: the learned gate abstains, and its panel (opened
    # because the answer abstained) gives P against the threshold, the missing words and the bars behind it.
    at = page(q="Qual o horário da biblioteca aos sábados?", tenant="lumen")
    assert_ok(at)
    assert ":red-badge[refusal]" in tier_line(at)
    panel = [e for e in at.expander if e.label == "Support gate: why it answered or abstained"]
    assert len(panel) == 1
    summary = [m.value.replace("\\", "") for m in panel[0].markdown]  # the text is Markdown-escaped
    assert len(summary) == 1 and summary[0].startswith("P(support) ")
    assert "the learned gate abstains" in summary[0] and "'biblioteca'" in summary[0]
    assert [getattr(c, "type", "") for c in panel[0].children.values()].count("vega_lite_chart") == 1
