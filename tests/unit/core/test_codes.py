"""Codes (retrieval/core/codes.py): a code needs evidence (digits, an acronym, or the corpus' own codes), and reads
the same in NFC and NFD."""

from __future__ import annotations

import unicodedata

from retrieval.core.codes import codes, corpus_codes, invariant_flags


def test_capitalised_hyphenated_words_are_not_codes():
    """Regression: capitalised hyphenated words (E-mail, T-shirt) were read as codes the evidence must hold."""
    assert codes("E-mail de confirmação não chegou") == []
    assert codes("T-shirt, K-pop, X-ray, E-book e Check-in") == []
    assert codes("PX-7, E-42, NF-e, USB-C e px-17") == ["PX-7", "E-42", "NF-e", "USB-C", "px-17"]
    assert invariant_flags("E-mail de confirmação não chegou", "email de confirmação não chegou") == ()
    assert codes("O X-Pro travou", known={"x-pro"}) == ["X-Pro"]  # a code the corpus itself uses
    texts = ["Emita a NF-e.", "O X-Pro e o K-pop. Veja o e-mail.", "E-mail enviado; k-pop tocando."]
    assert corpus_codes(texts) == frozenset({"nf-e", "x-pro"})


def test_codes_read_nfc_and_nfd_alike():
    """Regression (found by the property test): in NFD the accent of "À" is no word character, so "ÀA-0" was a code."""
    assert codes("ÀA-0") == codes(unicodedata.normalize("NFD", "ÀA-0")) == []
    assert codes(unicodedata.normalize("NFD", "Ativação do PX-7")) == ["PX-7"]
