"""One guarded call to an OpenAI-compatible chat-completions server, and the redaction of its secrets.

Every LLM call site (the answer, and the rewrite / multi-query / HyDE transforms) goes through
:meth:`ChatClient.complete`, so what it guarantees holds by construction, not by remembering it at each site:

* **A total deadline**: the whole call (connection, request, every read of the reply) ends within
  ``timeout_s`` of wall-clock time. The openai client's own timeout bounds each read only, so a server that
  drips a byte a second could hold one call for minutes; here the call runs in a worker thread that the caller
  stops waiting for at the deadline (the worker also stops reading at the deadline, and its connection is
  closed).
* **A bounded reply**: the body is read up to a byte cap and the reply's text up to ``max_reply_chars``.
* **Refused replies**: empty, oversized, malformed, or holding a secret (the API key, or a credential of the
  base URL) however it is written (:func:`retrieval.core.redact.holds_secret`: separators, case, percent-escapes,
  hex, base64, a key split in two). A refusal is an :class:`LLMFailure` whose ``reason`` is one line of our own
  words: never the server's text, the URL or the key, so the caller can record it in the trace.
* **An egress policy** (:class:`EgressPolicy`): only ``http`` and ``https``; the host is resolved at each call
  (``getaddrinfo``) and the connection is made to the address that was checked (no second lookup a DNS rebind
  could answer differently); an address that is loopback, link-local, unspecified, multicast, reserved or a
  cloud metadata endpoint (:data:`METADATA_ADDRESSES`), in any spelling (``0x7f000001``, ``2130706433``,
  ``0177.0.0.1``, ``[::ffff:127.0.0.1]``), is refused unless ``RETRIEVAL_LLM_ALLOW_HOSTS`` lists it. A
  redirect (any ``3xx``) is never followed: the call fails, its reason naming the status only. Proxy variables
  (``HTTPS_PROXY``…) are not used: the policy checks the address the request really goes to.

:func:`url_origin` (:mod:`retrieval.core.redact`) is the one record of the endpoint wherever it is recorded (the
public settings of every trace, the page, this client's ``repr``): ``scheme://host:port``, nothing else.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import socket
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

from .defaults import LLM_TIMEOUT_S
from .reasons import Reason, declare
# The redaction of the endpoint (and of every other setting): one module, re-exported here for its callers.
from .redact import (MIN_SECRET_CHARS, PUBLIC_QUERY_PARAMS, REDACTED, holds_secret, redact_url,  # noqa: F401
                     url_origin, url_secrets)

log = logging.getLogger(__name__)

#: The reply's JSON body may hold this many bytes per allowed reply character (``\\uXXXX`` escapes take 6), plus
#: this overhead for the envelope (ids, usage, a reasoning field).
BYTES_PER_CHAR = 6
BODY_OVERHEAD_BYTES = 64 * 1024


class LLMFailure(Exception):
    """An LLM call that gave no usable reply.

    Attributes:
        reason: one line for the trace, in our words (never the server's text, the URL or the key).
        refused: ``True`` when a reply came and was refused (empty, oversized, malformed, a secret in it);
            ``False`` when no reply came (deadline, connection, HTTP error).
        input_tokens, output_tokens: the server's usage of a refused reply, ``None`` when not known.
    """

    def __init__(self, reason: Reason, refused: bool = False, input_tokens: int | None = None,
                 output_tokens: int | None = None) -> None:
        super().__init__(reason.text())
        self.reason = reason
        self.refused = refused
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens

    def describe(self, adapter: str) -> Reason:
        """``"llm:m reply refused (empty reply)"`` or ``"llm:m failed (HTTP 500)"``."""
        return (REFUSED if self.refused else FAILED)(adapter=adapter, why=self.reason)


REFUSED = declare("llm.refused", en="{adapter} reply refused ({why})", pt="resposta de {adapter} recusada ({why})")
FAILED = declare("llm.failed", en="{adapter} failed ({why})", pt="{adapter} falhou ({why})")
DEADLINE = declare("llm.deadline", en="no complete reply within the {seconds:g} s deadline",
                   pt="nenhuma resposta completa dentro do prazo de {seconds:g} s")
OVERSIZED_BODY = declare("llm.oversized_body", en="oversized reply (body over {limit} bytes)",
                         pt="resposta grande demais (corpo acima de {limit} bytes)")
NO_MESSAGE = declare("llm.no_message", en="malformed reply (no choices[0].message in a JSON body)",
                     pt="resposta malformada (sem choices[0].message num corpo JSON)")
NOT_TEXT = declare("llm.not_text", en="malformed reply (the message content is not text)",
                   pt="resposta malformada (o conteúdo da mensagem não é texto)")
EMPTY = declare("llm.empty", en="empty reply", pt="resposta vazia")
OVERSIZED = declare("llm.oversized", en="oversized reply ({n} characters, limit {limit})",
                    pt="resposta grande demais ({n} caracteres, limite {limit})")
SECRET = declare("llm.credential_in_reply", en="the reply holds the API key or a credential of the base URL",
                 pt="a resposta contém a chave da API ou uma credencial da URL base")
HTTP = declare("llm.http", en="HTTP {status}", pt="HTTP {status}")
TIMED_OUT = declare("llm.timed_out", en="a read or the connection timed out", pt="uma leitura ou a conexão expirou")
UNREACHABLE = declare("llm.unreachable", en="the server could not be reached", pt="o servidor não pôde ser alcançado")
OTHER = declare("llm.other", en="{error!c}", pt="{error!c}")
REDIRECTED = declare("llm.redirected", en="the server answered a redirect, HTTP {status}, which is never followed",
                     pt="o servidor respondeu com um redirecionamento, HTTP {status}, que nunca é seguido")
EGRESS = declare("llm.egress_refused", en="the server's address {address!c} is {kind}, which "
                 "RETRIEVAL_LLM_ALLOW_HOSTS does not list", pt="o endereço {address!c} do servidor é {kind}, que "
                 "RETRIEVAL_LLM_ALLOW_HOSTS não lista")
UNRESOLVED = declare("llm.unresolved", en="the server's host name did not resolve",
                     pt="o nome do servidor não foi resolvido")
#: Why an address is refused (:func:`refused_kind`), nested in :data:`EGRESS`.
ADDRESS_KINDS = {
    "loopback": declare("llm.address.loopback", en="a loopback address", pt="um endereço de loopback"),
    "link-local": declare("llm.address.link_local", en="a link-local address", pt="um endereço link-local"),
    "unspecified": declare("llm.address.unspecified", en="an unspecified address",
                           pt="um endereço não especificado"),
    "multicast": declare("llm.address.multicast", en="a multicast address", pt="um endereço multicast"),
    "reserved": declare("llm.address.reserved", en="a reserved address", pt="um endereço reservado"),
    "metadata": declare("llm.address.metadata", en="a cloud metadata address",
                        pt="um endereço de metadados de nuvem"),
}

#: The URL schemes the LLM client speaks.
ALLOWED_SCHEMES = ("http", "https")
#: Cloud metadata and instance-credential endpoints: AWS, GCP, Azure, Oracle, OpenStack and DigitalOcean
#: (169.254.169.254), AWS ECS and EKS (169.254.170.2, 169.254.170.23), AWS over IPv6 (fd00:ec2::254,
#: fd00:ec2::23), Alibaba (100.100.100.200) and Azure's wire server (168.63.129.16). Refused unless listed.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "169.254.170.23", "fd00:ec2::254", "fd00:ec2::23", "100.100.100.200",
    "168.63.129.16"))
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # "this host": 0.x.x.x reaches the local machine on Linux
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NUMERIC_IPV4 = re.compile(r"(?i)[0-9a-fx.]+")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, NAT64, Teredo's client), or ``None``."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def refused_kind(ip: IPAddress) -> str | None:
    """Why ``ip`` is no place to send a request to unless an operator allows it (a key of
    :data:`ADDRESS_KINDS`), or ``None``: loopback, link-local (``169.254/16``, ``fe80::/10``), unspecified
    (``0.0.0.0/8``, ``::``), multicast, reserved (``240/4``, the broadcast address, IPv6's reserved ranges) or a
    cloud metadata endpoint; an IPv6 address carrying an IPv4 one is judged on both. Private networks
    (``10/8``, ``192.168/16``, ``fc00::/7``) are not refused: an inference server on the operator's network is
    the common case."""
    embedded = _embedded_ipv4(ip)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip, embedded = ip.ipv4_mapped, None  # ::ffff:a.b.c.d is a.b.c.d
    for candidate in (embedded, ip):  # the carried address first: it is where the packets end up
        if candidate is None:
            continue
        if candidate in METADATA_ADDRESSES:
            return "metadata"
        if candidate.is_loopback:
            return "loopback"
        if candidate.is_link_local:
            return "link-local"
        if candidate.is_unspecified or candidate in _THIS_NETWORK:
            return "unspecified"
        if candidate.is_multicast:
            return "multicast"
        if candidate.is_reserved:
            return "reserved"
    return None


def numeric_host(host: str | None) -> IPAddress | None:
    """The address a URL's host names when it is written as a number in any spelling the resolver accepts
    (dotted, hex ``0x7f000001``, decimal ``2130706433``, octal ``0177.0.0.1``, short ``127.1``; an IPv6 address,
    with or without brackets or a zone), without any lookup; ``None`` for a host name."""
    if not host:
        return None
    bare = host.strip("[]").partition("%")[0]
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    if _NUMERIC_IPV4.fullmatch(bare) and any(ch.isdigit() for ch in bare):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    return None


@dataclass(frozen=True)
class EgressPolicy:
    """Where the LLM client may connect: every address but those :func:`refused_kind` names, plus what the
    operator allows (``RETRIEVAL_LLM_ALLOW_HOSTS``).

    Attributes:
        networks: addresses and CIDR ranges allowed although refused by kind (``127.0.0.1``, ``::1``,
            ``10.0.0.0/8``).
        hosts: host names (lower case, IDNA) whose every address is allowed (``localhost``, ``vllm.internal``).
    """

    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, entries: str | Iterable[str] = ()) -> "EgressPolicy":
        """The policy of ``entries`` (a comma-separated string or a list): each an IP address, a CIDR range or a
        host name.

        Raises:
            ValueError: an entry that is none of these (one line naming it).
        """
        items = entries.split(",") if isinstance(entries, str) else list(entries)
        networks, hosts = [], set()
        for raw in (str(item).strip() for item in items):
            if not raw:
                continue
            try:
                networks.append(ipaddress.ip_network(raw.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = raw.lower().rstrip(".")
            if not re.fullmatch(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*", name) \
                    or numeric_host(name) is not None:
                raise ValueError(f"{raw!r} is not an IP address, a CIDR range or a host name")
            hosts.add(name)
        return cls(tuple(networks), frozenset(hosts))

    def refusal(self, host: str, ip: IPAddress) -> Reason | None:
        """Why a connection to ``ip`` (an address of ``host``) is refused, or ``None`` when it may go."""
        kind = refused_kind(ip)
        if kind is None or host.lower().rstrip(".") in self.hosts:
            return None
        candidates = [ip, _embedded_ipv4(ip)]
        if any(c is not None and c.version == net.version and c in net for c in candidates for net in self.networks):
            return None
        shown = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
        return EGRESS(address=str(shown), kind=ADDRESS_KINDS[kind]())

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The addresses of ``host`` (``getaddrinfo``), every one checked.

        Raises:
            LLMFailure: the host did not resolve, or one of its addresses is refused (then none is used: a name
                that answers a public and a loopback address is not trusted with either).
        """
        literal = numeric_host(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError):
                raise LLMFailure(UNRESOLVED()) from None
            # an IPv4 or IPv6 sockaddr starts with its address as text (the stub's union holds other families')
            addresses = [ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in infos]
        # ::ffff:a.b.c.d is a.b.c.d: checked and connected to as such
        addresses = list(dict.fromkeys(getattr(ip, "ipv4_mapped", None) or ip for ip in addresses))
        if not addresses:
            raise LLMFailure(UNRESOLVED())
        for ip in addresses:
            refusal = self.refusal(host, ip)
            if refusal is not None:
                raise LLMFailure(refusal)
        return addresses


def endpoint_problem(base_url: str, api_key_set: bool) -> str | None:
    """Why ``base_url`` cannot be used as the LLM's endpoint, in one line that never quotes the URL (it may hold
    credentials), or ``None``: not ``http``/``https``, no host, or user info (``user:password@``) together with
    an API key (HTTP Basic would replace the bearer key: one of them would be silently dropped)."""
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return "llm_base_url is not a URL (scheme://host[:port]/path)"
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        return "llm_base_url must be an http:// or https:// URL"
    if not host:
        return "llm_base_url has no host"
    if "@" in parts.netloc and api_key_set:
        return ("llm_base_url carries user info (user:password@) and llm_api_key is set: the server would get "
                "only the user info (HTTP Basic replaces the bearer key); keep one of them")
    return None


@dataclass(frozen=True)
class Reply:
    """An accepted reply: its text (stripped, non-empty, at most ``max_reply_chars``) and the server's usage
    (``None`` where the server gave no whole number)."""

    text: str
    input_tokens: int | None
    output_tokens: int | None


def split_base_url(url: str) -> tuple[str, dict[str, str]]:
    """The base URL without its query (and fragment), and the query as parameters the client sends with every
    request (the openai client would append its path after the query: ``/v1?key=k/chat/completions``)."""
    parts = urlsplit(url)
    params: dict[str, str] = {}
    for param in parts.query.split("&") if parts.query else ():
        name, _, value = param.partition("=")
        if name:
            params[unquote(name)] = unquote(value)
    netloc = parts.netloc
    ip = numeric_host(parts.hostname)
    ip = getattr(ip, "ipv4_mapped", None) or ip
    if ip is not None:  # 0x7f000001 → 127.0.0.1: the HTTP client parses only the dotted spelling
        userinfo, at, hostport = netloc.rpartition("@")
        port = f":{parts.port}" if parts.port is not None else ""
        netloc = f"{userinfo}{at}{f'[{ip}]' if ip.version == 6 else ip}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")), params


