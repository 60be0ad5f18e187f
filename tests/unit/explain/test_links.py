"""Pure view helpers (retrieval/tables.py) over hand-written trace dicts: no models, no store, no streamlit."""

from __future__ import annotations

import csv
import io
import json

from retrieval.explain import links, support, tables
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict


def trace(**overrides):
    base = {
        "settings": {"top_k": 2},
        "tier": "full", "tier_reason": "reranker loaded",
        "models": {"reranker": "bi-encoder:use-m3", "reranker_kind": "bi-encoder", "reranker_status": "loaded"},
        "lexical": {"score_kind": "bm25", "items": [
            {"chunk_id": "a#0", "parent_id": "a", "rank": 1, "score": 3.5, "terms": {"px-7": 2.0, "ativado": 1.5}}]},
        "dense": {"score_kind": "cosine", "items": [
            {"chunk_id": "b#0", "parent_id": "b", "rank": 1, "score": 0.91},
            {"chunk_id": "a#0", "parent_id": "a", "rank": 2, "score": 0.88}]},
        "fused": {"score_kind": "rrf", "items": [
            {"chunk_id": "a#0", "parent_id": "a", "rank": 1, "score": 1 / 61 + 1 / 62,
             "contributions": {"bm25": 1 / 61, "dense": 1 / 62}, "ranks": {"bm25": 1, "dense": 2}},
            {"chunk_id": "b#0", "parent_id": "b", "rank": 2, "score": 1 / 61,
             "contributions": {"dense": 1 / 61}, "ranks": {"dense": 1}},
            {"chunk_id": "c#0", "parent_id": "c", "rank": 3, "score": 1 / 63,
             "contributions": {"dense": 1 / 63}, "ranks": {"dense": 3}}]},
        "reranked": {"score_kind": "cosine (bi-encoder rescoring)", "items": [
            {"chunk_id": "a#0", "parent_id": "a", "rank": 1, "score": 0.5, "fused_rank": 1},
            {"chunk_id": "c#0", "parent_id": "c", "rank": 2, "score": 0.4, "fused_rank": 3},
            {"chunk_id": "b#0", "parent_id": "b", "rank": 3, "score": 0.3, "fused_rank": 2}]},
        "lost_by_reranker": [{"chunk_id": "b#0", "parent_id": "b", "fused_rank": 2, "reranked_rank": 3}],
        "final": [{"chunk_id": "a#0", "parent_id": "a", "rank": 1}, {"chunk_id": "c#0", "parent_id": "c", "rank": 2}],
        "timings_ms": {"lexical": 1.0, "rerank": None},
        "costs": {"llm_calls": 0, "input_tokens": None},
    }
    base.update(overrides)
    return base


def test_view_helpers_do_not_import_streamlit() -> None:
    source = open(tables.__file__, encoding="utf-8").read()
    assert "import streamlit" not in source and "from streamlit" not in source


def test_highlight_segments_round_trip_and_code_hits() -> None:
    text = "O PX-7 não é o PX-17; Ativação em 24h."
    segments = tables.highlight_segments(text, tables.query_terms("O PX-7 não foi ativação"))
    assert "".join(s for s, _ in segments) == text
    hits = [s for s, hit in segments if hit]
    assert "PX-7" in hits and "não" in hits and "Ativação" in hits
    # PX-17 shares only the part "px" with the question's PX-7, which is a token too: it is a hit by part.
    assert "O" not in hits  # a stopword is never highlighted


def test_snippet_windows_around_the_first_hit() -> None:
    text = "palavra " * 100 + "PX-7 ativado " + "fim " * 100
    window, before, after = tables.snippet(text, tables.query_terms("PX-7"), width=80)
    assert "PX-7" in window and before and after and len(window) <= 80


def test_list_rows_copy_the_trace_and_mark_relevance() -> None:
    t = trace()
    lexical = tables.list_rows(view(t), "lexical", relevant=["a"])
    assert lexical[0]["score"] == 3.5 and lexical[0]["score_kind"] == "bm25"
    assert json.loads(lexical[0]["terms"]) == {"ativado": 1.5, "px-7": 2.0}
    assert lexical[0]["relevance"] == "relevant"
    fused = tables.list_rows(view(t), "fused", relevant=["a"], graded={"b": 1})
    assert fused[0]["rrf_bm25"] == 1 / 61 and fused[0]["rank_dense"] == 2 and fused[0]["found_by"] == "bm25+dense"
    assert fused[1]["found_by"] == "dense" and fused[1]["rank_bm25"] is None and fused[1]["relevance"] == "partial"
    assert tables.list_rows(view(t), "reranked")[1]["fused_rank"] == 3
    assert tables.list_rows(view(t), "dense")[0]["relevance"] is None  # no question set: no marks


