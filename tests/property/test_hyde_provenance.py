"""Provenance by origin, generated: a corpus document that holds HyDE's hypothesis text (the exact passage the
local HyDE transform writes for the question, its template with or without the placeholders filled, or only its
"not evidence" label) is evidence like any other when it is retrieved, and the hypothesis itself never becomes
a context item, evidence or a citation (:func:`retrieval.pipeline.workbench._assert_from_index`). Before the fix a
substring check refused such a document as "hypothesis-only text reached the context".

A cheap hash embedder on one shared Chroma store; the gate is opened (``min_similarity=-1``, no learned gate,
no code gate, no reranker) and ``top_k`` covers every parent of the tenant, so whatever is retrieved is
selected and must reach the context whole.
"""

from __future__ import annotations

import json

import pytest
from helpers.fakes import HashEmbedder
from helpers.fuzz import assert_trace_invariants, budget
from hypothesis import event, given, settings
from hypothesis import strategies as st

from retrieval.core.errors import InvalidQuestion, RetrievalError
from retrieval.pipeline.workbench import Workbench, validate_question
from retrieval.settings import Settings
from retrieval.stages.transforms import HYDE_TEMPLATE, local_hyde

WORDS = ["senha", "cofre", "prazo", "reembolso", "ativação", "não", "garantia", "cartão", "compra", "quando",
         "exceto", "пароль", "密码", "κωδικός", "cafe\u0301", "Ñandú", "HIPÓTESE", "evidência", "{question}",
         "[HIPÓTESE", "—", "e", "qual"]
WORD = st.one_of(st.sampled_from(WORDS), st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8))
SENTENCE = st.lists(WORD, min_size=1, max_size=10).map(" ".join)
LABEL = HYDE_TEMPLATE.split("]", 1)[0] + "]"  # "[HIPÓTESE DE BUSCA — … não é evidência]"
#: How the holder document carries the hypothesis: as the local transform writes it for this very question,
#: the raw template, the template filled with other words, or its label alone.
HOLDS = ("exact", "template", "filled", "label")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("hyde-store")
    return root, Settings(chroma_path=root / "chroma", _env_file=None)


def _askable(question: str) -> bool:
    try:
        validate_question(question, 10_000)
    except InvalidQuestion:
        return False
    return True


@st.composite
def cases(draw):
    """(question, holds, records): the holder ``h0`` of tenant ``t`` holds the hypothesis text between generated
    words; up to three other documents of ``t`` and one of tenant ``u`` (which holds the same text)."""
    question = draw(SENTENCE.filter(_askable))
    asked = validate_question(question, 10_000)
    holds = draw(st.sampled_from(HOLDS))
    hypothesis = {"exact": local_hyde(asked), "template": HYDE_TEMPLATE,
                  "filled": HYDE_TEMPLATE.format(question=draw(SENTENCE), topic=draw(SENTENCE)),
                  "label": LABEL}[holds]
    holder = f"{draw(SENTENCE)} {hypothesis} {draw(SENTENCE)}"
    records = [{"id": "h0", "title": draw(SENTENCE), "text": holder, "metadata": {"tenant": "t"}},
               {"id": "u0", "title": "Outro", "text": holder + " Segredo de u.", "metadata": {"tenant": "u"}}]
    for n in range(draw(st.integers(0, 3))):
        records.append({"id": f"d{n}", "title": draw(SENTENCE), "text": draw(SENTENCE), "metadata": {"tenant": "t"}})
    return question, holds, hypothesis, records


@settings(max_examples=budget(12), deadline=None)
@given(case=cases(), others=st.lists(st.sampled_from(["rewrite", "multi_query", "decompose"]), unique=True,
                                     max_size=2))
def test_a_document_holding_the_hypothesis_is_evidence_and_the_hypothesis_never_is(store, case, others):
    question, holds, hypothesis, records = case
    root, base = store
    path = root / "corpus.jsonl"  # one path: every example re-syncs the same collection
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), encoding="utf-8")
    bench = Workbench(base, embedder=HashEmbedder(), progress=False)
    state = bench.load_corpus(path)
    assert state.store is not None, state.store_reason
    s = base.with_overrides(transforms=("hyde", *others), min_similarity=-1.0, support_gate=False,
                            evidence_model=False, require_codes=False, reranker_model="none", top_k=10)
    try:
        trace = bench.ask(question, {"tenant": "t"}, settings=s)
    except RetrievalError as exc:  # the project's own refusal, one line (never the old internal error)
        assert str(exc) and "\n" not in str(exc)
        event(f"refused: {type(exc).__name__}")
        return
    event(f"holds: {holds}")
    # The hypothesis is a query, marked where it is made: the local transform's passage for this question.
    # (A question decompose splits is fused part by part: HyDE is then not run, and its query says so.)
    (hyde,) = [q for q in trace.queries if q.kind == "hyde"]
    if "skipped:decomposed" in hyde.flags:
        event("hyde skipped: decomposed")
        assert hyde.text == trace.question and not hyde.hypothesis_only
    else:
        assert hyde.hypothesis_only and hyde.text == local_hyde(trace.question)
    assert not any(q.hypothesis_only for q in trace.queries if q.kind != "hyde")
    # Every item anywhere is an indexed chunk of tenant t; citations name final chunks only.
    assert_trace_invariants(trace, state.chunk_by_id, {"tenant": ["t"]})
    for item in trace.final:  # the context is the index's text, word for word: never the hypothesis passage
        assert item.text == state.chunk_by_id[item.chunk_id].text
    indexed = {chunk.text for chunk in state.chunk_by_id.values()}
    assert hyde.text in indexed or all(item.text != hyde.text for item in trace.final)
    # What was selected is the context (the gate is open): nothing is dropped for holding the hypothesis, and
    # the holder, within reach of every list (top_k covers the tenant), is evidence.
    assert [f.chunk_id for f in trace.final] == [i.chunk_id for i in trace.selected]
    assert trace.tier != "refusal", trace.tier_reason
    assert "h0" in {f.parent_id for f in trace.final}
    assert not any("hypothesis" in n["note"] for n in trace.notes), trace.notes
