"""What the commands share: their common options, the settings a command runs under (``--set``, the corpus'
adopted configuration), the workbench it opens, and how it writes: every line of human-readable output with its
control characters escaped (:func:`printable`), every error as one line on stderr without a credential and exit
code 2 (:func:`fail`), log lines on stderr, redacted."""

from __future__ import annotations

import logging
import sys
import unicodedata
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer
from pydantic import ValidationError

from ..core.errors import RetrievalError
from ..core.redact import install_log_redaction, redact_text
from ..stages.transforms import TRANSFORMS

CorpusOpt = typer.Option(None, "--corpus", help="Corpus: JSONL, folder, BEIR folder or SQuAD JSON (default: lab).")
SetOpt = typer.Option([], "--set", help="Any setting, lower case without prefix: --set rrf_k=30 (repeatable).")
TransformOpt = typer.Option([], "--transform", help=f"{' | '.join(TRANSFORMS.names())} (repeatable).")
MmrOpt = typer.Option(None, "--mmr", help="MMR λ in [0, 1] over the final candidates (1 = relevance order).")


def one_line(text: str) -> str:
    return printable(" ".join(str(text).split())) or "unknown error"


def printable(text: object) -> str:
    """``text`` with every control, format, line-separator or surrogate character but a newline and a tab
    written as an escape (``\\x1b``, ``\\u2028``): an id or a document's text cannot move the cursor, recolour
    the terminal or forge a line of output."""
    out = []
    for ch in str(text):
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(ch)
        else:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
    return "".join(out)


def echo(text: object = "") -> None:
    """A line of a command's human-readable output (:func:`printable`)."""
    typer.echo(printable(text))


#: The secrets of the settings this command loaded: no error line nor log line holds one.
SECRETS: list[str] = []


def fail(message: str) -> NoReturn:
    typer.echo(f"error: {one_line(redact_text(message, SECRETS))}", err=True)
    raise typer.Exit(2)


def command_settings(sets: list[str], **extra: Any):
    """The settings a command runs under: the environment's, then each ``--set name=value``, then the command's
    own options (``extra``, where not None); a bad one is one line (:func:`fail`)."""
    from ..settings import describe_validation_error, load_settings

    overrides: dict[str, Any] = {}
    for item in sets:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            fail(f"--set expects name=value, got '{item}'")
        overrides[name.strip().lower()] = value
    overrides.update({k: v for k, v in extra.items() if v is not None})
    try:
        base = load_settings()
        loaded = base.with_overrides(**overrides) if overrides else base
        SECRETS[:] = loaded.secrets()
        install_log_redaction(SECRETS)
        return loaded
    except ValidationError as exc:  # not expected (with_overrides and load_settings translate), kept as a net
        fail(describe_validation_error(exc, overrides))
    except (RetrievalError, ValueError) as exc:
        fail(str(exc))


def filter_pairs(items: list[str]) -> list[tuple[str, str]]:
    """``--filter key=value`` options as ``(key, value)`` pairs, in order."""
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--filter expects key=value, got '{item}'")
        pairs.append((key.strip(), value))
    return pairs


def setup_logging() -> None:
    """Log lines on stderr, every one redacted (:func:`retrieval.core.redact.install_log_redaction`; the
    settings' secrets are added when a command loads its settings)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction(SECRETS)


def adopted(settings, corpus: Optional[Path]):
    """``(settings, note)``: the corpus' adopted configuration (``tune --adopt``) applied under the command's own
    choices (a ``--set`` or an option wins), and the trace note that says so (``None`` when none is stored)."""
    from ..offline import tuned
    from ..settings import load_settings

    try:
        return tuned.apply_adopted(settings, load_settings(), tuned.load_adopted(settings, corpus))
    except (RetrievalError, ValueError) as exc:
        fail(str(exc))


def open_bench(settings, corpus: Optional[Path]):
    """A Workbench on ``corpus``; its reader states are `index`'s work (a question reads what is stored and
    encodes the rest)."""
    from ..pipeline.workbench import open_workbench

    return open_workbench(settings, corpus)