class ChatClient:
    """One chat-completions call at a time, under a total deadline, its reply checked before anyone reads it.

    Args:
        base_url: the server's base URL (``http://host:8000/v1``); query parameters are sent with each request.
        model: the model name sent to the server.
        api_key: the bearer key, or ``None``; never logged, never returned.
        timeout_s: the wall-clock bound of one whole call (connection and every read), in seconds.
        max_reply_chars: the longest reply text accepted.
        allow_hosts: what :class:`EgressPolicy` allows besides public and private addresses (IP addresses,
            CIDR ranges, host names; a comma-separated string or a list); empty: nothing else.

    Raises:
        ValueError: ``timeout_s`` or ``max_reply_chars`` not positive, ``base_url`` not ``http``/``https``
            or carrying user info together with ``api_key`` (:func:`endpoint_problem`), an invalid
            ``allow_hosts`` entry.
        ImportError: the ``openai`` package is not installed.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout_s: float = LLM_TIMEOUT_S,
                 max_reply_chars: int = 20_000, allow_hosts: str | Iterable[str] = ()) -> None:
        import openai  # noqa: F401 - fail here (the caller records why), not inside the first request

        problem = endpoint_problem(base_url, bool(api_key))
        if problem:
            raise ValueError(problem)
        self._policy = EgressPolicy.parse(allow_hosts)
        if not timeout_s > 0:
            raise ValueError(f"timeout_s={timeout_s}: must be positive")
        if max_reply_chars < 1:
            raise ValueError(f"max_reply_chars={max_reply_chars}: must be at least 1")
        self.model = model
        self.timeout_s = float(timeout_s)
        self.max_reply_chars = max_reply_chars
        self.max_body_bytes = max_reply_chars * BYTES_PER_CHAR + BODY_OVERHEAD_BYTES
        self._base_url, self._query = split_base_url(base_url)
        self._url_with_credentials = base_url
        self._api_key = api_key
        self._secrets = tuple(dict.fromkeys(
            s for s in (api_key, *url_secrets(base_url)) if s and len(s) >= MIN_SECRET_CHARS))

    @classmethod
    def from_settings(cls, settings: Any) -> "ChatClient":
        """The client of ``RETRIEVAL_LLM_*`` (base URL, model, key, timeout, reply bound)."""
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return cls(settings.llm_base_url, settings.llm_model, key, settings.llm_timeout,
                   settings.llm_max_reply_chars, settings.llm_allow_hosts)

    def __repr__(self) -> str:
        return f"ChatClient({url_origin(self._url_with_credentials, self._secrets)!r}, {self.model!r})"

    def complete(self, system: str, user: str) -> Reply:
        """Send one system and one user message; return the checked reply.

        Raises:
            LLMFailure: no complete reply within ``timeout_s`` (``refused=False``), the server could not be
                reached, answered an HTTP error or a redirect, or its address is refused by the egress policy
                (``refused=False``), or the reply was refused: empty, oversized, malformed, or holding a secret
                (``refused=True``).
        """
        from openai import OpenAI

        host = urlsplit(self._base_url).hostname or ""
        literal = numeric_host(host)
        refusal = self._policy.refusal(host, literal) if literal is not None else None  # no lookup needed
        if refusal is not None:
            raise LLMFailure(refusal)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        # A client per call: closing it is how a call past its deadline loses its connection. Its HTTP client
        # connects only where the egress policy allows, follows no redirect and reads no proxy variable.
        http = _http_module()
        http_client = http.Client(transport=_egress_transport(http)(self._policy), follow_redirects=False,
                                  trust_env=False, timeout=self.timeout_s)
        client = OpenAI(base_url=self._base_url, api_key=self._api_key or "not-set", timeout=self.timeout_s,
                        max_retries=0, default_query=self._query or None, http_client=http_client)
        deadline = time.monotonic() + self.timeout_s
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                outcome["body"] = self._read(client, messages, deadline)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, which describes it
                outcome["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name="llm-call", daemon=True).start()
        finished = done.wait(max(0.0, deadline - time.monotonic()))
        _close(client)
        _close(http_client)
        if not finished:
            raise LLMFailure(DEADLINE(seconds=self.timeout_s))
        if "error" in outcome:
            raise _failure(outcome["error"])
        return self._check(outcome["body"])

    def _read(self, client: Any, messages: list[dict[str, str]], deadline: float) -> bytes:
        """The reply's body, read chunk by chunk up to ``max_body_bytes`` and no later than ``deadline``."""
        body = bytearray()
        with client.chat.completions.with_streaming_response.create(
                model=self.model, temperature=0, messages=messages) as response:
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self.max_body_bytes:
                    raise LLMFailure(OVERSIZED_BODY(limit=self.max_body_bytes), refused=True)
                if time.monotonic() > deadline:
                    raise LLMFailure(DEADLINE(seconds=self.timeout_s))
        return bytes(body)

    def _check(self, body: bytes) -> Reply:
        """Parse and check a body; the usage of a refused reply travels with its :class:`LLMFailure`."""
        try:
            data = json.loads(body)
            message = data["choices"][0]["message"]
            content = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise LLMFailure(NO_MESSAGE(), refused=True) from None
        usage = data.get("usage") if isinstance(data, dict) else None
        tokens = (_count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))
        if content is not None and not isinstance(content, str):
            raise LLMFailure(NOT_TEXT(), True, *tokens)
        text = (content or "").strip()
        if not text:
            raise LLMFailure(EMPTY(), True, *tokens)
        if len(text) > self.max_reply_chars:
            raise LLMFailure(OVERSIZED(n=len(text), limit=self.max_reply_chars), True, *tokens)
        if holds_secret(text, self._secrets):  # compared on what the secret is, not on how it is written
            raise LLMFailure(SECRET(), True, *tokens)
        return Reply(text, *tokens)


