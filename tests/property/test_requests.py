"""Property-based tests of whole requests (``Workbench.ask`` and the CLI) over generated corpora, questions,
filters and settings, with a cheap hash embedder on one shared Chroma store:

* no exception but the project's own errors, each with a one-line message;
* no chunk of another tenant (nor failing any filter) in any list, variant, final item or citation, and no
  other tenant's secret in the answer;
* the tier is one of the five;
* the same question in NFC and NFD gives the same lists.
"""

from __future__ import annotations

import json
import unicodedata

import pytest
from helpers.fakes import HashEmbedder
from helpers.fuzz import assert_trace_invariants, budget, lists_of, typed
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from retrieval.core.errors import RetrievalError
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings
from retrieval.stages.transforms import TRANSFORMS

WORDS = ["senha", "cofre", "prazo", "reembolso", "ativação", "não", "PX-7", "PX-17", "E-mail", "NF-e", "garantia",
         "cartão", "virtual", "compra", "presencial", "quando", "exceto", "пароль", "密码", "كلمة", "κωδικός",
         "cafe\u0301", "Ñandú", "x\u0327\u0301", "e", "qual", "entre", "e qual"]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
WORD = st.one_of(st.sampled_from(WORDS), TEXT)
SENTENCE = st.lists(WORD, min_size=1, max_size=14).map(" ".join)
TENANT_KINDS = {
    "str": st.sampled_from(["lumen", "ventura", "1", "", "Ünïcode", "租户"]),
    "int": st.integers(-2, 3),
    "bool": st.booleans(),
    "float": st.sampled_from([1.0, 1.5, -2.25]),
}


@st.composite
def corpora(draw):
    """A JSONL corpus (records) whose tenant field holds one JSON type, with other metadata of mixed types,
    and a secret word per tenant."""
    kind = draw(st.sampled_from(sorted(TENANT_KINDS)))
    tenants = draw(st.lists(TENANT_KINDS[kind], min_size=1, max_size=3, unique_by=typed))
    records = []
    for n in range(draw(st.integers(1, 7))):
        tenant = draw(st.sampled_from(tenants))
        secret = f"segredo{tenants.index(tenant)}x"
        text = draw(st.lists(SENTENCE, min_size=1, max_size=4)).__iter__()
        body = ". ".join(text) + f". A senha do cofre é {secret}."
        meta = {"tenant": tenant, "kind": draw(st.one_of(st.sampled_from(["faq", "manual", "1"]), st.integers(0, 2),
                                                         st.booleans())),
                "year": draw(st.integers(2020, 2025))}
        if draw(st.booleans()):
            meta[draw(st.sampled_from(["año", "ключ", "note"]))] = draw(TEXT)
        records.append({"id": f"doc{n}", "title": draw(SENTENCE), "text": body, "metadata": meta})
    return tenants, records


REQUEST_SETTINGS = st.fixed_dictionaries({
    "transforms": st.lists(st.sampled_from(TRANSFORMS.names()), unique=True, max_size=3),
    "mmr_lambda": st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0])),
    "top_k": st.integers(1, 6),
    "min_similarity": st.sampled_from([0.8, 0.2, -1.0, -1.0]),
    "dedup": st.sampled_from(["parent", "chunk"]),
    "fusion": st.sampled_from(["rrf", "weighted_rrf", "combsum"]),
    "hybrid_enabled": st.sampled_from([True, True, True, False]),
})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("property-store")
    return root, Settings(chroma_path=root / "chroma", chunk_tokens=20, chunk_overlap=4, _env_file=None)


def _bench(store, records, embedder: bool = True) -> Workbench:
    root, base = store
    path = root / "corpus.jsonl"  # one path: every example re-syncs the same collection (adds, updates, removes)
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), encoding="utf-8")
    bench = Workbench(base, embedder=HashEmbedder() if embedder else None, progress=False)
    state = bench.load_corpus(path)
    assert (state.store is not None) == embedder, state.store_reason
    return bench


