"""Command line: ``python -m retrieval index | ask | eval | tune | calibrate | bench | train | serve | judgments |
models`` (docs/cli.md).

Errors print one line on stderr and exit with code 2. With ``--json``, stdout holds the JSON and nothing
else: progress, logs and span exporters write to stderr.

One module per command group: :mod:`.index`, :mod:`.ask`, :mod:`.evaluate` (``eval``, ``calibrate``),
:mod:`.tune`, :mod:`.train`, :mod:`.bench`, :mod:`.serve`, :mod:`.judgments`, :mod:`.models`; what they share
(options, settings, one-line errors, escaped output) is :mod:`.common`. The text of offline work (reports,
summaries) is :mod:`retrieval.offline.summaries`'s; the commands echo it. This module lists the commands in the
order ``--help`` shows them and holds :func:`main`, the entry point.
"""

from __future__ import annotations

import sys

import typer

from ..core.errors import RetrievalError
from . import ask, bench, evaluate, index, judgments, models, serve, train, tune
from .common import one_line

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Hybrid retrieval workbench.")
app.command()(index.index)
app.command()(ask.ask)
app.command("eval")(evaluate.eval_)
app.command()(tune.tune)
app.command()(evaluate.calibrate)
app.command()(bench.bench)
app.command("train")(train.train_)
app.command()(serve.serve)
app.add_typer(judgments.app, name="judgments")
app.add_typer(models.app, name="models")


def main() -> None:
    """Entry point of ``python -m retrieval``: no traceback reaches a user. An error raised on purpose is one
    line and exit 2 in each command; anything else (a bug) is still one line naming its type, and exit 2."""
    try:  # typer vendors click (its own exception classes); older typers use click's
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - depends on the typer version
        from click import exceptions as click_errors  # type: ignore[no-redef]  # the same module, older typers
    usage_error = getattr(click_errors, "UsageError", ())
    click_error = getattr(click_errors, "ClickException", ())

    try:
        code = app(standalone_mode=False)
    except SystemExit:
        raise
    except usage_error as exc:  # a bad option or argument: one line, not the usage block
        if type(exc).__name__ == "NoArgsIsHelpError":  # no command at all: the help is the answer
            typer.echo(exc.format_message())
            sys.exit(2)
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "python -m retrieval"
        typer.echo(f"error: {one_line(exc.format_message())} (see {command} --help)", err=True)
        sys.exit(2)
    except click_error as exc:
        typer.echo(f"error: {one_line(exc.format_message())}", err=True)
        sys.exit(2)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    except RetrievalError as exc:
        typer.echo(f"error: {one_line(str(exc))}", err=True)
        sys.exit(2)
    except BaseException as exc:  # noqa: BLE001 - the last net (a native panic too): one line, never a traceback
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        typer.echo(f"error: internal error ({exc.__class__.__name__}{': ' + first if first else ''}); "
                   "please report it with the command that caused it", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
