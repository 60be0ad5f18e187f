"""``tune``: the settings that change rankings tuned to a corpus from its labels (a search on dev, a check on
held-out, adopted on request), or with ``--learn-ranker`` a learned ranker trained on them; ``tune --remove``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from ..core.errors import RetrievalError
from .common import CorpusOpt, SetOpt, command_settings, fail, setup_logging


def tune(
    corpus: Optional[Path] = CorpusOpt,
    questions: Optional[Path] = typer.Option(None, "--questions", help="Labeled questions (default: lab set)."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels for TREC topics."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write tune.md, tune.json, overrides.json, configs.json "
                                       "and app-query.txt here (default: artifacts/tune/<corpus name>)."),
    budget_s: float = typer.Option(300.0, "--budget-s", min=1.0, help="Seconds the dev search may take; it stops "
                                   "before a candidate that would exceed them and says what it covered."),
    templates: bool = typer.Option(True, "--templates/--no-templates", help="Also try the passage templates "
                                   "(one vector collection each; a missing one is embedded once)."),
    adopt: bool = typer.Option(False, "--adopt", help="Store the result as this corpus' default, only when the "
                               "held-out check recommends it."),
    remove: bool = typer.Option(False, "--remove", help="Remove this corpus' stored default and exit."),
    learn_ranker: bool = typer.Option(False, "--learn-ranker", help="Instead of the settings search: train the "
                                      "learned ranker on this corpus' labels (the question set, --labels and the "
                                      "pages' judgments) with the shipped training data, on the training part "
                                      "only, and check it on held-out beside the corpus' default; --adopt stores "
                                      "it where that check recommends it."),
    labels: list[Path] = typer.Option([], "--labels", help="With --learn-ranker: another labels file (a question "
                                      "set or judgments JSONL, or a Team judging ratings file; repeatable). The "
                                      "pages' judgments/judgments.jsonl and judgments/ratings.jsonl are read "
                                      "when they exist."),
    sets: list[str] = SetOpt,
) -> None:
    """Tune the settings that change rankings to a corpus from its labels: a coordinate search on the dev split
    (progress on stderr), the best once on held-out against the default, a decision, a report."""
    setup_logging()
    settings = command_settings(sets)
    from ..core.paths import LAB_CORPUS, LAB_QUESTIONS, PROJECT_ROOT
    from ..offline import tuned

    if learn_ranker:
        _learn_ranker(settings, corpus, questions or LAB_QUESTIONS, labels, adopt)
        return

    path = (corpus or LAB_CORPUS).resolve()
    if remove:
        try:
            gone = tuned.remove(settings, path)
        except OSError as exc:
            fail(f"cannot remove the tuned configuration of {path} ({exc.strerror or exc.__class__.__name__})")
        typer.echo(f"removed {gone}: {path} uses the default settings again" if gone
                   else f"no tuned configuration stored for {path}")
        return
    from ..ingest.corpus import load_questions
    from ..offline.evaluation import TqdmProgress, bench_factory
    from ..offline.tune import adoptable, adoption_record, write_outputs
    from ..offline import summaries
    from ..offline.tune import tune as run_tune

    qpath = (questions or LAB_QUESTIONS).resolve()
    target = out or PROJECT_ROOT / "artifacts" / "tune" / (path.stem if path.stem != "corpus" else path.parent.name)
    bar = TqdmProgress("tuning on dev", postfix_width=40, close_at_total=False)  # its total shrinks
    try:
        qs = load_questions(qpath, qrels=qrels, max_question_chars=settings.max_question_chars)
        record = run_tune(bench_factory(path), settings, qs, budget_s=budget_s, templates=templates, progress=bar)
    except (RetrievalError, ValueError) as exc:
        fail(str(exc))
    finally:
        bar.close()
    try:
        written = write_outputs(record, target, settings, str(path), str(qpath),
                                None if path == LAB_CORPUS.resolve() else str(corpus))
    except OSError as exc:
        fail(f"{target}: cannot write the outputs ({exc})")
    typer.echo(summaries.tuning(record))
    if adopt:
        if not adoptable(record):
            typer.echo("not adopted: the held-out check did not recommend a change")
        else:
            try:
                stored = tuned.adopt(settings, path, adoption_record(record))
            except OSError as exc:
                fail(f"cannot store the tuned configuration ({exc.strerror or exc.__class__.__name__})")
            typer.echo(f"adopted for {path}: {stored} (ask, eval and the app read it; remove with "
                       f"python -m retrieval tune --remove --corpus {corpus or path})")
    typer.echo(f"wrote {len(written)} files to {target} (report: {target / 'tune.md'})")


def _learn_ranker(settings, corpus: Optional[Path], questions: Path, labels: list[Path], adopt: bool) -> None:
    """``tune --learn-ranker``: read the labels, train, check on held-out, print the decision (and adopt)."""
    from ..core.paths import LAB_CORPUS
    from ..offline import learn, summaries
    from ..offline.evaluation import TqdmProgress, bench_factory
    from ..serving.roots import DEFAULT_JUDGMENTS, DEFAULT_RATINGS

    path = (corpus or LAB_CORPUS).resolve()
    if not questions.exists():
        fail(f"--questions: {questions}: no such file or folder")
    for extra in labels:
        if extra.is_dir():
            fail(f"--labels: {extra} is a folder; give a labels file (JSONL)")
        if not extra.is_file():
            fail(f"--labels: {extra}: no such file")
    files = [questions.resolve(), *labels, *(p for p in (DEFAULT_JUDGMENTS, DEFAULT_RATINGS) if p.is_file())]
    factories: dict[Path, Any] = {}

    def open_corpus(c: Path, s):
        return factories.setdefault(Path(c).resolve(), bench_factory(Path(c).resolve()))(s)

    bar = TqdmProgress("learning a ranker", postfix_width=40, close_at_total=False)
    try:
        found = learn.read_label_files(list(dict.fromkeys(files)), max_question_chars=settings.max_question_chars)
        record = learn.learn_ranker(open_corpus, settings, path, found, progress=bar)
    except (RetrievalError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the learned ranker ({exc.strerror or exc.__class__.__name__})")
    finally:
        bar.close()
    typer.echo(summaries.learned_ranker(record))
    if adopt:
        try:
            stored = learn.adopt_ranker(settings, path, record)
        except ValueError as exc:
            typer.echo(str(exc))
            return
        except OSError as exc:
            fail(f"cannot store the tuned configuration ({exc.strerror or exc.__class__.__name__})")
        typer.echo(f"adopted for {path}: {stored} (reranker_model=ltr:{record['folder']}; remove with "
                   f"python -m retrieval tune --remove --corpus {corpus or path})")
