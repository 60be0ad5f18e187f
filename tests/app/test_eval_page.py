"""The evaluation page under AppTest: the lab set's held-out split, two configurations, real models."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.apptest import assert_ok
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "2_Evaluation.py")


def test_manual_rankings_without_a_run() -> None:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert_ok(at)
    fused = at.dataframe[0].value
    # The seed's fixture: d1 = 1/61 + 1/62 first, d2 = 1/63 + 1/61 second.
    assert list(fused["id"]) == ["d1", "d2", "d3", "d4"]
    assert abs(fused["score"][0] - (1 / 61 + 1 / 62)) < 1e-12
    assert any("not a benchmark" in c.value for c in at.caption)
    at.text_input(key="mn_map").set_value("d1=A,d2=A,d3=B,d4=A")
    at.text_input(key="mn_tenant").set_value("A").run()
    assert_ok(at)
    assert list(at.dataframe[0].value["id"]) == ["d1", "d2", "d4"]
    at.selectbox(key="mn_wi_action").set_value("inject").run()
    at.text_input(key="mn_wi_inject").set_value("d9").run()
    assert_ok(at)
    rows = at.dataframe[1].value
    assert rows.loc[rows["id"] == "d9", "rank_before"].isna().all()


def test_a_comparison_runs_on_the_heldout_split() -> None:
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.selectbox(key="ev_split").set_value("heldout")
    at.multiselect(key="ev_configs").set_value(["bm25", "hybrid"])
    at.selectbox(key="ev_reranker").set_value("none")
    at.text_area(key="ev_hypothesis").set_value("hybrid beats bm25 on paraphrases")
    at.button[0].click().run()  # the form's submit button
    assert_ok(at)
    heads = [s.value for s in at.subheader]
    for title in ("Metrics by configuration", "Comparison against the baseline", "By group", "Failure layers",
                  "Evidence check", "Per question", "Top-k sweep", "What if, on one question", "Exports"):
        assert title in heads, heads
    metrics = next(d.value for d in at.dataframe if {"config", "tier"} <= set(d.value.columns))
    assert list(metrics["config"]) == ["bm25", "hybrid"]
    assert set(metrics["tier"]) == {"lexical_only", "rrf_only"}
    labels = [b.label for b in at.get("download_button")]
    assert {"Comparison (CSV)", "Report (JSON)", "Decision record (Markdown)", "TREC run: bm25",
            "TREC run: hybrid"} <= set(labels)
    assert any("hybrid beats bm25 on paraphrases" in m.value for m in at.markdown)  # decision record preview


def test_decision_comes_first_with_one_warning_per_finding_and_named_phases() -> None:
    """A.3: the decision, its evidence and caveats head the results; no all-empty column; the run's time is
    split into named phases; the two-configuration view has one row per question."""
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.selectbox(key="ev_split").set_value("heldout")
    at.multiselect(key="ev_configs").set_value(["dense", "hybrid", "hybrid+ltr"])
    at.selectbox(key="ev_reranker").set_value("none")
    at.button[0].click().run()
    assert_ok(at)
    heads = [s.value for s in at.subheader]
    assert heads.index("Decision") < heads.index("Metrics by configuration")
    decision = at.success[0].value
    assert decision.startswith("Provisional choice: **")
    warnings = [w.value for w in at.warning]
    assert warnings[0].startswith("The lab set is fictitious")
    assert len(warnings) == len(set(w.split(" wins on ")[0] for w in warnings))  # one per finding
    if "**hybrid+ltr**" not in decision:  # the app's default is the learned ranker (tier full)
        assert any(w.startswith("The app's default is `hybrid+ltr`") for w in warnings)
    for frame in at.dataframe:
        assert not any(frame.value[c].isna().all() for c in frame.value.columns), list(frame.value.columns)
    phases = next(c.value for c in at.caption if c.value.startswith("Where the time went"))
    for phase in ("index and models", "requests", "metrics and significance (ranx)", "click to result"):
        assert phase in phases
    per_question = next(d.value for d in at.dataframe if {"id", "delta", "a", "b"} <= set(d.value.columns))
    report = at.session_state["ev_report"]
    assert len(per_question) == report["questions"]


def test_faquad_is_offered_only_where_it_exists(monkeypatch) -> None:
    """A.4: without ../shared the set is not offered, and the page says how to bring it."""
    from ui import resources

    monkeypatch.setattr(resources, "faquad_dir", lambda: None)
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert_ok(at)
    assert at.radio(key="ev_set").options == ["Lab set (fictitious fixture, 44 questions)",
                                              "My set (corpus + questions, or TREC topics + qrels)"]
    assert any(c.value.startswith("FaQuAD is not on this machine") for c in at.caption)


def test_a_ranker_learned_from_the_labels_is_checked_on_held_out_and_offered_for_adoption_only_when_it_wins(
        tmp_path: Path, monkeypatch) -> None:
    """C: from labels to a measured decision without leaving the page (train on the training part, check on
    held-out beside the corpus' default); the lab set's learned ranker does not beat the shipped one there, so
    no Adopt button is offered and nothing is stored for the corpus."""
    from retrieval.core.paths import LAB_CORPUS
    from retrieval.offline import tuned
    from retrieval.serving import roots
    from retrieval.settings import load_settings

    monkeypatch.setattr(roots, "DEFAULT_JUDGMENTS", tmp_path / "none.jsonl")
    monkeypatch.setattr(roots, "DEFAULT_RATINGS", tmp_path / "none-ratings.jsonl")
    at = AppTest.from_file(PAGE, default_timeout=600).run()
    at.button(key="ev_train").click().run()
    assert_ok(at)
    done = [c.value for c in at.caption if c.value.startswith("New ranker folder")]
    assert len(done) == 1 and ".ranker/" in done[0]
    figures = next(d.value for d in at.dataframe if list(d.value.columns) == ["config", "ndcg@10", "recall@10",
                                                                              "mrr@10"])
    assert list(figures["config"]) == ["default", "learned"]
    record = at.session_state["ev_trained"]
    assert record["labels"]["train"] == 24 and record["heldout"]["default"]["questions"] == 10
    assert figures["ndcg@10"].tolist() == [f'{record["heldout"]["default"]["ndcg@10"]:.4f}',
                                           f'{record["heldout"]["learned"]["ndcg@10"]:.4f}']
    assert "trained on 24 labeled questions (+ 0 shipped), checked on 9 held-out questions" in done[0]
    assert not record["recommended"] and [i.value for i in at.info if i.value.startswith("Not recommended")]
    assert not [b for b in at.button if b.key == "ev_train_adopt"]
    assert not tuned.tuned_path(load_settings(), LAB_CORPUS).exists()


def test_training_states_its_minimum_before_the_click(tmp_path: Path, monkeypatch) -> None:
    """The trainer's minimum is on the page before the button; a set below it leaves the button off."""
    from retrieval.serving import roots

    monkeypatch.setattr(roots, "DEFAULT_JUDGMENTS", tmp_path / "none.jsonl")
    monkeypatch.setattr(roots, "DEFAULT_RATINGS", tmp_path / "none-ratings.jsonl")
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert_ok(at)
    assert any(c.value.startswith("Needs at least 8 answerable labeled questions") and "these labels have 24 " in c.value
               for c in at.caption)
    assert not at.button(key="ev_train").disabled
    lab = (Path(PAGE).parents[1] / "data" / "lab" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    small = tmp_path / "small.jsonl"
    small.write_text("\n".join(lab[:5]) + "\n", encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", f"{tmp_path}:{Path(PAGE).parents[1] / 'data'}")
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["ev_set"], at.session_state["ev_questions"] = "custom", str(small)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (warning,) = [w.value for w in at.warning if w.value.startswith("Needs at least 8")]
    assert "these labels have " in warning and at.button(key="ev_train").disabled


def test_three_configurations_state_holms_correction_and_the_form_takes_other_engines_runs() -> None:
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    uploads = [w for w in at.get("file_uploader") if w.proto.label.startswith("Runs of another engine")]
    assert len(uploads) == 1 and uploads[0].proto.multiple_files
    at.selectbox(key="ev_split").set_value("heldout")
    at.multiselect(key="ev_configs").set_value(["bm25", "dense", "hybrid"])
    at.selectbox(key="ev_reranker").set_value("none")
    at.button[0].click().run()
    assert_ok(at)
    report = at.session_state["ev_report"]
    rows = [c for c in report["comparisons"] if c["metric"] == "ndcg@10"]
    assert [r["candidate"] for r in rows] == ["dense", "hybrid"]
    ordered = sorted(rows, key=lambda r: r["p_value"])  # Holm: the smallest p times 2, the next times 1, monotone
    assert ordered[0]["p_holm"] == pytest.approx(min(1.0, 2 * ordered[0]["p_value"]), abs=1e-6)
    assert ordered[1]["p_holm"] == pytest.approx(max(ordered[0]["p_holm"], ordered[1]["p_value"]), abs=1e-6)
    headers = {c for frame in at.dataframe for c in frame.value.columns}
    assert "p_holm" in headers  # labelled "p (Holm, over the candidates)" by the table's column config


def test_the_learned_rankers_result_reads_in_portuguese(tmp_path: Path, monkeypatch) -> None:
    """On the Portuguese page the ranker panel's table, decision and p-value are written in Portuguese (decimal
    commas, row names, no English sentence)."""
    from retrieval.serving import roots

    monkeypatch.setattr(roots, "DEFAULT_JUDGMENTS", tmp_path / "none.jsonl")
    monkeypatch.setattr(roots, "DEFAULT_RATINGS", tmp_path / "none-ratings.jsonl")
    at = AppTest.from_file(PAGE, default_timeout=600)
    at.query_params["lang"] = "pt"
    at.run()
    at.button(key="ev_train").click().run()
    assert_ok(at)
    figures = next(d.value for d in at.dataframe if "ndcg@10" in d.value.columns)
    assert figures["config"].tolist() == ["padrão", "aprendido"]
    assert all("," in v and "." not in v for v in figures["ndcg@10"])
    (decision,) = [i.value for i in at.info if i.value.startswith("Não recomendado: nDCG@10 reservado ")]
    assert "p=1,0000" in decision or "p=0," in decision
    assert not [i.value for i in at.info if "Not recommended" in i.value]
    assert any(c.value.startswith("Nova pasta de ranqueador ") for c in at.caption)


def test_a_recommended_ranker_is_adopted_for_the_corpus_by_its_button(tmp_path: Path, monkeypatch) -> None:
    """Only a recommended check shows Adopt; the button stores reranker_model=ltr:<folder> in the corpus' tuned file
    beside what it holds, and says where."""
    from retrieval.core.paths import LAB_CORPUS
    from retrieval.offline import tuned
    from retrieval.serving import roots
    from retrieval.settings import load_settings

    monkeypatch.setattr(roots, "DEFAULT_JUDGMENTS", tmp_path / "none.jsonl")
    monkeypatch.setattr(roots, "DEFAULT_RATINGS", tmp_path / "none-ratings.jsonl")
    folder = tmp_path / "ranker"
    folder.mkdir()
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    record = {"corpus": str(LAB_CORPUS.resolve()), "folder": str(folder), "seconds": 9.0, "trained_at": "t",
              "labels": {"questions": 44, "train": 24, "heldout": 9}, "shipped": [],
              "heldout": {"default": {"ndcg@10": 0.90, "recall@10": 1.0, "mrr@10": 0.9},
                          "learned": {"ndcg@10": 0.95, "recall@10": 1.0, "mrr@10": 0.95}},
              "comparison": {"delta": 0.05, "p_value": 0.01, "lost_relevant": []}, "recommended": True,
              "why": "held-out ndcg@10 +0.0500 (p=0.0100), no relevant document lost"}
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["ev_trained"] = record
    at.run()
    assert [s.value for s in at.success if s.value.startswith("Recommended: held-out nDCG@10 +0.0500 (p=0.0100)")]
    try:
        at.button(key="ev_train_adopt").click().run()
        assert_ok(at)
        assert [s.value for s in at.success if s.value.startswith("Adopted: ")]
        adopted = tuned.load_adopted(load_settings(), LAB_CORPUS)
        assert dict(adopted.overrides) == {"reranker_model": f"ltr:{folder}"}
        assert "ranker learned from 24 labeled questions, held-out ndcg@10 +0.050" in adopted.note()
    finally:
        tuned.remove(load_settings(), LAB_CORPUS)
