"""Layer diagnosis of three constructed failures, one per layer, plus the ordering stages (real Trace objects)."""

from __future__ import annotations

from retrieval.core.reasons import raw
from retrieval.core.types import FinalItem, Question, RankedList, ScoredItem
from retrieval.offline.evaluation import diagnose
from retrieval.pipeline.workbench import Trace
from retrieval.stages.answer import Answer, abstention
from retrieval.stages.fusion import rrf


def lst(stage: str, kind: str, ids: list[str]) -> RankedList:
    return RankedList(stage, kind, tuple(ScoredItem(f"{p}#0", p, r, 1.0 / r) for r, p in enumerate(ids, start=1)))


def trace(lexical: list[str], dense: list[str], final: list[str], answer: Answer,
          reranked: list[str] | None = None) -> Trace:
    lex, den = lst("lexical", "bm25", lexical), lst("dense", "cosine", dense)
    fused = rrf({"bm25": lex, "dense": den})
    rr = RankedList("reranked", "none", ())
    if reranked is not None:
        rr = RankedList("reranked", "cosine", tuple(ScoredItem(f"{p}#0", p, r, 1.0 / r, fused_rank=r)
                                                     for r, p in enumerate(reranked, start=1)))
    items = [FinalItem(f"{p}#0", p, r, 1.0, 0.9, "texto") for r, p in enumerate(final, start=1)]
    return Trace(question="q", settings={}, models={}, index_id="idx", queries=[], filters={}, tier="rrf_only",
                 tier_why=raw(""), lexical=lex, dense=den, fused=fused, reranked=rr, final=items, lost_by_reranker=[],
                 answer=answer, timings_ms={}, costs={})


def answered(*chunk_ids: str) -> Answer:
    return Answer("resposta", [], list(chunk_ids), False, "test")


Q = Question("q1", "pergunta", "g", ("gold",))


def test_coverage_relevant_never_a_candidate():
    t = trace(["a", "b"], ["b", "c"], ["a", "b"], answered("a#0"))
    assert diagnose(Q, t, "parent", 2) == ("coverage", "candidates")


def test_ordering_at_fusion_candidate_below_the_cut():
    # gold is 3rd in BM25 only: fused a (1/61+1/62), b (1/62+1/61), then c, gold: cut at top_k = 2.
    t = trace(["a", "b", "gold"], ["b", "a", "c"], ["a", "b"], answered("a#0"))
    assert diagnose(Q, t, "parent", 2) == ("ordering", "fusion")


def test_ordering_at_reranker_and_gate():
    t = trace(["gold", "a"], ["gold", "b"], ["a", "b"], answered("a#0"), reranked=["a", "b", "gold"])
    assert diagnose(Q, t, "parent", 2) == ("ordering", "reranker")
    t = trace(["gold", "a"], ["gold", "b"], ["a"], answered("a#0"))  # gold in the fused top 2, refused by the gate
    assert diagnose(Q, t, "parent", 2) == ("ordering", "gate")


def test_generation_evidence_sent_but_not_cited_or_abstained():
    t = trace(["gold", "a"], ["gold"], ["gold", "a"], answered("a#0"))
    assert diagnose(Q, t, "parent", 2) == ("generation", "answer")
    t = trace(["gold", "a"], ["gold"], ["gold", "a"], abstention("test", "none"))
    assert diagnose(Q, t, "parent", 2) == ("generation", "abstained")
    t = trace(["gold", "a"], ["gold"], ["gold", "a"], answered("gold#0"))
    assert diagnose(Q, t, "parent", 2) == ("ok", None)


def test_unanswerable_question_answered_is_a_gate_failure():
    q = Question("u", "pergunta", "unanswerable", ())
    assert diagnose(q, trace(["a"], ["a"], ["a"], answered("a#0")), "parent", 1) == ("generation", "gate")
    assert diagnose(q, trace(["a"], ["a"], [], abstention("test", "none")), "parent", 1) == ("ok", None)


def test_the_right_document_without_the_labelled_fact_is_a_generation_failure_at_span():
    q = Question("z", "Qual o auxílio-moradia?", "g", ("gold",), answers=("R$ 1.200,00",))
    cited = trace(["gold"], ["gold"], ["gold"], Answer("O auxílio-alimentação é de R$ 371,00 [1].", [], ["gold#0"],
                                                       False, "test"))
    assert diagnose(q, cited, "parent", 1) == ("generation", "span")
    right = trace(["gold"], ["gold"], ["gold"], Answer("O auxílio-moradia é de R$ 1200,00 [1].", [], ["gold#0"],
                                                       False, "test"))
    assert diagnose(q, right, "parent", 1) == ("ok", None)
    no_spans = Question("z", "Qual o auxílio-moradia?", "g", ("gold",))
    assert diagnose(no_spans, cited, "parent", 1) == ("ok", None)   # nothing labelled to read the answer against


def test_span_check_folds_case_accents_markers_and_thousands_separators():
    from retrieval.offline.evaluation.diagnose import answer_holds_span, span_key, span_counts

    assert span_key("  Até 2 (DUAS) horas. ") == "ate 2 (duas) horas"
    assert span_key("R$ 1.200.000,50") == "r$ 1200000,50" and span_key("1 200 m²") == "1200 m2"
    assert span_key("Art. 3º [2] da Lei") == "art. 3o da lei"
    assert answer_holds_span("O estacionamento vale até 2 (duas) horas [1].", ["até 2 (duas) horas"]) is True
    assert answer_holds_span("Estacionar [1] até 2 (duas) [2] horas", ["até 2 (duas) horas"]) is True  # markers out
    assert answer_holds_span("Estacionar até 2 (duas) vezes por dia [1].", ["até 2 (duas) horas"]) is False
    assert answer_holds_span("A alíquota é de 5% [1].", ["3%", "5 %"]) is False
    assert answer_holds_span("A alíquota é de 5% [1].", ["5%"]) is True
    assert answer_holds_span("qualquer coisa", ["", "  "]) is None and answer_holds_span("x", []) is None
    rows = [{"answer_span": True}, {"answer_span": False}, {"answer_span": None}, {}]
    assert span_counts(rows) == {"checked": 2, "held": 1}
