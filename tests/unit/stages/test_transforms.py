"""Query transforms: invariants (codes, negations, conditions), local adapters, decomposition, self-query, MMR."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.errors import one_line

from retrieval.core.codes import codes, invariant_flags
from retrieval.core.errors import InvalidGlossary, RetrievalError
from retrieval.core.llm import LLMFailure
from retrieval.core.types import ScoredItem
from retrieval.core.llm import EMPTY, HTTP
from retrieval.pipeline.expand import variant_texts
from retrieval.stages.mmr import mmr
from retrieval.stages.transforms import (
    TRANSFORMS,
    Glossary,
    checked,
    decompose,
    local_hyde,
    local_multi_query,
    local_rewrite,
    self_query_filters,
)

NEGATION_Q = "O PX-7 não foi ativado apesar do pagamento"
GLOSSARY = Glossary({"pgto": "pagamento", "nf": "nota fiscal"}, {"ativacao": "ativação"},
                    {"reembolso": ["estorno"]})


def test_local_rewriter_keeps_code_and_negation():
    rewritten = local_rewrite("O PX-7 não foi ativado apesar do pgto, sem ativacao", GLOSSARY)
    assert rewritten == "O PX-7 não foi ativado apesar do pagamento, sem ativação"
    assert invariant_flags(NEGATION_Q, rewritten) == ()


def test_a_rewriter_that_drops_code_or_negation_is_caught_and_falls_back():
    assert invariant_flags(NEGATION_Q, "ativar PX-7 após pagamento") == ("negation:não", "negation:apesar")
    assert invariant_flags(NEGATION_Q, "O PX-17 não foi ativado apesar do pagamento") == ("code:PX-7",)
    assert invariant_flags("reembolso exceto NF-e, a menos que", "reembolso NF-e") == (
        "condition:exceto", "condition:a menos que")
    query = checked(NEGATION_Q, "ativar PX-7 após pagamento", "rewrite", fallback=True)
    assert query.text == NEGATION_Q and query.kind == "rewrite"
    assert query.flags == ("negation:não", "negation:apesar", "fallback:original")
    kept = checked(NEGATION_Q, "ativar PX-7 após pagamento", "rewrite", fallback=False)
    assert kept.text == "ativar PX-7 após pagamento" and "fallback:original" not in kept.flags


def test_codes_and_hyphenated_words():
    assert codes("PX-7, PX-17, E-42, NF-e e e-mail pós-venda") == ["PX-7", "PX-17", "E-42", "NF-e"]
    # hyphenated Portuguese words are words: the rewriter never splits them or treats '-' as an operator
    assert local_rewrite("guarda-chuva e e-mail do pgto", GLOSSARY) == "guarda-chuva e e-mail do pagamento"


def test_multi_query_and_hyde_local_adapters():
    variants = local_multi_query("quero reembolso do PX-7 sem pgto", GLOSSARY)
    assert variants == ["quero reembolso do PX-7 sem pagamento", "quero reembolso do PX-7 sem pagamento (estorno)",
                        "quero reembolso PX-7 sem pgto"]
    assert all(invariant_flags("quero reembolso do PX-7 sem pgto", v) == () for v in variants)
    passage = local_hyde(NEGATION_Q)
    assert passage.startswith("[HIPÓTESE DE BUSCA") and "não é evidência" in passage and NEGATION_Q in passage


def test_decompose_two_part_and_compare_questions():
    assert decompose("Qual o prazo de ativação do PX-7 e qual o prazo do reembolso?") == [
        "Qual o prazo de ativação do PX-7?", "qual o prazo do reembolso?"]
    assert decompose("Qual a diferença entre o PX-7 e o PX-17?") == ["Qual a diferença o PX-7?",
                                                                     "Qual a diferença o PX-17?"]
    assert decompose("O plano renova sozinho?") == []


def test_self_query_draws_year_and_doc_type_never_tenant():
    values = {"tenant": ["lumen", "ventura"], "year": [2023, 2024], "doc_type": ["faq", "manual"]}
    found = self_query_filters("No manual de 2024 da ventura, o PX-7 tem garantia?", values, "tenant")
    assert found == {"year": [2024], "doc_type": ["manual"]}


def _items(scores):
    return [ScoredItem(f"c{i}", f"p{i}", i + 1, s) for i, s in enumerate(scores)]


def test_mmr_lambda_one_is_identity_and_lambda_zero_diversifies():
    items = _items([0.9, 0.8, 0.7, 0.6])
    same = np.array([1.0, 0.0])
    other = np.array([0.0, 1.0])
    vectors = {"c0": same, "c1": same, "c2": other, "c3": same}
    assert [i.chunk_id for i in mmr(items, vectors, 1.0, 4)] == ["c0", "c1", "c2", "c3"]
    # λ = 0.5: after c0, c1 scores 0.5·(2/3) − 0.5·1 < c2's 0.5·(1/3) − 0 → c2 comes second.
    assert [i.chunk_id for i in mmr(items, vectors, 0.5, 2)] == ["c0", "c2"]
    with pytest.raises(ValueError):
        mmr(items, vectors, 1.5, 2)


class _FailingLLM:
    def run(self, technique, question):
        raise TimeoutError("the server's message, which may quote the request")


def test_variant_texts_report_the_llm_fallback():
    glossary = Glossary({"pgto": "pagamento"}, {}, {})
    texts, why = variant_texts(TRANSFORMS.get("rewrite"), "PX-7 sem pgto", glossary, _FailingLLM())
    assert texts == [local_rewrite("PX-7 sem pgto", glossary)]
    assert why.text() == "the LLM failed (TimeoutError); the local adapter wrote this query"
    assert variant_texts(TRANSFORMS.get("rewrite"), "PX-7 sem pgto", glossary, None)[1] is None  # no LLM: no fallback

    class Refusing:
        def __init__(self, failure):
            self.failure = failure

        def run(self, technique, question):
            raise self.failure

    texts, why = variant_texts(TRANSFORMS.get("hyde"), "PX-7", glossary, Refusing(LLMFailure(HTTP(status=500))))
    assert texts == [local_hyde("PX-7")] and why.text() == "the LLM failed (HTTP 500); the local adapter wrote this query"
    why = variant_texts(TRANSFORMS.get("multi_query"), "PX-7", glossary, Refusing(LLMFailure(EMPTY(), refused=True)))[1]
    assert why.text() == "the LLM reply was refused (empty reply); the local adapter wrote this query"


@pytest.mark.parametrize("content, match", [
    ('["pgto", "pagamento"]', "JSON object"),
    ('{"abbreviations": {"pgto": "pagamento"', "invalid glossary JSON"),
    ('{"synonyms": {"reembolso": "estorno"}}', "synonyms of 'reembolso' must be a list"),
    ('{"synonyms": {"reembolso": [1]}}', "must be a list of texts"),
    ('{"abbreviations": ["pgto"]}', "'abbreviations' must be an object"),
    ('{"spelling": {"x": 3}}', "must be a non-empty text"),
    ('{"synonym": {}}', "unknown glossary section"),
])
def test_invalid_glossary_is_one_line_naming_the_file(tmp_path, content, match):
    """Regression: an invalid glossary was not refused in one line naming its file."""
    path = tmp_path / "glossary.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidGlossary, match=match) as err:
        Glossary.load(path)
    assert str(path) in one_line(err.value)
    assert isinstance(err.value, RetrievalError)
