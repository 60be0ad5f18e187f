"""``models pull``: a cross-encoder downloaded into the local Hugging Face cache."""

from __future__ import annotations

import typer

from .common import fail, setup_logging


#: The ``models`` group (added to the command line by :mod:`retrieval.cli`).
app = typer.Typer(add_completion=False, no_args_is_help=True, help="Cross-encoder models in the local cache.")


@app.command("pull")
def models_pull(
    name: str = typer.Argument("BAAI/bge-reranker-v2-m3", help="Hub name (fallback BAAI/bge-reranker-base for the default)."),
    timeout: float = typer.Option(3.0, "--timeout", help="Seconds to wait for the hub to answer."),
) -> None:
    """Download a cross-encoder into the Hugging Face cache (fails at once when no model hub is reachable)."""
    setup_logging()
    from ..backends.hub import HubUnreachable, pull

    try:
        path = pull(name, timeout)
    except (HubUnreachable, RuntimeError) as exc:
        fail(str(exc))
    typer.echo(f"{name}: in the local cache at {path}; set RETRIEVAL_RERANKER_MODEL={name}")
