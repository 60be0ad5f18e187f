"""The main page under AppTest: real corpus, real models, real store (no mocks of our code)."""

from __future__ import annotations

import json
import re

import pytest
from helpers.apptest import assert_ok, open_tab, page, plain
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
    assert "Answer" in subheaders(at)
    assert "full" in tier_line(at)  # the learned ranker (ltr) is the default reranker
    assert any("Extractive answer" in c.value for c in at.caption)  # the adapter says so, in the interface language
    assert any(c.value.startswith("Submit → page laid out") for c in at.caption)  # measured in the app
    at = open_tab(at, "tab_lists")
    assert_ok(at)
    heads = subheaders(at)
    for title in PANELS:  # the learned ranker (ltr) is the default reranker: the Reranked column shows
        assert any(h.startswith(title) for h in heads), heads
    # A labeled question: relevance marks.
    assert any("✓ relevant" in m.value for m in at.markdown)
    # The learned ranker ran: no "no rerank ran" notice, and each reranked item says why it moved.
    assert not any("no reranker configured" in i.value for i in at.info)
    assert any(e.label == "Why it moved (learned ranker)" for e in at.expander)
    # Fused panel: per-ranker contributions as a chart.
    assert len(at.get("vega_lite_chart")) >= 1
    at = open_tab(at, "tab_movement")
    assert "Rank movement" in subheaders(at) and "Evidence lost by the reranker" in subheaders(at)
    at = open_tab(at, "tab_timings")  # the developer's lines; downloads of the trace and the four lists
    assert any(c.value.startswith("Answered by `local-extractive") for c in at.caption)
    assert [b.label for b in at.main.get("download_button")] == [
        "Download this question's report (HTML)", "Trace (JSON)", "lexical (CSV)", "dense (CSV)", "fused (CSV)", "reranked (CSV)"]


def test_only_the_open_tab_is_drawn() -> None:
    """A hidden tab is not laid out on a run: the card columns, the grade controls and Compare's two extra
    requests wait until their tab is opened; the open tab is kept across a new question and a language."""
    at = page(q=PX7, tenant="lumen")
    assert_ok(at)
    assert [tab.label for tab in at.tabs] == ["Rank grid", "Lists as cards", "Movement and losses",
                                              "Compare two configurations", "Judge", "Where is my document?",
                                              "Timings, costs, downloads"]
    heads = subheaders(at)
    assert heads[-3:] == ["Rank grid", "Provenance card", "Why A above B"]
    assert not any(h.startswith(PANELS) for h in heads) and "Rank movement" not in heads
    assert not [r for r in at.radio if r.label.startswith("Grade · ")]
    assert not any(c.value.startswith("Both measured warm") for c in at.caption)
    assert len(at.session_state["traces"]) == 1  # the page's own request only: Compare ran nothing
    at = open_tab(at, "tab_compare")
    assert_ok(at)
    assert any(c.value.startswith("Both measured warm") for c in at.caption)
    assert sorted(json.loads(sig)[-1] for sig in at.session_state["traces"]) == ["", "cmp-a", "cmp-b"]
    assert "Rank grid" not in subheaders(at)
    at = open_tab(at, "tab_judge")
    grades = [r for r in at.radio if r.label.startswith("Grade · ")]
    assert len(grades) >= 5
    assert not any(c.value.startswith("Both measured warm") for c in at.caption)
    grades[1].set_value(2).run()  # a grade not saved yet, and a pair picked in the grid, outlive a tab switch
    at = open_tab(at, "tab_grid")
    third = at.selectbox(key="why_a").options[2].split(" · ")[-1]  # "#3 · <chunk id>"
    at.selectbox(key="why_a").set_value(third).run()
    at = open_tab(open_tab(at, "tab_lists"), "tab_grid")
    assert at.selectbox(key="why_a").value == third
    at = open_tab(at, "tab_judge")
    assert [r.value for r in at.radio if r.label == grades[1].label] == [2]
    at.text_input(key="question").input("Quanto tempo leva a ativação do PX-17?")
    next(b for b in at.button if b.label == "Ask").click().run()
    assert_ok(at)  # a new question keeps the Judge tab open, drawn for the new question
    assert at.session_state["view_tab"] == "Judge"
    assert any(r.label == "Grade · `lumen-px17-ativacao`" for r in at.radio)
    assert not any(h == "Rank grid" for h in subheaders(at))
    at.sidebar.radio(key="lang").set_value("pt").run()
    assert_ok(at)  # the same tab, under its Portuguese label
    assert at.session_state["view_tab"] == "Julgar"
    assert any(r.label.startswith("Nota · ") for r in at.radio)


