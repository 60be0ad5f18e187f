"""``bench``: the benchmark. It is the repository's ``bench/`` folder, not part of the package: it builds corpora,
starts processes and compares other libraries from the checkout's own files, so ``bench`` runs from a source checkout
(an editable install included) and, where the package is installed without it, says so in one line (exit 2)."""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from ..core.errors import RetrievalError
from ..core.paths import PROJECT_ROOT
from .common import SetOpt, command_settings, fail, setup_logging


def bench(
    quick: bool = typer.Option(False, "--quick", help="Lab corpus only, within a minute."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Synthetic corpus sizes in subchunks, comma-separated "
                                        "(default 10000,100000; 1000000 takes long to build the first time)."),
    langchain: bool = typer.Option(True, "--langchain/--no-langchain",
                                   help="Compare with LangChain's EnsembleRetriever (needs requirements-bench.txt)."),
    sets: list[str] = SetOpt,
    json_out: Optional[Path] = typer.Option(None, "--json-out", help="Also write the figures as JSON here."),
) -> None:
    """Per-stage latency (p50/p95) per tier, index build, HNSW recall, LangChain comparison and peak memory
    per corpus (each in its own process); prints a table and writes JSON."""
    setup_logging()
    run_benchmark = benchmark()
    if run_benchmark is None:
        fail("the benchmark runs from a source checkout (its bench/ folder beside retrieval/), which this installed "
             "package lacks: clone the repository and run python -m retrieval bench there")
    settings = command_settings(sets)
    overrides = dict(item.partition("=")[::2] for item in sets)
    size_list = None
    if sizes is not None:
        try:
            size_list = [int(x.strip().replace("_", "")) for x in sizes.split(",")]
        except ValueError:
            fail(f"--sizes expects comma-separated integers, got '{sizes}'")
        if not all(MIN_BENCH_SIZE <= n <= MAX_BENCH_SIZE for n in size_list):
            fail(f"--sizes: each size must be between {MIN_BENCH_SIZE:,} and {MAX_BENCH_SIZE:,} subchunks, "
                 f"got '{sizes}'")
    if json_out is not None:
        if json_out.is_dir():
            fail(f"--json-out: {json_out} is a folder; give a file name")
        try:  # a trial file in the target folder, so a bad path fails now rather than after the whole run
            json_out.parent.mkdir(parents=True, exist_ok=True)
            tempfile.NamedTemporaryFile(dir=json_out.parent, prefix=".bench-", suffix=".tmp").close()
        except OSError as exc:
            fail(f"--json-out: cannot write {json_out} ({exc.strerror or exc.__class__.__name__})")
    try:
        run_benchmark(settings, quick=quick, json_out=json_out, sizes=size_list, langchain=langchain,
                      overrides={k.strip().lower(): v for k, v in overrides.items()})
    except RetrievalError as exc:
        fail(str(exc))


MIN_BENCH_SIZE, MAX_BENCH_SIZE = 100, 10_000_000


def benchmark() -> Optional[Callable[..., Any]]:
    """``bench.run.run_benchmark`` of the checkout this package runs from (its folder put on the import path, as
    ``python -m retrieval`` from there has it), or None where the package is installed without ``bench/``."""
    if not (PROJECT_ROOT / "bench" / "run.py").is_file():
        return None
    if str(PROJECT_ROOT) not in sys.path:
        sys.path.insert(0, str(PROJECT_ROOT))
    return importlib.import_module("bench.run").run_benchmark
