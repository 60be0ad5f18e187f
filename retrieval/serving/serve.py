"""Several app processes behind one address: ``python -m retrieval serve --workers N``.

Streamlit runs every session's page script in a thread of one Python process. The page's own work (laying out
the lists, the charts, the tables) holds the GIL, so one process serves about one request at a time however many
cores the machine has: eight users at once on one process were served 1.1-1.3× the requests of one user, and
2.1-2.4× on two processes on 2 cores (README, "Many users at once"). Several processes share the cores.

A Streamlit session lives in the memory of the process that opened it: its WebSocket, its uploaded files, its
download buttons' files. So every request of one browser must reach one worker. The balancer here names the
worker in a cookie (``retrieval_worker``) on the first response; a browser without it (or with a stale or
forged value) is given the worker with the fewest open sessions, round-robin between equals. Headers pass
through unchanged apart from the hop-by-hop ones (RFC 9110 §7.6.1), so a trusted proxy's ``X-Forwarded-User``
in front of the balancer reaches the app as it would without the balancer, and the app's same-origin check
sees the browser's own ``Host`` and ``Origin``.

Before the workers start, the default corpus is indexed once (``retrieval index``), so that they do not race to
write one store; a corpus a user opens later is indexed by the first worker that opens it, under a lock shared by
the workers (:func:`retrieval.pipeline.index.store_write_lock`). A worker whose port closes is skipped until its health
check answers again, and started again when it exits; its sessions reconnect (the page reloads, as after a
server restart).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

log = logging.getLogger("retrieval.serving.serve")

#: The cookie naming a browser's worker.
WORKER_COOKIE = "retrieval_worker"
#: Hop-by-hop headers (RFC 9110 §7.6.1) and the ones the client library sets itself.
HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                 "transfer-encoding", "upgrade"})
#: A WebSocket handshake's own headers, which the balancer's connection to the worker makes anew.
WS_OWN = HOP | {"content-length", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
                "sec-websocket-protocol"}
MAX_WORKERS = 32
#: Seconds a worker may stay silent in the middle of an HTTP answer (not a WebSocket) before the request fails.
READ_TIMEOUT_S = 120.0
#: Seconds the supervisor's health check waits, and how many checks in a row must fail before a worker whose
#: port is open is marked down (a hung process: stopped, deadlocked).
HEALTH_TIMEOUT_S, HEALTH_FAILURES = 3.0, 2
#: Seconds between the supervisor's rounds (exited workers, health checks).
SUPERVISE_INTERVAL_S = 1.0
#: Seconds at least between two starts of one worker (a worker that keeps crashing does not spin).
RESTART_PAUSE_S = 5.0


@dataclass
class Balancer:
    """Which worker serves a request: the cookie's while it is up, else the up one with the fewest open sessions."""

    upstreams: Sequence[str]  # "http://127.0.0.1:PORT", one per worker
    open_sessions: list[int] = field(default_factory=list)
    up: list[bool] = field(default_factory=list)
    _turn: Any = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        if not self.upstreams:
            raise ValueError("a balancer needs at least one worker")
        self.open_sessions = [0] * len(self.upstreams)
        self.up = [True] * len(self.upstreams)

    def pinned(self, cookie: str | None) -> int | None:
        """The worker a cookie names, or ``None`` for no cookie, a value that is not a worker's number as the
        balancer writes it, or a worker that does not exist (any other value is as good as none: all workers
        serve the same app)."""
        if cookie is None or not (cookie.isascii() and cookie.isdigit()) or len(cookie) > 3:
            return None
        index = int(cookie)
        return index if index < len(self.upstreams) and cookie == str(index) else None

    def pick(self, cookie: str | None) -> tuple[int, bool]:
        """``(worker, new)``: the cookie's worker while it is up, else (``new``) the least busy worker that is up,
        round-robin among equals (any worker when none is up: the request then says it is starting)."""
        index = self.pinned(cookie)
        if index is not None and self.up[index]:
            return index, False
        start = next(self._turn) % len(self.upstreams)
        order = [(start + k) % len(self.upstreams) for k in range(len(self.upstreams))]
        candidates = [k for k in order if self.up[k]] or order
        return min(candidates, key=lambda k: self.open_sessions[k]), True


