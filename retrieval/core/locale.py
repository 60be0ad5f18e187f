"""The interface languages and numbers written for each (Babel's CLDR data: ``0,812`` and ``1.204`` in Portuguese).

English is the language of the trace, the logs and the CLI: its numbers are written as Python formats them, so
a recorded text never changes with this module. Portuguese numbers are written by Babel with the pattern the
format spec asks for (``.3f`` → three decimals, ``,d`` → grouped digits, ``+.2f`` → a sign, ``.0%`` → a
percentage).
"""

from __future__ import annotations

import re
from typing import Any

from babel.numbers import format_decimal, format_percent

#: The interface languages; English first (the default, and the language of the trace).
LANGUAGES = ("en", "pt")
#: Babel's locale of each language.
LOCALES = {"en": "en_US", "pt": "pt_BR"}

_SPEC = re.compile(r"(?P<sign>[+ ]?)(?P<group>,?)(?:\.(?P<digits>\d+))?(?P<type>[fdg%e]?)")


def language(lang: str | None) -> str:
    """``lang`` when it is an interface language, else English."""
    return lang if lang in LOCALES else "en"


def _pattern(spec: str, value: float) -> tuple[str, bool] | None:
    """The Babel pattern of a Python format spec, and whether it is a percentage; ``None`` when the spec is one
    this module does not translate (the number is then written as Python writes it)."""
    match = _SPEC.fullmatch(spec)
    if match is None or match["type"] in {"e"}:
        return None
    kind, digits = match["type"], match["digits"]
    if kind == "g" or (not kind and digits is None):  # as Python writes it: the decimals of its shortest form
        shown = format(value, spec) if spec else repr(float(value)) if isinstance(value, float) else str(value)
        if "e" in shown.lower() or "inf" in shown.lower() or "nan" in shown.lower():
            return None
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        if isinstance(value, float) and decimals == 1 and shown.endswith(".0") and not spec:
            decimals = 1  # 2.0 stays 2,0: a float reads as one
    elif kind == "d":
        decimals = 0
    else:
        decimals = int(digits) if digits is not None else 6
    body = ("#,##0" if match["group"] else "0") + ("." + "0" * decimals if decimals else "")
    if match["sign"] == "+":
        body = f"+{body};-{body}"
    return body, kind == "%"


def number(value: Any, spec: str = "", lang: str = "en") -> str:
    """``value`` formatted by the Python ``spec`` in ``lang``: exactly ``format(value, spec)`` in English, Babel's
    CLDR separators in Portuguese. Booleans and non-numbers are written with ``str``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if language(lang) == "en":
        return format(value, spec)
    found = _pattern(spec, value)
    if found is None:
        return format(value, spec)
    pattern, percent = found
    locale = LOCALES[language(lang)]
    if percent:
        return format_percent(value, format=pattern + "%", locale=locale)
    return format_decimal(value, format=pattern, locale=locale, decimal_quantization=True)
