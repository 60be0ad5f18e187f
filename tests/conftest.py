"""Shared fixtures: settings on a temporary Chroma path, and one lab workbench per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Property-based tests: each test sets its own example budget through ``helpers.fuzz.budget`` (the default run holds
# 500+ examples in all); ``make fuzz`` loads the "fuzz" profile, which multiplies every budget by 20 (10,000+).
# No per-example deadline (a shared store's first write can take a while); the budgets bound the time.
# The reader reads every chunk at index time for users (RETRIEVAL_READER_STATES_AT_INDEX); the suite builds
# hundreds of indexes in temporary folders, each of which would read the whole corpus again: off here (and in
# every process a test starts), on in the tests of the reader's states (tests/integration/test_reader_states.py).
os.environ["RETRIEVAL_READER_STATES_AT_INDEX"] = "false"
KEPT_ENV = ("RETRIEVAL_READER_STATES_AT_INDEX",)

for _name in ("default", "fuzz"):
    hypothesis_settings.register_profile(
        _name, deadline=None, print_blob=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def chroma_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("chroma")


@pytest.fixture(scope="session")
def settings(chroma_dir: Path):
    from retrieval.settings import Settings

    for key in [k for k in os.environ if k.startswith("RETRIEVAL_") and k not in KEPT_ENV]:
        os.environ.pop(key)
    return Settings(chroma_path=chroma_dir, _env_file=None)


@pytest.fixture(scope="session")
def lab_bench(settings):
    """The lab corpus indexed with the default (real) embedding model in a temporary Chroma store."""
    from retrieval.pipeline.workbench import open_workbench

    return open_workbench(settings, progress=False)


@pytest.fixture(scope="session")
def ranx_compiled() -> None:
    """ranx's metric and significance functions compiled once for the session (numba compiles each on first use,
    or reads it from its cache: about 6 s on 2 cores, far more without the cache). Requested by the tests that
    score runs, so the cost is this fixture's setup, not whichever test happens to score first."""
    from retrieval.offline.evaluation.metrics import compile_ranx

    compile_ranx()


@pytest.fixture(scope="session")
def lab_questions():
    from retrieval.ingest.corpus import load_questions
    from retrieval.core.paths import LAB_QUESTIONS

    return load_questions(LAB_QUESTIONS)