def _request_settings(base: Settings, drawn: dict) -> Settings:
    extra = {}
    if drawn["fusion"] != "rrf":
        extra["fusion_weights"] = "bm25=1,dense=0.5"
    return base.with_overrides(**drawn, **extra)


def _check(bench, trace, tenant, filters_extra, secrets):
    expected = {"tenant": [tenant], **{k: [v] for k, v in filters_extra}}
    assert_trace_invariants(trace, bench.state.chunk_by_id, expected)
    own = f"segredo{secrets.index(typed(tenant))}x"
    for n in range(len(secrets)):
        if f"segredo{n}x" != own:
            assert f"segredo{n}x" not in trace.answer.text


QUESTION = st.one_of(SENTENCE, SENTENCE.map(lambda s: f"Qual a senha do cofre? {s}"))


@settings(max_examples=budget(100))
@given(corpus=corpora(), question=QUESTION, drawn=REQUEST_SETTINGS, pick=st.integers(0, 2),
       as_text=st.booleans(), embedder=st.sampled_from([True] * 9 + [False]), extra=st.one_of(st.just([]), st.lists(st.tuples(
           st.sampled_from(["kind", "year"]), st.one_of(st.sampled_from(["faq", "1", "2021", "2020"]),
                                                        st.integers(0, 2025), st.booleans())), max_size=2)))
def test_any_request_keeps_to_its_tenant_and_filters(store, corpus, question, drawn, pick, as_text, embedder, extra):
    tenants, records = corpus
    bench = _bench(store, records, embedder)
    tenant = tenants[pick % len(tenants)]
    raw = (str(tenant).lower() if isinstance(tenant, bool) else str(tenant)) if as_text else tenant
    s = _request_settings(bench.settings, drawn)
    try:
        trace = bench.ask(question, [("tenant", raw), *extra], settings=s)
    except RetrievalError as exc:
        assert str(exc) and "\n" not in str(exc)
        event(f"refused: {type(exc).__name__}")
        return
    event(f"tier: {trace.tier}")
    event(f"final items: {'some' if trace.final else 'none'}")
    flt = {k: v for k, v in trace.filters.items()}
    typed_extra = [(k, v) for k, v in flt.items() if k != "tenant" for v in ([v] if not isinstance(v, list) else v)]
    # the filters the trace reports hold the tenant exactly, and every item satisfies every reported filter
    assert typed(flt["tenant"]) == typed(tenant)
    keys = {k for k, _ in typed_extra}
    assert_trace_invariants(trace, bench.state.chunk_by_id,
                            {"tenant": [tenant], **{k: [v for kk, v in typed_extra if kk == k] for k in keys}})
    _check(bench, trace, tenant, [], [typed(t) for t in tenants])


@settings(max_examples=budget(40))
@given(corpus=corpora(), question=QUESTION, drawn=REQUEST_SETTINGS, pick=st.integers(0, 2))
def test_nfc_and_nfd_questions_give_the_same_lists(store, corpus, question, drawn, pick):
    tenants, records = corpus
    nfc, nfd = unicodedata.normalize("NFC", question), unicodedata.normalize("NFD", question)
    bench = _bench(store, records)
    tenant = tenants[pick % len(tenants)]
    s = _request_settings(bench.settings, drawn)
    outcomes = []
    for text in (nfc, nfd):
        try:
            outcomes.append(lists_of(bench.ask(text, {"tenant": tenant}, settings=s)))
        except RetrievalError as exc:
            outcomes.append(("error", type(exc).__name__, str(exc)))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=budget(30))
@given(corpus=corpora(), pick=st.integers(0, 2), other=st.integers(0, 2))
def test_two_tenants_in_one_request_are_refused(store, corpus, pick, other):
    tenants, records = corpus
    assume(len(tenants) >= 2 and pick % len(tenants) != other % len(tenants))
    bench = _bench(store, records)
    with pytest.raises(RetrievalError, match="exactly one tenant"):
        bench.ask("Qual a senha do cofre?", [("tenant", tenants[pick % len(tenants)]),
                                             ("tenant", tenants[other % len(tenants)])])
