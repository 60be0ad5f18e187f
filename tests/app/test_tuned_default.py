"""AppTest: a corpus' adopted configuration (``tune --adopt``) is applied by the app and said under the tier line."""

from __future__ import annotations

from helpers.apptest import assert_ok, page, plain

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


def test_the_app_applies_and_shows_the_corpus_tuned_default(app_chroma_dir) -> None:
    from retrieval.core.paths import LAB_CORPUS
    from retrieval.offline import tuned
    from retrieval.settings import Settings

    base = Settings(_env_file=None, chroma_path=app_chroma_dir)
    stored = tuned.adopt(base, LAB_CORPUS, {"overrides": {"rrf_k": 30}, "questions": 44,
                                             "heldout": {"metric": "ndcg@10", "delta": 0.05, "p_value": 0.01}})
    try:
        at = page(q=PX7, tenant="lumen")
        assert_ok(at)
        notes = [plain(c.value) for c in at.caption if "tuned for this corpus" in plain(c.value)]
        assert notes and "on 44 questions, held-out ndcg@10 +0.050 (p=0.0100): rrf_k=30" in notes[0], notes
        at = page(q=PX7, tenant="lumen", rrf_k="45")  # a value the user chose in the link wins
        assert_ok(at)
        assert any("own rrf_k kept" in plain(c.value) for c in at.caption)
    finally:
        stored.unlink()