def test_a_link_opens_its_tab_and_the_link_follows_the_open_tab() -> None:
    at = page(q=PX7, tenant="lumen", tab="timings")
    assert_ok(at)
    assert at.session_state["view_tab"] == "Timings, costs, downloads"
    assert [b.label for b in at.main.get("download_button")][1:] == ["Trace (JSON)", "lexical (CSV)", "dense (CSV)",
                                                                "fused (CSV)", "reranked (CSV)"]
    at = open_tab(at, "tab_movement")
    assert at.query_params["tab"] == "movement"
    at = open_tab(at, "tab_grid")  # the default tab: the link does not name it
    assert "tab" not in at.query_params and at.query_params["q"] == PX7
    at = page(q=PX7, tenant="lumen", tab="everything")
    assert at.session_state["view_tab"] == "Rank grid"
    assert [w.value for w in at.warning] == ["URL parameter ignored: tab=`everything` is not one of `grid`, "
                                             "`lists`, `movement`, `compare`, `judge`, `where`, `timings`; "
                                             "using grid"]


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
    at = open_tab(at, "tab_lists")
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
    assert not any(h in ("Answer", "Rank grid") for h in subheaders(at))


def test_picking_a_labeled_question_sets_question_and_tenant() -> None:
    at = page()
    at.selectbox(key="picked").set_value("lab-004").run()
    assert_ok(at)
    assert at.text_input(key="question").value == "O que significa o erro E-42 no PX-7?"
    assert at.selectbox(key="tenant").value == "lumen"
    assert any("Labeled question `lab-004`" in c.value for c in at.caption)


@pytest.mark.parametrize("spec, tier", [("bi-encoder", "full"), ("reader", "full"), ("cross-encoder", "rrf_only")])
def test_reranker_toggle(spec: str, tier: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The app offers the cross-encoders its deployer names (no model path is typed on the page).
    monkeypatch.setenv("RETRIEVAL_APP_RERANKERS", "no-such-org/no-such-cross-encoder")
    at = page(q=PX7, tenant="lumen")
    at.radio(key="rerank_mode").set_value(spec)
    if spec == "cross-encoder":
        at.run()
        at.selectbox(key="rerank_cross").set_value("no-such-org/no-such-cross-encoder")
    at.run()
    assert_ok(at)
    line = tier_line(at)
    assert f"-badge[{tier}]" in line
    at = open_tab(at, "tab_lists")
    if spec == "bi-encoder":
        assert "bi\\-encoder" in line  # named honestly: a bi-encoder rescoring, not a cross-encoder
        assert any(h == "Reranked (bi-encoder)" for h in subheaders(at))
    elif spec == "reader":
        assert any(h == "Reranked (reader)" for h in subheaders(at)), subheaders(at)
    else:
        assert "is not on disk" in line and "models pull" in line
        assert any(c.value.startswith("Reranked: empty") and "is not on disk" in c.value for c in at.caption)
        at = open_tab(at, "tab_movement")
        assert any("is not on disk" in i.value for i in at.info)  # the empty movement chart says why


def test_bad_corpus_path_keeps_the_previous_corpus(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(q=PX7, tenant="lumen")
    at.text_input(key="corpus_input").input("/nonexistent/corpus.jsonl").run()  # outside the data roots
    assert not at.exception
    assert [plain(e.value).split(" is not ")[0] for e in at.error] == ["refused: '/nonexistent/corpus.jsonl'"]
    assert "Answer" in subheaders(at) and "Rank grid" in subheaders(at)  # still answering from the lab corpus
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))  # inside a root, but not a corpus
    (tmp_path / "broken.jsonl").write_text("{not json\n", encoding="utf-8")
    at = page(q=PX7, tenant="lumen")
    at.text_input(key="corpus_input").input(str(tmp_path / "broken.jsonl")).run()
    assert not at.exception
    assert any("Could not load this corpus" in e.value for e in at.error)
    assert "Answer" in subheaders(at) and "Rank grid" in subheaders(at)


def test_typed_question_and_ab_comparison() -> None:
    at = page(tenant="lumen")
    at.text_input(key="question").input("Quanto tempo leva a ativação do PX-17?")
    next(b for b in at.button if b.label == "Ask").click().run()
    assert_ok(at)
    at = open_tab(at, "tab_compare")
    assert any(c.value.startswith("Both measured warm") for c in at.caption)  # the Compare tab: A and B
    assert at.query_params.get("q") == "Quanto tempo leva a ativação do PX-17?"


