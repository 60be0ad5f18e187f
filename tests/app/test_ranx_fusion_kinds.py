"""The app offers ranx's fusion kinds in its picker and its provenance card writes their terms out."""

from __future__ import annotations

import re

from helpers.apptest import assert_ok, page

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def test_the_picker_offers_combmnz_and_the_card_writes_n_times_norm() -> None:
    at = page(q=PX7, tenant="lumen", fusion="combmnz")
    assert_ok(at)
    options = at.selectbox(key="fusion").options
    for label in ("CombMNZ (min-max normalized)", "ISR (inverse square rank)",
                  "weighted sum (z-score normalized, ranx)", "weighted sum (sum normalized, ranx)"):
        assert label in options
    assert at.selectbox(key="fusion").value == "combmnz"
    cards = [m.value for m in at.markdown if m.value.startswith("Fused #") and "(CombMNZ (min-max normalized)): " in m.value]
    assert len(cards) == 1 and re.search(r"[12]·[01]\.\d{4}", cards[0]), cards


def test_the_card_writes_bordas_points_as_whole_numbers_and_combmax_as_the_largest_score() -> None:
    at = page(q=PX7, tenant="lumen", fusion="borda")
    assert_ok(at)
    assert {"BordaFuse (rank points)", "CombMAX (min-max normalized)"} <= set(at.selectbox(key="fusion").options)
    cards = [m.value for m in at.markdown if m.value.startswith("Fused #") and "(BordaFuse (rank points)): " in m.value]
    # e.g. "bm25 26 − 1 + 1 + dense 26 − 2 + 1 = **51**": N − rank + 1 per list, the total without decimals
    assert len(cards) == 1 and re.search(r"\d+ − \d+ \+ 1 .*= \*\*\d+(\.5)?\*\*$", cards[0]), cards
    at = page(q=PX7, tenant="lumen", fusion="combmax")
    cards = [m.value for m in at.markdown if m.value.startswith("Fused #") and "(CombMAX (min-max normalized)): " in m.value]
    assert len(cards) == 1 and re.search(r"max [01]\.\d{4} = \*\*[01]\.\d{4}\*\*$", cards[0]), cards