def _count(usage: Any, name: str) -> int | None:
    """A token count the server reported, when it is a whole number ≥ 0 (anything else could carry text)."""
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _http_module() -> Any:
    """The HTTP client package the installed ``openai`` speaks (``httpx2``, or ``httpx`` before it)."""
    try:
        import httpx2
        return httpx2
    except ImportError:  # pragma: no cover - an older openai
        import httpx
        return httpx


@lru_cache(maxsize=2)
def _egress_transport(http: Any) -> type:
    """The transport class of :class:`EgressPolicy` for the HTTP package ``http``: each request's host is
    resolved and checked, then the request is sent to a checked address (the URL's host replaced by it; the
    ``Host`` header and TLS's server name stay the host's), so that the address connected to is the address
    checked; any ``3xx`` answer fails the call (:data:`REDIRECTED`), whatever the client's redirect setting."""

    class EgressTransport(http.HTTPTransport):
        def __init__(self, policy: EgressPolicy) -> None:
            super().__init__(trust_env=False)
            self.policy = policy

        def handle_request(self, request: Any) -> Any:
            url = request.url
            host = url.raw_host.decode("ascii")
            port = url.port or (443 if url.scheme == "https" else 80)
            failed: Exception | None = None
            for ip in self.policy.resolve(host, port):
                extensions = dict(request.extensions)
                if url.scheme == "https":
                    extensions["sni_hostname"] = host  # certificate checked against the host, not the address
                pinned = http.Request(request.method, url.copy_with(host=str(ip)), headers=request.headers,
                                      stream=request.stream, extensions=extensions)
                try:
                    response = super().handle_request(pinned)
                except http.ConnectError as exc:  # nothing was sent: the next checked address may answer
                    failed = exc
                    continue
                if 300 <= response.status_code < 400:
                    response.close()
                    raise LLMFailure(REDIRECTED(status=response.status_code))
                return response
            assert failed is not None
            raise failed

    return EgressTransport


