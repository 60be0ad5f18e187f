"""The pages' texts: every key a page or panel names is in the catalogue, in both languages; the judge's feature
labels are in both languages (their declarations)."""

from __future__ import annotations

import re
from pathlib import Path

from retrieval.learned.judge.features import CANDIDATE_NAMES, GATE_NAMES, feature_label
from ui.i18n import TEXTS

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [*ROOT.glob("ui/**/*.py"), ROOT / "app.py", *ROOT.glob("pages/*.py")]


def test_every_key_a_page_names_is_in_the_catalogue_in_both_languages() -> None:
    keys: set[str] = set()
    for path in SOURCES:
        keys |= set(re.findall(r'\bt\(\s*"([a-z0-9_]*[a-z0-9])"', path.read_text(encoding="utf-8")))
    assert len(keys) > 350, len(keys)
    missing = sorted(k for k in keys if k not in TEXTS)
    assert not missing, missing
    assert all(set(TEXTS[k]) == {"en", "pt"} and all(TEXTS[k].values()) for k in keys)


def test_every_feature_has_a_label_in_each_language() -> None:
    for name in (*CANDIDATE_NAMES, *GATE_NAMES, "bias"):
        en, pt = feature_label(name, "en"), feature_label(name, "pt")
        assert en != name and pt != name and en != pt, name
    assert feature_label("cov_chunk", "pt") == "pergunta coberta pelo trecho"
    assert feature_label("not_a_feature", "pt") == "not_a_feature"