def test_lists_csv_has_one_table_per_list() -> None:
    csvs = tables.lists_csv(view(trace()))
    assert list(csvs) == ["lexical", "dense", "fused", "reranked"]
    fused = list(csv.DictReader(io.StringIO(csvs["fused"])))
    assert [r["chunk_id"] for r in fused] == ["a#0", "b#0", "c#0"]
    assert fused[1]["rank_bm25"] == ""  # None is an empty cell, never 0
    empty = tables.lists_csv(view(trace(reranked={"score_kind": "none", "items": []})))["reranked"]
    assert empty.strip() == "list"


def test_lists_csv_name_each_chunks_page_and_section_and_leave_them_empty_where_none() -> None:
    dense = {"score_kind": "cosine", "items": [
        {"chunk_id": "b#0", "parent_id": "b", "rank": 1, "score": 0.91, "section": "Capítulo I › Seção II",
         "page": 4, "page_end": 5},
        {"chunk_id": "a#0", "parent_id": "a", "rank": 2, "score": 0.88, "page": 7}]}
    rows = list(csv.DictReader(io.StringIO(tables.lists_csv(view(trace(dense=dense)))["dense"])))
    assert [(r["section"], r["page"], r["page_end"]) for r in rows] == [("Capítulo I › Seção II", "4", "5"),
                                                                        ("", "7", "")]
    lexical = list(csv.DictReader(io.StringIO(tables.lists_csv(view(trace()))["lexical"])))  # a JSONL corpus: empty
    assert list(lexical[0])[-3:] == ["section", "page", "page_end"]
    assert (lexical[0]["section"], lexical[0]["page"], lexical[0]["page_end"]) == ("", "", "")


def test_movement_and_lost_rows() -> None:
    rows = tables.movement_rows(view(trace()))
    status = {r["chunk_id"]: r["status"] for r in rows}
    assert status == {"a#0": "stayed in", "c#0": "moved in", "b#0": "fell out"}
    assert len(rows) == 6
    assert tables.movement_rows(view(trace(reranked={"score_kind": "none", "items": []}))) == []
    lost = tables.lost_rows(view(trace()), relevant=["b"])
    assert lost == [{"chunk_id": "b#0", "parent_id": "b", "fused_rank": 2, "reranked_rank": 3, "reader": None,
                     "relevance": "relevant", "where": {}}]
    placed = trace(lost_by_reranker=[{"chunk_id": "b#0", "parent_id": "b", "fused_rank": 2, "reranked_rank": 3,
                                      "page": 4, "page_end": 5, "section": "Capítulo I › Seção II"}])
    assert tables.lost_rows(view(placed))[0]["where"] == {"section": "Capítulo I › Seção II", "page": 4,
                                                          "page_end": 5}


def test_contribution_rows_mark_single_ranker_items() -> None:
    rows = tables.contribution_rows(view(trace()))
    assert [(r["chunk_id"], r["ranker"]) for r in rows] == [("a#0", "bm25"), ("a#0", "dense"), ("b#0", "dense"),
                                                            ("c#0", "dense")]
    assert [r["single_ranker"] for r in rows] == [False, False, True, True]


def test_empty_reasons_come_from_the_trace() -> None:
    off = trace(models={"reranker": None}, reranked={"score_kind": "none", "items": [], "note": "no rerank ran"})
    assert tables.empty_reason(view(off), "reranked").text() == "no rerank ran: no reranker configured (reranker off)"
    assert tables.empty_reason(view(off), "reranked").text("pt") == ("nenhum rerank rodou: nenhum reranqueador "
                                                                     "configurado (reranqueador desligado)")
    failed = trace(models={"reranker": "x/y", "reranker_status": "reranker 'x/y' could not load: OSError"},
                   reranked={"score_kind": "none", "items": []})
    assert "could not load" in tables.empty_reason(view(failed), "reranked").text()
    skipped = trace(lexical={"score_kind": "bm25", "items": [], "note": "skipped: hybrid switched off"})
    assert tables.empty_reason(view(skipped), "lexical").text() == "skipped: hybrid switched off"


def test_diff_finals() -> None:
    a = {"final": [{"chunk_id": "x", "rank": 1}, {"chunk_id": "y", "rank": 2}, {"chunk_id": "z", "rank": 3}]}
    b = {"final": [{"chunk_id": "y", "rank": 1}, {"chunk_id": "w", "rank": 2}, {"chunk_id": "x", "rank": 3}]}
    diff = tables.diff_finals(view(a), view(b))
    assert diff["only_a"] == [{"id": "z", "rank": 3}]
    assert diff["only_b"] == [{"id": "w", "rank": 2}]
    assert diff["both"] == [{"id": "x", "rank_a": 1, "rank_b": 3, "moved": -2},
                            {"id": "y", "rank_a": 2, "rank_b": 1, "moved": 1}]
    assert diff["overlap"] == 2 / 4 and not diff["same"]
    assert tables.diff_finals(view(a), view(a))["same"]
    assert tables.diff_finals(view({"final": []}), view({"final": []}))["overlap"] == 1.0


