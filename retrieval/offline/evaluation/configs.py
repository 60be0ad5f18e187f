"""Evaluation configurations and the fixed dev / held-out split.

A configuration is a name plus settings overrides over the base settings; the named ones are those of
docs/evaluation.md ("Configurations") plus a few interventions, each one change away from ``hybrid``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ...core.split import split_of
from ...backends.embedders import EMBEDDERS
from ...core.types import Question
from ...stages.fusion import METHODS
from ...stages.rerank import KINDS
from ...stages.transforms import TRANSFORMS
from ...settings import Settings

#: The named configurations that name no declared kind (docs/evaluation.md, "Configurations"): settings
#: overrides over the base settings. ``hybrid+rerank`` takes the base's own reranker.
BASE_CONFIGS: dict[str, dict[str, Any]] = {
    "bm25": {"dense_enabled": False, "hybrid_enabled": True, "reranker_model": "none"},
    "dense": {"hybrid_enabled": False, "reranker_model": "none"},
    "hybrid": {"reranker_model": "none"},
    "hybrid+rerank": {},
}


def named_configs() -> dict[str, dict[str, Any]]:
    """Every named configuration, in order: the base ones, one per reranker kind that declares its evaluation
    (``hybrid+ltr``, ``hybrid+reader``), ``hybrid-rrf30``, one per fusion method that declares one
    (``weighted-rrf``, ``combsum``), one per transform that declares one, then one per embedding model that
    declares one (``hybrid-use-m3``, ``hybrid-minilm``). Read from the declarations each time, so a kind declared
    later has its configuration too."""
    out = dict(BASE_CONFIGS)
    out.update({kind.evaluation[0]: dict(kind.evaluation[1]) for kind in KINDS if kind.evaluation})
    out["hybrid-rrf30"] = {"reranker_model": "none", "rrf_k": 30}
    out.update({m.evaluation[0]: dict(m.evaluation[1]) for m in METHODS if m.evaluation})
    out.update({t.evaluation[0]: dict(t.evaluation[1]) for t in TRANSFORMS if t.evaluation})
    out.update({e.evaluation[0]: dict(e.evaluation[1]) for e in EMBEDDERS if e.evaluation})
    return out


def select_split(questions: Iterable[Question], split: str) -> list[Question]:
    if split not in {"dev", "heldout", "all"}:
        raise ValueError("split must be dev, heldout or all")
    return [q for q in questions if split == "all" or split_of(q.id) == split]


@dataclass(frozen=True)
class Config:
    name: str
    overrides: Mapping[str, Any]


def resolve_configs(names: Sequence[str], base: Settings, extra: Sequence[Mapping[str, Any]] = ()) -> list[Config]:
    """Named configs plus ``{"name", "settings"}`` entries from a config file.

    Raises:
        ValueError: an unknown name, an entry without ``name``, a name given twice (their rows would merge),
            or ``top_k`` in a configuration (the evaluation sets it: the largest ``--k``).
    """
    out = []
    for name in names:
        named = named_configs()
        if name not in named:
            raise ValueError(f"unknown config '{name}' (named configs: {', '.join(named)})")
        overrides = dict(named[name])
        if name == "hybrid+rerank":
            overrides["reranker_model"] = base.reranker_model
        out.append(Config(name, overrides))
    for entry in extra:
        if not isinstance(entry, Mapping) or not entry.get("name"):
            raise ValueError("each config-file entry needs a 'name' and a 'settings' object")
        overrides = entry.get("settings") or {}
        if not isinstance(overrides, Mapping):
            raise ValueError(f"config '{entry['name']}': 'settings' must be an object of name: value, "
                             f"got {type(overrides).__name__}")
        if "top_k" in overrides:
            raise ValueError(f"config '{entry['name']}': top_k is set by the evaluation (the largest k); "
                             "choose the cut-offs with --k")
        out.append(Config(str(entry["name"]), dict(overrides)))
    seen: set[str] = set()
    for config in out:
        if config.name in seen:
            raise ValueError(f"config '{config.name}' is given twice: each configuration needs its own name")
        seen.add(config.name)
    return out
