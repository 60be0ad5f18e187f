"""The rerankers (retrieval/stages/rerank): a reranker spec parsed once into its kind and name, and the cross-encoder's
record of each pair it cut at its limit."""

from __future__ import annotations

from retrieval.stages.rerank import RerankerSpec


def test_reranker_spec_is_parsed_once():
    assert [(p.kind, p.name) for p in map(RerankerSpec.parse, ["none", " OFF ", "", "bi-encoder:use-m3",
                                                                 "BAAI/bge-reranker-base"])] == \
        [("none", ""), ("none", ""), ("none", ""), ("bi-encoder", "use-m3"), ("cross-encoder", "BAAI/bge-reranker-base")]


class _WordTokenizer:
    """Whitespace 'tokens' plus [CLS] [SEP] [SEP], like a BERT pair encoding."""

    model_max_length = 512

    def __call__(self, first, second, **_):
        return {"input_ids": [[0] * (len(a.split()) + len(b.split()) + 3) for a, b in zip(first, second)]}


class _TruncatingModel:
    max_length = 10
    tokenizer = _WordTokenizer()

    def predict(self, pairs, show_progress_bar=False):
        # Reads the first max_length tokens only: two passages that differ past the limit score the same.
        return [float(len(" ".join([q, p]).split()[: self.max_length - 3])) for q, p in pairs]


def test_cross_encoder_records_truncation_per_item():
    """Regression: a cross-encoder scored pairs cut at its limit and the trace did not say which."""
    from retrieval.stages.rerank.cross_encoder import CrossEncoderReranker

    reranker = CrossEncoderReranker("fake", _TruncatingModel())
    passages = ["um dois", "um dois tres quatro cinco seis sete", "um dois tres quatro cinco seis oito"]
    scores, records = reranker.score_items("qual prazo", passages)
    assert scores[1] == scores[2]  # identical up to the limit
    assert records == [{"truncated": False, "tokens": 7, "limit": 10},
                       {"truncated": True, "tokens": 12, "limit": 10},
                       {"truncated": True, "tokens": 12, "limit": 10}]
    assert reranker.truncation("qual prazo", passages[:1]) == records[:1]
