"""A final document's other chunk in the answer's context (``context_siblings``) on the lab corpus: the PX-17
activation question's labelled span sits in the document's chunk that dedup removed; with the setting on, the
answer quotes it and cites it inside the context; off, the final list and the answer are as before."""

from __future__ import annotations

from retrieval.explain.grid import fates
from retrieval.explain.tables import movement_rows
from retrieval.offline.evaluation.diagnose import answer_holds_span
from retrieval.pipeline.view import TraceView

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict

QUESTION = "Qual o prazo de ativação do PX-17?"
SPAN = ["a ativação do PX-17 é concluída em até 72 horas"]


def test_the_documents_other_chunk_answers_when_the_context_carries_it(lab_bench) -> None:
    s = lab_bench.settings
    off = lab_bench.ask(QUESTION, {"tenant": "lumen"}, settings=s.with_overrides(context_siblings=0))
    on = lab_bench.ask(QUESTION, {"tenant": "lumen"}, settings=s.with_overrides(context_siblings=1))
    assert [f.sibling_of for f in off.final] == [None] * len(off.final)
    assert not answer_holds_span(off.answer.text, SPAN)

    assert [f.chunk_id for f in on.final[:len(off.final)]] == [f.chunk_id for f in off.final]
    assert [f.chunk_id for f in on.gated] == [f.chunk_id for f in off.final]  # what the gate passed, unchanged
    added = on.final[len(off.final):]
    assert added and all(f.sibling_of is not None for f in added)
    assert len({f.parent_id for f in added}) == len(added)  # one per document
    assert all(f.parent_id == off.final[f.sibling_of - 1].parent_id for f in added)
    assert "lumen-px17-ativacao#0" in {f.chunk_id for f in added}
    assert answer_holds_span(on.answer.text, SPAN)
    assert "lumen-px17-ativacao#0" in on.answer.citations
    assert set(on.answer.citations) <= {f.chunk_id for f in on.final}
    assert [n["note_code"]["code"] for n in (x.to_dict() for x in on.notes)] == ["select.siblings"]
    trace = on.to_dict()
    assert trace["final"][len(off.final)]["sibling_of"] == added[0].sibling_of
    moved = {r["chunk_id"]: r for r in movement_rows(view(trace))}
    assert moved["lumen-px17-ativacao#0"]["final_rank"] is None  # out of the final list, in the context only
    assert movement_rows(view(trace)) == movement_rows(view(off.to_dict()))
    fate, detail = fates(view(trace))["lumen-px17-ativacao#0"]
    assert (fate, detail) == ("dedup", {"kept": "lumen-px17-ativacao#1", "context": len(off.final) + 1 +
                                        [f.chunk_id for f in added].index("lumen-px17-ativacao#0")})
