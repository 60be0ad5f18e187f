"""Secrets out of every output: the one redaction of URLs, URIs, host settings and any text that may quote them.

Everything the workbench writes where someone else may read it (the trace's settings, the CLI's ``--json``, the
reports, the evaluation's exports, the log lines, a store's error message) goes through :func:`redact_text` or
:func:`redact_url`, with the secrets the settings hold (:func:`setting_secrets`) replaced wherever they appear:

* a URL's userinfo (``http://root:pass@h:19530`` → ``http://***@h:19530``) and a scheme-less one
  (``user:pw@h:8000`` → ``***@h:8000``);
* every query or matrix parameter's value but a version's (``?key=``, ``&token=``, ``;key=`` → ``=***``),
  and a fragment;
* a path segment that looks like a token (20+ characters of letters and digits mixed, such as a webhook's or
  a bot's key: ``/bot123456:AAH…/``);
* ``key=value`` pairs named like credentials in free text (``token=…``, ``password=…``, ``api_key=…``);
* the secrets themselves (an API key, a Milvus token, a URL's password), verbatim.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import traceback
import unicodedata
from typing import Any, Iterable, Iterator
from urllib.parse import quote, unquote, urlsplit, urlunsplit

REDACTED = "***"
#: Query parameters whose value is kept (a version, never a credential); every other value is redacted.
PUBLIC_QUERY_PARAMS = frozenset({"api-version", "api_version", "version"})
#: A secret shorter than this is not looked for (a one-letter "password" would redact every "a").
MIN_SECRET_CHARS = 4

_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s'\"<>`]+")
#: ``user:password@host[:port]`` without a scheme (a Chroma host setting, a DSN in a message).
_USERINFO = re.compile(r"(?<![\w.%+~-])[\w.~%!$&*+=-]+:[^\s/@'\"<>`()\[\]{}]+@(?=[A-Za-z0-9\[])")
_CREDENTIAL_PAIR = re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|"
                              r"passwd|pwd|sig|signature|key|apikey)\s*[=:]\s*)([^\s&;,'\"<>]+)")
_TOKEN_SEGMENT = re.compile(r"(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9_\-.~:]{20,}")


def _redact_param(param: str) -> str:
    name, sep, _ = param.partition("=")
    return param if not sep or unquote(name).strip().lower() in PUBLIC_QUERY_PARAMS else f"{name}={REDACTED}"


def _redact_path(path: str) -> str:
    out = []
    for segment in path.split("/"):
        head, sep, params = segment.partition(";")  # matrix parameters: ;key=value
        head = REDACTED if _TOKEN_SEGMENT.fullmatch(head) else head
        if sep:
            params = ";".join(_redact_param(p) for p in params.split(";"))
        out.append(head + sep + params)
    return "/".join(out)


def _replace_secrets(text: str, secrets: Iterable[str | None]) -> str:
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        for form in {secret, quote(secret, safe=""), quote(secret)}:
            text = text.replace(form, REDACTED)
    return text


def redact_url(url: str | None, secrets: Iterable[str | None] = ()) -> str | None:
    """``url`` as it may be recorded: userinfo becomes ``***@``, every query and matrix value but a version's
    becomes ``***``, a fragment ``***``, a token-looking path segment ``***``, and any of ``secrets`` found
    anywhere ``***``. A value without ``://`` (``user:pw@h:8000``, a file path) is redacted as text
    (:func:`redact_text`). A URL that cannot be parsed is recorded as ``***`` entirely.

    ``http://user:pw@host:8000/v1?api-version=2&api_key=zzz`` → ``http://***@host:8000/v1?api-version=2&api_key=***``.
    """
    if url is None:
        return None
    secrets = list(secrets)
    if "://" not in url:
        return redact_text(url, secrets)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(_redact_param(p) for p in parts.query.split("&")) if parts.query else ""
    out = urlunsplit((parts.scheme, netloc, _redact_path(parts.path), query, REDACTED if parts.fragment else ""))
    return _replace_secrets(out, secrets)


def redact_text(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every URL in it redacted (:func:`redact_url`), every scheme-less ``user:password@`` and
    every credential-named ``key=value`` pair's value, and ``secrets`` wherever they appear."""
    secrets = list(secrets)
    text = _replace_secrets(text, secrets)
    text = _URL.sub(lambda m: redact_url(m.group(0)) or REDACTED, text)
    text = _USERINFO.sub(f"{REDACTED}@", text)
    return _CREDENTIAL_PAIR.sub(lambda m: m.group(1) + (m.group(2) if m.group(2) == REDACTED else REDACTED), text)


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The credentials a URL (or ``user:password@host``) carries: the userinfo's password (its user name when
    there is no password: a token as user name) and the HTTP Basic token made of them, and the value of every
    query parameter not in :data:`PUBLIC_QUERY_PARAMS`."""
    if not url:
        return ()
    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
    except ValueError:
        return ()
    found = []
    if "@" in parts.netloc:
        user, sep, password = parts.netloc.rpartition("@")[0].partition(":")
        found.append(unquote(password) if sep and password else unquote(user))
        found.append(base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode())
    for param in parts.query.split("&") if parts.query else ():
        name, sep, value = param.partition("=")
        if sep and unquote(name).strip().lower() not in PUBLIC_QUERY_PARAMS:
            found.append(unquote(value))
    return tuple(s for s in found if len(s) >= MIN_SECRET_CHARS)


def _folded(text: str) -> str:
    """``text`` for finding a secret however it is disguised: NFKC (full-width letters), without invisible
    format characters (zero-width spaces and joiners, soft hyphens), case-folded."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf").casefold()


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{6,}={0,2}")


