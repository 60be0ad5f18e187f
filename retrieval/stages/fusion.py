"""Fusion of the generators' lists: Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, 2009), its
weighted form, CombSUM over min-max normalized scores (labelled ``normalized``), and the convex combination
of the normalized BM25 and cosine scores (one weight).

    rrf / weighted_rrf:  score(d) = Σ_r w_r / (k + rank_r(d)),   ranks start at 1, k = ``rrf_k`` (60)
    combsum:             score(d) = Σ_r w_r · (s_r(d) − min_r) / (max_r − min_r)
    convex:              score(d) = w · norm_bm25(d) + (1 − w) · norm_dense(d),   w = ``bm25=`` weight (0.5)

Fusion runs over the generators' whole windows, never lists already cut to top_k. An item found by several
rankers appears once with one contribution per ranker. Ties are broken by the best rank the item got in any
single list, then by chunk id. Inputs are never mutated.

Weights (``fusion_weights``, for ``weighted_rrf`` and ``combsum``) name rankers: the generators ``bm25`` and
``dense``, or one list of a transform, ``<generator>:<variant>`` (``bm25:rewrite``, ``dense:hyde``,
``bm25:multi_query#2``, ``dense:decompose#1``, ``bm25:hop1:PX-7``); a variant list takes its generator's
weight unless named itself. A weight either takes effect or is refused:

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
from typing import Mapping

from ..core.errors import InvalidSetting
from ..core.types import RankedList, ScoredItem

#: The generators' ranker names.
GENERATORS = ("bm25", "dense")
_VARIANT_RE = re.compile(r"(?P<t>rewrite|hyde|multi_query|decompose)(?:#[1-9][0-9]*)?|hop[1-9][0-9]*(?::.+)?")


def rrf(
    lists: Mapping[str, RankedList | list[str]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
    parents: Mapping[str, str] | None = None,
) -> RankedList:
    """Fuse ranked lists by RRF.

    Args:
        lists: ranker name → its ranked list (a ``RankedList`` or a plain list of ids, best first).
        k: the RRF constant (> 0).
        weights: optional ranker name → weight ``w_r`` (1.0 when absent).
        parents: chunk id → parent id, for plain id lists (defaults to the id itself).

    Returns:
        A ``RankedList`` (stage ``fused``, score kind ``rrf``) whose items carry ``contributions`` and
        ``ranks`` per ranker.

    Raises:
        ValueError: ``k`` ≤ 0, or a list that names the same id twice; a weight that is not a finite number
            from 0 to :data:`MAX_WEIGHT` (:class:`~retrieval.core.errors.InvalidSetting`, a ``ValueError``).
    """
    if k <= 0:
        raise ValueError("rrf_k must be positive")
    weights = weights or {}
    contributions: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    parent_of: dict[str, str] = {}
    for ranker, ranked in lists.items():
        if isinstance(ranked, RankedList):
            entries = [(item.chunk_id, item.parent_id) for item in ranked.items]
        else:
            entries = [(cid, (parents or {}).get(cid, cid)) for cid in ranked]
        ids = [cid for cid, _ in entries]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker '{ranker}' lists an id twice")
        w = _checked_weight(ranker, weights.get(ranker, 1.0))
        for position, (cid, parent) in enumerate(entries, start=1):
            contributions.setdefault(cid, {})[ranker] = w / (k + position)
            ranks.setdefault(cid, {})[ranker] = position
            parent_of.setdefault(cid, parent)
    order = sorted(contributions, key=lambda cid: (-math.fsum(contributions[cid].values()), min(ranks[cid].values()), cid))
    items = tuple(
        ScoredItem(cid, parent_of[cid], rank, math.fsum(contributions[cid].values()),
                   contributions=dict(contributions[cid]), ranks=dict(ranks[cid]))
        for rank, cid in enumerate(order, start=1)
    )
    return RankedList("fused", "rrf", items)


#: Fusion methods of the ``fusion`` setting.
FUSION_METHODS = ("rrf", "weighted_rrf", "combsum", "convex")

#: The convex combination's weight of BM25 when ``fusion_weights`` does not name it.
CONVEX_DEFAULT_WEIGHT = 0.5

#: The largest fusion weight accepted. Weights only order rankers against each other, so a million to one is
#: already "this ranker alone"; beyond, a fused score (a sum of ``w · norm`` or ``w / (k + rank)``) could
#: overflow a float (``bm25=1e308,dense=1e308`` did, in every request).
MAX_WEIGHT = 1_000_000.0


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


def _checked_weight(ranker: str, weight: object) -> float:
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
    match = _VARIANT_RE.fullmatch(variant)
    if match is None:
        raise InvalidSetting(f"fusion weight names an unknown ranker '{name}' (variants: rewrite, multi_query[#n], "
                             "hyde, decompose[#n], hop<n>[:CODE])")
    technique = match.group("t") or "multi_hop"
    if technique == "hyde" and generator == "bm25":
        raise InvalidSetting(f"fusion weight names an unknown ranker '{name}' (HyDE adds a dense list only: dense:hyde)")
    return technique


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


def _weight_note(lists: Mapping[str, object], weights: Mapping[str, float],
                 resolved: Mapping[str, float]) -> tuple[dict[str, object], str | None]:
    """Drop the weight-0 rankers; say which were dropped and which named rankers had no list."""
    dropped = [r for r in lists if resolved[r] == 0]
    kept = {r: lst for r, lst in lists.items() if resolved[r] != 0}
    unused = [n for n in weights if not any(n in _names_of(r) for r in lists)]
    parts = []
    if dropped:
        parts.append(f"dropped from the fusion (weight 0): {', '.join(dropped)}")
    if unused:
        parts.append(f"weights with no list in this request: {', '.join(unused)}")
    return kept, ("; ".join(parts) or None)


def _names_of(ranker: str) -> list[str]:
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


def _weight_of(ranker: str, weights: Mapping[str, float]) -> float:
    """A ranker's weight: its own name, else the same without ``#n``, else its generator (``bm25:rewrite`` →
    ``bm25``), else 1."""
    return float(next((weights[n] for n in _names_of(ranker) if n in weights), 1.0))


def weighted_rrf(
    lists: Mapping[str, RankedList | list[str]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
    parents: Mapping[str, str] | None = None,
) -> RankedList:
    """RRF with one weight per ranker: score(d) = Σ_r w_r / (k + rank_r(d)), ranks from 1.

    A ranker named ``bm25:rewrite`` takes the weight of ``bm25`` unless it is named itself; an unnamed
    ranker weighs 1. A ranker of weight 0 is left out of the fusion entirely (its items are not listed, and
    do not order the others), and the list's note names it. Same ties, same output as :func:`rrf` (score
    kind ``weighted rrf``).
    """
    weights = weights or {}
    resolved = {ranker: _weight_of(ranker, weights) for ranker in lists}
    kept, note = _weight_note(lists, weights, resolved)
    fused = rrf(kept, k=k, weights=resolved, parents=parents)
    return RankedList("fused", "weighted rrf", fused.items, note)


def combsum(
    lists: Mapping[str, RankedList],
    weights: Mapping[str, float] | None = None,
) -> RankedList:
    """CombSUM over min-max normalized scores (Fox and Shaw, 1994; normalization as in Lee, 1997).

        norm_r(d) = (s_r(d) − min_r) / (max_r − min_r)      (1.0 for every item when max_r = min_r)
        score(d)  = Σ_r w_r · norm_r(d)                       (an item absent from a list adds 0)

    Raw scores of different systems are never added: each list is first mapped to [0, 1] over its own
    window. The score kind says so (``combsum (min-max normalized)``); ``contributions`` hold
    ``w_r · norm_r(d)``. Ties: best single rank, then chunk id.

    A ranker of weight 0 is left out (see :func:`weighted_rrf`), and the note names it.

    Raises:
        ValueError: a plain id list (CombSUM needs scores), or a list naming the same id twice; a weight
            outside 0 … :data:`MAX_WEIGHT` (:class:`~retrieval.core.errors.InvalidSetting`).
    """
    weights = weights or {}
    lists, note = _weight_note(lists, weights, {r: _weight_of(r, weights) for r in lists})
    contributions: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    parent_of: dict[str, str] = {}
    for ranker, ranked in lists.items():
        if not isinstance(ranked, RankedList):
            raise ValueError("combsum needs scored lists (RankedList), not plain id lists")
        ids = [i.chunk_id for i in ranked.items]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker '{ranker}' lists an id twice")
        if not ranked.items:
            continue
        scores = [i.score for i in ranked.items]
        low, high = min(scores), max(scores)
        w = _checked_weight(ranker, _weight_of(ranker, weights))
        for position, item in enumerate(ranked.items, start=1):
            norm = 1.0 if high == low else (item.score - low) / (high - low)
            contributions.setdefault(item.chunk_id, {})[ranker] = w * norm
            ranks.setdefault(item.chunk_id, {})[ranker] = position
            parent_of.setdefault(item.chunk_id, item.parent_id)
    order = sorted(contributions, key=lambda cid: (-math.fsum(contributions[cid].values()), min(ranks[cid].values()), cid))
    items = tuple(
        ScoredItem(cid, parent_of[cid], rank, math.fsum(contributions[cid].values()),
                   contributions=dict(contributions[cid]), ranks=dict(ranks[cid]))
        for rank, cid in enumerate(order, start=1)
    )
    return RankedList("fused", "combsum (min-max normalized)", items, note)


def convex_weight(weights: Mapping[str, float] | None) -> float:
    """The convex combination's one weight ``w`` (of BM25) from ``fusion_weights``: ``bm25=w``, else 0.5.

    Raises:
        InvalidSetting: a weight naming another ranker than ``bm25`` (the dense side takes ``1 − w``; a
            transform's list takes its generator's), or ``w`` outside [0, 1].
    """
    weights = weights or {}
    others = [name for name in weights if name != "bm25"]
    if others:
        raise InvalidSetting(f"fusion=convex takes one weight, bm25=w (dense gets 1 − w); got {', '.join(others)}")
    w = float(weights.get("bm25", CONVEX_DEFAULT_WEIGHT))
    if not (math.isfinite(w) and 0.0 <= w <= 1.0):
        raise InvalidSetting(f"fusion=convex: the weight bm25={w!r} must be in [0, 1]")
    return w


def convex(lists: Mapping[str, RankedList], weights: Mapping[str, float] | None = None) -> RankedList:
    """The normalized convex combination of BM25 and cosine (one weight ``w``, of BM25):

        norm_r(d) = (s_r(d) − min_r) / (max_r − min_r)           (1.0 for every item when max_r = min_r)
        score(d)  = w · norm_bm25(d) + (1 − w) · norm_dense(d)    (an item absent from a list adds 0)

    Each list is min-max normalized over its own window (BM25: unbounded, higher is better; dense: cosine in
    [-1, 1]), so the score lies in [0, 1]. ``w`` comes from ``fusion_weights`` as ``bm25=w`` (default 0.5:
    :func:`convex_weight`); a transform's list takes its generator's weight (``bm25:rewrite`` → ``w``,
    ``dense:hyde`` → ``1 − w``). ``w = 0`` or ``1`` drops the other side from the fusion, and the note says so.
    This is :func:`combsum` with the weights ``{bm25: w, dense: 1 − w}`` (same ties, contributions
    ``w_r · norm_r(d)``); score kind ``convex (min-max normalized, w=…)``.

    Raises:
        InvalidSetting: see :func:`convex_weight`; ValueError: as :func:`combsum`.
    """
    w = convex_weight(weights)
    fused = combsum(lists, weights={"bm25": w, "dense": 1.0 - w})
    return RankedList("fused", f"convex (min-max normalized, w={w:g})", fused.items, fused.note)


def fuse(lists: Mapping[str, RankedList], method: str = "rrf", k: int = 60,
         weights: Mapping[str, float] | None = None) -> RankedList:
    """The ``fusion`` setting: ``rrf`` (weights ignored), ``weighted_rrf``, ``combsum`` or ``convex``.

    Raises:
        ValueError: an unknown method.
    """
    if method == "rrf":
        return rrf(lists, k=k)
    if method == "weighted_rrf":
        return weighted_rrf(lists, k=k, weights=weights)
    if method == "combsum":
        return combsum(lists, weights=weights)
    if method == "convex":
        return convex(lists, weights=weights)
    raise ValueError(f"unknown fusion method '{method}' (use {', '.join(FUSION_METHODS)})")


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
