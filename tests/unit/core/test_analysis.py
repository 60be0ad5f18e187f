"""BM25 analysers: Snowball stems of plain words, codes and numbers kept whole, ``fold`` = ``tokenize``."""

from __future__ import annotations

import pytest

from retrieval.core.analysis import ANALYZERS, analyze, analyzer_function, stem, stem_groups
from retrieval.core.text import tokenize


def test_portuguese_stems_checked_by_hand():
    # snowballstemmer 3.1.1, Portuguese, on folded words (checked against the package before writing them)
    assert [stem(w, "portuguese") for w in ("prazo", "prazos", "contratos", "pagamento", "ativar")] == [
        "praz", "praz", "contrat", "pagament", "ativ"]
    assert stem("rescisao", "portuguese") == "rescisa"  # folded: Snowball's ã rule does not apply
    assert [stem(w, "english") for w in ("running", "contracts")] == ["run", "contract"]


def test_fold_is_tokenize_unchanged():
    text = "Os prazos do contrato PX-7, Lei 8.112/90"
    assert analyze(text) == analyze(text, "fold") == tokenize(text)
    assert analyzer_function("fold") is tokenize


def test_singular_and_plural_meet_and_accents_still_fold():
    assert analyze("prazo", "portuguese") == analyze("Prazos", "portuguese") == ["praz"]
    assert analyze("Rescisão", "portuguese") == analyze("rescisao", "portuguese")


def test_codes_numbers_and_other_scripts_stay_whole():
    tokens = analyze("O PX-7 ativa em 72 horas; Lei 8.112/90; E-42; Москва; guarda-chuva", "portuguese")
    assert tokens == ["px-7", "px", "7", "ativ", "72", "lei", "8", "112", "90", "e-42", "42", "москва",
                      "guarda-chuva", "guard", "chuv"]
    assert analyze("v2 abc123", "portuguese") == ["v2", "abc123"]  # identifiers with a digit are never stemmed


def test_negations_and_conditions_survive_stemming_as_terms():
    assert analyze("não nunca sem exceto", "portuguese") == [stem(w, "portuguese")
                                                             for w in ("nao", "nunca", "sem", "exceto")]


def test_unknown_analyser_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"unknown BM25 analyser 'klingon' \(use one of fold, portuguese, english\)"):
        analyze("prazo", "klingon")
    assert ANALYZERS == ("fold", "portuguese", "english")


def test_stem_groups_name_the_words_behind_each_stem():
    assert stem_groups("prazo e prazos do PX-7", "portuguese") == {
        "praz": ["prazo", "prazos"], "px-7": ["px-7"], "px": ["px"], "7": ["7"]}
    assert stem_groups("prazo", "fold") == {}
