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
  base URL) verbatim. A refusal is an :class:`LLMFailure` whose ``reason`` is one line of our own words: never
  the server's text, the URL or the key, so the caller can record it in the trace.

:func:`redact_url` (:mod:`retrieval.core.redact`) is the one redaction of the endpoint wherever it is recorded
(the public settings of every trace).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from .reasons import Reason, declare
# The redaction of the endpoint (and of every other setting): one module, re-exported here for its callers.
from .redact import (MIN_SECRET_CHARS, PUBLIC_QUERY_PARAMS, REDACTED, holds_secret, redact_url,  # noqa: F401
                     url_secrets)

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
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), params


class ChatClient:
    """One chat-completions call at a time, under a total deadline, its reply checked before anyone reads it.

    Args:
        base_url: the server's base URL (``http://host:8000/v1``); query parameters are sent with each request.
        model: the model name sent to the server.
        api_key: the bearer key, or ``None``; never logged, never returned.
        timeout_s: the wall-clock bound of one whole call (connection and every read), in seconds.
        max_reply_chars: the longest reply text accepted.

    Raises:
        ValueError: ``timeout_s`` or ``max_reply_chars`` not positive.
        ImportError: the ``openai`` package is not installed.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout_s: float = 60.0,
                 max_reply_chars: int = 20_000) -> None:
        import openai  # noqa: F401 - fail here (the caller records why), not inside the first request

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
                   settings.llm_max_reply_chars)

    def __repr__(self) -> str:
        return f"ChatClient({redact_url(self._url_with_credentials, self._secrets)!r}, {self.model!r})"

    def complete(self, system: str, user: str) -> Reply:
        """Send one system and one user message; return the checked reply.

        Raises:
            LLMFailure: no complete reply within ``timeout_s`` (``refused=False``), the server could not be
                reached or answered an HTTP error (``refused=False``), or the reply was refused: empty,
                oversized, malformed, or holding a secret verbatim (``refused=True``).
        """
        from openai import OpenAI

        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        # A client per call: closing it is how a call past its deadline loses its connection.
        client = OpenAI(base_url=self._base_url, api_key=self._api_key or "not-set", timeout=self.timeout_s,
                        max_retries=0, default_query=self._query or None)
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
        if holds_secret(text, self._secrets):  # verbatim, upper-cased, split by invisible characters, base64
            raise LLMFailure(SECRET(), True, *tokens)
        return Reply(text, *tokens)


def _count(usage: Any, name: str) -> int | None:
    """A token count the server reported, when it is a whole number ≥ 0 (anything else could carry text)."""
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _failure(exc: BaseException) -> LLMFailure:
    """An exception of the call as an :class:`LLMFailure` whose reason names its kind, never its message (an
    HTTP error's message quotes the server's body, which may echo the key)."""
    if isinstance(exc, LLMFailure):
        return exc
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