def _decoded_runs(text: str) -> Iterator[bytes]:
    """The bytes of every base64-looking run of ``text`` (standard or URL-safe alphabet, any of the four
    alignments of a run that starts mid-group)."""
    for run in _BASE64_RUN.findall(text):
        core = run.rstrip("=")
        for shift in range(4):
            piece = core[shift:]
            piece = piece[: len(piece) - len(piece) % 4 if len(piece) % 4 == 1 else len(piece)]
            padded = piece + "=" * (-len(piece) % 4)
            for altchars in (None, b"-_"):
                try:
                    yield base64.b64decode(padded, altchars=altchars)
                except (ValueError, binascii.Error):
                    continue


def holds_secret(text: str, secrets: Iterable[str | None]) -> bool:
    """Whether ``text`` (a model's reply) holds one of ``secrets``: verbatim, in another case, with invisible
    characters or spaces inside it (``s\u200bk-…``), in full-width letters, or base64-encoded (standard or
    URL-safe, on its own or inside a longer run)."""
    found = [s for s in secrets if s and len(s) >= MIN_SECRET_CHARS]
    if not found:
        return False
    plain = _folded(text)
    squeezed = "".join(plain.split())
    for secret in found:
        folded = _folded(secret)
        if folded in plain or folded in squeezed:
            return True
    compact = "".join(ch for ch in unicodedata.normalize("NFKC", text)
                      if unicodedata.category(ch) != "Cf" and not ch.isspace())
    wanted = [s.encode("utf-8") for s in found]
    for decoded in _decoded_runs(compact):
        if any(w in decoded for w in wanted):
            return True
    return False


def is_url_setting(name: str) -> bool:
    """A setting that names a server: ``*_url``, ``*_uri``, ``*_host``."""
    return name.endswith(("_url", "_uri", "_host"))


def setting_secrets(settings: Any) -> list[str]:
    """Every secret ``settings`` hold: the ``SecretStr`` fields' values (the API key, the Milvus token, and
    the parts of a ``user:password`` token) and the credentials of every URL setting."""
    found: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if hasattr(value, "get_secret_value"):
            secret = value.get_secret_value()
            found += [secret, *secret.split(":", 1)] if ":" in secret else [secret]
        elif isinstance(value, str) and (is_url_setting(name) or "://" in value):
            found += url_secrets(value)
    return [s for s in dict.fromkeys(found) if s and len(s) >= MIN_SECRET_CHARS]


def scrub(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every one of ``secrets`` replaced in every string (and
    key): for whole documents (a trace, a report), whose texts are otherwise left as they are."""
    found = [s for s in secrets if s and len(s) >= MIN_SECRET_CHARS]
    if not found:
        return value
    return _scrub(value, found)


def _scrub(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return _replace_secrets(value, secrets)
    if isinstance(value, dict):
        return {(_replace_secrets(k, secrets) if isinstance(k, str) else k): _scrub(v, secrets)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, secrets) for v in value]
    return value


_LOG_SECRETS: list[str] = []
_FACTORY_INSTALLED = False


def redact_record(record: logging.LogRecord, secrets: Iterable[str | None] = ()) -> logging.LogRecord:
    """``record`` with its message (arguments merged in) redacted (:func:`redact_text`) and its exception's
    traceback formatted and redacted too (a handler's formatter uses that text)."""
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a malformed record still logs, as logging would
        message = str(record.msg)
    record.msg, record.args = redact_text(message, secrets), ()
    if record.exc_info and record.exc_info[1] is not None:
        record.exc_text = redact_text("".join(traceback.format_exception(*record.exc_info)).rstrip(), secrets)
    return record


def install_log_redaction(secrets: Iterable[str | None] = ()) -> None:
    """Redact every log record of this process, whatever its logger or handler (a log record factory:
    :func:`redact_record`), with ``secrets`` (a later call replaces them)."""
    global _FACTORY_INSTALLED
    _LOG_SECRETS[:] = [s for s in secrets if s]
    if _FACTORY_INSTALLED:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return redact_record(previous(*args, **kwargs), _LOG_SECRETS)

    logging.setLogRecordFactory(factory)
    _FACTORY_INSTALLED = True
