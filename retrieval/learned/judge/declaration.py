"""The declaration of one judge feature (:class:`Feature`, made by ``_f``) and the table a group of declarations
computes over its per-request context (:func:`_table`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ...core.kinds import Text


@dataclass(frozen=True)
class Feature:
    """One feature, declared once: its name, range/default, what it measures (the text shown in
    explanations), the side it may push a model's output and the function that computes it.

    Everything else derives from the declarations: a table's rows (:func:`_table` calls ``value`` for each
    feature in declaration order), the models' column order (``*_NAMES``), the gate's fitting bounds
    (:data:`GATE_SIGNS`) and :func:`feature_set_version`. No row is written as a positional tuple.

    Attributes:
        value: ``value(table, row) -> float``; ``table`` is the group's per-request context
            (:class:`_Window`, :class:`_SentenceTable` or :class:`_GateContext`), ``row`` the row index.
        sign: +1 the feature may only raise the model's output, −1 only lower it, 0 either (enforced where
            the model is fitted with bounds: the support gate).
    """

    name: str
    range: str
    doc: str
    value: Callable[[Any, int], float] = field(repr=False, compare=False)
    sign: int = 0
    #: The feature in plain words on a page (its id where it has none).
    label: Text | None = field(default=None, compare=False)


def _f(name: str, range_: str, doc: str, value: Callable[[Any, int], float], sign: int = 0,
       label: Text | None = None) -> Feature:
    return Feature(name, range_, doc, value, sign, label)


def _table(features: Sequence[Feature], context: Any, rows: int) -> np.ndarray:
    """The ``(rows, len(features))`` matrix of ``features`` over ``context``, columns in declaration order."""
    return np.asarray([[f.value(context, n) for f in features] for n in range(rows)],
                      dtype=np.float64).reshape(rows, len(features))
