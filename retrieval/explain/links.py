"""Links that reproduce a view: every setting of the main page in its URL, parsed and written back.

A link's values are held to the same bounds as the settings (:func:`retrieval.settings.bounds`: one source for
the URL, the widgets, the CLI and the tuner); its rerankers and fusion methods to the declared ones
(:func:`retrieval.stages.rerank.offered`, :data:`retrieval.stages.fusion.METHODS`). A value that cannot be
used is named back (a :class:`~retrieval.core.reasons.Reason`), never dropped without a word.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping, Sequence

from ..core.defaults import MIN_SIMILARITY, OVERFETCH, RRF_K, TOP_K
from ..core.errors import RetrievalError
from ..core.filters import build_filters
from ..core.locale import LANGUAGES
from ..core.reasons import Reason, declare, raw
from ..settings import bounds
from ..stages.fusion import METHODS, parse_weights
from ..stages.rerank import OFF, canonical, offered
from ..stages.transforms import TRANSFORMS

#: The main page's tabs as a link names them (``tab=lists``), in the page's order.
VIEW_TABS = ("grid", "lists", "movement", "compare", "judge", "where", "timings")
#: "No reranker" as a link writes it.
RERANKER_OFF = OFF

NOT_ONE_OF = declare("link.not_one_of", en="{key}={value!q} is not one of {choices!l}; using {default}",
                     pt="{key}={value!q} não é um de {choices!l}; usando {default}")
NOT_INTEGER = declare("link.not_integer", en="{key}={value!q} is not an integer; using {default}",
                      pt="{key}={value!q} não é um inteiro; usando {default}")
NOT_NUMBER = declare("link.not_number", en="{key}={value!q} is not a number; using {default}",
                     pt="{key}={value!q} não é um número; usando {default}")
OUTSIDE = declare("link.outside", en="{key}={value} is outside [{low:g}, {high:g}]; using {default}",
                  pt="{key}={value} está fora de [{low:g}, {high:g}]; usando {default}")
UNKNOWN_TRANSFORMS = declare("link.unknown_transforms", en="transforms: unknown {names!l}; ignored",
                             pt="transforms: desconhecidas {names!l}; ignoradas")
MMR_NOT_NUMBER = declare("link.mmr_not_number", en="mmr={value!q} is not a number; MMR off",
                         pt="mmr={value!q} não é um número; MMR desligado")
MMR_OUTSIDE = declare("link.mmr_outside", en="mmr={value} is outside [{low}, {high}]; MMR off",
                      pt="mmr={value} está fora de [{low}, {high}]; MMR desligado")
BAD_WEIGHTS = declare("link.bad_weights", en="fusion_weights={value!q}: {why}; using {default!q}",
                      pt="fusion_weights={value!q}: {why}; usando {default!q}")
NOT_OFFERED = declare("link.reranker_not_offered",
                      en="{key}={value!q} is not one of this app's rerankers ({choices!l}); using {default}",
                      pt="{key}={value!q} não é um dos reranqueadores deste app ({choices!l}); usando {default}")
REFUSED = declare("link.refused", en="{key}: {why}", pt="{key}: {why}")
FILTER_REFUSED = declare("link.filter_refused", en="f.{name}: {why}", pt="f.{name}: {why}")
FILTER_VALUES = declare("link.filter_values", en="f.{name}: no document{where} has {name} {values}",
                        pt="f.{name}: nenhum documento{where} tem {name} {values}")
WITH_TENANT = declare("link.with_tenant", en=" with {field}={tenant!q}", pt=" com {field}={tenant!q}")
NO_TENANT = declare("link.no_tenant", en="", pt="")
VALUES = declare("link.values", en="{shown!w}", pt="{shown!w}")
VALUES_MORE = declare("link.values_more", en="{shown!w} and {more} more", pt="{shown!w} e mais {more}")
TENANT_NOT_YOURS = declare("link.tenant_not_yours", en="tenant: not one of the tenants you may open",
                           pt="tenant: não é um dos inquilinos que você pode abrir")
B_DEFAULT = declare("link.b_default", en="B's default", pt="o padrão de B")
MMR_OFF = declare("link.mmr_off", en="MMR off", pt="MMR desligado")


def canonical_reranker(spec: str) -> str:
    """``spec`` stripped, with every spelling of "no reranker" (``''``, ``off``, ``none``) as :data:`RERANKER_OFF`."""
    return canonical(spec)


def app_rerankers(settings: Any) -> tuple[str, ...]:
    """The rerankers the app offers, its only choices: a link or a box never names a model path or folder
    (:func:`retrieval.stages.rerank.offered`: each declared kind's offer, the server's own spec in its kind's
    place, then the cross-encoders the deployer named).

    Args:
        settings: the server's :class:`~retrieval.settings.Settings`.
    """
    return offered(settings)


@dataclass(frozen=True)
class ViewParams:
    """Everything a shared link carries: the question, the corpus and question set, filters and settings.

    ``filters`` maps a metadata field (other than the tenant) to the chosen values as strings.
    """

    q: str = ""
    corpus: str = ""
    questions: str = ""
    tenant: str = ""
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    top_k: int = TOP_K
    overfetch: int = OVERFETCH
    rrf_k: int = RRF_K
    reranker: str = RERANKER_OFF
    dense_only: bool = False
    min_similarity: float = MIN_SIMILARITY
    ab: bool = True
    rows: int = 10
    transforms: tuple[str, ...] = ()
    mmr: float | None = None
    lang: str = "en"
    judgments: str = ""
    #: The fusion method (a :data:`~retrieval.stages.fusion.METHODS` name) and its weights.
    fusion: str = "rrf"
    fusion_weights: str = ""
    #: The tab open under the answer (one of :data:`VIEW_TABS`).
    tab: str = "grid"
    #: Configuration B of the Compare tab (``b_…`` in the URL); ``None`` = B's default (A's value, except
    #: dense-only, which B flips).
    b_dense_only: bool | None = None
    b_reranker: str | None = None
    b_top_k: int | None = None
    b_rrf_k: int | None = None
    b_overfetch: int | None = None
    b_min_similarity: float | None = None


_FILTER_PREFIX = "f."
#: The Compare tab's configuration B: ``b_<name>`` parameters, validated as ``<name>`` is.
B_PREFIX = "b_"
B_SETTINGS = ("dense_only", "reranker", "top_k", "rrf_k", "overfetch", "min_similarity")
#: Rows per list panel: a view's own bound (not a setting).
ROWS = (1, 100)
#: The link's integers and their bounds: the settings' own (``rows`` excepted, a view's).
_INTEGERS = ("top_k", "overfetch", "rrf_k", "rows")


def integer_bounds(name: str) -> tuple[int, int]:
    """The bounds of one of the link's integers: the settings model's (``top_k`` …), or :data:`ROWS`."""
    if name == "rows":
        return ROWS
    low, high = bounds(name)
    return int(low), int(high)


def _to_bool(text: str) -> bool:
    return text.strip().lower() in {"1", "true", "yes", "on"}


#: A field with more values than this gets a text box (values typed, comma-separated) instead of a picker.
PICKER_MAX_VALUES = 200


def typed_filter_values(text: str, options: Sequence[Any]) -> tuple[list[Any], list[str]]:
    """The values typed for a field with too many values for a picker, matched against the tenant's own.

    ``"2019, 2021, x"`` with options ``[2019, 2020, 2021]`` → ``([2019, 2021], ["x"])``: each comma-separated
    piece is matched by its text to a value the tenant's documents carry (so its type is the value's own);
    what matches none is returned for the caller to name back, never dropped without a word.
    """
    by_text = {str(v): v for v in options}
    pieces = dict.fromkeys(p.strip() for p in text.split(","))  # each piece once, by its text (1 and True differ)
    found = [by_text[p] for p in pieces if p and p in by_text]
    unknown = [p for p in pieces if p and p not in by_text]
    return found, unknown


def link_filter_problems(pending: Mapping[str, Sequence[str]], offered_values: Mapping[str, Sequence[Any]],
                         tenant: Sequence[Any], types: Mapping[str, set[type]], tenant_field: str,
                         tenant_types: Any = None) -> tuple[dict[str, tuple[str, ...]], list[Reason]]:
    """A link's filters (``f.<field>=``) checked against what the pickers offer for the request's tenant.

    A field the tenant's documents do not carry is checked as the request would check it
    (:func:`retrieval.core.filters.build_filters` with the tenant's own fields), so its refusal names only that
    tenant's fields, never one that exists only in another tenant; a value no document of the tenant carries
    is named back as the link wrote it (the tenant's other values are not listed). Neither is dropped without a
    word, and each is said once: what is refused leaves the pending filters.

    Args:
        pending: the link's filters not yet applied (field → values as written).
        offered_values: the pickers' fields and values for this tenant (:meth:`IndexState.filter_values`).
        tenant: the chosen tenant (one value), or empty on a corpus without tenants.
        types, tenant_field, tenant_types: as :func:`retrieval.core.filters.build_filters` takes them.

    Returns:
        ``(the pending filters left for the pickers, one reason per refusal)``.
    """
    where = WITH_TENANT(field=tenant_field, tenant=tenant[0]) if tenant else NO_TENANT()
    kept: dict[str, tuple[str, ...]] = {}
    problems: list[Reason] = []
    for name, values in pending.items():
        if name not in offered_values:
            try:
                build_filters([(tenant_field, value) for value in tenant[:1]] + [(name, list(values))],
                              types, tenant_field, tenant_types)
            except RetrievalError as exc:
                problems.append(FILTER_REFUSED(name=name, why=raw(str(exc))))
            continue
        if name == tenant_field:
            kept[name] = tuple(values)
            continue
        known = {str(v) for v in offered_values[name]}
        missing = [v for v in values if v not in known]
        if missing:
            shown = (VALUES_MORE(shown=missing[:5], more=len(missing) - 5) if len(missing) > 5
                     else VALUES(shown=missing))
            problems.append(FILTER_VALUES(name=name, where=where, values=shown))
        kept[name] = tuple(v for v in values if v in known)
    return kept, problems


def params_from_query(query: Mapping[str, Sequence[str]], defaults: ViewParams) -> tuple[ViewParams, list[Reason]]:
    """Parse URL parameters (each key → its values) over ``defaults``.

    Returns:
        The parameters, and one reason per value that was ignored (unparsable, out of bounds, undeclared).
    """
    problems: list[Reason] = []
    values: dict[str, Any] = {}
    filters: dict[str, tuple[str, ...]] = {}
    for key, raw_values in query.items():
        raw_list = [raw_values] if isinstance(raw_values, str) else list(raw_values)
        if not raw_list:
            continue
        text = raw_list[-1]
        if key.startswith(_FILTER_PREFIX) and len(key) > len(_FILTER_PREFIX):
            filters[key[len(_FILTER_PREFIX):]] = tuple(dict.fromkeys(v for v in raw_list if v != ""))
            continue
        # b_top_k is read as top_k is, and stored under its own name
        name = key[len(B_PREFIX):] if key.startswith(B_PREFIX) and key[len(B_PREFIX):] in B_SETTINGS else key
        default = getattr(defaults, key, None)
        default = B_DEFAULT() if default is None and name != key else default
        if name in {"q", "corpus", "questions", "tenant", "reranker", "judgments"}:
            values[key] = text
        elif key in {"tab", "lang", "fusion"}:
            choices = {"tab": VIEW_TABS, "lang": LANGUAGES, "fusion": METHODS.names()}[key]
            if text in choices:
                values[key] = text
            else:
                problems.append(NOT_ONE_OF(key=key, value=text[:40], choices=list(choices), default=default))
        elif key == "fusion_weights":
            try:
                parse_weights(text)
                values[key] = text
            except ValueError as exc:
                problems.append(BAD_WEIGHTS(value=text[:80], why=raw(str(exc)), default=default))
        elif name in _INTEGERS:
            low, high = integer_bounds(name)
            try:
                whole = int(text)
            except ValueError:
                problems.append(NOT_INTEGER(key=key, value=text[:40], default=default))
                continue
            if not low <= whole <= high:
                problems.append(OUTSIDE(key=key, value=whole, low=low, high=high, default=default))
                continue
            values[key] = whole
        elif name == "min_similarity":
            low, high = bounds("min_similarity")
            try:
                number = float(text)
            except ValueError:
                problems.append(NOT_NUMBER(key=key, value=text[:40], default=default))
                continue
            if not math.isfinite(number) or not low <= number <= high:
                problems.append(OUTSIDE(key=key, value=number, low=low, high=high, default=default))
                continue
            values[key] = number
        elif name in {"dense_only", "ab"}:
            values[key] = _to_bool(text)
        elif key == "transforms":
            chosen = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
            unknown = [t for t in chosen if t not in TRANSFORMS]
            if unknown:
                problems.append(UNKNOWN_TRANSFORMS(names=unknown))
            values[key] = tuple(t for t in chosen if t in TRANSFORMS)
        elif key == "mmr":
            low, high = bounds("mmr_lambda")
            try:
                number = float(text)
            except ValueError:
                problems.append(MMR_NOT_NUMBER(value=text[:40]))
                continue
            if not math.isfinite(number) or not low <= number <= high:
                problems.append(MMR_OUTSIDE(value=number, low=low, high=high))
                continue
            values[key] = number
    if filters:
        values["filters"] = filters
    return replace(defaults, **values), problems


def offered_reranker(key: str, spec: str, settings: Any, default: str) -> tuple[str, Reason | None]:
    """``spec`` when the app offers it (:func:`app_rerankers`), else ``default`` and why."""
    spec = canonical_reranker(spec)
    choices = app_rerankers(settings)
    if spec in choices:
        return spec, None
    return default, NOT_OFFERED(key=key, value=spec[:80], choices=list(choices), default=default)


def params_to_query(params: ViewParams, defaults: ViewParams) -> dict[str, str | list[str]]:
    """URL parameters for ``params``: only values that differ from ``defaults`` (plus the question)."""
    out: dict[str, str | list[str]] = {}
    for f in fields(ViewParams):
        value, default = getattr(params, f.name), getattr(defaults, f.name)
        if f.name == "filters":
            for name, chosen in sorted(value.items()):
                if chosen:
                    out[_FILTER_PREFIX + name] = list(chosen)
            continue
        if value == default and f.name != "q":
            continue
        if f.name == "q" and not value:
            continue
        if f.name == "transforms":
            out[f.name] = ",".join(value)
            continue
        out[f.name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out
