"""An index' encoding on a Ray cluster, when one machine is not enough (``index --ray ADDRESS``).

The chunks to embed go to Ray Data as rows (``head``, ``text``, ``tail``: :class:`~.states.PassageText`) and through
``map_batches`` over a pool of encoder actors, one per CPU (or GPU) given, each loading the reader's graph once
(:class:`Encoder`: the same weights file, precision and ONNX graph as a single process, so the vectors and states
are the ones it would compute). Results stream back to the driver batch by batch, which writes them as they come
(the vector store, Milvus or Chroma, and the reader's state store): a stopped index keeps every batch written and
the next one sends only the rest. Ray Data restarts an actor whose process dies and runs its batch again
(``max_restarts``/``max_task_retries`` -1, its defaults for actor pools), so a killed worker loses no chunk.

Install with ``make ray`` (requirements-ray.txt); start a cluster with ``ray start --head`` on one machine and
``ray start --address HEAD:6379`` on the others (docs/deployments.md). ``address="local"`` starts a cluster in this
process for the run (what the tests use).
"""

from __future__ import annotations

import logging
import os
from typing import Any, Iterator, Sequence

import numpy as np

from .loader import load_reader
from .states import PassageText

log = logging.getLogger(__name__)


class Encoder:
    """One actor of the pool: the reader's graph in ``precision``, loaded once; ``__call__`` encodes a batch.

    ``fail_once`` (tests only): a file whose existence makes this process exit in the middle of its first batch
    (the file is removed first, so the restarted actor goes on): a killed worker."""

    def __init__(self, precision: str = "int8", threads: int = 1, fail_once: str = "") -> None:
        import torch

        torch.set_num_threads(max(1, threads))
        reader, why = load_reader(precision=precision)
        if reader is None:
            raise RuntimeError(f"the reader did not load on this worker: {why.text()}")
        self.reader, self.fail_once = reader, fail_once

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        if self.fail_once and os.path.exists(self.fail_once):
            os.remove(self.fail_once)
            os._exit(1)   # the worker dies with the batch unfinished
        passages = [PassageText(str(t), str(h), str(a)) for h, t, a in zip(batch["head"], batch["text"], batch["tail"])]
        vectors, states = self.reader.encode_passages(passages)
        return {"i": batch["i"], "vector": vectors,
                "states": np.array([s.numpy().astype(np.float16).tobytes() for s in states], dtype=object),
                "rows": np.array([s.shape[0] for s in states], dtype=np.int64),
                "pid": np.full(len(passages), os.getpid(), dtype=np.int64)}


def start(address: str | None, workers: int = 2) -> Any:
    """Connect to the cluster at ``address`` (``local``: a cluster on this machine started for the run, with a
    logical CPU for each worker and one for Ray Data's own tasks)."""
    import ray

    if ray.is_initialized():
        return ray
    if address in (None, "", "local"):
        ray.init(num_cpus=workers + 1, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    else:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    return ray


def encode_on_ray(passages: Sequence[PassageText], *, address: str | None = "local", workers: int = 2,
                  batch: int = 64, precision: str = "int8", hidden: int = 384, fail_once: str = ""
                  ) -> Iterator[tuple[list[int], np.ndarray, list[np.ndarray], list[int]]]:
    """``(indices into passages, their vectors, their states, the worker pids)`` batch by batch as the pool returns
    them (not in order). ``workers`` encoder actors of one CPU each."""
    if not passages:
        return
    ray = start(address, workers)
    rows = [{"i": i, "head": p.head, "text": p.text, "tail": p.tail} for i, p in enumerate(passages)]
    data = ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows) // batch, 4 * workers)))
    encoded = data.map_batches(Encoder, fn_constructor_kwargs={"precision": precision, "fail_once": fail_once},
                               batch_size=batch, concurrency=workers, num_cpus=1, batch_format="numpy")
    for part in encoded.iter_batches(batch_size=batch, batch_format="numpy", prefetch_batches=2):
        states = [np.frombuffer(b, dtype=np.float16).reshape(int(n), hidden).astype(np.float32)
                  for b, n in zip(part["states"], part["rows"])]
        yield [int(i) for i in part["i"]], np.asarray(part["vector"], dtype=np.float32), states, \
            [int(p) for p in part["pid"]]


class RayChunkEncoder:
    """The index' chunk encoder on a Ray cluster (what :class:`~.onepass.ChunkEncoder` is in one process): a vector
    store's sync streams the chunks to embed through :meth:`stream` and writes each batch as it comes; the states of
    the same pass go to the state sink."""

    def __init__(self, owner: Any, sink: Any, address: str, workers: int, precision: str) -> None:
        self.owner, self.sink = owner, sink
        self.address, self.workers, self.precision = address, workers, precision

    def stream(self, chunks: Sequence[Any], batch: int) -> Iterator[tuple[list[Any], np.ndarray]]:
        passages = [PassageText.of(c, self.owner.template) for c in chunks]
        reader = self.owner._reader()
        for at, vectors, states, _ in encode_on_ray(passages, address=self.address, workers=self.workers,
                                                   batch=batch, precision=self.precision,
                                                   hidden=reader.encoder.config["hidden"]):
            got = [passages[i] for i in at]
            if self.sink is not None:
                self.sink.add(got, states)
            vectors = self.owner._patch(vectors, [p.full for p in got], False, reader)
            yield [chunks[i] for i in at], vectors

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()
