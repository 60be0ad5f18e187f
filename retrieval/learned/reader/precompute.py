"""Every chunk of a corpus read once by the reader at index time, its token states kept in the store.

``retrieval index`` (and the app's indexing, in the background) calls :func:`store_corpus_states` after the
vectors are synced: a question on an indexed corpus then reads its candidates' states from disk and encodes no
passage (its cost is one question encoding and the MaxSim products). The work is resumable: a passage the store
holds is never encoded again, so an index killed half-way resumes where it stopped. A lossy codec is fitted on
the first passages' states (at most :data:`FIT_PASSAGES`, spread over the corpus) before anything is stored.

Before encoding, the corpus' states are sized (its passages' tokens times the codec's bytes a token): a corpus
whose states cannot fit under ``reader_state_mb`` is refused in one line (:class:`StatesDoNotFit`) naming what
it needs and the codecs that would fit, instead of filling the store and leaving every later question cold.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ...core.errors import RetrievalError
from .codecs import AUTO, AUTO_CODECS, StateCodec
from .states import PassageText, StoreChoice, as_passage, auto_limit

#: Passages whose states fit a lossy codec (spread over the corpus; about 17,000 token rows at 125 tokens).
FIT_PASSAGES = 1_000
#: Passages encoded between two progress reports (and two chances to stop).
BATCH_PASSAGES = 64


class StatesDoNotFit(RetrievalError):
    """The corpus' reader states would not fit under ``reader_state_mb``."""


@dataclass(frozen=True)
class StatesReport:
    """What :func:`store_corpus_states` did."""

    passages: int          # distinct non-blank passages of the corpus
    held_before: int       # already in the store (not encoded again)
    encoded: int           # encoded now
    stored: int            # held after
    bytes_per_passage: float
    codec: str
    seconds: float
    reason: str = ""       # why nothing was stored ("" when the store holds every passage)
    auto: str = ""         # how ``auto`` chose the codec ("" when the setting named it)

    def line(self) -> str:
        """One line for the index command."""
        if self.reason:
            return f"reader states: none stored ({self.reason})"
        rate = f", {self.encoded / self.seconds:.1f} passages/s" if self.encoded and self.seconds > 0 else ""
        chosen = f"; {self.auto}" if self.auto else ""
        return (f"reader states: {self.stored} of {self.passages} passages stored ({self.codec}, "
                f"{self.bytes_per_passage / 1024:.1f} KB a passage{chosen}); {self.encoded} encoded now, "
                f"{self.held_before} already held{rate}")


def auto_choice(store, choice: StoreChoice | None) -> str:
    """How ``auto`` chose ``store``'s codec by ``choice``, for the index line ("" when the setting named the
    codec, or no choice is known)."""
    if choice is None or choice.chosen != AUTO or choice.codec != store.codec.spec:
        return ""
    most = auto_limit(choice.limit_mb, store.hidden)
    return (f"auto: {AUTO_CODECS[0]} up to {most:,} passages under RETRIEVAL_READER_STATE_MB="
            f"{choice.limit_mb:,.0f}, {AUTO_CODECS[1]} past them")


def needed_bytes(reader, texts: Sequence) -> int:
    """What the states of ``texts`` (strings, passages or chunks) take in ``reader``'s store: their tokens read
    times its bytes a row."""
    read, texts = reader.passage_tokens_read, [as_passage(t, reader.template).text for t in texts]
    tokens = 0
    for start in range(0, len(texts), 1024):   # a thousand texts' token ids at a time, not the corpus' at once
        tokens += sum(max(1, min(len(ids), read)) for ids in reader.tok.content_ids(texts[start:start + 1024]))
    return tokens * reader.store.codec.code_size


def check_fit(reader, texts: Sequence) -> None:
    """Refuse (one line) a corpus whose states cannot fit under the store's limit.

    Raises:
        StatesDoNotFit: naming the bytes needed, the limit, and the setting and codecs to change.
    """
    store = reader.store
    need = needed_bytes(reader, texts)
    if need <= store.limit_bytes:
        return
    per_token = need / max(1, store.codec.code_size)
    hidden = reader.encoder.config["hidden"]
    fits = [name for name in ("sq8", "pq128x5", "pq96x6", "pq64", "pq32")   # bytes a token as each writes them
            if per_token * StateCodec.build(name, hidden).code_size <= store.limit_bytes]
    hint = f"; codecs that fit: {', '.join(fits)} (RETRIEVAL_READER_STATE_CODEC)" if fits else ""
    raise StatesDoNotFit(f"the reader states of {len(texts)} passages need {need / 2**20:,.0f} MB as "
                         f"{store.codec.spec}, over RETRIEVAL_READER_STATE_MB={store.limit_bytes / 2**20:,.0f}: "
                         f"raise it{hint}, or set RETRIEVAL_READER_STATES_AT_INDEX=false")


def put_states(reader, passages: Sequence[PassageText], rows: Sequence[np.ndarray]) -> int:
    """Store ``passages``' states in ``reader``'s store, each with its sentence spans; returns how many were new."""
    return reader.store.put_many({p.key: (r, reader.sentence_spans(p.text)) for p, r in zip(passages, rows)})