def test_url_params_round_trip_and_reject_bad_values() -> None:
    defaults = links.ViewParams()
    params = links.ViewParams(q="PX-7?", tenant="lumen", filters={"year": ("2024", "2025")}, top_k=3,
                              reranker="bi-encoder:use-m3", dense_only=True, min_similarity=0.5)
    query = links.params_to_query(params, defaults)
    assert query == {"q": "PX-7?", "tenant": "lumen", "f.year": ["2024", "2025"], "top_k": "3",
                     "reranker": "bi-encoder:use-m3", "dense_only": "true", "min_similarity": "0.5"}
    parsed, problems = links.params_from_query({k: v if isinstance(v, list) else [v] for k, v in query.items()},
                                               defaults)
    assert parsed == params and problems == []
    parsed, problems = links.params_from_query({"top_k": ["0"], "rrf_k": ["abc"], "min_similarity": ["2"]}, defaults)
    assert parsed == defaults
    assert [p.text() for p in problems] == ["top_k=0 is outside [1, 200]; using 5",
                                            "rrf_k='abc' is not an integer; using 60",
                                            "min_similarity=2.0 is outside [-1, 1]; using 0.8"]



def test_highlight_marks_only_the_part_of_a_code_that_matched() -> None:
    text = "O PX-17 e o PX-7."
    segments = tables.highlight_segments(text, tables.query_terms("PX-7"))
    assert "".join(s for s, _ in segments) == text
    hits = [s for s, hit in segments if hit]
    # PX-7 matched whole; of PX-17 only "PX" (the shared part) is marked, never the whole "PX-17".
    assert hits == ["PX", "PX-7"]
    assert ("-17 e o ", False) in segments


def test_timing_rows_put_every_millisecond_in_a_named_row() -> None:
    trace = {"timings_ms": {"lexical": 1.0, "embed_query": 2.5, "dense": 3.0, "rerank": None, "answer": 0.5,
                            "total": 4507.0}}
    rows = tables.timing_rows(view(trace))
    assert [r["stage"] for r in rows] == ["lexical", "embed_query", "dense", "rerank", "answer",
                                          tables.UNATTRIBUTED, "total"]
    assert tables.unattributed_ms(view(trace)) == 4500.0  # 4507 − (1 + 2.5 + 3 + 0.5)
    assert tables.unattributed_ms(view({"timings_ms": {"lexical": 1.0}})) is None


def test_language_and_judgments_file_travel_in_the_url() -> None:
    params, problems = links.params_from_query({"lang": ["pt"], "judgments": ["j.jsonl"]}, links.ViewParams())
    assert params.lang == "pt" and params.judgments == "j.jsonl" and not problems
    params, problems = links.params_from_query({"lang": ["fr"]}, links.ViewParams())
    assert params.lang == "en" and [p.text() for p in problems] == ["lang='fr' is not one of en, pt; using en"]
    assert links.params_to_query(links.ViewParams(lang="pt"), links.ViewParams()) == {"lang": "pt"}


def test_the_open_tab_travels_in_the_url() -> None:
    defaults = links.ViewParams()
    assert links.params_to_query(links.ViewParams(q="x", tab="timings"), defaults) == {"q": "x", "tab": "timings"}
    assert links.params_to_query(links.ViewParams(q="x", tab="grid"), defaults) == {"q": "x"}  # the default
    params, problems = links.params_from_query({"tab": ["lists"]}, defaults)
    assert params.tab == "lists" and problems == []
    params, problems = links.params_from_query({"tab": ["Timings"]}, defaults)
    assert params.tab == "grid"
    assert [p.text() for p in problems] == [
        "tab='Timings' is not one of grid, lists, movement, compare, judge, where, timings; using grid"]
    assert problems[0].text("pt").startswith("tab='Timings' não é")


def test_compare_configuration_b_travels_in_the_url_with_the_same_validation() -> None:
    defaults = links.ViewParams()
    params = links.ViewParams(b_dense_only=False, b_reranker="none", b_top_k=7, b_rrf_k=30, b_overfetch=2,
                              b_min_similarity=0.6)
    query = links.params_to_query(params, defaults)
    assert query == {"b_dense_only": "false", "b_reranker": "none", "b_top_k": "7", "b_rrf_k": "30",
                     "b_overfetch": "2", "b_min_similarity": "0.6"}
    parsed, problems = links.params_from_query({k: [v] for k, v in query.items()}, defaults)
    assert parsed == params and problems == []
    # B's values pass the bounds A's do; a bad one is dropped with its reason and B keeps its default (None).
    parsed, problems = links.params_from_query({"b_top_k": ["0"], "b_rrf_k": ["x"], "b_min_similarity": ["nan"],
                                                "b_overfetch": ["101"]}, defaults)
    assert (parsed.b_top_k, parsed.b_rrf_k, parsed.b_min_similarity, parsed.b_overfetch) == (None,) * 4
    assert [p.text() for p in problems] == ["b_top_k=0 is outside [1, 200]; using B's default",
                        "b_rrf_k='x' is not an integer; using B's default",
                        "b_min_similarity=nan is outside [-1, 1]; using B's default",
                        "b_overfetch=101 is outside [1, 100]; using B's default"]
    assert links.params_to_query(defaults, defaults) == {}  # B unset: nothing in the link


