"""Secrets out of every output: the one redaction of URLs, URIs, host settings and any text that may quote them.

Everything the workbench writes where someone else may read it (the trace's settings, the CLI's ``--json``, the
reports, the evaluation's exports, the log lines, a store's error message) goes through :func:`redact_text` or
:func:`redact_url`, with the secrets the settings hold (:func:`setting_secrets`) replaced wherever they appear:

* a URL's userinfo (``http://root:pass@h:19530`` → ``http://***@h:19530``) and a scheme-less one
  (``user:pw@h:8000`` → ``***@h:8000``);
* every query or matrix parameter's value but a version's (``?key=``, ``&token=``, ``;key=`` → ``=***``),
  and a fragment;
* a path segment that looks like a token (20+ characters of letters and digits mixed, such as a webhook's or
  a bot's key: ``/bot123456:AAH…/``), judged on the segment percent-decoded and without its ``=`` padding, and
  any segment of 8+ characters that carries a percent-escape or ``=`` padding (machine-made, never a word);
* ``key=value`` pairs named like credentials in free text (``token=…``, ``password=…``, ``api_key=…``);
* the secrets themselves (an API key, a Milvus token, a URL's password), verbatim.

The LLM's base URL (:data:`ORIGIN_ONLY_SETTINGS`) is recorded as its origin alone, ``scheme://host:port``
(:func:`url_origin`): nothing of its userinfo, path, query or fragment can survive, however it is spelled.
:func:`holds_secret` is the check of a model's reply against the secrets (:func:`normalized_views`).
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

from pydantic import SecretStr

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
_TOKEN_SEGMENT = re.compile(r"(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9_\-.~:+/]{20,}")
#: Settings recorded as their origin only (:func:`url_origin`): the LLM's base URL, whose path may hold a
#: proxy's or a gateway's token in any spelling (padded, percent-escaped, short).
ORIGIN_ONLY_SETTINGS = frozenset({"llm_base_url"})


def looks_like_token(segment: str) -> bool:
    """Whether a URL path segment looks like a credential: percent-decoded and without its ``=`` padding, 20+
    characters of letters and digits mixed (``-_.~:+/`` allowed), or 8+ characters written with a
    percent-escape or ``=`` padding (``dG9rZW4%3D``: machine-made)."""
    decoded = unquote(segment)
    core = decoded.rstrip("=")
    if _TOKEN_SEGMENT.fullmatch(core):
        return True
    return len(core) >= 8 and ("%" in segment or decoded != core)


def _redact_param(param: str) -> str:
    name, sep, _ = param.partition("=")
    return param if not sep or unquote(name).strip().lower() in PUBLIC_QUERY_PARAMS else f"{name}={REDACTED}"


def _redact_path(path: str) -> str:
    out = []
    for segment in path.split("/"):
        head, sep, params = segment.partition(";")  # matrix parameters: ;key=value
        head = REDACTED if looks_like_token(head) else head
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


def url_origin(url: str | None, secrets: Iterable[str | None] = ()) -> str | None:
    """``url``'s origin, ``scheme://host[:port]`` (the host lower-cased, an IPv6 address in brackets), and
    nothing else: no userinfo, path, query or fragment. A value without ``://`` is read as ``host[:port]``; one
    that cannot be parsed, or has no host, is ``***``. Any of ``secrets`` found in the result becomes ``***``.

    ``http://user:pw@LLM.internal:8000/v1/tok%3D%3D?key=k`` → ``http://llm.internal:8000``.
    """
    if url is None:
        return None
    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return REDACTED
    if not host:
        return REDACTED
    host = f"[{host}]" if ":" in host else host
    scheme = f"{parts.scheme.lower()}://" if parts.scheme else ""
    return _replace_secrets(f"{scheme}{host}{'' if port is None else f':{port}'}", list(secrets))


def redact_setting(name: str, value: str | None, secrets: Iterable[str | None] = ()) -> str | None:
    """A URL, URI or host setting's ``value`` as it may be recorded: the origin alone for
    :data:`ORIGIN_ONLY_SETTINGS` (:func:`url_origin`), else :func:`redact_url`."""
    return url_origin(value, secrets) if name in ORIGIN_ONLY_SETTINGS else redact_url(value, secrets)


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
    there is no password: a token as user name) and the HTTP Basic token made of them, the value of every
    query parameter not in :data:`PUBLIC_QUERY_PARAMS`, and every path segment that looks like a token
    (:func:`looks_like_token`), as written and percent-decoded."""
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
    if "://" in url:
        for segment in parts.path.split("/"):
            head = segment.partition(";")[0]
            if looks_like_token(head):
                found += [head, unquote(head)]
    return tuple(s for s in dict.fromkeys(found) if len(s) >= MIN_SECRET_CHARS)


