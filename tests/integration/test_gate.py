"""The gate on the lab corpus with the real embedding model: a code the question names must be in the evidence (in
any spelling of it), the refusal says one reason, and the cosines it reads are the stored vectors'."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_code_identity_gate_abstains_on_an_unknown_code(lab_bench):
    trace = lab_bench.ask("Qual o prazo de ativação do PX-70?", {"tenant": "lumen"})
    assert trace.tier == "refusal" and "PX-70" in trace.tier_reason
    assert trace.gate["missing_codes"] == ["PX-70"] and trace.answer.abstained and trace.final == []
    # Without the code check, the learned support gate still refuses (it reads code identity too) ...
    learned = lab_bench.ask("Qual o prazo de ativação do PX-70?", {"tenant": "lumen"},
                            settings=lab_bench.settings.with_overrides(require_codes=False))
    assert learned.tier == "refusal" and learned.gate["support"]["passes"] is False
    # ... and with both off, the cosine gate alone lets it through.
    loose = lab_bench.ask("Qual o prazo de ativação do PX-70?", {"tenant": "lumen"},
                          settings=lab_bench.settings.with_overrides(require_codes=False, support_gate=False))
    assert loose.tier == "full" and loose.final
    # a code of the other tenant is unknown here too
    assert lab_bench.ask("Como resolver o erro VT-3 no PX-17?", {"tenant": "lumen"}).tier == "refusal"
    assert lab_bench.ask("Como resolver o erro VT-3?", {"tenant": "ventura"}).tier == "full"


def test_gate_cosines_equal_stored_vectors_for_dense_and_lexical_finds(lab_bench, lab_questions):
    """The gate reuses the dense list's cosine when it can and reads stored vectors otherwise: same values."""
    import numpy as np

    seen_lexical_only = False
    for q in lab_questions[:12]:
        trace = lab_bench.ask(q.question, dict(q.filters))
        dense_ids = {i.chunk_id for i in trace.dense.items}
        seen_lexical_only |= any(f.chunk_id not in dense_ids for f in trace.final)
        if not trace.final:
            continue
        q_vec = lab_bench.question_vector(q.question, trace.cache["query_vector_from"])   # the request's own
        stored = lab_bench.state.store.vectors([f.chunk_id for f in trace.final])
        for f in trace.final:
            assert f.similarity == pytest.approx(float(np.dot(stored[f.chunk_id], q_vec)), abs=1e-5)
    assert seen_lexical_only, "no BM25-only chunk reached the gate in these questions: the test checks one path"


def test_code_identity_refusal_gives_one_reason(lab_bench):
    """Regression: a code-identity refusal's answer note gave a second, wrong reason beside the gate's."""
    trace = lab_bench.ask("Qual o prazo de ativação do PX-70?", {"tenant": "lumen"})
    assert trace.tier == "refusal" and "code identity gate" in trace.tier_reason
    assert trace.answer.note == trace.tier_reason == trace.gate["reason"]


@pytest.mark.parametrize("question", ["Como ativar o PX\u201170?", "Como ativar o PX\u201370?",
                                      "Como ativar o \uff30\uff38-\uff17\uff10?"])
def test_a_code_spelled_with_another_dash_or_full_width_is_the_same_code(lab_bench, question):
    """Regression: a code spelled with a non-breaking hyphen, an en dash or full-width letters slipped past the gate."""
    trace = lab_bench.ask(question, {"tenant": "lumen"})
    assert trace.question == "Como ativar o PX-70?"
    assert trace.tier == "refusal" and trace.gate["missing_codes"] == ["PX-70"]


def test_capitalised_e_mail_is_not_a_code_for_the_gate(lab_bench):
    """Regression: "E-mail" at the start of a sentence was read as a code the evidence must hold."""
    lower = lab_bench.ask("e-mail de confirmação não chegou", {"tenant": "lumen"})
    upper = lab_bench.ask("E-mail de confirmação não chegou", {"tenant": "lumen"})
    assert upper.gate["missing_codes"] == [] and lower.gate["missing_codes"] == []
    assert upper.tier == lower.tier
    # BM25 reads folded tokens (identical lists); the embedder is cased, so the dense cosines differ a little
    # and the learned order may too: the two answers about an e-mail that did not come (the NF-e's, the licence
    # key's) lead both, in either order.
    assert [i.chunk_id for i in upper.lexical.items] == [i.chunk_id for i in lower.lexical.items]
    assert {i.chunk_id for i in upper.final[:2]} == {i.chunk_id for i in lower.final[:2]} \
        == {"lumen-nfe#0", "lumen-px7-nao-ativado#0"}
