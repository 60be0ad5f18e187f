"""A real Milvus server (2.3.5 standalone: embedded etcd, rocksmq, local storage) for the tests and the bench.

The server ships in PyPI's ``milvus`` wheel (``requirements-milvus-server.txt``), installed in its own
environment by ``make milvus-server-env`` (``.venv-milvus``): the app's client (pymilvus, in ``.venv``) talks
to it over gRPC. This file is both sides:

* **the launcher**, run by the server environment's Python (standard library and the ``milvus`` package
  only)::

      .venv-milvus/bin/python bench/milvus_server.py --data-dir /tmp/milvus-data [--port 19530] [--timeout 60]

  starts the server with its data (and logs) under ``--data-dir`` on ``--port`` (a free one by default), waits
  until its health check answers, prints one JSON line (``uri``, ``port``, ``pid``, ``version``,
  ``start_s``), and stops the server on SIGTERM / SIGINT (or, with ``--watch-stdin``, when its standard
  input closes). The server's
  binaries are unpacked once into the environment (``<env>/share/milvus-bin-<version>``), not per data dir;
  the server process dies with the launcher (``PR_SET_PDEATHSIG``); ``--unpack-only`` unpacks them and exits
  (``make milvus-server-env`` does, so a first start takes no longer than the next). A server that does not start gives one
  ``error:`` line on stderr (with the end of its log) and exit status 2.
* :class:`MilvusServerProcess`, used from the app's environment (tests, ``bench/milvus_backend.py``): starts
  the launcher and gives the server's URI, or raises :class:`MilvusServerUnavailable` with one line.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The server's own environment (``make milvus-server-env``).
ENV = ROOT / ".venv-milvus"


class MilvusServerUnavailable(RuntimeError):
    """The Milvus server could not be started (no environment, or it did not answer in time): one line."""


def server_python(env: Path = ENV) -> Path | None:
    """The server environment's Python when the ``milvus`` wheel is installed there, else None."""
    python = env / "bin" / "python"
    if not python.exists() or not list((env / "lib").glob("python*/site-packages/milvus/__init__.py")):
        return None
    return python


