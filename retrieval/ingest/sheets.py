"""Spreadsheets read as structure: XLSX (openpyxl, read-only, the values last computed rather than formulas).

Each worksheet is a section: a level-1 heading with its name, then its rows as one Markdown table, whose rows the
chunker reads as ``Header: cell; Header: cell`` lines. The header is the first non-empty row, except that leading
rows with a single cell above a wider table (a sheet's title line, "Folha de pagamento - março") are written as
paragraphs above the table rather than taken as its header. Columns empty in every kept row are left out (a
spacer column A), and so are empty rows and empty sheets.

Cells read as they show: text as written; numbers without a trailing ``.0`` (``10000``, ``2.5``); dates as ISO
text (``2024-03-01``, ``2024-03-01T10:30:00`` where the time is not midnight); ``TRUE`` / ``FALSE``; an error
value as its code (``#DIV/0!``). A formula cell holds the value the spreadsheet program last computed; a file
whose formulas were never computed (written by a library) reads them as empty.

A sheet is read up to :data:`MAX_ROWS` non-empty rows and :data:`MAX_COLUMNS` columns; past either, the rest is
left out with a warning. Chart sheets are not read. A spreadsheet has no pages. The title is the core properties'
title where set. An XLSX is a ZIP: its members are checked (:func:`~retrieval.ingest.archive.guard_zip`) first.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import warnings
from pathlib import Path
from typing import Any


from ..core.kinds import Text
from .formats import FORMATS, Format, Read, Unreadable, lazy, md_escape, md_heading, md_table, one_line
from .archive import guard_zip, read_zip, zip_holding

openpyxl = lazy("openpyxl")

_SPACE = re.compile(r"\s+")
#: The most non-empty rows read from one sheet (the header included).
MAX_ROWS = 20_000
#: The most columns read from one sheet.
MAX_COLUMNS = 200


def cell_text(value: Any) -> str:
    """A cell's value as the text it shows (see the module's docstring); ``""`` for an empty cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return ""
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0) and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return _SPACE.sub(" ", str(value)).strip()


def _sheet_rows(sheet: Any, name: str, warnings_out: list[str]) -> list[list[str]]:
    """A sheet's non-empty rows of cell texts (:data:`MAX_ROWS` at most, :data:`MAX_COLUMNS` wide), trailing empty
    cells dropped."""
    rows: list[list[str]] = []
    long: dict[str, str] = {}
    wide = cut = False
    sheet.reset_dimensions()  # the file's declared size may be stale: read every row there is
    for seen, values in enumerate(sheet.iter_rows(values_only=True)):  # each row as wide as its last cell
        if seen >= MAX_ROWS * 5:  # openpyxl yields every empty row up to a cell's row number (10^12 would never end)
            cut = True
            break
        if len(values) > MAX_COLUMNS:
            past = values[MAX_COLUMNS:]
            if not wide and past.count(None) != len(past):
                wide = any(cell_text(v) for v in past)
            values = values[:MAX_COLUMNS]
        cells = [(long.get(v) or long.setdefault(v, cell_text(v))) if isinstance(v, str) and len(v) > 256
                 else cell_text(v) for v in values]  # a shared string in many cells is cleaned once
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue
        if len(rows) == MAX_ROWS:
            cut = True
            break
        rows.append(cells)
    if cut:
        warnings_out.append(f"sheet '{name}': rows past the first {MAX_ROWS:,} left out")
    if wide:
        warnings_out.append(f"sheet '{name}': columns past the first {MAX_COLUMNS} left out")
    return rows


def _sheet_blocks(name: str, rows: list[list[str]]) -> list[str]:
    """A sheet's heading, its title lines and its table (columns empty throughout left out)."""
    width = max(len(r) for r in rows)
    captions: list[str] = []
    while len(rows) > 1 and width > 1 and sum(1 for c in rows[0] if c) == 1:
        captions.append(next(c for c in rows[0] if c))
        rows = rows[1:]
    used = [i for i in range(width) if any(i < len(r) and r[i] for r in rows)]
    table = md_table([[r[i] if i < len(r) else "" for i in used] for r in rows])
    return [md_heading(1, name), *(md_escape(c) for c in captions), *([table] if table else [])]


def read_xlsx(data: bytes, path: Path) -> Read:
    """An XLSX as Markdown: each worksheet a level-1 heading with its rows as a table (see the module's
    docstring).

    Args:
        data: the file's bytes.
        path: the file (unused).

    Returns:
        A :class:`Read` titled by the core properties' title (``""`` without one); its warnings say which sheets
        were cut.

    Raises:
        Unreadable: ``unreadable`` (not a ZIP, a ZIP bomb, not a workbook, broken XML), ``no_text`` (no cell holds
        anything).
    """
    archive = read_zip(data)
    guard_zip(archive)
    out: list[str] = []
    notes: list[str] = []
    try:
        with warnings.catch_warnings():  # openpyxl warns of every extension it does not read (data validation…)
            warnings.simplefilter("ignore")
            book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            try:
                for sheet in book.worksheets:
                    rows = _sheet_rows(sheet, sheet.title, notes)
                    if rows:
                        out += _sheet_blocks(_SPACE.sub(" ", sheet.title).strip() or "-", rows)
                title = _SPACE.sub(" ", book.properties.title or "").strip()
            finally:
                book.close()
    except Unreadable:
        raise
    except Exception as exc:  # openpyxl raises KeyError, ValueError, TypeError, lxml's and zipfile's errors alike
        raise Unreadable("unreadable", f"not a readable workbook ({one_line(exc)})") from None
    if not out:
        raise Unreadable("no_text", "no text in any sheet")
    return Read("\n\n".join(out), "markdown", title, {}, 0, tuple(notes))


def looks_like_xlsx(data: bytes) -> bool:
    """Whether the bytes are a ZIP holding ``xl/workbook.xml``."""
    return zip_holding(data, "xl/workbook.xml")


XLSX = FORMATS.declare(Format("xlsx", Text("XLSX", "XLSX"), (".xlsx",), read_xlsx, sniff=looks_like_xlsx,
                              library="openpyxl 3.1"))
