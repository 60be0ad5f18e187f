"""The command line's human-readable output and error lines (retrieval/cli/common.py): a control character, a line
separator or an invisible format character in an id or a text is written as an escape, so a corpus cannot move
the terminal's cursor, recolour it or forge a line; an error line holds no credential of a setting."""

from __future__ import annotations

import pytest
import typer

from retrieval.cli import common


def test_control_characters_are_escaped_when_printed(capsys) -> None:
    common.echo("  1. a\x1b[31mred\r\nfake\u2028line\u202eevil#0   0.5\ttab")
    out = capsys.readouterr().out
    assert out == "  1. a\\x1b[31mred\\x0d\nfake\\u2028line\\u202eevil#0   0.5\ttab\n"
    assert "\x1b" not in out and "\r" not in out


def test_an_error_line_is_one_escaped_line_without_credentials(capsys) -> None:
    common.SECRETS[:] = ["s3cr3t-token"]
    try:
        with pytest.raises(typer.Exit):
            common.fail("cannot reach http://root:pass@h:19530 with s3cr3t-token: bad id 'a\x1b[2J'\nsecond line")
    finally:
        common.SECRETS.clear()
    err = capsys.readouterr().err
    assert err == "error: cannot reach http://***@h:19530 with ***: bad id 'a\\x1b[2J' second line\n"
