"""The degradation tiers (docs/pipeline.md, the tier table), each declared once: which generators it runs, its
badge and its sentence on a page. Which tier a request runs is planned by :mod:`retrieval.pipeline.tiers`;
``refusal`` is decided by the gate. Every tier comes with the reason that chose it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.kinds import Registry, Text


@dataclass(frozen=True)
class Tier:
    """A tier, declared once.

    Attributes:
        name: the trace's ``tier`` (and the OpenTelemetry attribute ``agent.hybrid_path``).
        lexical, dense: the generators it runs.
        sentence: the tier in plain words on a page ("Answered with BM25 alone"); ``full`` takes its reranker
            kind's own sentence where that kind declares one.
        color: its badge's colour on a page (a Streamlit colour name).
    """

    name: str
    lexical: bool
    dense: bool
    sentence: Text
    color: str


#: The tiers, best first.
TIERS: Registry[Tier] = Registry("tier")
FULL = TIERS.declare(Tier("full", True, True, Text("Answered with a reranker over BM25 + dense",
                                                   "Respondido com um reranqueador sobre BM25 + denso"), "green"))
RRF_ONLY = TIERS.declare(Tier("rrf_only", True, True,
                              Text("Answered with BM25 + dense fused by RRF, without a reranker",
                                   "Respondido com BM25 + denso fundidos por RRF, sem reranqueador"), "blue"))
DENSE_ONLY = TIERS.declare(Tier("dense_only", False, True, Text("Answered with the dense search alone",
                                                                "Respondido só com a busca densa"), "violet"))
LEXICAL_ONLY = TIERS.declare(Tier("lexical_only", True, False, Text("Answered with BM25 alone (no dense search)",
                                                                    "Respondido só com o BM25 (sem busca densa)"),
                                  "orange"))
REFUSAL = TIERS.declare(Tier("refusal", False, False, Text("No answer: no evidence passed the gate",
                                                           "Sem resposta: nenhuma evidência passou o portão"), "red"))
