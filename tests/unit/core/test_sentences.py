"""The sentences an answer quotes (``whole_sentences``): Portuguese legal and common abbreviations, initials and
list markers end nothing; a real end still does; every sentence is a slice of the text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.core.text import split_sentences, whole_sentences


@pytest.mark.parametrize("text, expected", [
    ("Art. 3º Fica instituída a Zona Azul. O estacionamento vale até 2 (duas) horas.",
     ["Art. 3º Fica instituída a Zona Azul.", "O estacionamento vale até 2 (duas) horas."]),
    ("Nos termos do inc. II do art. 5º da Lei n. 8.666, o prazo é de 30 dias. Cabe recurso.",
     ["Nos termos do inc. II do art. 5º da Lei n. 8.666, o prazo é de 30 dias.", "Cabe recurso."]),
    ("O Sr. Prefeito e a Dra. Ana assinaram. A Profa. Lima também.",
     ["O Sr. Prefeito e a Dra. Ana assinaram.", "A Profa. Lima também."]),
    ("Os requisitos são: 1. ter idade; 2. ter renda. Depois, J. Silva aprova.",
     ["Os requisitos são: 1. ter idade; 2. ter renda.", "Depois, J. Silva aprova."]),
    ("IV. Das penalidades. A multa é de R$ 1.200,00.", ["IV. Das penalidades.", "A multa é de R$ 1.200,00."]),
    ("Ver p. 12 e pp. 13-14. Fim.", ["Ver p. 12 e pp. 13-14.", "Fim."]),
    ("O valor foi 30. Depois subiu!", ["O valor foi 30.", "Depois subiu!"]),
    ("Durou 30 min. Depois parou.", ["Durou 30 min.", "Depois parou."]),
    ("Pergunta? Resposta.\nOutra linha", ["Pergunta?", "Resposta.", "Outra linha"]),
])
def test_abbreviations_initials_and_list_markers_end_no_sentence(text, expected) -> None:
    assert whole_sentences(text) == expected


def test_the_chunker_keeps_its_own_units() -> None:
    """Chunk boundaries are not moved by the answer's splitter (an index would be embedded again)."""
    text = "Conforme o inc. II, vale. Dr. Silva assinou."
    assert split_sentences(text) == ["Conforme o inc.", "II, vale.", "Dr.", "Silva assinou."]
    assert whole_sentences(text) == ["Conforme o inc. II, vale.", "Dr. Silva assinou."]


@given(st.lists(st.sampled_from(["Art.", "3º", "inc.", "II", "Dr.", "Silva", "fim.", "1.", "a", "J.", "Ok!",
                                 "  ", "\n", "R$", "1.200,00.", "n.", "?", "texto"]), max_size=30))
def test_every_sentence_is_a_slice_of_the_text_and_nothing_is_lost(words) -> None:
    text = " ".join(words)
    sentences = whole_sentences(text)
    assert all(s and s == s.strip() and s in text for s in sentences)
    assert "".join("".join(sentences).split()) == "".join(text.split())
