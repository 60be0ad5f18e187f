"""The settings (retrieval/settings.py): what a request may set is checked at once, in one line, and the index key
names every setting that shapes the index."""

from __future__ import annotations

import pytest
from helpers.errors import one_line

from retrieval.core.errors import InvalidSetting
from retrieval.settings import Settings
from retrieval.stages.fusion import parse_weights


@pytest.mark.parametrize("text, match", [
    ("bm25=0,dense=0", "all 0"), ("Dense=0", "unknown ranker 'Dense'"), ("bm2=0", "unknown ranker 'bm2'"),
    ("bm25:hyde=1", "dense:hyde"), ("dense:foo=1", "unknown ranker"), ("bm25=1,bm25=2", "twice"),
    ("bm25=-1", "≥ 0"), ("bm25=nan", "finite"), ("bm25", "name=number"),
])
def test_bad_fusion_weights_are_refused_in_one_line(text, match):
    """Regression: all-zero fusion weights and unknown ranker names were taken."""
    with pytest.raises(InvalidSetting, match=match) as err:
        Settings(_env_file=None).with_overrides(fusion="weighted_rrf", fusion_weights=text)
    one_line(err.value)
    assert "fusion_weights" in str(err.value)


def test_weights_need_a_weighted_fusion_and_variant_weights_their_transform():
    """Regression: weights that plain rrf ignores were taken without a word."""
    base = Settings(_env_file=None)
    with pytest.raises(InvalidSetting, match="plain rrf ignores them"):
        base.with_overrides(fusion_weights="bm25=1,dense=0.5")
    with pytest.raises(InvalidSetting, match="'rewrite' transform"):
        base.with_overrides(fusion="weighted_rrf", fusion_weights="bm25:rewrite=2")
    ok = base.with_overrides(fusion="weighted_rrf", fusion_weights="bm25:rewrite=2,dense:hyde=0.5",
                             transforms="rewrite,hyde")
    assert ok.fusion_weight_map == {"bm25:rewrite": 2.0, "dense:hyde": 0.5}
    assert parse_weights("bm25=1,dense=0") == {"bm25": 1.0, "dense": 0.0}


@pytest.mark.parametrize("overrides, expected", [
    ({"chunk_overlap": "200"}, "chunk_overlap=200: must be smaller than chunk_tokens (120)"),
    ({"top_k": "0"}, "invalid setting top_k='0': Input should be greater than or equal to 1"),
    ({"dedup": "doc"}, "invalid setting dedup='doc': Input should be 'parent' or 'chunk'"),
    ({"rrf_k": "abc"}, "invalid setting rrf_k='abc'"),
    ({"transforms": "rewrite,nope"}, "unknown transform(s) nope"),
    ({"nope": "1"}, "unknown setting(s): 'nope'"),
])
def test_setting_errors_are_one_line_naming_setting_value_and_rule(overrides, expected):
    """Regression: a setting's error was not one line naming the setting, its value and the rule."""
    with pytest.raises(InvalidSetting) as err:
        Settings(_env_file=None).with_overrides(**overrides)
    assert expected in one_line(err.value)


def test_index_key_names_every_index_setting():
    base = Settings(_env_file=None)
    keys = {base.with_overrides(**{name: value}).index_key() for name, value in
            [("contextual", True), ("hnsw_ef_search", 400), ("chunk_tokens", 200), ("top_k", 9)]}
    assert base.index_key() in keys and len(keys | {base.index_key()}) == 4  # top_k is per request