def _failure(exc: BaseException) -> LLMFailure:
    """An exception of the call as an :class:`LLMFailure` whose reason names its kind, never its message (an
    HTTP error's message quotes the server's body, which may echo the key); a refusal of the egress policy or a
    redirect raised under the openai client keeps its own reason."""
    if isinstance(exc, LLMFailure):
        return exc
    cause, depth = exc.__cause__ or exc.__context__, 0
    while cause is not None and depth < 16:
        if isinstance(cause, LLMFailure):
            return cause
        cause, depth = cause.__cause__ or cause.__context__, depth + 1
    import openai

    if isinstance(exc, openai.APIStatusError):
        return LLMFailure(HTTP(status=exc.status_code))
    if isinstance(exc, openai.APITimeoutError):
        return LLMFailure(TIMED_OUT())
    if isinstance(exc, openai.APIConnectionError):
        return LLMFailure(UNREACHABLE())
    return LLMFailure(OTHER(error=exc.__class__.__name__))


def _close(client: Any) -> None:
    """Close a call's client; a worker still reading then fails at its next read instead of reading on."""
    try:
        client.close()
    except Exception as exc:  # noqa: BLE001 - closing is best effort; the call's outcome is already decided
        log.debug("closing the LLM client raised %s", exc.__class__.__name__)