def _folded(text: str) -> str:
    """``text`` for finding a secret however it is disguised: NFKC (full-width letters), without invisible
    format characters (zero-width spaces and joiners, soft hyphens), case-folded."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf").casefold()


#: A secret with at least this many letters and digits is also found by any run of this many consecutive ones
#: of them: a key split in two (or in pieces this long) is found by one of its pieces.
FRAGMENT_CHARS = 8
_HEX_PREFIXES = re.compile(r"0x|\\x")
_NOT_HEX = re.compile(r"[^0-9a-f]")
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]")
_NOT_BASE64_URL = re.compile(r"[^A-Za-z0-9_-]")
_URLSAFE = str.maketrans("-_", "+/")


def letters_and_digits(text: str) -> str:
    """``text``'s letters and digits, NFKC-normalised and case-folded: what is left of a secret once every
    separator, space, punctuation mark and invisible character is taken out (``S.K-ab 12`` → ``skab12``)."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isalnum()).casefold()


def _surfaces(text: str) -> list[str]:
    """``text`` and its percent-decodings (up to three rounds: ``%2573`` is ``%73`` is ``s``)."""
    out = [unicodedata.normalize("NFKC", text)]
    for _ in range(3):
        decoded = unquote(out[-1])
        if decoded == out[-1]:
            break
        out.append(decoded)
    return out


def _decodings(surface: str) -> Iterator[bytes]:
    """The bytes of ``surface`` read as hex and as base64 (standard and URL-safe), ignoring every character
    that is not of the alphabet (spaces, dots, colons, ``0x`` and ``\\x`` prefixes), at every alignment: a run
    of the encoding anywhere in ``surface`` decodes to its bytes in one of them."""
    compact = "".join(ch for ch in surface if unicodedata.category(ch) != "Cf" and not ch.isspace())
    hexes = _NOT_HEX.sub("", _HEX_PREFIXES.sub("", compact.casefold()))
    for shift in (0, 1):
        piece = hexes[shift:]
        yield bytes.fromhex(piece[: len(piece) - len(piece) % 2])
    for projection in (_NOT_BASE64.sub("", compact), _NOT_BASE64_URL.sub("", compact).translate(_URLSAFE)):
        for shift in range(4):
            piece = projection[shift:]
            try:
                yield base64.b64decode(piece[: len(piece) - len(piece) % 4])
            except (ValueError, binascii.Error):
                continue


def normalized_views(text: str) -> Iterator[str]:
    """Every reading of ``text`` (a model's reply) that :func:`holds_secret` searches, each as its letters and
    digits (:func:`letters_and_digits`): the text itself and reversed, then percent-decoded, and the bytes of
    every hex or base64 run in each of those (as Latin-1, so that each byte is one character)."""
    for surface in _surfaces(text):
        plain = letters_and_digits(surface)
        yield plain
        yield plain[::-1]
        for decoded in _decodings(surface):
            yield letters_and_digits(decoded.decode("latin-1"))


def holds_secret(text: str, secrets: Iterable[str | None]) -> bool:
    """Whether ``text`` (a model's reply) holds one of ``secrets``, compared on what the secret is rather than on
    how it is written.

    The rule: a secret is found when, in any of :func:`normalized_views` of ``text`` (separators, spaces,
    punctuation and invisible characters removed, case folded, percent-escapes decoded, hex and base64 runs
    decoded, or reversed), there appears its own letters and digits or, for a secret that has at least
    :data:`FRAGMENT_CHARS` of them, any :data:`FRAGMENT_CHARS` consecutive ones. So the key is refused
    verbatim, in capitals, dot- or space-separated, with zero-width characters or full-width letters,
    percent-encoded, in hex, in base64 (standard or URL-safe, alone or inside a longer run), reversed, and
    split in two (or into pieces of 8+ characters) anywhere in the reply. A key split into pieces shorter than
    that, or spelled out in words, is not found: no check of text can promise more.

    A secret with fewer than :data:`FRAGMENT_CHARS` letters and digits is looked for whole: verbatim (folded,
    without spaces) and as raw bytes of a decoded run."""
    found = [s for s in secrets if s and len(s) >= MIN_SECRET_CHARS]
    if not found:
        return False
    plain = _folded(text)
    squeezed = "".join(plain.split())
    if any(_folded(secret) in plain or _folded(secret) in squeezed for secret in found):
        return True
    fragments: set[str] = set()
    short: list[bytes] = []
    for secret in found:
        core = letters_and_digits(secret)
        if len(core) >= FRAGMENT_CHARS:
            fragments.update(core[i:i + FRAGMENT_CHARS] for i in range(len(core) - FRAGMENT_CHARS + 1))
        else:
            short.append(secret.encode("utf-8"))
    if fragments and any(fragment in view for view in normalized_views(text) for fragment in fragments):
        return True
    if short:
        for surface in _surfaces(text):
            compact = "".join(ch for ch in surface if unicodedata.category(ch) != "Cf" and not ch.isspace())
            if any(w in decoded for decoded in _decodings(compact) for w in short):
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
        if isinstance(value, SecretStr):
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
