"""What every fusion method shares: its declaration, the registry of methods, and the weights that name rankers.

A method is declared once (:class:`FusionMethod`, in its own module: :mod:`.rrf`, :mod:`.combsum`,
:mod:`.convex`), with its function, its name on a page, whether its terms are rank based, how it takes weights,
how the provenance card writes one term, and its evaluation configuration. The ``fusion`` setting, the
pipeline, the card, the tuner and the evaluation's configurations read :data:`METHODS`.

Fusion runs over the generators' whole windows, never lists already cut to top_k. An item found by several
rankers appears once with one contribution per ranker. Ties are broken by the best rank the item got in any
single list, then by chunk id. Inputs are never mutated.

Weights (``fusion_weights``) name rankers: the generators ``bm25`` and ``dense``, or one list of a transform,
``<generator>:<variant>`` (``bm25:rewrite``, ``dense:hyde``, ``bm25:multi_query#2``, ``dense:decompose#1``,
``bm25:hop1:PX-7``); a variant list takes its generator's weight unless named itself. A weight either takes
effect or is refused:

* a name that no request can have (``Dense``, ``bm2``, ``bm25:hyde``) is refused (:func:`check_weight_names`,
  run when the settings are validated; a transform's name also needs that transform configured);
* weights that are all 0 are refused (nothing would be ranked);
* a ranker of weight 0 is **dropped from the fusion** (its items are neither listed nor ordered by it) and the
  fused list's note says so;
* a named ranker that this request has no list for (the dense side in ``lexical_only``, a transform that
  fell back to the original query) is reported in the fused list's note.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ...core.defaults import RRF_K
from ...core.errors import InvalidSetting
from ...core.kinds import Registry, Text
from ...core.locale import number
from ...core.reasons import Reason, declare
from ...core.types import RankedList, ScoredItem
from ..transforms import TRANSFORMS, Transform

#: The generators' ranker names.
GENERATORS = ("bm25", "dense")

#: The largest fusion weight accepted. Weights only order rankers against each other, so a million to one is
#: already "this ranker alone"; beyond, a fused score (a sum of ``w · norm`` or ``w / (k + rank)``) could
#: overflow a float (``bm25=1e308,dense=1e308`` did, in every request).
MAX_WEIGHT = 1_000_000.0

DROPPED = declare("fusion.dropped", en="dropped from the fusion (weight 0): {rankers!l}",
                  pt="fora da fusão (peso 0): {rankers!l}")
UNUSED = declare("fusion.unused", en="weights with no list in this request: {names!l}",
                 pt="pesos sem lista neste pedido: {names!l}")
BOTH = declare("fusion.notes", en="{first}; {second}", pt="{first}; {second}")


@dataclass(frozen=True)
class Term:
    """One ranker's term of a fused item, as the trace recorded it, for the card to explain."""

    ranker: str
    rank: int | None
    k: int
    recorded: float
    weights: Mapping[str, float]
    #: How many of the request's lists hold the item (CombMNZ and ISR multiply by it).
    lists: int = 1


@dataclass(frozen=True)
class FusionMethod:
    """A fusion method, declared once.

    Attributes:
        name: the ``fusion`` setting's value.
        fuse: ``fuse(lists, k, weights) -> RankedList`` (stage ``fused``); ``lists`` are the generators'
            windows by ranker name, ``k`` the request's ``rrf_k``, ``weights`` the parsed ``fusion_weights``.
        label: the method on a page and in a report.
        rank_based: each term is ``weight / (k + rank)``: ``rrf_k`` takes effect (the tuner searches it).
        check_weights: refuses weights this method cannot take (raises :class:`InvalidSetting`, one line).
        term_weight: ``(term) -> weight`` read back from a recorded term (for the card).
        formula: ``(term, lang) -> text``: one term of the card's formula (``1/(60 + 3)``, ``0.5·norm``).
        evaluation: its evaluation configuration, ``(name, settings overrides)``, or ``None``.
        tuned_weights: the ``fusion_weights`` values the tuner tries with this method.
    """

    name: str
    fuse: Callable[[Mapping[str, RankedList], int, Mapping[str, float]], RankedList]
    label: Text
    rank_based: bool
    check_weights: Callable[[Mapping[str, float]], None]
    term_weight: Callable[[Term], float]
    formula: Callable[[Term, str], str]
    evaluation: tuple[str, Mapping[str, Any]] | None = None
    tuned_weights: tuple[str, ...] = ()


#: The fusion methods, in declaration order (the ``fusion`` setting's values).
METHODS: Registry[FusionMethod] = Registry("fusion method")


