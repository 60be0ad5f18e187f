"""Bounded settings: a value whose extreme cannot be computed, or makes a request unbounded in time or memory,
is refused in one line naming the setting, the value and the rule (``fusion=combsum`` with weights 1e308
accepted and then every request failing with OverflowError; ``max_question_chars=10**12`` letting one request
run for 11 minutes)."""

from __future__ import annotations

import typing

import pytest

from retrieval.core.errors import InvalidSetting
from retrieval.core.types import RankedList, ScoredItem
from retrieval.settings import Settings, load_settings
from retrieval.stages.fusion import MAX_WEIGHT, combsum, weighted_rrf

#: Numeric settings without an upper bound, and why none is needed (each must still be finite).
UNBOUNDED_ABOVE = {
    "min_bm25": "a threshold: a high one abstains on everything, in constant time",
    "chunk_overlap": "must be smaller than chunk_tokens (≤ 2000), a rule over the two settings",
}


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, repr(text)
    return text


@pytest.mark.parametrize("overrides, name, rule", [
    ({"max_question_chars": 10**12}, "max_question_chars", "less than or equal to 20000"),
    ({"rrf_k": 10**400}, "rrf_k", "less than or equal to 100000"),
    ({"reranker_max_input": 10**6}, "reranker_max_input", "less than or equal to 1000"),
    ({"max_input_bytes": 10**15}, "max_input_bytes", "less than or equal to 8589934592"),
    ({"overfetch": 101}, "overfetch", "less than or equal to 100"),
    ({"top_k": 201}, "top_k", "less than or equal to 200"),
    ({"chunk_tokens": 10**9}, "chunk_tokens", "less than or equal to 2000"),
    ({"hnsw_ef_search": 10**9}, "hnsw_ef_search", "less than or equal to 10000"),
    ({"milvus_timeout": 10**9}, "milvus_timeout", "less than or equal to 600"),
    ({"milvus_timeout": "inf"}, "milvus_timeout", "finite number"),
    ({"min_bm25": "inf"}, "min_bm25", "finite number"),
    ({"min_similarity": "nan"}, "min_similarity", "finite number"),
    ({"chunk_overlap": 10**9}, "chunk_overlap", "must be smaller than chunk_tokens"),
    ({"fusion": "combsum", "fusion_weights": "bm25=1e308,dense=1e308"}, "fusion_weights", "≤ 1,000,000"),
    ({"fusion": "weighted_rrf", "fusion_weights": "dense=1000001"}, "fusion_weights", "≤ 1,000,000"),
])
def test_extreme_values_are_refused_in_one_line_naming_setting_value_and_rule(overrides, name, rule):
    with pytest.raises(InvalidSetting) as err:
        Settings(_env_file=None).with_overrides(**overrides)
    text = _one_line(err.value)
    assert f"{name}=" in text and rule in text
    assert str(overrides[name])[:20] in text  # the value given


def test_the_bounds_themselves_are_accepted():
    s = Settings(_env_file=None).with_overrides(max_question_chars=20_000, rrf_k=100_000, reranker_max_input=1000,
                                                fusion="combsum", fusion_weights=f"bm25={MAX_WEIGHT},dense=0.5")
    assert (s.max_question_chars, s.rrf_k, s.fusion_weight_map["bm25"]) == (20_000, 100_000, MAX_WEIGHT)


def test_an_environment_variable_beyond_its_bound_is_one_line(monkeypatch):
    monkeypatch.setenv("RETRIEVAL_MAX_QUESTION_CHARS", str(10**12))
    with pytest.raises(InvalidSetting) as err:
        load_settings(_env_file=None)
    text = _one_line(err.value)
    assert "max_question_chars" in text and "20000" in text and "RETRIEVAL_" in text


def test_every_numeric_setting_has_an_upper_bound_or_a_reason():
    """The class, not the examples: a numeric setting added without ``le``/``lt`` fails here."""
    missing = []
    for name, info in Settings.model_fields.items():
        kinds = set(typing.get_args(info.annotation)) or {info.annotation}
        if not kinds & {int, float} or bool in kinds:
            continue
        bounded = any(getattr(m, "le", None) is not None or getattr(m, "lt", None) is not None
                      for m in info.metadata)
        if not bounded and name not in UNBOUNDED_ABOVE:
            missing.append(name)
    assert missing == []


def _scored(stage, ids, scores):
    return RankedList(stage, "x", tuple(ScoredItem(c, c, r, s) for r, (c, s) in enumerate(zip(ids, scores), 1)))