def forwarded_headers(headers: Any, own: frozenset[str]) -> list[tuple[str, str]]:
    """The request's headers without the hop-by-hop ones (and ``own``): what the worker receives."""
    return [(k, v) for k, v in headers.items() if k.lower() not in own]


async def relay(front: Any, back: Any) -> None:
    """Copy WebSocket messages both ways between the browser's socket (``front``, aiohttp's server side) and the
    worker's (``back``, its client side) until either closes; then close ``front``."""
    import aiohttp

    async def pump(source: Any, sink: Any) -> None:
        async for msg in source:
            if msg.type == aiohttp.WSMsgType.BINARY:
                await sink.send_bytes(msg.data)
            elif msg.type == aiohttp.WSMsgType.TEXT:
                await sink.send_str(msg.data)
            else:
                break

    tasks = [asyncio.ensure_future(pump(front, back)), asyncio.ensure_future(pump(back, front))]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()
    await front.close()


#: What a browser gets while its worker (re)starts: a page that reloads itself.
STARTING_PAGE = ("<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=3>"
                 "<title>Starting</title><p>This worker is starting; the page reloads in a few seconds.</p>\n")


class _OneLine(logging.Filter):
    """aiohttp's server logs a malformed request (a bad header, a body cut short) with its whole traceback: one
    line naming the error is enough for a request the balancer refused."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text = " ".join(str(exc).split())[:200]
            record.msg = f"{record.getMessage()}: {exc.__class__.__name__}: {text}"
            record.args, record.exc_info, record.exc_text = (), None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"  # the client's error, not ours
        return True


def balancer_app(balancer: Balancer) -> Any:
    """The aiohttp application in front of the workers (HTTP and WebSocket). On shutdown it closes the open
    WebSockets (their browsers reconnect when the service is back) instead of waiting for them."""
    import aiohttp
    from aiohttp import web
    from multidict import CIMultiDict

    client_key = web.AppKey("client", aiohttp.ClientSession)
    sockets: set[Any] = set()
    logging.getLogger("aiohttp.server").addFilter(_OneLine())

    async def on_startup(app: web.Application) -> None:
        # No decompression (the worker's gzip passes through as is), no cookie jar (each browser has its own)
        # Idle connections to a worker are dropped before its server's own keep-alive (5 s) closes them
        app[client_key] = aiohttp.ClientSession(auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
                                                connector=aiohttp.TCPConnector(keepalive_timeout=2.0),
                                                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10,
                                                                              sock_read=READ_TIMEOUT_S))

    async def on_shutdown(app: web.Application) -> None:
        for ws in list(sockets):
            await ws.close(code=aiohttp.WSCloseCode.GOING_AWAY, message=b"the service is stopping")

    async def on_cleanup(app: web.Application) -> None:
        await app[client_key].close()

    def pin(response: web.StreamResponse, index: int) -> None:
        response.set_cookie(WORKER_COOKIE, str(index), path="/", httponly=True, samesite="Lax")

    def unavailable(index: int, exc: BaseException) -> web.Response:
        """The worker's port is closed (it is stopping or starting): new browsers go elsewhere until it is up."""
        if balancer.up[index]:
            log.warning("worker %d unavailable (%s): new browsers go to the others until it is up",
                        index, exc.__class__.__name__)
        balancer.up[index] = False
        return web.Response(status=502, text=STARTING_PAGE, content_type="text/html", headers={"Retry-After": "3"})

    async def websocket(request: web.Request, index: int, new: bool) -> web.StreamResponse:
        upstream = balancer.upstreams[index]
        protocols = tuple(p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
                          if p.strip())
        headers = CIMultiDict(forwarded_headers(request.headers, WS_OWN))
        try:
            back = await request.app[client_key].ws_connect(
                upstream.replace("http://", "ws://", 1) + request.raw_path, headers=headers,
                protocols=protocols, max_msg_size=0, autoping=True)
        except aiohttp.WSServerHandshakeError as exc:  # the worker refused it (a foreign Origin): its answer
            return web.Response(status=exc.status, text=f"{exc.status} {exc.message}\n")
        except aiohttp.ClientConnectionError as exc:
            return unavailable(index, exc)
        balancer.open_sessions[index] += 1
        front = web.WebSocketResponse(protocols=(back.protocol,) if back.protocol else (), max_msg_size=0)
        sockets.add(front)
        try:
            if new:
                pin(front, index)
            await front.prepare(request)
            await relay(front, back)
            return front
        finally:
            sockets.discard(front)
            balancer.open_sessions[index] -= 1
            await back.close()

    async def forward(request: web.Request) -> web.StreamResponse:
        cookie = request.cookies.get(WORKER_COOKIE)
        index, new = balancer.pick(cookie)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            reply = await websocket(request, index, new)
            if reply.status == 502 and any(balancer.up):  # its worker went down: another one, once
                index, new = balancer.pick(cookie)
                reply = await websocket(request, index, new)
            return reply
        body = request.content if request.body_exists else None
        reply = await http(request, index, new, body)
        if reply.status == 502 and not reply.prepared and body is None and any(balancer.up):
            index, new = balancer.pick(cookie)  # its worker went down: another one, once
            reply = await http(request, index, new, body)
        return reply

    async def http(request: web.Request, index: int, new: bool, body: Any) -> web.StreamResponse:
        """The request sent to worker ``index``, its answer streamed back; ``body`` (the request's own stream,
        or ``None``) is never held here whole (the worker enforces its own upload limit)."""
        headers = CIMultiDict(forwarded_headers(request.headers, HOP))
        url = balancer.upstreams[index] + request.raw_path  # the target as the browser sent it
        response: web.StreamResponse | None = None
        try:
            try:
                reply = await request.app[client_key].request(request.method, url, headers=headers, data=body,
                                                              allow_redirects=False)
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientConnectionResetError):
                if body is not None:  # a body already sent cannot be sent again
                    raise
                # a pooled connection the worker closed as it was reused: once more on a new one
                reply = await request.app[client_key].request(request.method, url, headers=headers,
                                                              allow_redirects=False)
            async with reply:
                response = web.StreamResponse(status=reply.status, reason=reply.reason)
                for key, value in reply.headers.items():
                    if key.lower() not in HOP:
                        response.headers.add(key, value)
                if new:
                    pin(response, index)
                await response.prepare(request)
                async for chunk in reply.content.iter_chunked(65536):
                    await response.write(chunk)
                await response.write_eof()
                return response
        except aiohttp.ClientConnectorError as exc:  # nothing listens on the worker's port
            return unavailable(index, exc)
        except (asyncio.TimeoutError, aiohttp.ServerTimeoutError):
            log.warning("worker %d did not answer %s %s within %g s", index, request.method, request.path[:80],
                        READ_TIMEOUT_S)
            if response is not None and response.prepared:
                return response
            return web.Response(status=504, text="the worker did not answer in time; try again\n")
        except aiohttp.ClientConnectionError as exc:
            log.warning("worker %d: %s", index, exc.__class__.__name__)
            if response is not None and response.prepared:  # cut mid-answer: the browser sees it cut
                return response
            return web.Response(status=502, text="the worker closed the connection; try again\n")

    app = web.Application()
    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    app.on_cleanup.append(on_cleanup)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


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
    """``streamlit run`` of the app on the loopback address (the port is added per worker)."""
    return [sys.executable, "-m", "streamlit", "run", str(app_path), "--server.address", "127.0.0.1",
            "--server.headless", "true", "--browser.gatherUsageStats", "false"]