def method(name: str) -> FusionMethod:
    """The declaration of ``name``.

    Raises:
        InvalidSetting: no such method (one line naming the declared ones).
    """
    if name not in METHODS:
        raise InvalidSetting(f"unknown fusion method '{name}' (use {', '.join(METHODS.names())})")
    return METHODS.get(name)


def fuse(lists: Mapping[str, RankedList], method_name: str = "rrf", k: int = RRF_K,
         weights: Mapping[str, float] | None = None) -> RankedList:
    """The ``fusion`` setting's method over ``lists``.

    Raises:
        InvalidSetting: an unknown method (a ``ValueError``).
    """
    return method(method_name).fuse(lists, k, weights or {})


def refuses_weights(method_name: str) -> Callable[[Mapping[str, float]], None]:
    """A ``check_weights`` for a method that takes no weights: any weight is refused, naming the methods that
    take them (those whose ``check_weights`` was not made here)."""
    def check(weights: Mapping[str, float]) -> None:
        if weights:
            takers = [m.name for m in METHODS if not getattr(m.check_weights, "refuses", False)]
            names = ", ".join(takers[:-1]) + (f" or {takers[-1]}" if len(takers) > 1 else "".join(takers))
            raise InvalidSetting(f"weights need fusion={names} ({method_name} ignores them)")
    check.refuses = True  # type: ignore[attr-defined]
    return check


def parse_weights(text: str) -> dict[str, float]:
    """``"bm25=1.0,dense=0.5"`` → ``{"bm25": 1.0, "dense": 0.5}`` (empty text → ``{}``).

    Raises:
        InvalidSetting (a ``ValueError``): an entry without ``=``, an empty name, a name given twice, or a
            weight that is not a finite number from 0 to :data:`MAX_WEIGHT`.
    """
    weights: dict[str, float] = {}
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        name, sep, value = entry.partition("=")
        if not sep or not name.strip():
            raise InvalidSetting(f"fusion weight '{entry.strip()}' is not name=number")
        try:
            weight = float(value)
        except ValueError:
            raise InvalidSetting(f"fusion weight of '{name.strip()}' is not a number: '{value.strip()}'") from None
        if not math.isfinite(weight) or weight < 0 or weight > MAX_WEIGHT:
            raise InvalidSetting(f"fusion weight of '{name.strip()}' must be a finite number ≥ 0 and ≤ "
                                 f"{MAX_WEIGHT:,.0f}, got '{value.strip()}'")
        if name.strip() in weights:
            raise InvalidSetting(f"fusion weight of '{name.strip()}' is given twice")
        weights[name.strip()] = weight
    return weights


def checked_weight(ranker: str, weight: object) -> float:
    """A weight handed to a fusion function directly (not through the settings), held to the settings' rule.

    Raises:
        InvalidSetting: not a finite number from 0 to :data:`MAX_WEIGHT`.
    """
    w = float(weight)  # type: ignore[arg-type]
    if not (math.isfinite(w) and 0 <= w <= MAX_WEIGHT):
        raise InvalidSetting(f"fusion weight of '{ranker}' must be a finite number ≥ 0 and ≤ {MAX_WEIGHT:,.0f}, "
                             f"got {w!r}")
    return w


def variant_technique(name: str) -> str | None:
    """The transform whose lists a ranker name denotes (``bm25:hop1:PX-7`` → ``multi_hop``), ``None`` for a
    generator (``bm25``).

    Raises:
        InvalidSetting: a name that no request can have (see :func:`check_weight_names`).
    """
    generator, sep, variant = name.partition(":")
    if generator not in GENERATORS:
        raise InvalidSetting(f"fusion weight names an unknown ranker '{name}' (rankers: bm25, dense, or "
                             "bm25:<variant> / dense:<variant> such as bm25:rewrite, dense:hyde, bm25:multi_query#2)")
    if not sep:
        return None
    listed = [t for t in TRANSFORMS if t.ranker_pattern]
    technique = next((t for t in listed if re.fullmatch(t.ranker_pattern, variant)), None)
    if technique is None:
        shown = ", ".join(_pattern_hint(t) for t in listed)
        raise InvalidSetting(f"fusion weight names an unknown ranker '{name}' (variants: {shown})")
    if technique.hypothesis_only and generator == "bm25":
        raise InvalidSetting(f"fusion weight names an unknown ranker '{name}' ({technique.label.en} adds a dense list "
                             f"only: dense:{technique.name})")
    return technique.name