def test_compare_b_follows_a_change_of_a_setting_it_was_not_given() -> None:
    """Configuration B's default is A's values (dense-only flipped): a B setting at that default follows A's
    change (A's reranker switched off: B's too, and the link still names no b_reranker); a setting given to B
    stays when A changes."""
    at = page(q=PX7, tenant="lumen", ab="false")
    assert_ok(at)
    assert at.session_state["cmp_reranker"] == "ltr" and at.session_state["cmp_top_k"] == 5
    at.radio(key="rerank_mode").set_value("none").run()
    assert_ok(at)
    assert at.session_state["cmp_reranker"] == "none"
    assert at.query_params.get("reranker") == "none" and "b_reranker" not in at.query_params
    at = open_tab(at, "tab_compare")
    assert at.selectbox(key="cmp_reranker").value == "none"
    at.selectbox(key="cmp_reranker").set_value("bi-encoder:use-m3").run()  # B given its own reranker
    assert at.query_params.get("b_reranker") == "bi-encoder:use-m3"
    at.number_input(key="top_k").set_value(7).run()
    at.radio(key="rerank_mode").set_value("reader").run()
    assert_ok(at)
    assert at.selectbox(key="cmp_reranker").value == "bi-encoder:use-m3"  # kept: B was given it
    assert at.number_input(key="cmp_top_k").value == 7  # followed: B's top_k was A's
    assert "b_top_k" not in at.query_params and at.query_params.get("b_reranker") == "bi-encoder:use-m3"
    at = open_tab(at, "tab_grid")  # B's widgets are not drawn: its settings are kept and still follow A
    at.number_input(key="rrf_k").set_value(30).run()
    at = open_tab(at, "tab_compare")
    assert at.number_input(key="cmp_rrf_k").value == 30
    assert at.selectbox(key="cmp_reranker").value == "bi-encoder:use-m3"


def test_punctuation_only_question_is_an_error_not_a_traceback() -> None:
    at = page(q="?!...", tenant="lumen")
    assert not at.exception
    assert any("no letters or digits" in e.value for e in at.error)
    assert not any(h in ("Answer", "Rank grid") for h in subheaders(at))


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
    assert "the learned gate abstains" in summary[0] and "`biblioteca`" in summary[0]
    assert [getattr(c, "type", "") for c in panel[0].children.values()].count("vega_lite_chart") == 1


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_no_tab_writes_a_stray_value(lang: str) -> None:
    """A statement's value written by Streamlit's magic (``None None`` on the Judge and Where tabs once) never
    reaches the page: every panel is a function."""
    at = page(q=PX7, tenant="lumen", lang=lang)
    for tab in ("tab_judge", "tab_where"):
        at = open_tab(at, tab, lang)
        assert_ok(at)
        assert not [m.value for m in at.markdown if m.value.strip() in {"None", "None None"}], tab
        assert len(at.markdown) > 5


def test_a_documents_other_chunk_in_the_context_is_cited_as_such(monkeypatch) -> None:
    """With RETRIEVAL_CONTEXT_SIBLINGS=1 the PX-17 activation answer cites the document's other chunk, and the page
    says which final chunk's document it belongs to, and how many such chunks the context holds."""
    monkeypatch.setenv("RETRIEVAL_CONTEXT_SIBLINGS", "1")
    at = page(q="Qual o prazo de ativação do PX-17?", tenant="lumen")
    assert_ok(at)
    lines = [c.value for c in at.caption]
    assert any(v.startswith("parent `lumen-px17-ativacao` · context [") and "another chunk of the document of [1]"
               in v for v in lines), lines
    assert any(v.startswith("Context sent to the answer stage: ") and "the last 3 are other chunks of final "
               "documents" in v for v in lines), lines


def test_the_judge_tab_names_the_lists_in_the_pages_language() -> None:
    """Each pooled document's line names the lists that found it and its rank in each, in the page's language."""
    at = page(q=PX7, tenant="lumen", lang="pt")
    at = open_tab(at, "tab_judge", "pt")
    assert_ok(at)
    heads = [m.value for m in at.markdown if m.value.startswith("`lumen-px7-ativacao`")]
    assert heads and "léxica #3, densa #3, fusão #3, reranqueada #3, final #2" in heads[0], heads
    assert "lexical #" not in heads[0] and "fused #" not in heads[0]


def test_the_tier_reason_names_the_learned_ranker_in_the_pages_language() -> None:
    for lang, line in (("en", "Why this tier: the learned ranker (LambdaMART over BM25, dense, coverage and reader "
                               "features; ltr) loaded"),
                       ("pt", "Por que este nível: o ranqueador aprendido (LambdaMART sobre características BM25, "
                              "densas, de cobertura e do leitor; ltr) carregado")):
        at = page(q=PX7, tenant="lumen", lang=lang)
        assert_ok(at)
        assert line in [c.value for c in at.caption], [c.value for c in at.caption if ":" in c.value][:5]