def worker_env(base: dict[str, str]) -> dict[str, str]:
    """The workers' environment: ``base``, and one cookie secret for all of them unless one is set (Streamlit
    draws its own per process otherwise, and signs its cookies with it)."""
    env = dict(base)
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_workers(count: int, app_path: Path, env: dict[str, str], cwd: Path, timeout_s: float = 180.0,
                  say: Callable[[str], None] = print) -> list[Worker]:
    """``count`` workers started and healthy.

    Raises:
        RuntimeError: a worker exited or stayed unhealthy for ``timeout_s`` (the others are stopped).
    """
    workers = [Worker(k, free_port(), worker_command(app_path), env, cwd) for k in range(count)]
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


async def _supervise(workers: list[Worker], balancer: Balancer, stop: asyncio.Event,
                     say: Callable[[str], None]) -> None:
    """Until ``stop`` is set: a worker that exits is marked down (new browsers go to the others) and started
    again (at most once per ``RESTART_PAUSE_S``); one that fails ``HEALTH_FAILURES`` health checks in a row (one
    every ``HEALTH_TIMEOUT_S``) is marked down; a worker that is down is marked up once its health check answers."""
    last: dict[int, float] = {}
    checked: dict[int, float] = {}
    failures: dict[int, int] = {}
    while not stop.is_set():
        for worker in workers:
            assert worker.process is not None
            if worker.process.poll() is not None:
                balancer.up[worker.index] = False
                if time.monotonic() - last.get(worker.index, 0.0) < RESTART_PAUSE_S:
                    continue
                say(f"worker {worker.index} exited with status {worker.process.returncode}; starting it again")
                last[worker.index] = time.monotonic()
                worker.start()
            elif not balancer.up[worker.index]:
                if await asyncio.to_thread(worker.healthy):
                    say(f"worker {worker.index} is up")
                    balancer.up[worker.index], failures[worker.index] = True, 0
            elif time.monotonic() - checked.get(worker.index, 0.0) >= HEALTH_TIMEOUT_S:
                # a worker whose port is open but that no longer answers (stopped, deadlocked) is down too
                checked[worker.index] = time.monotonic()
                if await asyncio.to_thread(worker.healthy, HEALTH_TIMEOUT_S):
                    failures[worker.index] = 0
                else:
                    failures[worker.index] = failures.get(worker.index, 0) + 1
                    if failures[worker.index] >= HEALTH_FAILURES and balancer.up[worker.index]:
                        say(f"worker {worker.index} has not answered its health check {HEALTH_FAILURES} times in a "
                            "row: new browsers go to the others until it answers")
                        balancer.up[worker.index] = False
        try:
            await asyncio.wait_for(stop.wait(), timeout=SUPERVISE_INTERVAL_S)
        except asyncio.TimeoutError:
            pass


