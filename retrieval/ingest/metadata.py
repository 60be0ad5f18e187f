"""Metadata as a folder's files write it, made into what the stores keep: YAML front matter (what static-site
generators write: dates, lists, nested maps) and what a reader finds in a file (a PDF's author).

What is kept (:func:`keepable`): strings, booleans, 64-bit integers and finite numbers; a **date** or time as its
ISO string (``2026-02-26``); a **list** of scalars as a multi-valued field (a tuple; a filter matches it by member,
:mod:`retrieval.core.filters`), its members made text where they mix types; a **nested map** as dotted keys
(``author.name``). What cannot be kept (a null, an empty list, a list of maps, a key the stores reserve, a value too
long for every backend) is dropped with one warning naming the file and the key: one file's metadata never refuses
the corpus.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Mapping

from ..core.types import RESERVED_KEYS, RESERVED_PREFIXES
from .location import PAGE_END_KEY, PAGE_KEY, SECTION_KEY

#: A metadata string's limit (UTF-8 bytes: what a Milvus text field holds).
MAX_METADATA_TEXT_BYTES = 65_535
_INT64 = (-(2**63), 2**63 - 1)
#: The key of each folder document's format (``pdf``, ``html``…) and of its folder and the folders above it.
FORMAT_KEY, FOLDER_KEY = "format", "folder"
#: Keys the workbench writes itself into a folder document's or a chunk's metadata: a file's own value under one
#: of them is dropped with a warning (it would be overwritten, or would shadow a chunk's page or section).
OWN_KEYS = frozenset({FORMAT_KEY, FOLDER_KEY, PAGE_KEY, PAGE_END_KEY, SECTION_KEY})
#: The most metadata keys one file keeps (nested maps counted once flattened): past it the rest is dropped with a
#: warning. 20,000 keys in one file broke Chroma's sync of the whole corpus; a map of maps repeated by YAML aliases
#: would flatten into millions.
MAX_KEYS = 100


def _scalar(value: Any) -> Any:
    """A kept scalar, or ``None``: dates as ISO strings, numbers that every backend stores."""
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if _INT64[0] <= value <= _INT64[1] else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def _text_ok(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return len(value.encode("utf-8")) <= MAX_METADATA_TEXT_BYTES
    except UnicodeEncodeError:  # a lone surrogate
        return False


def keepable(meta: Mapping[Any, Any], where: str, own: frozenset[str] = OWN_KEYS,
             prefix: str = "", budget: list[int] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The metadata of one file as the stores keep it, and a warning per key dropped (module docstring).

    Args:
        where: the file, named in each warning.
        own: keys the workbench writes itself (a file's value is dropped).
        prefix: the dotted path of a nested map (used by the recursion).
        budget: the keys still allowed, shared with the recursion (at most :data:`MAX_KEYS` in all).
    """
    if budget is None:
        budget = [MAX_KEYS]
    elif budget[0] < 0:
        return {}, []
    kept: dict[str, Any] = {}
    warnings: list[str] = []

    def drop(key: str, why: str) -> None:
        warnings.append(f"{where}: metadata {key!r} dropped ({why})")

    for raw_key, value in meta.items():
        key = f"{prefix}{raw_key}"
        if budget is not None and len(kept) >= budget[0]:
            warnings.append(f"{where}: metadata past its first {MAX_KEYS} keys dropped (from {key!r} on)")
            budget[0] = -1
            break
        if not isinstance(raw_key, (str, int, float, bool, dt.date)) or not str(raw_key).strip():
            drop(str(raw_key), "an empty or unreadable key")
            continue
        if isinstance(value, Mapping):
            inner_budget = [budget[0] - len(kept)]
            inner, more = keepable(value, where, own, f"{key}.", inner_budget)
            kept.update(inner)
            warnings.extend(more)
            if inner_budget[0] < 0:
                budget[0] = -1
                break
            continue
        if key.startswith(RESERVED_PREFIXES) or key in RESERVED_KEYS:
            drop(key, "a key the stores reserve")
            continue
        if key in own:
            drop(key, "the workbench writes this key itself")
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            items = [_scalar(v) for v in value]
            if not items:
                drop(key, "an empty list")
                continue
            if any(v is None for v in items):
                drop(key, "a list holding a null, a map or a list")
                continue
            if len({type(v) for v in items}) > 1:  # the stores keep lists of one type: mixed ones become text
                items = [str(v).lower() if isinstance(v, bool) else str(v) for v in items]
            items = list(dict.fromkeys(items))
            if not all(_text_ok(v) for v in items):
                drop(key, "a member too long or not valid text")
                continue
            kept[key] = tuple(items)
            continue
        scalar = _scalar(value)
        if scalar is None:
            drop(key, "null" if value is None else f"a {type(value).__name__} the stores cannot keep")
            continue
        if not _text_ok(scalar):
            drop(key, f"over {MAX_METADATA_TEXT_BYTES:,} bytes or not valid text")
            continue
        kept[key] = scalar
    return kept, warnings


def read_front_matter(text: str, where: str) -> tuple[dict[str, Any], str, list[str]]:
    """A file's YAML front matter (between a first line ``---`` and the next ``---`` line), the body after it
    and the warnings: the metadata as :func:`keepable` keeps it, plus ``title`` as written. Front matter that is
    not valid YAML, not a map, or never closed is left out with one warning; the file is still read.
    """
    if not text.startswith("---"):
        return {}, text, []
    end = text.find("\n---", 3)
    if end < 0:
        return {}, text, [f"{where}: front matter opened with '---' is never closed: read as text"]
    import yaml

    body = text[end + 4:]
    body = body[body.find("\n") + 1:] if "\n" in body else ""  # the rest of the closing line ('---' or '...')
    try:
        meta = yaml.safe_load(text[3:end]) or {}
        raw = yaml.load(text[3:end], Loader=yaml.BaseLoader) or {}  # the same scalars as written
    except RecursionError:  # nested thousands of levels deep: the file is read, its front matter left out
        return {}, body.lstrip("\n"), [f"{where}: front matter nested too deep: left out"]
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        return {}, body.lstrip("\n"), [f"{where}: front matter is not valid YAML ({first}): left out"]
    if not isinstance(meta, dict):
        return {}, body.lstrip("\n"), [f"{where}: front matter is not a map of keys: left out"]
    # YAML 1.1 rewrites some integers (``007`` → 7, ``1:20`` → 80, ``0x1F`` → 31): two different values would
    # become one (two tenants merged). An integer whose written form is not its own spelling stays text.
    for key, value in meta.items():
        written = raw.get(key) if isinstance(raw, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and isinstance(written, str):
            if str(value) != written.strip().lstrip("+"):
                meta[key] = written
    kept, warnings = keepable(meta, where)
    return kept, body.lstrip("\n"), warnings