def test_support_rows_order_by_strength_and_skip_the_bias() -> None:
    trace = {"gate": {"support": {"best": 0.12, "threshold": 0.15, "passes": False, "reason": "no selected chunk "
                                  "mentions 'zulu'; support 0.12 < 0.15",
                                  "features": {"g_focus_missing": 0.6, "g_cos_best": 0.88, "g_cov_best": 0.3},
                                  "contributions": {"g_focus_missing": -0.2, "g_cos_best": 0.5, "g_cov_best": 0.0,
                                                    "bias": -1.1}}}}
    rows = support.support_rows(view(trace))
    assert [(r["feature"], r["contribution"], r["value"], r["direction"]) for r in rows] == [
        ("g_cos_best", 0.5, 0.88, "for answering"), ("g_focus_missing", -0.2, 0.6, "against answering"),
        ("bias", -1.1, None, "baseline")]  # the bars and the baseline sum to the log-odds: 0.5 − 0.2 − 1.1
    assert [r["label"] for r in rows] == ["best dense cosine", "focus words in no chunk", "model baseline (bias)"]
    assert [r["label"] for r in support.support_rows(view(trace), "pt")][0] == "melhor cosseno denso"
    assert rows[1]["meaning"].startswith("IDF-weighted share of the focus tokens")
    from retrieval.learned.judge.features import GATE_NAMES

    from retrieval.learned.judge.features import feature_label

    assert all(feature_label(name, lang) != name for name in (*GATE_NAMES, "bias") for lang in ("en", "pt"))
    assert support.support_summary(view(trace)).text() == "P(support) 0.12 < threshold 0.15: the learned gate abstains."
    trace["gate"]["support"]["missing_tokens"] = ["zulu", "alfa"]
    assert support.support_summary(view(trace)).text() == ("P(support) 0.12 < threshold 0.15: the learned gate "
                                                           "abstains — no selected chunk mentions 'zulu', 'alfa'.")
    assert support.support_summary(view(trace)).text("pt") == ("P(suporte) 0,12 < limiar 0,15: o portão aprendido se "
                                                               "abstém — nenhum trecho selecionado menciona 'zulu', "
                                                               "'alfa'.")
    passing = {"gate": {"support": {"best": 0.2, "threshold": 0.15, "passes": True, "missing_tokens": ["rate"]}}}
    # an answer beside "no selected chunk mentions…" read as a contradiction: the words are said as what they are
    assert support.support_summary(view(passing)).text() == ("P(support) 0.20 ≥ threshold 0.15: the learned gate "
                                                             "answers; the question's word 'rate' is in no selected "
                                                             "chunk (it lowers P(support), not below the threshold: "
                                                             "the chunks may say it in other words).")
    passing["gate"]["support"]["missing_tokens"] = ["rate", "fee"]
    assert support.support_summary(view(passing)).text("pt").endswith(
        "as palavras da pergunta 'rate', 'fee' não estão em nenhum trecho selecionado (baixam o P(suporte), não abaixo "
        "do limiar: os trechos podem dizê-lo com outras palavras).")
    close = {"gate": {"support": {"best": 0.8784, "threshold": 0.8785, "passes": False}}}
    assert support.support_summary(view(close)).text() == ("P(support) 0.8784 < threshold 0.8785: the learned gate "
                                                           "abstains.")
    off = view({"gate": {"support": {"note": "not applied: off"}}})
    assert support.support_summary(off).text() == "not applied: off"
    assert support.support_summary(view({"gate": {}})) is None and support.support_rows(view({"gate": {}})) == []


def test_typed_filter_values_match_the_tenants_values_by_text_and_name_the_rest() -> None:
    from retrieval.explain.links import typed_filter_values

    assert typed_filter_values(" 2019,2021 , x,2019,, x ", [2019, 2020, 2021]) == ([2019, 2021], ["x"])
    assert typed_filter_values("", ["a"]) == ([], [])
    assert typed_filter_values("True", [True, "true"]) == ([True], [])
    assert typed_filter_values("1, True", [1, True]) == ([1, True], [])   # equal in Python, distinct values here