async def _serve(workers: list[Worker], address: str, port: int, say: Callable[[str], None]) -> None:
    from aiohttp import web

    balancer = Balancer([w.url for w in workers])
    runner = web.AppRunner(balancer_app(balancer), access_log=None, shutdown_timeout=5.0)
    await runner.setup()
    try:
        await web.TCPSite(runner, address, port).start()
        say(f"serving on http://{address}:{port} with {len(workers)} worker(s); Ctrl-C stops")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def on_signal() -> None:
            if stop.is_set():  # a second Ctrl-C: stop now
                say("stopping now")
                for worker in workers:
                    if worker.process is not None and worker.process.poll() is None:
                        worker.process.kill()
                os._exit(130)
            say("stopping: closing the open sessions and the workers (Ctrl-C again stops at once)")
            stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal)
        await _supervise(workers, balancer, stop, say)
    finally:
        await runner.cleanup()


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
          say: Callable[[str], None] = print) -> None:
    """Index the default corpus once, start ``workers`` app processes, and balance them on ``address:port``
    until SIGINT or SIGTERM; the workers are stopped on the way out.

    Raises:
        ValueError: ``workers`` out of range.
        RuntimeError: the address cannot be listened on, indexing failed, or a worker did not start.
    """
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers {workers}: must be between 1 and {MAX_WORKERS}")
    check_port(address, port)
    env = worker_env(dict(os.environ))
    if index_first:
        say("indexing the default corpus once, before the workers start")
        # dies with this process (SIGTERM while indexing): no indexer left writing the store on its own
        done = subprocess.run([sys.executable, "-m", "retrieval", "index"], cwd=cwd, env=env,
                              preexec_fn=die_with_parent if os.name == "posix" else None)
        if done.returncode != 0:
            raise RuntimeError(f"indexing the default corpus failed (status {done.returncode}; its reason is above)")
    started = start_workers(workers, app_path, env, cwd, say=say)
    try:
        asyncio.run(_serve(started, address, port, say))
    finally:
        stop_workers(started)
