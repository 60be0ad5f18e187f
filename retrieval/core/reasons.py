"""Reasons as data: what a stage records about itself (why a tier ran, why a list is empty, why the gate refused,
why a fallback happened) is a code and its parameters, rendered in each language from one catalogue.

A module declares each of its reasons once, with its English and Portuguese templates::

    LOADED = declare("rerank.loaded", en="reranker {name!q} ({kind}) loaded",
                     pt="reranqueador {name!q} ({kind}) carregado")
    LOADED(name="ltr", kind="ltr")          # a Reason
    LOADED(name="ltr", kind="ltr").text()   # "reranker 'ltr' (ltr) loaded": the trace's and the CLI's words

The trace keeps both the code with its parameters (``{"code", "params"}``) and the English text. A page renders
the code in its language (:meth:`Reason.text`): nothing parses a sentence back. Template fields:

* ``{name}``: a parameter as written (a number in the language's separators: :func:`retrieval.core.locale.number`;
  a nested reason rendered in the same language);
* ``{name!q}``: a value the reader may copy (an id, a model, a path): ``'name'`` in plain text, a code span on a
  page (the renderer's ``quote``);
* ``{name!c}``: the same, written bare in plain text (``PX-7``), a code span on a page;
* ``{names!l}``: a list of such values, comma-separated, bare in plain text (``!w``: each in quotes);
* ``{value:.3f}``: a number with a format spec.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeGuard

from .kinds import Text
from .locale import language, number

#: Every declared code → its templates.
CATALOGUE: dict[str, Text] = {}


def plain_quote(value: str) -> str:
    return f"'{value}'"


def put(data: dict[str, Any], key: str, reason: "Reason | None") -> dict[str, Any]:
    """Record ``reason`` in a trace dict: its English text under ``key``, its code and parameters under
    ``<key>_code`` (nothing for ``None``). Returns ``data``."""
    if reason is not None:
        data[key] = reason.text()
        data[f"{key}_code"] = reason.to_dict()
    return data


@dataclass(frozen=True)
class Reason:
    """A recorded status: a declared ``code`` and its ``params`` (JSON values or nested reasons)."""

    code: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def text(self, lang: str = "en", quote: Callable[[str], str] = plain_quote,
             escape: Callable[[str], str] = str) -> str:
        """The reason in ``lang``: its template with the parameters filled in (see the module docstring).

        Args:
            quote: how a ``!q`` value is written (plain text: in single quotes; a page: a code span).
            escape: how any other text parameter is written (a page: Markdown-escaped).
        """
        template = CATALOGUE[self.code](language(lang))
        return _Renderer(language(lang), quote, escape).format(template, **self.params)

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "params"}``: what the trace keeps (nested reasons as the same dicts)."""
        return {"code": self.code, "params": {k: v.to_dict() if isinstance(v, Reason) else _json(v)
                                              for k, v in self.params.items()}}

    def mentions(self, code: str) -> bool:
        """Whether this reason, or one nested in its parameters, has ``code``."""
        return self.code == code or any(isinstance(v, Reason) and v.mentions(code) for v in self.params.values())

    @classmethod
    def from_dict(cls, data: Any) -> "Reason | None":
        """The reason a trace recorded (``to_dict``'s dict), or ``None`` for anything else (an older trace's text,
        a code this process does not declare)."""
        if not isinstance(data, Mapping) or data.get("code") not in CATALOGUE:
            return None
        params = {}
        for key, value in (data.get("params") or {}).items():
            nested = cls.from_dict(value) if isinstance(value, Mapping) and "code" in value else None
            params[key] = nested if nested is not None else value
        return cls(str(data["code"]), params)


def _json(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


class Declared:
    """A declared code: call it with the template's parameters to get a :class:`Reason`."""

    def __init__(self, code: str, fields: frozenset[str]) -> None:
        self.code, self.fields = code, fields

    def __call__(self, **params: Any) -> Reason:
        missing = self.fields - set(params)
        if missing:
            raise TypeError(f"reason {self.code}: missing {', '.join(sorted(missing))}")
        return Reason(self.code, params)

    def __eq__(self, other: object) -> bool:  # ``reason.code == DECLARED`` reads naturally
        return other == self.code if isinstance(other, str) else other is self

    def __hash__(self) -> int:
        return hash(self.code)

    def matches(self, reason: object) -> TypeGuard[Reason]:
        """Whether ``reason`` is a :class:`Reason` of this code."""
        return isinstance(reason, Reason) and reason.code == self.code


def declare(code: str, *, en: str, pt: str) -> Declared:
    """Declare a reason code with its templates (both must name the same fields).

    Raises:
        ValueError: the code is declared twice, or the templates name different fields.
    """
    if code in CATALOGUE:
        raise ValueError(f"reason code {code} is declared twice")
    fields_en, fields_pt = _fields(en), _fields(pt)
    if fields_en != fields_pt:
        raise ValueError(f"reason code {code}: the templates name different fields ({sorted(fields_en)} vs "
                         f"{sorted(fields_pt)})")
    CATALOGUE[code] = Text(en, pt)
    return Declared(code, frozenset(fields_en))


def _fields(template: str) -> set[str]:
    """The parameter names a template reads, those of its nested format specs (``{p:.{digits}f}``) too."""
    names: set[str] = set()
    for _, name, spec, _ in string.Formatter().parse(template):
        if name:
            names.add(name)
        if spec:
            names |= _fields(spec)
    return names


class _Renderer(string.Formatter):
    """Fills a template: numbers in the language's separators, nested reasons in the same language, ``!q`` and
    ``!l`` values quoted, other text escaped."""

    def __init__(self, lang: str, quote: Callable[[str], str], escape: Callable[[str], str]) -> None:
        super().__init__()
        self.lang, self.quote, self.escape = lang, quote, escape
        # a bare value: as written in plain text, the page's code span otherwise
        self.code = str if quote is plain_quote else quote

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "q":
            return _Done(self.quote(str(value)))
        if conversion == "c":
            return _Done(self.code(str(value)))
        if conversion in {"l", "w"}:
            items = value if isinstance(value, (list, tuple)) else [value]
            write = self.code if conversion == "l" else self.quote
            return _Done(", ".join(write(str(v)) for v in items))
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, _Done):
            return value.text
        if isinstance(value, Reason):
            return value.text(self.lang, self.quote, self.escape)
        if isinstance(value, Mapping) and "code" in value:
            nested = Reason.from_dict(value)
            if nested is not None:
                return nested.text(self.lang, self.quote, self.escape)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return number(value, format_spec, self.lang)
        return self.escape(format(value, format_spec) if format_spec else str(value))


@dataclass(frozen=True)
class _Done:
    text: str


RAW = declare("raw", en="{text}", pt="{text!c}")


def raw(text: str) -> Reason:
    """A text recorded as it came (a library's error, a server's message, an error's English sentence): shown as
    written, never translated (escaped on an English page, a code span on any other)."""
    return RAW(text=" ".join(str(text).split()))


def error(exc: BaseException, limit: int = 200) -> Reason:
    """An exception as recorded: ``ClassName: first line of its message`` (:func:`raw`)."""
    lines = str(exc).splitlines()
    return raw(f"{exc.__class__.__name__}: {lines[0][:limit] if lines else ''}")
