"""Fusion of the generators' lists: one method a module, each declared once in :data:`METHODS`, in the order
they are imported here (the order they are offered in)."""

# isort: off
from .rrf import rrf, weighted_rrf
from .combsum import combsum
from .convex import CONVEX_DEFAULT_WEIGHT, convex, convex_weight
from .wsum import wsum
from .combmnz import combmnz, isr
from .combmax import combmax
from .borda import borda
# isort: on
from .base import (GENERATORS, MAX_WEIGHT, METHODS, FusionMethod, Term, check_weight_names, fuse, method,
                   parse_weights, round_robin, variant_technique)

__all__ = ["CONVEX_DEFAULT_WEIGHT", "borda", "combmax", "GENERATORS", "MAX_WEIGHT", "METHODS", "FusionMethod", "Term",
           "check_weight_names", "combmnz", "combsum", "convex", "convex_weight", "fuse", "isr", "method", "parse_weights",
           "round_robin", "rrf", "variant_technique", "weighted_rrf", "wsum"]
