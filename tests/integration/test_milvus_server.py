"""The Milvus backend against a real Milvus server: 2.3.5 standalone, from its own environment.

``make milvus-server-env`` installs PyPI's ``milvus`` wheel (the server binary, embedded etcd, rocksmq, local
storage) into ``.venv-milvus``; the module's fixture starts it through ``bench/milvus_server.py`` on a free port
with its data in a temporary folder, and stops it after the module. Without that environment, or when the
server does not answer within 60 s, the module skips with the reason.

Milvus 2.3 has no sparse vectors: the backend asks the server its version and keeps BM25 in the app process
(the trace says why) while the dense search and the filters run in Milvus; the lists must equal the local
backend's for every lab question, under each tenant and with other filters.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers.milvus import HOSTILE, assert_same_as_local, embed, open_store, small_docs

from bench.milvus_server import MilvusServerProcess, MilvusServerUnavailable
from retrieval.backends.embedders import FunctionEmbedder
from retrieval.backends.milvus import (
    InProcessLexical,
    MilvusUnavailable,
    ServerFeatures,
    open_client,
    server_features,
    tenant_names,
)
from retrieval.core.filters import build_filters, field_types
from retrieval.pipeline.workbench import Workbench

pytestmark = pytest.mark.integration

#: Filters asked beside each lab question's own (its tenant): a typed field, an IN, two fields at once.
EXTRA_FILTERS = ({"doc_type": "faq"}, {"year": 2024}, {"doc_type": ["manual", "politica"], "lang": "pt"})
#: Every FULL-th lab question also runs as a whole request (tier, fused list, final chunks; about a second
#: each on a loaded machine): six, both tenants, every question group.
FULL = 8


@pytest.fixture(scope="module")
def milvus_server(tmp_path_factory):
    server = MilvusServerProcess(tmp_path_factory.mktemp("milvus-server"), timeout=60)
    try:
        server.start()
    except MilvusServerUnavailable as exc:
        pytest.skip(f"no Milvus server: {exc}")
    try:
        yield server
    finally:
        server.stop()


def _stored_vectors(lab_bench) -> FunctionEmbedder:
    """The lab embedder, whose passage side gives the vectors the local store already holds (the model does not
    embed the corpus twice; a passage it does not know is embedded)."""
    state, model = lab_bench.state, lab_bench.embedder
    vectors = state.store.vectors([c.chunk_id for c in state.chunks])
    known = {c.passage(lab_bench.settings.passage_template): vectors[c.chunk_id] for c in state.chunks}

    def passages(texts: list[str]) -> np.ndarray:
        return np.vstack([known[t] if t in known else model.embed_passages([t])[0] for t in texts])

    return FunctionEmbedder(model.name, model.embed_queries, passages, batch=model.batch)


@pytest.fixture(scope="module")
def server_bench(settings, lab_bench, milvus_server):
    s = settings.with_overrides(backend="milvus", milvus_uri=milvus_server.uri, milvus_timeout=30.0)
    bench = Workbench(s, embedder=_stored_vectors(lab_bench), progress=False)
    bench.encoder = lab_bench.encoder  # the same model: both backends search the same query vectors
    bench.load_corpus()
    return bench


def test_the_server_is_asked_what_it_supports(milvus_server):
    features = server_features(open_client(milvus_server.uri, None, 10.0), milvus_server.uri)
    assert features.version.startswith("2.3.5")
    assert (features.sparse, features.nullable, features.upsert, features.hybrid) == (False, False, False, False)
    assert "has no sparse vectors (2.4+)" in features.lexical_reason


def _tied(ranked) -> list[frozenset[str]]:
    """A dense list as its groups of tied chunks (cosines within 1e-5 of the group's first), in order: two stores'
    float32 arithmetic may order a tie either way (two lab chunks 6e-8 apart for lab-003 under the other tenant)."""
    groups: list[tuple[float, set[str]]] = []
    for item in ranked.items:
        if groups and abs(groups[-1][0] - item.score) < 1e-5:
            groups[-1][1].add(item.chunk_id)
        else:
            groups.append((item.score, {item.chunk_id}))
    return [frozenset(ids) for _, ids in groups]


def test_lab_questions_give_the_local_lists_under_each_tenant_and_filter(lab_bench, server_bench, lab_questions,
                                                                         settings):
    """Every lab question's lexical and dense lists under its own tenant, the other tenant and other filters
    (the later stages read only these lists, the stored vectors and the chunks), and every FULL-th question as
    a whole request (tier and reason, lexical, dense and fused lists, final chunks)."""
    state, local = server_bench.state, lab_bench.state
    assert state.store_reason.code == "store.ok" and state.store.count() == len(local.chunks)
    assert isinstance(state.lexical, InProcessLexical)
    window, compared = settings.window, 0
    for q in lab_questions:
        tenant = q.filters["tenant"]
        other = "ventura" if tenant == "lumen" else "lumen"
        vector = lab_bench.encoder.query(q.question)[0]
        for raw in (dict(q.filters), {"tenant": other}, *({"tenant": tenant, **x} for x in EXTRA_FILTERS)):
            flt = build_filters(raw, local.field_types, "tenant")
            a, b = local.lexical.search(q.question, flt, window), state.lexical.search(q.question, flt, window)
            assert [(i.chunk_id, i.score) for i in b.items] == [(i.chunk_id, i.score) for i in a.items], (q.id, raw)
            a, b = local.store.query(vector, flt, window), state.store.query(vector, flt, window)
            assert _tied(b) == _tied(a), (q.id, raw)
            assert [i.score for i in b.items] == pytest.approx([i.score for i in a.items], abs=1e-5)
            compared += bool(a.items)
    assert compared >= 4 * len(lab_questions)  # the filtered lists were not simply empty
    for q in lab_questions[::FULL]:
        assert_same_as_local(lab_bench, server_bench, q.question, q.filters, q.id)
    trace = server_bench.ask(lab_questions[0].question, dict(lab_questions[0].filters))
    assert trace.models["bm25_engine"].startswith("bm25s in the app process (Milvus 2.3.5")


def test_rewritten_rows_stay_in_their_tenant_and_hostile_values_match_only_themselves(tmp_path, milvus_server):
    """Milvus 2.3.5's upsert put rows in another tenant's partition (a tenant's search then missed them): a
    changed chunk is deleted and inserted again, and a re-index of an unchanged corpus writes nothing."""
    client = open_client(milvus_server.uri, None, 30.0)
    features = server_features(client, milvus_server.uri)
    docs = small_docs()
    client, chunks, _, store = open_store(tmp_path, docs, client, features=features)
    names = tenant_names(chunks, "tenant")
    first = store.sync(chunks, embed, 8, False, stats=names)
    assert (first.added, first.unchanged, first.reweighted) == (4, 0, 0) and store.count() == 4
    again = store.sync(chunks, embed, 8, False, stats=names)
    assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 4)
    docs[1]["text"] = "A garantia do PX-7 é de dois anos."
    docs[3]["text"] = "O reembolso do VX-2 leva 10 dias."
    client, chunks2, _, store2 = open_store(tmp_path, docs, client, "c2.jsonl", features=features)
    third = store2.sync(chunks2, embed, 8, False, stats=tenant_names(chunks2, "tenant"))
    assert (third.added, third.updated, third.removed, third.unchanged) == (0, 2, 0, 2) and store2.count() == 4
    types = field_types(chunks2)
    vec = embed(["garantia"])[0]
    for tenant, parents in (("lumen", {"a1", "a2"}), ("ventura", {"b1", "b2"})):
        found = store2.query(vec, build_filters({"tenant": tenant}, types, "tenant"), 10)
        assert {i.parent_id for i in found.items} == parents, tenant
    hostile = build_filters({"tenant": "lumen", "doc_type": HOSTILE}, types, "tenant")
    assert [i.parent_id for i in store2.query(vec, hostile, 10).items] == ["a1"]
    for value in ('manual" or 1==1 or doc_type == "', "x\\", "manual) or (1==1"):
        assert store2.query(vec, build_filters({"tenant": "lumen", "doc_type": value}, types, "tenant"), 10).items == ()
    store2.drop()


class _Client:
    def __init__(self, version=None, error=None):
        self.version, self.error = version, error

    def get_server_version(self, timeout=None):
        if self.error:
            raise self.error
        return self.version


class _Down(Exception):
    code = 2  # pymilvus' connection failure


@pytest.mark.parametrize("client, said", [
    (_Client(error=_Down("Fail connecting to server on milvus:19530")),
     "Milvus at http://milvus:19530 unavailable: _Down: Fail connecting to server"),
    (_Client("v2.2.16"), "is version 2.2.16: the Milvus backend needs a Milvus server 2.3 or later"),
    (_Client(error=RuntimeError("Method not found: GetVersion")),
     "did not answer pymilvus 3.0.2's version request (RuntimeError: Method not found: GetVersion): the Milvus "
     "backend needs a Milvus server 2.3 or later"),
    (_Client("weird"), "reports the version 'weird', not one the backend knows"),
])
def test_a_server_the_client_cannot_use_is_refused_in_one_line(client, said):
    with pytest.raises(MilvusUnavailable) as err:
        server_features(client, "http://milvus:19530")
    assert said in str(err.value) and "\n" not in str(err.value)


def test_versions_map_to_features():
    def of(version: str) -> ServerFeatures:
        return server_features(_Client(version), "http://milvus:19530")

    assert of("v2.4.23").sparse and not of("v2.4.23").nullable and of("v2.4.23").upsert
    assert of("v2.5.4").nullable and not of("v2.5.4").partial_update and of("v2.6.0").partial_update
    assert of("2.3.0").lexical_reason.startswith("Milvus 2.3.0 has no sparse vectors")
    assert server_features(_Client(error=RuntimeError("never asked")), "/tmp/x.db").sparse  # Milvus Lite


def test_cli_index_status_names_the_servers_collection(milvus_server, server_bench):
    from helpers.paths import ROOT

    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("RETRIEVAL_") or k == "RETRIEVAL_READER_STATES_AT_INDEX"}
    env.update(RETRIEVAL_BACKEND="milvus", RETRIEVAL_MILVUS_URI=milvus_server.uri)
    done = subprocess.run([sys.executable, "-m", "retrieval", "index", "--status"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert server_bench.state.store.name in done.stdout and "not indexed" not in done.stdout