class MilvusServerProcess:
    """A Milvus server started through this file's launcher in the server environment (for tests and the
    bench: its data is thrown away, so a stopping server gets 2 s to shut down before it is killed).

    ``start()`` returns the URI (``http://127.0.0.1:<port>``) once the server answers; ``stop()`` (or leaving
    the ``with`` block) stops it. ``pid`` is the server process' own (its memory is the server's), ``start_s``
    the seconds from launch to a healthy server.
    """

    def __init__(self, data_dir: Path, timeout: float = 60.0, env: Path = ENV) -> None:
        self.data_dir, self.timeout, self.env = Path(data_dir), float(timeout), Path(env)
        self.proc: subprocess.Popen | None = None
        self.uri = ""
        self.pid = 0
        self.version = ""
        self.start_s = 0.0

    def start(self) -> str:
        python = server_python(self.env)
        if python is None:
            raise MilvusServerUnavailable(f"no Milvus server environment at {self.env.name}/ "
                                          "(run `make milvus-server-env`)")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        errors = self.data_dir / "launcher.err"
        with errors.open("wb") as err:
            self.proc = subprocess.Popen([str(python), str(Path(__file__).resolve()), "--data-dir",
                                          str(self.data_dir), "--timeout", str(self.timeout), "--watch-stdin",
                                          "--stop-timeout", "2"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
        line = self._first_line(self.timeout + 30)
        if not line:
            self.stop()
            said = [x for x in errors.read_text(errors="replace").splitlines() if x.strip()]
            raise MilvusServerUnavailable(said[-1] if said else "the Milvus server launcher exited without a word")
        info = json.loads(line)
        self.uri, self.pid, self.version, self.start_s = info["uri"], info["pid"], info["version"], info["start_s"]
        return self.uri

    def _first_line(self, limit: float) -> str:
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(limit)
        return got[0].strip() if got else ""

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()  # the launcher stops the server and exits
        except OSError:
            pass
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()

    def __enter__(self) -> "MilvusServerProcess":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# -- the launcher (runs in the server environment) ----------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the server's child process: SIGKILL it when the launcher dies (Linux), so no server is orphaned."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort outside Linux
        pass


def _unpack_once(milvus) -> Path:
    """The server's binaries, unpacked from the wheel once per environment (under a lock): their folder."""
    import fcntl

    cache = Path(sys.prefix) / "share" / f"milvus-bin-{milvus.__version__}"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        milvus._initialize_data_files(str(cache))  # writes cache/bin, skipping files whose checksum matches
    return cache / "bin"


def _tail(path: Path, lines: int = 3) -> str:
    try:
        said = [x for x in path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return ""
    return " | ".join(said[-lines:])[-600:]


def launch(data_dir: Path, port: int, timeout: float, watch_stdin: bool = False, stop_s: float = 10.0) -> int:
    started = time.monotonic()
    try:
        import milvus
    except ImportError:
        print("error: the milvus package is not installed in this environment (make milvus-server-env)",
              file=sys.stderr)
        return 2
    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    binaries = _unpack_once(milvus)
    link = data_dir / "bin"
    if not link.exists():
        link.symlink_to(binaries, target_is_directory=True)
    real_popen = subprocess.Popen
    milvus.subprocess.Popen = lambda *a, **k: real_popen(*a, preexec_fn=_die_with_parent, **k)
    port = port or _free_port()
    server = milvus.MilvusServer(milvus.MilvusServerConfig(data_dir=str(data_dir), proxy_port=port),
                                 wait_for_started=False)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if watch_stdin:  # the parent's end closed (or the parent died): stop
        threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    server.start()
    proc = server.server_proc
    health = f"http://127.0.0.1:{server.webservice_port}/healthz"
    try:
        while True:
            if proc.poll() is not None:
                logs = data_dir / "logs"
                said = _tail(logs / "milvus-stderr.log") or _tail(logs / "milvus-stdout.log")
                print(f"error: the Milvus server exited with status {proc.returncode} while starting: {said}",
                      file=sys.stderr)
                return 2
            if stop.is_set():
                return 1
            try:
                with urllib.request.urlopen(health, timeout=2) as resp:
                    if b"OK" in resp.read():
                        break
            except OSError:
                pass
            if time.monotonic() - started > timeout:
                print(f"error: the Milvus server did not answer within {timeout:.0f} s "
                      f"(log: {_tail(data_dir / 'logs' / 'milvus-stdout.log', 1)[:300]})", file=sys.stderr)
                return 2
            time.sleep(0.2)
        print(json.dumps({"uri": f"http://127.0.0.1:{port}", "port": port, "pid": proc.pid,
                          "version": milvus.__version__, "start_s": round(time.monotonic() - started, 1)}),
              flush=True)
        while not stop.wait(0.5):
            if proc.poll() is not None:
                print(f"error: the Milvus server exited with status {proc.returncode}", file=sys.stderr)
                return 2
        return 0
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=stop_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for fd in server.proc_fds.values():
            fd.close()
        server.proc_fds.clear()
        server.server_proc = None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Start a Milvus standalone server (the milvus wheel) and wait.")
    parser.add_argument("--data-dir", type=Path, help="its data, configuration and logs")
    parser.add_argument("--unpack-only", action="store_true",
                        help="only unpack the server's binaries into this environment (make milvus-server-env)")
    parser.add_argument("--port", type=int, default=0, help="its gRPC port (default: a free one)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for it to answer")
    parser.add_argument("--watch-stdin", action="store_true", help="also stop when standard input closes")
    parser.add_argument("--stop-timeout", type=float, default=10.0,
                        help="seconds a stopping server may take to shut down before it is killed")
    args = parser.parse_args(argv)
    if args.unpack_only:
        import milvus

        print(_unpack_once(milvus))
        return 0
    if args.data_dir is None:
        parser.error("--data-dir is required")
    return launch(args.data_dir, args.port, args.timeout, args.watch_stdin, args.stop_timeout)


if __name__ == "__main__":
    raise SystemExit(main())
