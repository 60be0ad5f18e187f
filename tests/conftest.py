"""Shared fixtures: settings on a temporary Chroma path, and one lab workbench per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def chroma_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("chroma")


@pytest.fixture(scope="session")
def settings(chroma_dir: Path):
    from retrieval.settings import Settings

    for key in [k for k in os.environ if k.startswith("RETRIEVAL_")]:
        os.environ.pop(key)
    return Settings(chroma_path=chroma_dir, _env_file=None)


@pytest.fixture(scope="session")
def lab_bench(settings):
    """The lab corpus indexed with the default (real) embedding model in a temporary Chroma store."""
    from retrieval.pipeline import open_workbench

    return open_workbench(settings, progress=False)


@pytest.fixture(scope="session")
def lab_questions():
    from retrieval.corpus import load_questions
    from retrieval.settings import LAB_QUESTIONS

    return load_questions(LAB_QUESTIONS)
