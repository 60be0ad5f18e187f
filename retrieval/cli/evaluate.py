"""``eval`` (configurations and imported runs on a labeled question set, a release gate) and ``calibrate`` (the
cosine gate on the dev split); their text is :mod:`retrieval.offline.summaries`'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from ..core.errors import RetrievalError
from ..core.inputs import check_json_depth, check_regular_file
from .common import (CorpusOpt, MmrOpt, SetOpt, TransformOpt, adopted, command_settings, echo, fail, open_bench,
                     setup_logging)


def eval_(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus path."),
    questions: Path = typer.Option(..., "--questions", help="Questions: JSONL, BEIR folder, SQuAD JSON, or TREC "
                                   "topics (with --qrels)."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels (qid 0 docno rel) for TREC topics."),
    k: str = typer.Option("1,3,5,10", "--k", help="Cut-offs, comma-separated."),
    configs: str = typer.Option("bm25,dense,hybrid,hybrid+rerank", "--configs", help="Named configs; first = baseline."),
    config_file: Optional[Path] = typer.Option(None, "--config-file", help='JSON list of {"name", "settings"}.'),
    split: str = typer.Option("all", "--split", help="dev | heldout | all"),
    hypothesis: Optional[str] = typer.Option(None, "--hypothesis", help="The expectation, written before the run."),
    json_: bool = typer.Option(False, "--json", help="Print the report JSON only."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write report.json, comparison.csv, per-question CSVs, "
                                       "a TREC run per config and decision.md here."),
    sweep: Optional[str] = typer.Option(None, "--sweep", help="A config name: add its top-k sweep (k = 1…20)."),
    run: list[str] = typer.Option([], "--run", help="Another engine's run to evaluate beside the configs: a TREC "
                                  "run or JSONL of rankings, PATH or NAME=PATH (repeatable)."),
    gate: Optional[str] = typer.Option(None, "--gate", help="Release gate: METRIC[,drop=D][,alpha=A][,lost=L]"
                                       "[,spans=S] (e.g. ndcg@10,drop=0.01; spans=S: at most S answers may lose the "
                                       "labelled fact the baseline's held): exit 1 when a candidate fails it; with --out, "
                                       "gate.xml (JUnit) and gate_per_query.csv are written there."),
    transform: list[str] = TransformOpt,
    mmr: Optional[float] = MmrOpt,
    sets: list[str] = SetOpt,
) -> None:
    """Evaluate configurations (and imported runs) on a labeled question set (metrics by ranx)."""
    setup_logging()
    settings = command_settings(sets, transforms=transform or None, mmr_lambda=mmr)
    from ..ingest.corpus import load_questions
    from ..offline.evaluation import TqdmProgress, bench_factory, evaluate_configs

    try:
        ks = [int(x) for x in k.split(",") if x.strip()]
    except ValueError:
        fail(f"--k expects integers separated by commas, got '{k}'")
    settings, tuned_note = adopted(settings, corpus)  # the corpus' adopted default, under --set
    from ..offline.release import ReleaseRule, check, junit_xml, per_query_csv
    from ..offline.runs import load_run

    try:
        rule = ReleaseRule.parse(gate) if gate is not None else None
        imported = [load_run(path, name or None) for name, _, path in
                    (item.rpartition("=") if "=" in item else ("", "", item) for item in run)]
        cfgs = _configs(configs, config_file, settings)
        qs = load_questions(questions, qrels=qrels, max_question_chars=settings.max_question_chars)
        report = evaluate_configs(bench_factory(corpus), settings, qs, cfgs, ks, split, TqdmProgress(), hypothesis,
                                  sweep=sweep, imported=imported)
        checks = check(report, rule) if rule is not None else []
    except (RetrievalError, ValueError) as exc:
        fail(str(exc))
    if tuned_note:
        report["tuned"] = tuned_note
    written = []
    if out is not None:
        from ..offline.report import write_outputs

        try:
            written = write_outputs(report, out)
        except OSError as exc:
            fail(f"{out}: cannot write the outputs ({exc})")
        except RetrievalError as exc:  # what no export can carry (a file that cannot be skipped alone)
            fail(str(exc))
    if rule is not None:
        report["gate"] = {"rule": gate, "passed": all(c.passed for c in checks),
                          "checks": [{"candidate": c.candidate, "condition": c.condition, "passed": c.passed,
                                      "reason": c.reason.text(), "reason_code": c.reason.to_dict()} for c in checks]}
        if out is not None:
            try:
                (out / "gate.xml").write_text(junit_xml(checks, rule), encoding="utf-8")
                (out / "gate_per_query.csv").write_text(per_query_csv(report, rule), encoding="utf-8")
                written += [out / "gate.xml", out / "gate_per_query.csv"]
            except OSError as exc:
                fail(f"{out}: cannot write the gate's outputs ({exc})")
    if json_:
        typer.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        from ..offline import summaries

        echo(summaries.evaluation(report, split))
        if written:
            echo(f"\nwrote {len(written)} files to {out}")
        if checks:
            echo(summaries.gate(checks))
    if checks and not all(c.passed for c in checks):
        raise typer.Exit(1)


def _configs(configs: str, config_file: Optional[Path], settings: Any) -> list[Any]:
    """The named configurations plus a config file's, each one's settings validated before anything loads."""
    from ..offline.evaluation import resolve_configs

    extra = []
    if config_file is not None:
        try:
            check_regular_file(config_file, what="config file")
            text = config_file.read_text(encoding="utf-8")
            check_json_depth(text, config_file)
            extra = json.loads(text)
        except RetrievalError as exc:
            fail(str(exc))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            fail(f"{config_file}: cannot read config file ({exc})")
        if not isinstance(extra, list):
            fail(f"{config_file}: expected a JSON list of configs")
    names = [c.strip() for c in configs.split(",") if c.strip()] if configs else []
    cfgs = resolve_configs(names, settings, extra)
    if not cfgs:
        fail("no configuration to evaluate")
    for cfg in cfgs:
        try:
            settings.with_overrides(**cfg.overrides)
        except ValueError as exc:
            fail(f"config '{cfg.name}': {exc}")
    return cfgs


def calibrate(
    corpus: Optional[Path] = CorpusOpt,
    questions: Optional[Path] = typer.Option(None, "--questions", help="Labeled questions (default: lab set)."),
    sets: list[str] = SetOpt,
) -> None:
    """Choose the cosine gate (min_similarity) on the dev split; print held-out abstention accuracy."""
    setup_logging()
    settings = command_settings(sets)
    from ..ingest.corpus import load_questions
    from ..core.paths import LAB_QUESTIONS
    from ..offline import summaries
    from ..offline.evaluation import calibrate_gate

    try:
        result = calibrate_gate(open_bench(settings, corpus), load_questions(questions or LAB_QUESTIONS))
    except (RetrievalError, ValueError) as exc:
        fail(str(exc))
    typer.echo(summaries.calibration(result))