def store_corpus_states(reader, texts: Sequence,
                        on_progress: Callable[[int, int, float], None] | None = None,
                        should_stop: Callable[[], bool] = lambda: False,
                        choice: StoreChoice | None = None) -> StatesReport:
    """Encode every passage of ``texts`` the reader's store does not hold, and store it.

    Args:
        reader: a :class:`~.interaction.MaxSimReader` with a store.
        texts: the corpus' chunks (read by the reader's template), passages or texts (blank ones and repeats are
            skipped).
        on_progress: called with ``(done, total, eta seconds)`` after each batch.
        should_stop: checked between batches (the process' exit): what was stored stays stored.
        choice: the Workbench's choice the store was opened by (the report says how ``auto`` chose its codec).

    Raises:
        StatesDoNotFit: the corpus' states cannot fit under the store's limit (:func:`check_fit`).
    """
    started = time.perf_counter()
    unique = list({p.key: p for p in (as_passage(t, reader.template) for t in texts) if p.text.strip()}.values())
    store = reader.store
    if store is None:
        return StatesReport(len(unique), 0, 0, 0, 0.0, "none", 0.0, "the reader has no state store")
    check_fit(reader, unique)
    keys = [p.key for p in unique]
    held = store.held(keys)
    todo = [p for p in unique if p.key not in held]
    encoded_before = reader.passages_encoded
    done = 0

    def outcome(reason: str = "") -> StatesReport:
        passages = store.count()
        return StatesReport(len(unique), len(held), reader.passages_encoded - encoded_before, len(store.held(keys)),
                            store.size_bytes() / passages if passages else 0.0, store.codec.spec,
                            time.perf_counter() - started, reason or store.reason, auto_choice(store, choice))

    def encoded(batch: Sequence[PassageText]) -> list[np.ndarray]:
        """``batch``'s states, computed (never from the memory cache: a passage read before the store could keep
        it is stored too), with the progress reported."""
        nonlocal done
        rows = [s.numpy() for s in reader.token_states(batch, is_query=False)]
        reader.passages_encoded += len(batch)
        done += len(batch)
        if on_progress is not None:
            spent = time.perf_counter() - started
            on_progress(done, len(todo), spent / done * (len(todo) - done))
        return rows

    def stored(batch: Sequence[PassageText], rows: Sequence[np.ndarray]) -> None:
        put_states(reader, batch, rows)

    if on_progress is not None:
        on_progress(0, len(todo), float("nan"))
    if todo and not store.trained:  # a lossy codec: fitted on passages spread over the corpus first
        step = max(1, len(todo) // FIT_PASSAGES)
        sample = todo[::step][:FIT_PASSAGES]
        rows: list[np.ndarray] = []
        for start in range(0, len(sample), BATCH_PASSAGES):
            if should_stop():   # stopped before the codec is fitted: nothing stored, nothing to resume
                return outcome("stopped before the codec was fitted")
            rows += encoded(sample[start:start + BATCH_PASSAGES])
        if not store.fit(np.concatenate(rows)):
            return outcome(f"too few token rows to fit {store.codec.spec} ({sum(len(r) for r in rows)})")
        stored(sample, rows)
        kept = {p.key for p in sample}
        todo = sample + [p for p in todo if p.key not in kept]
    for start in range(done, len(todo), BATCH_PASSAGES):
        if should_stop():
            break
        batch = todo[start:start + BATCH_PASSAGES]
        stored(batch, encoded(batch))
    return outcome()


class StateSink:
    """The states an index's one encoder pass computes (:meth:`~.interaction.MaxSimReader.encode_passages`), stored
    as each batch is done: what :func:`store_corpus_states` would have encoded again is already held.

    A lossy codec is fitted first: the states are held in memory until :data:`FIT_PASSAGES` passages have come
    (or the pass ends: :meth:`close`), the codec fitted on them, then stored. A corpus whose states cannot fit
    (:func:`check_fit`) stores nothing here (:func:`store_corpus_states` then refuses it in one line)."""

    def __init__(self, reader, passages: Sequence) -> None:
        self.reader, self.store = reader, reader.store
        self.pending: list[tuple[PassageText, np.ndarray]] = []
        self.stored = 0
        self.reason = "" if self.store is not None else "the reader has no state store"
        if self.store is not None:
            try:
                check_fit(reader, passages)
            except StatesDoNotFit as exc:
                self.reason = str(exc)

    @property
    def on(self) -> bool:
        return not self.reason and self.store is not None and self.store.enabled

    def add(self, passages: Sequence[PassageText], states: Sequence) -> None:
        """Keep the states of ``passages`` (blank ones have nothing to keep)."""
        if not self.on:
            return
        items = [(p, s.numpy() if hasattr(s, "numpy") else np.asarray(s)) for p, s in zip(passages, states)
                 if p.text.strip()]
        if not self.store.trained:
            self.pending += items
            if len(self.pending) >= FIT_PASSAGES:
                self._fit()
            return
        self._put(items)

    def close(self) -> None:
        """Fit a lossy codec on what came (fewer than :data:`FIT_PASSAGES` passages) and store it."""
        if self.on and self.pending:
            self._fit()

    def _fit(self) -> None:
        items, self.pending = self.pending, []
        if self.store.fit(np.concatenate([rows for _, rows in items])):
            self._put(items)

    def _put(self, items: Sequence[tuple[PassageText, np.ndarray]]) -> None:
        self.stored += put_states(self.reader, [p for p, _ in items], [rows for _, rows in items])
