"""No reranker (kind ``none``: ``none``, ``off`` or empty): the request runs ``rrf_only``, in fused order."""

from __future__ import annotations

from ...core.kinds import Text
from .base import KINDS, OFF, RerankerKind


def _parse(spec: str) -> str | None:
    return "" if spec.lower() in {"", "none", "off"} else None


KINDS.declare(RerankerKind(name=OFF, label=Text("Off", "Desligado"), described=Text("none", "nenhum"), parse=_parse,
                           load=None, priority=0, offer=OFF))
