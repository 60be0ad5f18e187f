"""Every declared reason renders in both languages, and the page's texts hold no English in Portuguese.

The catalogue is the one place a reason's words live (:mod:`retrieval.core.reasons`): a template missing in one
language, a field only one language names, or a conversion the other drops would show as a crash or a leak on a
page. Each code is rendered here with parameters made from its own template's fields."""

from __future__ import annotations

import importlib
import pkgutil
import string

import pytest

import retrieval
from retrieval.core.reasons import CATALOGUE, Reason, declare, put
from ui.i18n import TEXTS, t


def _import_everything() -> None:
    for info in pkgutil.walk_packages(retrieval.__path__, "retrieval."):
        if info.name != "retrieval.__main__":  # runs the CLI
            importlib.import_module(info.name)


_import_everything()


def fields(template: str) -> set[tuple[str, str | None]]:
    """(field, conversion) pairs of a template, nested specs included."""
    found = set()
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is not None:
            found.add((name, conversion))
        if spec:
            found |= fields(spec)
    return found


def specs(template: str) -> dict[str, str]:
    return {name: spec for _, name, spec, _ in string.Formatter().parse(template) if name and spec}


def sample(code: str) -> dict:
    """Parameters for ``code``'s template: a number where a spec formats one, a list for ``!l``/``!w``, text
    otherwise (``digits`` of a nested spec: an integer)."""
    en = CATALOGUE[code]("en")
    params = {}
    nested = {n for _, _, spec, _ in string.Formatter().parse(en) if spec for n, _ in fields(spec)}
    for name, conversion in fields(en):
        if name in nested:
            params[name] = 2
        elif name in specs(en):
            params[name] = 1234.5 if not specs(en)[name].endswith("d") else 1234
        elif conversion in {"l", "w"}:
            params[name] = ["a-1", "b-2"]
        else:
            params[name] = f"<{name}>"
    return params


def test_the_catalogue_holds_the_pipelines_reasons() -> None:
    assert len(CATALOGUE) > 150
    prefixes = {code.split(".")[0] for code in CATALOGUE}
    assert {"rerank", "store", "tier", "link", "where", "support", "fusion", "answer"} <= prefixes, prefixes


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_code_has_both_languages_with_the_same_fields(code: str) -> None:
    en, pt = CATALOGUE[code]("en"), CATALOGUE[code]("pt")
    if code == "raw":  # a text as recorded: escaped on an English page, a code span on any other, by design
        assert {n for n, _ in fields(en)} == {n for n, _ in fields(pt)} == {"text"}
    else:
        assert fields(en) == fields(pt), code
    params = sample(code)
    for lang in ("en", "pt"):
        text = Reason(code, params).text(lang)
        assert "{" not in text.replace("{<", "") and all(f"<{k}>" in text for k, v in params.items()
                                                          if isinstance(v, str)), (code, lang, text)


def test_numbers_are_written_in_each_languages_separators() -> None:
    probe = declare("test.numbers", en="{n:,.2f} of {total:,d}", pt="{n:,.2f} de {total:,d}")
    try:
        assert probe(n=1234.5, total=10_000).text() == "1,234.50 of 10,000"
        assert probe(n=1234.5, total=10_000).text("pt") == "1.234,50 de 10.000"
    finally:
        CATALOGUE.pop("test.numbers")


def test_a_nested_reason_renders_in_the_outer_ones_language_and_the_trace_keeps_both() -> None:
    from retrieval.stages.rerank.base import NONE_RAN
    from retrieval.explain.tables import OFF_IN_APP

    why = NONE_RAN(why=OFF_IN_APP())
    data = put({}, "note", why)
    assert data["note"] == "no rerank ran: no reranker configured (reranker off)"
    again = Reason.from_dict(data["note_code"])
    assert again == why and again.text("pt").startswith("nenhum rerank rodou: nenhum reranqueador configurado")


def test_a_code_is_declared_once() -> None:
    with pytest.raises(ValueError, match="rerank.loaded"):
        declare("rerank.loaded", en="x", pt="y")


# -- the pages' own texts (ui/i18n) --------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(TEXTS))
def test_every_page_text_has_both_languages_with_the_same_fields_and_no_format_spec(key: str) -> None:
    """A page formats its numbers before they reach a text (ui.format.num, per language): a spec in a
    template would format a Portuguese number the English way, or fail on the text it is given."""
    entry = TEXTS[key]
    assert set(entry) == {"en", "pt"}, key
    assert fields(entry["en"]) == fields(entry["pt"]), key
    assert not specs(entry["en"]) and not specs(entry["pt"]), key
    params = {name: f"<{name}>" for name, _ in fields(entry["en"])}
    assert t(key, "pt", **params) == entry["pt"].format(**params)