def _pattern_hint(transform: Transform) -> str:
    """A transform's ranker names for people: ``multi_query[#n]``, ``hop<n>[:CODE]``."""
    if transform.ranker is not None:
        return transform.ranker.replace("[1-9][0-9]*", "<n>").replace("(?::.+)?", "[:CODE]")
    return transform.name + ("[#n]" if transform.several or transform.splits else "")


def check_weight_names(weights: Mapping[str, float]) -> None:
    """Refuse weights naming rankers that no request has (names are case-sensitive).

    Raises:
        InvalidSetting: an unknown generator (``Dense``, ``bm2``) or variant (``bm25:hyde``, ``dense:foo``), or
            weights that are all 0 (an unnamed generator weighs 1, so ``dense=0`` alone is fine).
    """
    for name in weights:
        variant_technique(name)
    if all(g in weights for g in GENERATORS) and not any(weights.values()):
        raise InvalidSetting("fusion weights are all 0: nothing would be ranked (a ranker is dropped by giving it "
                             "0; keep at least one above 0)")


def names_of(ranker: str) -> list[str]:
    """The names that can weigh ``ranker``, most specific first:
    ``bm25:multi_query#2`` → ``bm25:multi_query#2``, ``bm25:multi_query``, ``bm25``."""
    names = [ranker]
    base = re.sub(r"#[0-9]+$", "", ranker)
    while True:
        if base not in names:
            names.append(base)
        if ":" not in base:
            return names
        base = base.rsplit(":", 1)[0]


def weight_of(ranker: str, weights: Mapping[str, float]) -> float:
    """A ranker's weight: its own name, else the same without ``#n``, else its generator (``bm25:rewrite`` →
    ``bm25``), else 1."""
    return float(next((weights[n] for n in names_of(ranker) if n in weights), 1.0))


def weight_note(lists: Mapping[str, Any], weights: Mapping[str, float],
                resolved: Mapping[str, float]) -> tuple[dict[str, Any], Reason | None]:
    """Drop the weight-0 rankers; say which were dropped and which named rankers had no list."""
    dropped = [r for r in lists if resolved[r] == 0]
    kept = {r: lst for r, lst in lists.items() if resolved[r] != 0}
    unused = [n for n in weights if not any(n in names_of(r) for r in lists)]
    parts = ([DROPPED(rankers=dropped)] if dropped else []) + ([UNUSED(names=unused)] if unused else [])
    if len(parts) == 2:
        return kept, BOTH(first=parts[0], second=parts[1])
    return kept, (parts[0] if parts else None)


def fused_items(contributions: Mapping[str, Mapping[str, float]], ranks: Mapping[str, Mapping[str, int]],
                parent_of: Mapping[str, str]) -> tuple[ScoredItem, ...]:
    """The fused items from each item's terms and ranks: by the sum of its terms, then its best single rank,
    then its chunk id; ranks from 1."""
    order = sorted(contributions,
                   key=lambda cid: (-math.fsum(contributions[cid].values()), min(ranks[cid].values()), cid))
    return tuple(ScoredItem(cid, parent_of[cid], rank, math.fsum(contributions[cid].values()),
                            contributions=dict(contributions[cid]), ranks=dict(ranks[cid]))
                 for rank, cid in enumerate(order, start=1))


def rank_formula(weight: float, k: int, rank: int | None, lang: str) -> str:
    """``1/(60 + 3)``, or ``0.5·1/(60 + 3)`` for a weight other than 1 (numbers in ``lang``)."""
    lead = "" if weight == 1 else number(weight, "g", lang) + "·"
    return f"{lead}1/({k} + {rank})"


def round_robin(parts: list[RankedList]) -> RankedList:
    """Interleave fused lists of sub-questions: each part's 1st item, then each part's 2nd, … (an item keeps
    its first position). Used for decomposition, so every part of a multi-part question reaches the top
    instead of the part whose candidates appear in more lists winning all places. Each item keeps its RRF
    score, contributions and ranks from the part that placed it (score kind says so)."""
    seen: set[str] = set()
    order: list[ScoredItem] = []
    for position in range(max((len(p.items) for p in parts), default=0)):
        for part in parts:
            if position < len(part.items) and part.items[position].chunk_id not in seen:
                seen.add(part.items[position].chunk_id)
                order.append(part.items[position])
    items = tuple(ScoredItem(i.chunk_id, i.parent_id, rank, i.score, contributions=i.contributions, ranks=i.ranks)
                  for rank, i in enumerate(order, start=1))
    return RankedList("fused", "rrf (round-robin over sub-questions)", items)
