"""``bench`` runs the benchmark of the repository's ``bench/`` folder, which the installed package does not hold:
from a checkout it finds it (from any folder), and a package installed without it says so in one line, exit 2."""

from __future__ import annotations

from typer.testing import CliRunner

from retrieval import cli
from retrieval.cli import bench as bench_command
from retrieval.core.paths import PROJECT_ROOT


def test_a_checkout_finds_its_benchmark() -> None:
    run = bench_command.benchmark()
    assert run is not None and run.__name__ == "run_benchmark"
    assert run.__module__ == "bench.run" and run.__code__.co_filename == str(PROJECT_ROOT / "bench" / "run.py")


def test_without_the_benchmark_folder_bench_is_one_line_and_exit_2(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bench_command, "PROJECT_ROOT", tmp_path)   # as installed: no bench/ beside the package
    assert bench_command.benchmark() is None
    result = CliRunner().invoke(cli.app, ["bench", "--quick"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == ("error: the benchmark runs from a source checkout (its bench/ folder beside retrieval/), "
                             "which this installed package lacks: clone the repository and run python -m retrieval "
                             "bench there\n")
