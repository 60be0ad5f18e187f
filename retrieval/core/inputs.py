"""Checks on an input file before it is parsed: that it is a regular file, and that its JSON is not nested
deeper than :data:`MAX_JSON_DEPTH` levels.

Python's ``json`` parser recurses once per level of nesting: a corpus, question set or judgments file of
100,000 ``[`` ended in a ``RecursionError`` (a traceback in the app, "internal error" in the CLI). The depth is
counted here first, without recursion, by a scan that skips strings. A FIFO or a device named like a corpus
file would block the reader (or read forever): only regular files are read (a link to one is fine).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from .errors import CorpusError

#: The deepest JSON nesting (arrays and objects) accepted in an input file; our formats need at most 5.
MAX_JSON_DEPTH = 64

#: A JSON string (escapes skipped; an unterminated one runs to the end), a bracket, or a line break.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}\n]', re.S)

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def json_depth_problem(text: str, limit: int = MAX_JSON_DEPTH) -> tuple[int, int] | None:
    """Where ``text`` first nests deeper than ``limit``: ``(line, depth)`` with lines counted from 1 (a line
    break inside a string counts too), or ``None``.

    Brackets inside strings do not count; the scan is a loop, never recursion. Text with at most ``limit``
    opening brackets is accepted without a scan. Malformed JSON is left to the parser's own error.
    """
    if text.count("[") + text.count("{") <= limit:
        return None
    depth, line = 0, 1
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first == '"':
            line += token.count("\n")
        elif first == "\n":
            line += 1
        elif first in "[{":
            depth += 1
            if depth > limit:
                return line, depth
        elif depth:
            depth -= 1
    return None


def check_json_depth(text: str, source: str | Path, first_line: int = 1, limit: int = MAX_JSON_DEPTH,
                     error: type[Exception] = CorpusError) -> None:
    """Refuse JSON text nested deeper than ``limit`` before ``json.loads`` reads it.

    Args:
        source: the file, named in the message.
        first_line: the file's line number of the text's first line (a JSON Lines record's own line).

    Raises:
        ``error`` (:class:`~retrieval.core.errors.CorpusError` by default): one line, ``FILE:LINE: JSON nested more
            than 64 levels deep …``.
    """
    problem = json_depth_problem(text, limit)
    if problem is not None:
        line = first_line + problem[0] - 1
        raise error(f"{source}:{line}: JSON nested more than {limit} levels deep (arrays and objects); "
                    "refused before parsing")


def check_regular_file(path: str | Path, error: type[Exception] = CorpusError, what: str = "file") -> None:
    """Refuse a path that is not a regular file (a link to one is fine) before anything opens it.

    Raises:
        ``error``: one line naming the path and what it is (a folder, a FIFO, a device, a socket), or that it
            does not exist or cannot be read.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise error(f"{path}: {kind}, not a regular {what}; refused before reading")
