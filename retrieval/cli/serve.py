"""``serve``: the app in several processes behind Caddy on one address (or the Caddyfile it would run)."""

from __future__ import annotations

import typer

from .common import command_settings, fail, setup_logging


def serve(
    workers: int = typer.Option(0, "--workers", help="App processes (0, the default: one per CPU core, 32 at most)."),
    port: int = typer.Option(8501, "--port", help="The port browsers connect to."),
    address: str = typer.Option("127.0.0.1", "--address", help="The address to listen on (0.0.0.0: every "
                                "interface; put the deployment's authenticating proxy in front)."),
    no_index: bool = typer.Option(False, "--no-index", help="Skip indexing the default corpus before the "
                                  "workers start."),
    print_proxy_config: bool = typer.Option(False, "--print-proxy-config", help="Print the Caddyfile serve "
                                            "would run (workers on ports 8601, 8602, …) and exit."),
) -> None:
    """The app in several processes behind Caddy on one address, each browser kept on its own process
    (docs/deployments.md, "Many users at once")."""
    import os

    from ..core.paths import PROJECT_ROOT
    from ..serving import serve as serving

    setup_logging()
    settings = command_settings([])
    count = workers or min(os.cpu_count() or 1, serving.MAX_WORKERS)
    if not 1 <= count <= serving.MAX_WORKERS:
        fail(f"--workers {count}: must be between 1 and {serving.MAX_WORKERS}")
    if not 1 <= port <= 65535:
        fail(f"--port {port}: must be between 1 and 65535")
    if print_proxy_config:
        from ..serving import proxy

        try:
            config = proxy.from_settings(settings, address, port, [f"127.0.0.1:{8601 + k}" for k in range(count)])
        except ValueError as exc:
            fail(str(exc))
        typer.echo(proxy.caddyfile(config), nl=False)
        return
    from ..backends import BACKENDS

    alone = BACKENDS.get(settings.backend).processes(settings) if count > 1 else None
    if alone is not None:  # a store that one process at a time may open (a Milvus Lite file)
        fail(alone.text())
    try:
        serving.serve(count, address, port, PROJECT_ROOT / "app.py", PROJECT_ROOT, index_first=not no_index,
                      say=lambda line: typer.echo(line, err=True), settings=settings)
    except (RuntimeError, ValueError, OSError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:  # a second Ctrl-C while the workers stop: they were killed
        raise typer.Exit(130)