def test_fusion_at_the_largest_weight_stays_finite_and_a_larger_one_is_refused():
    lists = {"bm25": _scored("lexical", ["a", "b"], [3.0, 1.0]), "dense": _scored("dense", ["a", "c"], [0.9, 0.1])}
    fused = combsum(lists, {"bm25": MAX_WEIGHT, "dense": MAX_WEIGHT})
    assert [i.score for i in fused.items][:1] == [2 * MAX_WEIGHT]
    assert weighted_rrf({"bm25": ["a"], "dense": ["a"]}, weights={"bm25": MAX_WEIGHT}).items[0].score \
        == pytest.approx(MAX_WEIGHT / 61 + 1 / 61)
    for call in (lambda: combsum(lists, {"bm25": 1e308, "dense": 1e308}),
                 lambda: weighted_rrf({"bm25": ["a"]}, weights={"bm25": float("inf")})):
        with pytest.raises(InvalidSetting, match="fusion weight of 'bm25' must be a finite number"):
            call()


def test_a_blank_store_path_is_the_default_store_not_the_current_folder(monkeypatch):
    from pathlib import Path

    from retrieval.settings import Settings

    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", "  ")
    assert Settings(_env_file=None).chroma_path == Path(".retrieval/chroma")
    monkeypatch.setenv("RETRIEVAL_CHROMA_PATH", "/srv/store")
    assert Settings(_env_file=None).chroma_path == Path("/srv/store")


def test_exact_dense_search_takes_effect_on_the_local_backend_and_is_refused_on_milvus(monkeypatch):
    from pydantic import ValidationError

    from retrieval.settings import INDEX_SETTINGS, Settings

    assert Settings(_env_file=None).dense_exact_up_to == 50_000 and "dense_exact_up_to" in INDEX_SETTINGS
    assert Settings(backend="milvus", _env_file=None).dense_exact_up_to == 50_000   # the default says nothing there
    assert Settings(backend="milvus", dense_exact_up_to=0, _env_file=None).dense_exact_up_to == 0
    monkeypatch.setenv("RETRIEVAL_DENSE_EXACT_UP_TO", "1000")
    with pytest.raises(ValidationError, match="dense_exact_up_to=1000: the milvus backend searches its own HNSW"):
        Settings(backend="milvus", _env_file=None)
    with pytest.raises(ValidationError, match="less than or equal to 2000000"):
        Settings(dense_exact_up_to=10**9, _env_file=None)


def test_each_setting_says_its_scope_on_its_field() -> None:
    """Index, state, process, connection and serving settings are marked on their fields; the index-level names
    every cache keys on are read from those marks (the 23 below, as the hand-kept list had them)."""
    from retrieval.settings import INDEX_SETTINGS, PROCESS_SETTINGS, REQUEST_SETTINGS, STATE_SETTINGS, Settings, \
        scope_of, scoped

    assert set(INDEX_SETTINGS) == {
        "embedding_model", "chunk_tokens", "chunk_overlap", "contextual", "passage_template", "bm25_engine",
        "bm25_analyzer", "hnsw_ef_search", "dense_exact_up_to", "tenant_field", "tenant_buckets", "chroma_path",
        "chroma_host", "allow_downloads", "backend", "milvus_uri", "judge_path", "reader_state_codec",
        "reader_state_mb", "reader_states_at_index", "memory_mb", "encoder_precision", "one_pass"}
    assert STATE_SETTINGS == ("reader_state_codec", "reader_state_mb", "reader_states_at_index")
    assert PROCESS_SETTINGS == ("memory_mb",)
    assert scope_of("top_k") == "request" and "top_k" in REQUEST_SETTINGS and "fusion" in REQUEST_SETTINGS
    assert scope_of("llm_api_key") == "connection" and scope_of("uploads_path") == "serving"
    # every field in exactly one scope
    assert sorted(n for s in ("request", "index", "state", "process", "connection", "serving") for n in scoped(s)) \
        == sorted(Settings.model_fields)
    with pytest.raises(ValueError, match="unknown setting scope.s. indx"):
        scoped("indx")
    base = Settings(_env_file=None)
    assert base.with_overrides(top_k=7).request_conflicts(base) == []
    assert base.with_overrides(chunk_tokens=80, reader_state_mb=5).request_conflicts(base) == \
        ["chunk_tokens", "reader_state_mb"]
