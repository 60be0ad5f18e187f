"""Reading the JSON and text files of corpora and question sets: UTF-8 or one line naming the line and column, a
regular file only, JSON nested at most 64 levels and integers of at most :data:`MAX_INT_DIGITS` digits, JSON Lines
of one object each (file:line in every error)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from ..core import safeio
from ..core.errors import CorpusError
from ..core.inputs import check_json_depth, check_regular_file


#: The longest integer a corpus or question file may write (Python refuses to read more than 4,300 digits;
#: no id, year or count needs more than this).
MAX_INT_DIGITS = 64


class _LongNumber(Exception):
    def __init__(self, digits: int) -> None:
        self.digits = digits


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _LongNumber(digits)
    return int(text)


def _loads(text: str, where: str) -> Any:
    """``json.loads`` of ``text``, an integer of more than :data:`MAX_INT_DIGITS` digits refused in one line
    naming ``where``."""
    try:
        return json.loads(text, parse_int=_parse_int)
    except _LongNumber as exc:
        raise CorpusError(f"{where}: a number of {exc.digits:,} digits (at most {MAX_INT_DIGITS})") from None


def _decode(data: bytes, path: Path) -> str:
    """``data`` as UTF-8, or one line naming the line and column of the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CorpusError(f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at column {column})") from None


def _read_utf8(path: Path) -> str:
    try:
        return _decode(safeio.read_bytes(path), path)
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc


def _json_kind(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", type(None): "null",
            list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    check_regular_file(path)
    try:
        # JSON Lines are separated by "\n" only: str.splitlines() would also cut at U+0085, U+2028 and other
        # separators that a JSON string may hold unescaped.
        lines = [line.removesuffix("\r") for line in _read_utf8(path).split("\n")]
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        check_json_depth(line, path, number)
        try:
            record = _loads(line, f"{path}:{number}")
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise CorpusError(f"{path}:{number}: each line must be a JSON object")
        yield number, record


def _read_text(path: Path) -> str:
    check_regular_file(path)
    return _read_utf8(path)
