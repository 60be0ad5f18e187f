"""The process supervision of ``retrieval serve`` (retrieval/serving/serve.py): a worker that exits is started
again on its own port (not faster than ``RESTART_PAUSE_S``), serve stops when the proxy exits, the workers are
stopped (then killed) on the way out, and what cannot work is refused in one line before anything starts. The
proxying itself is Caddy's: tests/unit/serving/test_proxy.py."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from retrieval.serving import serve as serving


def _sleeper(seconds: float) -> list[str]:
    return [sys.executable, "-c", f"import time, sys; time.sleep({seconds})"]


class Quick(serving.Worker):
    """A worker whose process is a short Python sleep (the port option is not passed to it)."""

    def start(self) -> None:
        self.starts = getattr(self, "starts", 0) + 1
        self.process = subprocess.Popen(self.command)


def test_a_worker_that_exits_is_started_again_and_serve_stops_with_the_proxy(monkeypatch) -> None:
    monkeypatch.setattr(serving, "SUPERVISE_INTERVAL_S", 0.05)
    monkeypatch.setattr(serving, "RESTART_PAUSE_S", 0.3)
    workers = [Quick(0, 1, _sleeper(0.05), {}, Path(".")), Quick(1, 2, _sleeper(30), {}, Path("."))]
    for worker in workers:
        worker.start()
    said: list[str] = []
    stop = threading.Event()
    threading.Timer(1.2, stop.set).start()
    assert serving.supervise(workers, None, stop, said.append) is None
    # worker 0 exits every time: started again, but not more often than the pause allows
    assert 2 <= workers[0].starts <= 6 and workers[1].starts == 1
    assert said[0] == f"worker 0 exited with status 0; started again (pid {said[0].rsplit(' ', 1)[1][:-1]})"
    serving.stop_workers(workers, grace_s=5)
    assert all(w.process.poll() is not None for w in workers)

    caddy = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    caddy.wait()
    assert serving.supervise([], caddy, threading.Event(), said.append) == 3


def test_stop_workers_kills_one_that_ignores_sigterm() -> None:
    stubborn = serving.Worker(0, 1, [], {}, Path("."))
    stubborn.process = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                                         "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                                         "time.sleep(60)"], stdout=subprocess.PIPE)
    assert stubborn.process.stdout.readline().strip() == b"ready"
    started = time.monotonic()
    serving.stop_workers([stubborn], grace_s=0.5)
    assert stubborn.process.poll() is not None and time.monotonic() - started < 10


def test_what_cannot_work_is_refused_before_anything_starts(monkeypatch) -> None:
    with pytest.raises(ValueError, match="between 1 and 32"):
        serving.serve(0, "127.0.0.1", 8501, Path("app.py"), Path("."), index_first=False)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"cannot listen on 127.0.0.1:{port}"):
            serving.check_port("127.0.0.1", port)
    monkeypatch.setattr(serving.proxy, "caddy_binary", lambda: None)
    with pytest.raises(RuntimeError, match="no caddy binary"):
        serving.serve(1, "127.0.0.1", serving.free_port(), Path("app.py"), Path("."), index_first=False)
