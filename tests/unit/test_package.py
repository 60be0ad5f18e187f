"""Package hygiene: importing it is light, and settings validate."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers.paths import ROOT
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


def test_the_package_declares_its_command_and_extras():
    """pyproject.toml: the `retrieval` command is the CLI's main, the dependencies are requirements.txt, and the
    extras (ray, bench) are read from their own pinned files, so a pin is written once."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"retrieval": "retrieval.cli:main"}
    dynamic = project["tool"]["setuptools"]["dynamic"]
    assert dynamic["dependencies"] == {"file": ["requirements.txt"]}
    assert dynamic["optional-dependencies"] == {"ray": {"file": ["requirements-ray.txt"]},
                                                "bench": {"file": ["requirements-bench.txt"]}}
    for name in ("requirements-ray.txt", "requirements-bench.txt"):
        pins = [line for line in (ROOT / name).read_text().splitlines() if line.strip() and not line.startswith("#")]
        assert pins and all("==" in line for line in pins), name
    from retrieval.cli import main

    assert callable(main)
