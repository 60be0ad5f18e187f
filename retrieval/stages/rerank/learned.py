"""The learned ranker (kind ``ltr``): LambdaMART over the judge's candidate features of the rerank window
(:mod:`retrieval.learned.judge`). It reads the request's feature rows, not passages; each reranked item carries
its per-feature contributions (raw LambdaMART units; with ``bias`` they sum to its score). ``ltr`` is the model
folder of ``RETRIEVAL_JUDGE_PATH``; ``ltr:PATH`` another folder.
"""

from __future__ import annotations

from pathlib import Path

from ...core.kinds import Text
from ...core.reasons import Reason, declare
from ...core.types import RankedList, ScoredItem
from ...learned.judge.models import RERANKER_KIND, RERANKER_LABEL, JudgeModels, folder_fingerprint, load_judge
from ..judge import JudgeRun
from .base import COULD_NOT_LOAD, KINDS, LoadContext, RerankerKind, RerankerSpec, RerankInput, Unavailable, prefixed

LEARNED = declare("rerank.learned", en="learned ranker: {why}", pt="ranqueador aprendido: {why}")
LEARNED_LOADED = declare("rerank.learned_loaded",
                         en="the learned ranker (LambdaMART over BM25, dense, coverage and reader features; {kind}) "
                            "loaded",
                         pt="o ranqueador aprendido (LambdaMART sobre características BM25, densas, de cobertura e "
                            "do leitor; {kind}) carregado")
NO_ROWS = declare("rerank.no_feature_rows", en="no feature rows for this request",
                  pt="sem linhas de características para este pedido")


class LearnedReranker:
    """A loaded judge model folder as a reranker: :meth:`rerank` orders the window by its feature rows."""

    kind = RERANKER_KIND
    name = RERANKER_LABEL

    def __init__(self, models: JudgeModels, spec: str) -> None:
        self.models, self.spec = models, spec
        self.score_kind = models.score_kind

    def rerank(self, inp: RerankInput) -> RankedList:
        """The learned order of the window (:func:`ltr_rerank`).

        Raises:
            Unavailable: the request has no feature rows (the judge could not read what they need: its reason).
        """
        if inp.judged is None:
            raise Unavailable(LEARNED(why=inp.judge_why or NO_ROWS()))
        return ltr_rerank(self.models, inp.judged)


def judge_path(spec: str, default: Path | str) -> Path:
    """The model folder of an ``ltr`` / ``ltr:PATH`` spec (``default``: ``RETRIEVAL_JUDGE_PATH``)."""
    _, _, path = spec.partition(":")
    return Path(path.strip() or default)


def load(spec: RerankerSpec, context: LoadContext) -> tuple[LearnedReranker | None, Reason]:
    """``(reranker, LEARNED_LOADED)`` or ``(None, reason)`` for an ``ltr`` spec; never raises (the reason names
    the ranker in the page's language, not by its English label)."""
    models, why = load_judge(judge_path(spec.text, context.judge_path))
    if models is None:
        return None, COULD_NOT_LOAD(spec=spec.text, error=why)
    reranker = LearnedReranker(models, spec.text)
    return reranker, LEARNED_LOADED(kind=reranker.kind)


def cache_key(spec: RerankerSpec, context: LoadContext) -> str:
    """The spec and what its model folder holds (:func:`retrieval.learned.judge.models.folder_fingerprint`), so
    a model retrained into the same folder is loaded anew instead of the first one being served from the cache."""
    return f"{spec.text}@{folder_fingerprint(judge_path(spec.text, context.judge_path))}"


def ltr_rerank(models: JudgeModels, run: JudgeRun) -> RankedList:
    """The learned order of the window; each item keeps ``fused_rank`` and carries its contributions."""
    rows = run.rows
    if not rows.chunk_ids:
        return RankedList("reranked", models.score_kind, ())
    ex = models.rerank(rows.X)
    order = sorted(range(len(ex.raw)), key=lambda j: (-ex.raw[j], rows.fused_ranks[j]))
    items = tuple(ScoredItem(rows.chunk_ids[j], rows.parent_ids[j], rank, float(ex.raw[j]),
                             fused_rank=rows.fused_ranks[j],
                             feature_contributions={k: round(v, 6) for k, v in ex.contributions[j].items()})
                  for rank, j in enumerate(order, start=1))
    return RankedList("reranked", models.score_kind, items)


KINDS.declare(RerankerKind(
    name=RERANKER_KIND, label=Text("Learned ranker (LambdaMART over BM25, dense, coverage and reader features)",
                                   "Ranqueador aprendido (LambdaMART sobre características BM25, densas, de "
                                   "cobertura e do leitor)"),
    described=Text("{name} (the learned ranker, as hybrid+ltr)", "{name} (o ranqueador aprendido, como hybrid+ltr)"),
    parse=prefixed(RERANKER_KIND), load=load, priority=10, offer=RERANKER_KIND,
    score_label=Text("LambdaMART raw score (learned ranker; unbounded, higher is better)",
                     "nota LambdaMART bruta (ranqueador aprendido; sem limite, maior é melhor)"),
    tier=Text("Answered with the learned ranker over BM25 + dense",
              "Respondido com o ranqueador aprendido sobre BM25 + denso"),
    explains="features", reads_features=True, shares_judge=True, cache_key=cache_key,
    evaluation=("hybrid+ltr", {"reranker_model": RERANKER_KIND}), tuned=True))
