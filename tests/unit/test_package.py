"""Package hygiene: importing it is light, and settings validate."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _paths import ROOT
from pydantic import ValidationError


def test_import_does_not_load_torch_chromadb_or_streamlit():
    code = ("import sys, retrieval, retrieval.pipeline.workbench, retrieval.cli, retrieval.offline.evaluation, retrieval.explain.tables, retrieval.explain.links; "
            "print(sorted(m for m in ('torch', 'chromadb', 'streamlit', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_settings_validate_and_hide_the_api_key():
    from retrieval.settings import Settings

    s = Settings(_env_file=None, llm_api_key="sk-hidden")
    assert s.window == s.overfetch * s.top_k
    assert "sk-hidden" not in str(s.public_dict()) and s.public_dict()["llm_api_key_set"] is True
    with pytest.raises(ValidationError):
        Settings(_env_file=None, chunk_tokens=50, chunk_overlap=50)
    with pytest.raises(ValueError, match="unknown setting"):
        s.with_overrides(rrf=3)
    assert s.with_overrides(rrf_k="30").rrf_k == 30
