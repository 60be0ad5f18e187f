"""The real sentence-transformers CrossEncoder path, on a tiny seeded BERT the test builds itself.

The tiny model is random: its scores mean nothing. What is tested is the code path — loading from a local
folder without the network, scoring (question, chunk) pairs, the reranked list, its bound and its labels.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

NEGATION_Q = "O PX-7 não foi ativado apesar do pagamento, o que faço?"


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list("abcdefghijklmnopqrstuvwxyz0123456789-?,.")
    (folder / "vocab.txt").write_text("\n".join(vocab), encoding="utf-8")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=512, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)
    # The model reads at most 64 tokens of a pair, so lab chunks (about 130 tokens) are truncated.
    BertTokenizer(str(folder / "vocab.txt"), model_max_length=64).save_pretrained(folder)
    return folder


def test_cross_encoder_path_reranks_fused_candidates(lab_bench, tiny_cross_encoder):
    from sentence_transformers import CrossEncoder

    s = lab_bench.settings.with_overrides(reranker_model=str(tiny_cross_encoder), reranker_max_input=6)
    trace = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}, settings=s)
    assert trace.tier == "full", trace.tier_reason
    assert trace.models["reranker_kind"] == "cross-encoder"
    assert trace.reranked.score_kind == "cross-encoder score"
    items = trace.reranked.items
    assert len(items) == 6  # bounded by reranker_max_input
    assert sorted(i.fused_rank for i in items) == [1, 2, 3, 4, 5, 6]
    scores = [i.score for i in items]
    assert scores == sorted(scores, reverse=True)
    # The same model scored directly gives the same numbers for the same pairs.
    model = CrossEncoder(str(tiny_cross_encoder), device="cpu")
    texts = [lab_bench.state.chunk_by_id[i.chunk_id].text for i in items]
    direct = model.predict([(NEGATION_Q, t) for t in texts])
    assert scores == pytest.approx([float(x) for x in direct], rel=1e-4, abs=1e-5)
    assert trace.timings_ms["rerank"] > 0
    # The final list is read from the reranked order.
    assert trace.final[0].chunk_id == items[0].chunk_id or trace.final[0].similarity < s.min_similarity


def test_cross_encoder_truncation_is_recorded_per_item(lab_bench, tiny_cross_encoder):
    s = lab_bench.settings.with_overrides(reranker_model=str(tiny_cross_encoder), reranker_max_input=6)
    trace = lab_bench.ask(NEGATION_Q, {"tenant": "lumen"}, settings=s)
    records = [i.truncation for i in trace.reranked.items]
    assert len(records) == 6 and all(r is not None and r["limit"] == 64 for r in records)
    assert all(r["truncated"] == (r["tokens"] > 64) for r in records)
    cut = sum(r["truncated"] for r in records)
    assert cut >= 1 and trace.to_dict()["reranked"]["note"].startswith(f"{cut} of 6 passages were longer")
    assert trace.to_dict()["reranked"]["items"][0]["truncation"] == records[0]
