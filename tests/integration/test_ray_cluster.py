"""An index encoded on a Ray cluster (``index --ray``): a local cluster of two encoder workers gives the vectors and
states one process gives (fp32: to float precision), and a worker killed in the middle of its batch has that batch
done again. Needs Ray (``make ray``, requirements-ray.txt): skipped without it."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from retrieval.learned.reader.cluster import encode_on_ray  # noqa: E402
from retrieval.learned.reader.states import PassageText  # noqa: E402
from retrieval.pipeline.workbench import Workbench  # noqa: E402

pytestmark = pytest.mark.integration

DOCS = [{"id": f"d{i}", "title": f"Garantia {i}",
         "text": f"O produto {i} tem garantia de {30 + i} dias contra defeitos de fabricação. "
                 + "A troca é feita na loja com a nota fiscal. " * (1 + i % 3), "metadata": {}} for i in range(20)]


@pytest.fixture(scope="module")
def cluster():
    yield "local"
    ray.shutdown()


def test_two_ray_workers_give_the_vectors_and_states_of_one_process(cluster, settings, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS), encoding="utf-8")
    s = settings.model_copy(update={"chroma_path": tmp_path / "ray" / "chroma", "reader_states_at_index": True,
                                    "encoder_precision": "fp32", "reader_state_codec": "fp16"})
    on_ray = Workbench(s, progress=False)
    on_ray.use_cluster(cluster, 2)
    on_ray.embedder.batch = 6
    state = on_ray.load_corpus(corpus)
    assert state.sync.added == 20
    reader = on_ray.embedder._reader()
    encoded_here = reader.passages_encoded
    report = on_ray.store_reader_states()
    assert (report.encoded, report.stored) == (0, 20)   # the workers' states were stored as they came back
    assert reader.passages_encoded == encoded_here

    local = Workbench(s.model_copy(update={"chroma_path": tmp_path / "one" / "chroma"}), progress=False)
    one = local.load_corpus(corpus)
    ids = [c.chunk_id for c in one.chunks]
    a, b = state.store.vectors(ids), one.store.vectors(ids)
    assert max(float(np.abs(a[i] - b[i]).max()) for i in ids) < 1e-4
    passages = [PassageText.of(c, s.passage_template) for c in one.chunks]
    stored = reader.store.get_many([p.key for p in passages])          # the workers' rows, as fp16
    _, here = reader.encode_passages(passages)                          # this process' pass
    assert len(stored) == 20
    assert max(float(np.abs(stored[p.key][0].astype(np.float32) - h.numpy()).max())
               for p, h in zip(passages, here)) < 2e-3

    with pytest.raises(Exception, match="one pass"):
        Workbench(s.model_copy(update={"one_pass": False}), progress=False).use_cluster(cluster, 2)


def test_a_worker_killed_in_its_batch_has_the_batch_done_again(cluster, tmp_path):
    passages = [PassageText(d["text"], d["title"] + "\n") for d in DOCS]
    marker = tmp_path / "kill-once"
    marker.touch()
    seen: dict[int, int] = {}
    pids: set[int] = set()
    for at, vectors, states, workers in encode_on_ray(passages, address=cluster, workers=2, batch=4,
                                                      precision="fp32", fail_once=str(marker)):
        for i in at:
            seen[i] = seen.get(i, 0) + 1
        pids.update(workers)
        assert vectors.shape == (len(at), 384) and all(s.shape[1] == 384 for s in states)
    assert not marker.exists()                        # a worker died in the middle of a batch…
    assert seen == {i: 1 for i in range(len(passages))}   # …and every passage came back, once
    assert os.getpid() not in pids
