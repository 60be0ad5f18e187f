"""Training and development pairs for the reader, from labelled question sets in the project's contracts.

Every passage is a chunk as the product cuts it (``chunk_tokens`` words, ``chunk_overlap`` shared), so the
reader learns on what it will read. For each question:

* **positive**: an answerable question with the chunk of its relevant parent that holds a gold span (the
  first chunk when no span survives translation);
* **mentions** (label 0): an unanswerable question with the chunk of the parent it was written against
  (``near``) that holds its plausible answer, else that parent's chunk sharing most of its words — the case
  word matching cannot tell from an answer;
* **hard negative** (label 0): an answerable question with the other parent's chunk of the same article that
  BM25 ranks first.

Splits are by article (the parent id before ``-p``), seeded by a hash, never by question: no article's
paragraphs are in two parts. ``heldout`` articles are never read by training or model selection.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from retrieval.core.text import fold, tokenize

SPLITS = ("train", "dev", "heldout")


@dataclass(frozen=True)
class Passage:
    chunk_id: str
    parent_id: str
    article: str
    text: str


@dataclass(frozen=True)
class Pair:
    """One (question, passage) pair with its label (1 = the passage answers the question)."""

    qid: str
    question: str
    chunk_id: str
    label: int
    kind: str      # positive | mentions | hard_negative
    source: str
    split: str


def article_of(parent_id: str) -> str:
    return parent_id.rsplit("-p", 1)[0] if "-p" in parent_id else parent_id


def split_of_article(source: str, article: str, dev_share: int = 20, heldout_share: int = 20) -> str:
    """A fixed split of an article by a hash of ``source/article``: ``heldout``, ``dev`` or ``train``."""
    bucket = int(hashlib.sha1(f"{source}/{article}".encode()).hexdigest(), 16) % 100
    return "heldout" if bucket < heldout_share else "dev" if bucket < heldout_share + dev_share else "train"


def chunk_words(text: str, size: int = 120, overlap: int = 30) -> list[str]:
    """The product's chunking: windows of ``size`` whitespace words, consecutive windows sharing ``overlap``."""
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)]
    step = max(1, size - overlap)
    return [" ".join(words[i:i + size]) for i in range(0, max(1, len(words) - overlap), step)]


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _norm(text: str) -> str:
    return " ".join(fold(text).split())


def _holding(chunks: list[Passage], spans: Iterable[str]) -> Passage | None:
    spans = [_norm(s) for s in spans if s and _norm(s)]
    return next((c for c in chunks if any(s in _norm(c.text) for s in spans)), None)


def _overlap(question: str, chunk: Passage) -> int:
    return len(set(tokenize(question)) & set(tokenize(chunk.text)))


class Article:
    """One article's chunks with a BM25 index over them (rank-bm25, the project's tokenizer)."""

    def __init__(self, chunks: list[Passage]):
        from rank_bm25 import BM25Okapi

        self.chunks = chunks
        self._bm25 = BM25Okapi([tokenize(c.text) or ["∅"] for c in chunks])

    def bm25(self, question: str) -> list[float]:
        return [float(s) for s in self._bm25.get_scores(tokenize(question) or ["∅"])]


def load_set(folder: Path, source: str, chunk_tokens: int = 120, chunk_overlap: int = 30,
             dev_share: int = 20, heldout_share: int = 20,
             heldout_parents: frozenset[str] = frozenset()) -> tuple[dict[str, Passage], list[Pair], list[dict], dict[str, Article]]:
    """Read ``corpus.jsonl`` and ``questions.jsonl`` of ``folder``.

    Returns:
        ``(chunks by id, pairs, questions, articles)``; each question dict gains ``split`` and ``article``.
    """
    by_parent: dict[str, list[Passage]] = {}
    for doc in _read_jsonl(folder / "corpus.jsonl"):
        art = article_of(doc["id"])
        by_parent[doc["id"]] = [Passage(f"{doc['id']}#{i}", doc["id"], art, text)
                                for i, text in enumerate(chunk_words(doc["text"], chunk_tokens, chunk_overlap))]
    articles: dict[str, list[Passage]] = {}
    for parent, chunks in by_parent.items():
        articles.setdefault(chunks[0].article, []).extend(chunks)
    indexes = {name: Article(chunks) for name, chunks in articles.items()}
    chunks = {c.chunk_id: c for cs in by_parent.values() for c in cs}
    pairs: list[Pair] = []
    questions = []
    for q in _read_jsonl(folder / "questions.jsonl"):
        parent = ((q.get("relevant") or q.get("near") or [None]))[0]
        if parent not in by_parent:
            continue
        art = by_parent[parent][0].article
        split = split_of_article(source, art, dev_share, heldout_share)
        if heldout_parents & set(q.get("relevant") or q.get("near") or []):
            split = "heldout"
        q = {**q, "split": split, "article": art}
        questions.append(q)
        question = q["question"]
        if q.get("relevant"):
            gold = _holding(by_parent[parent], q.get("answers") or []) or by_parent[parent][0]
            pairs.append(Pair(q["id"], question, gold.chunk_id, 1, "positive", source, split))
            index = indexes[art]
            scores = index.bm25(question)
            ranked = sorted(range(len(index.chunks)), key=lambda i: -scores[i])
            neg = next((index.chunks[i] for i in ranked if index.chunks[i].parent_id not in q["relevant"]), None)
            if neg is not None and split != "heldout" and neg.parent_id in heldout_parents:
                neg = None  # a held-out parent's text is never read in training, even as a negative
            if neg is not None:
                pairs.append(Pair(q["id"], question, neg.chunk_id, 0, "hard_negative", source, split))
        else:
            near = by_parent[parent]
            chunk = _holding(near, q.get("plausible_answers") or []) or max(near, key=lambda c: _overlap(question, c))
            pairs.append(Pair(q["id"], question, chunk.chunk_id, 0, "mentions", source, split))
    return chunks, pairs, questions, indexes


def evaluation_heldout_parents(data: Path, name: str) -> frozenset[str]:
    """The parents of set ``name`` that the evaluation's held-out questions need (FaQuAD's; none for the other
    sets, whose held-out part is by article): the reader never reads what the judge and the evaluation hold out."""
    if name != "faquad":
        return frozenset()
    from retrieval.core.split import split_of

    return frozenset(p for q in _read_jsonl(data / name / "questions.jsonl") if split_of(q["id"]) == "heldout"
                     for p in q["relevant"])


def load_sets(data: Path, names: Sequence[str]) -> Iterator[tuple[str, dict[str, Passage], list[Pair], list[dict],
                                                                  dict[str, Article]]]:
    """:func:`load_set` of each named folder of ``data``, in order, as ``(name, chunks, pairs, questions,
    articles)``, with :func:`evaluation_heldout_parents` held out."""
    for name in names:
        yield (name, *load_set(data / name, name, heldout_parents=evaluation_heldout_parents(data, name)))
