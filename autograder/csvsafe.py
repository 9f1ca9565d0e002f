"""CSV for spreadsheets: a cell a spreadsheet would run as a formula is written as text.

Spreadsheets (Excel, LibreOffice, Google Sheets; the LMSs' own importers hand files to them
too) treat a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula, and a leading tab
or carriage return can hide one (OWASP's "CSV injection", CWE-1236). Text that a student
controls reaches our CSVs: a name copied from the LMS into the roster, a student id from the
exchange, a grader message quoting their code. Every CSV the course writes goes through
:func:`writer`, which puts a ``'`` before such a cell (spreadsheets show the text and drop the
quote mark from the formula bar); numbers, and text that is a number ("-1.5"), stay numbers.
"""
from __future__ import annotations

import csv
import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value) -> object:
    """``value`` as a CSV cell a spreadsheet shows as text, never runs."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = str(value)
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


class SafeWriter:
    """``csv.writer`` whose every cell goes through :func:`cell`."""

    def __init__(self, handle, **options):
        self._writer = csv.writer(handle, **options)

    def writerow(self, row) -> None:
        self._writer.writerow([cell(value) for value in row])

    def writerows(self, rows) -> None:
        for row in rows:
            self.writerow(row)


def writer(handle, **options) -> SafeWriter:
    return SafeWriter(handle, **options)
