"""``train``: the learned judge (reranker, support gate, evidence sentences) trained from labeled questions."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..core.errors import RetrievalError
from .common import SetOpt, command_settings, fail, setup_logging


def train_(
    corpus: list[Path] = typer.Option(..., "--corpus", help="Corpus (repeatable; pairs with --questions in order)."),
    questions: list[Path] = typer.Option(..., "--questions", help="Labeled questions for the corpus at the same position."),
    out: Optional[Path] = typer.Option(None, "--out", help="Model folder to write (default: .retrieval/judge; the shipped "
                                       "models/judge is never overwritten by default). Use it with "
                                       "RETRIEVAL_JUDGE_PATH or --set reranker_model=ltr:FOLDER."),
    seed: int = typer.Option(20261201, "--seed", help="Seed of the split inside training and of LightGBM."),
    sets: list[str] = SetOpt,
) -> None:
    """Train the learned judge (reranker, support gate, evidence sentences) from labeled questions; split by
    parent document; writes the model folder with its model card (progress on stderr)."""
    setup_logging()
    settings = command_settings(sets)
    if len(corpus) != len(questions):
        fail(f"give one --questions per --corpus (got {len(corpus)} corpora and {len(questions)} question files)")
    for path in [*corpus, *questions]:
        if not path.exists():
            fail(f"{path}: no such file or folder")
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        fail("training needs lightgbm (pip install lightgbm==4.7.0)")
    from ..core.paths import PROJECT_ROOT
    from ..offline import summaries
    from ..offline.training import train as run_training

    target = out or PROJECT_ROOT / ".retrieval" / "judge"
    try:
        result = run_training(list(zip(corpus, questions)), target, settings, seed=seed)
    except (RetrievalError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{target}: cannot write the model folder ({exc.strerror or exc.__class__.__name__})")
    typer.echo(summaries.training(result, target))
