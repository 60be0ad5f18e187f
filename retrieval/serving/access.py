"""Who may open which tenants: the access policy of a shared deployment (README, "Deploying for several users").

A policy file maps each user to the tenants they may open, and may give the tenants of a signed-in user it
does not name (``default``; absent = none)::

    users:
      alice@example.com: [lumen]
      bob@example.com: [ventura, lumen]
    default: []

The file is YAML (``.yaml``/``.yml``, every scalar read as written: ``007`` stays ``"007"``), TOML (``.toml``:
``[users]`` then ``"alice@example.com" = ["lumen"]``) or JSON (``.json``). It is validated whole: anything
else (an unknown key, a tenant list written as one string, a user listed twice, a boolean tenant) is refused
with one line naming the file and the entry (:class:`~retrieval.core.errors.InvalidPolicy`), and a refused policy
opens nothing.

Users are matched exactly after Unicode NFC normalisation and trimming, with no case folding (``Alice@x`` is
not ``alice@x``; ``ſam`` is not ``sam``, ``straße`` is not ``strasse``, the Kelvin sign's ``\u212Aate`` is not
``kate``, though NFC makes it ``Kate``); tenants by their written form (a corpus whose tenant is the number ``7`` is opened by ``7`` or ``"7"``: a
corpus' tenant field holds one JSON type, so the forms never collide).

This module decides; it never learns who the user is. The app reads the identity (Streamlit's OIDC login, or
a header set by a trusted reverse proxy: ``RETRIEVAL_USER_HEADER``) and asks :func:`allowed_tenants`. Without
a policy (``RETRIEVAL_ACCESS_POLICY`` unset) the answer is ``None``: single-user mode, every tenant.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, TypeVar

from ..core.errors import InvalidPolicy
from ..core.paths import PROJECT_ROOT
from ..core.tenants import written
from ..settings import Settings

#: The largest policy file read (a policy of ten thousand users is a few hundred KiB).
MAX_POLICY_BYTES = 4 * 1024 * 1024
#: The longest user name accepted, from the policy or from a request (an e-mail address is at most 320).
MAX_USER_CHARS = 320
#: The longest tenant name accepted (a corpus' tenant ids are short codes).
MAX_TENANT_CHARS = 256
SUFFIXES = (".yaml", ".yml", ".toml", ".json")
_KEYS = ("users", "default")

T = TypeVar("T")


@dataclass(frozen=True)
class AccessPolicy:
    """A validated access policy.

    Attributes:
        users: user (NFC, trimmed: :func:`normalize_user`) → the tenants they may open (written forms).
        default: the tenants of a signed-in user the policy does not name (empty: such a user may open none).
        source: the file it was read from (for messages).
    """

    users: Mapping[str, frozenset[str]]
    default: frozenset[str] = frozenset()
    source: str = "<policy>"

    def allowed_tenants(self, user: str | None) -> frozenset[str]:
        """The tenants ``user`` may open: theirs, the ``default`` for a user not named, none without a user.

        Args:
            user: the signed-in user as the identity source gives it (``None``: nobody signed in).

        Returns:
            The tenants' written forms; empty when the user may open none (the app then says "not authorised").
        """
        key = normalize_user(user)
        if key is None:
            return frozenset()
        return self.users.get(key, self.default)


def normalize_user(raw: object) -> str | None:
    """A user name as policies compare it: NFC, trimmed, nothing else (no case folding, no compatibility
    folding: ``Bob`` is not ``bob``, ``ſam`` not ``sam``); ``None`` for no usable name.

    ``None`` for a value that is not a string, is empty, is longer than :data:`MAX_USER_CHARS` or holds a
    control character (a header such as ``alice\\r\\nX: y`` names nobody).
    """
    if not isinstance(raw, str):
        return None
    name = unicodedata.normalize("NFC", raw).strip()
    if not name or len(name) > MAX_USER_CHARS or any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")
                                                      for ch in name):
        return None
    return name


def same_header(key: str, name: str) -> bool:
    """Whether header ``key`` is ``name``: ASCII letter case ignored, and ``_`` read as ``-`` (some servers
    and gateways turn ``X_Forwarded_User`` into ``X-Forwarded-User``), so every spelling counts as a copy."""
    return key.replace("_", "-").lower() == name.replace("_", "-").lower() if key.isascii() else False


def user_from_headers(headers: Iterable[tuple[str, str]], name: str) -> str | None:
    """The user a request's ``headers`` (name, value pairs as received) name in header ``name``, or ``None``.

    Exactly one copy, in any spelling (:func:`same_header`), must be present: two copies mean a client's own
    header reached the app beside the proxy's, so they name nobody. A value holding a comma names nobody either
    (HTTP joins repeated headers with commas), nor one :func:`normalize_user` refuses.
    """
    values = [value for key, value in headers if same_header(key, name)]
    if len(values) != 1 or "," in values[0]:
        return None
    return normalize_user(values[0])


def allowed_tenants(policy: AccessPolicy | None, user: str | None) -> frozenset[str] | None:
    """The tenants ``user`` may open under ``policy``; ``None`` in single-user mode (no policy: every tenant).

    An empty set means not authorised (no identity, or a user with no tenants).
    """
    return None if policy is None else policy.allowed_tenants(user)








def policy_path(settings: Settings) -> Path | None:
    """The policy file ``settings`` names (relative to the project folder, ``~`` expanded), or ``None``."""
    raw = settings.access_policy.strip()
    if not raw:
        return None
    return Path(os.path.abspath(PROJECT_ROOT / os.path.expanduser(raw)))


def load_policy(path: str | os.PathLike[str]) -> AccessPolicy:
    """Read and validate a policy file.

    Raises:
        InvalidPolicy: one line naming the file: missing, not a regular file, over :data:`MAX_POLICY_BYTES`, an
            unknown suffix, not parseable, or not a valid policy (:func:`parse_policy`).
    """
    source = str(path)
    suffix = Path(source).suffix.lower()
    if suffix not in SUFFIXES:
        raise InvalidPolicy(f"access policy {source}: the file must end in {', '.join(SUFFIXES)}")
    try:
        info = os.stat(source)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidPolicy(f"access policy {source}: not a regular file")
        if info.st_size > MAX_POLICY_BYTES:
            raise InvalidPolicy(f"access policy {source}: {info.st_size:,} bytes, over the limit of "
                                f"{MAX_POLICY_BYTES:,}")
        with open(source, "rb") as handle:
            raw = handle.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise InvalidPolicy(f"access policy {source}: cannot be read ({exc.strerror or exc.__class__.__name__})") \
            from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidPolicy(f"access policy {source}: not UTF-8 text") from None
    try:
        data = _parse(text, suffix, source)
    except InvalidPolicy:
        raise
    except RecursionError:
        raise InvalidPolicy(f"access policy {source}: nested too deep") from None
    except ValueError as exc:  # Python's own limit: an integer of more than 4,300 digits
        why = ("an integer of more than 4,300 digits" if "integer string conversion" in str(exc)
               else f"cannot be parsed ({' '.join(str(exc).split())[:120]})")
        raise InvalidPolicy(f"access policy {source}: {why}") from None
    except Exception as exc:  # noqa: BLE001 - any parser failure is one line, never a traceback
        raise InvalidPolicy(f"access policy {source}: cannot be parsed ({exc.__class__.__name__})") from None
    return parse_policy(data, source)


def policy_from_settings(settings: Settings) -> AccessPolicy | None:
    """The policy ``RETRIEVAL_ACCESS_POLICY`` names, or ``None`` when it is unset (single-user mode).

    Raises:
        InvalidPolicy: the file named cannot be read or is not valid (never a silent single-user mode).
    """
    path = policy_path(settings)
    return None if path is None else load_policy(path)


def parse_policy(data: Any, source: str = "<policy>") -> AccessPolicy:
    """Validate parsed policy data (a mapping with ``users`` and optionally ``default``).

    Raises:
        InvalidPolicy: one line naming ``source`` and the first problem found.
    """
    where = f"access policy {source}"
    if not isinstance(data, Mapping):
        raise InvalidPolicy(f"{where}: must be a mapping with 'users' (user: [tenants]) and optionally 'default'")
    unknown = [str(k) for k in data if k not in _KEYS]
    if unknown:
        raise InvalidPolicy(f"{where}: unknown key {_short(unknown[0])} (the keys are 'users' and 'default')")
    if "users" not in data:
        raise InvalidPolicy(f"{where}: 'users' is missing (user: [tenants])")
    users = data["users"]
    if not isinstance(users, Mapping):
        raise InvalidPolicy(f"{where}: 'users' must be a mapping of user to a list of tenants")
    table: dict[str, frozenset[str]] = {}
    spelled: dict[str, str] = {}
    for user, tenants in users.items():
        key = normalize_user(user)
        if key is None:
            raise InvalidPolicy(f"{where}: user {_short(user)} is not a user name (a non-empty string of at most "
                                f"{MAX_USER_CHARS} characters without control characters)")
        if key in table:
            raise InvalidPolicy(f"{where}: user {_short(user)} is listed twice (as {_short(spelled[key])}; names "
                                "are compared after NFC normalisation)")
        table[key], spelled[key] = _tenants(tenants, f"{where}: users.{_short(user)}"), str(user)
    default = _tenants(data.get("default", []), f"{where}: default")
    return AccessPolicy(table, default, source)


def _tenants(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, (list, tuple)):
        raise InvalidPolicy(f"{where} must be a list of tenants such as [lumen], not a {_kind(value)}")
    out = set()
    for tenant in value:
        if isinstance(tenant, bool) or not isinstance(tenant, (str, int)):
            raise InvalidPolicy(f"{where}: tenant {_short(tenant)} is a {_kind(tenant)}; a tenant is a string "
                                "(or an integer)")
        if isinstance(tenant, int) and len(str(abs(tenant))) > MAX_TENANT_CHARS:
            raise InvalidPolicy(f"{where}: an integer tenant of more than {MAX_TENANT_CHARS} digits")
        name = written(tenant)
        if not name.strip():
            raise InvalidPolicy(f"{where}: an empty tenant name")
        if len(name) > MAX_TENANT_CHARS:
            raise InvalidPolicy(f"{where}: tenant {_short(name)} is longer than {MAX_TENANT_CHARS} characters")
        out.add(name)
    return frozenset(out)




def _kind(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", dict: "mapping", list: "list",
            type(None): "null"}.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


def _parse(text: str, suffix: str, source: str) -> Any:
    where = f"access policy {source}"
    if suffix == ".json":
        try:
            return json.loads(text, object_pairs_hook=_unique_pairs(where), parse_int=_short_int(where))
        except json.JSONDecodeError as exc:
            raise InvalidPolicy(f"{where}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
        except RecursionError:
            raise InvalidPolicy(f"{where}: JSON nested too deep") from None
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidPolicy(f"{where}: invalid TOML ({exc})") from None
    import yaml

    try:
        return yaml.load(text, Loader=_loader(where))  # noqa: S506 - a BaseLoader subclass: strings, lists, maps
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise InvalidPolicy(f"{where}: invalid YAML{line}: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise InvalidPolicy(f"{where}: YAML nested too deep") from None


def _short_int(where: str):
    def parse(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_TENANT_CHARS:
            raise InvalidPolicy(f"{where}: an integer of {len(digits.lstrip('-')):,} digits")
        return int(digits)
    return parse


def _unique_pairs(where: str):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise InvalidPolicy(f"{where}: key {_short(key)} appears twice")
            out[key] = value
        return out
    return hook


def _loader(where: str):
    """A YAML loader that reads every scalar as written (YAML 1.1 would make ``no`` False and ``007`` 7) and
    refuses a key written twice in one mapping (PyYAML keeps the last silently)."""
    import yaml

    class PolicyLoader(yaml.BaseLoader):
        def construct_mapping(self, node, deep=False):  # type: ignore[override]
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, str):  # a list or mapping as a key: the base loader refuses it
                    continue
                if key in seen:
                    raise InvalidPolicy(f"{where}: key {_short(key)} appears twice (line {key_node.start_mark.line + 1})")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return PolicyLoader
