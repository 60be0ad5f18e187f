"""Property-based tests of the command line (in process, typer's runner): any ``--set``, ``--filter``,
``--transform``, ``--mmr`` and question either succeed (``--json``: stdout is the trace and nothing else, and
it keeps to its tenant) or fail with exit code 2 and exactly one line on stderr; never a traceback."""

from __future__ import annotations

import json

import pytest
from helpers.fakes import HashEmbedder
from helpers.fuzz import budget
from hypothesis import event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from retrieval import cli
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
NAMES = ["top_k", "overfetch", "rrf_k", "fusion", "fusion_weights", "min_similarity", "min_bm25", "dedup",
         "chunk_tokens", "chunk_overlap", "hybrid_enabled", "dense_enabled", "transforms", "max_hops",
         "mmr_lambda", "require_codes", "bm25_engine", "tenant_field", "max_question_chars", "hnsw_ef_search",
         "transform_fallback", "nope", "TOP_K", ""]
VALUES = st.one_of(TEXT, st.integers(-5, 300).map(str), st.sampled_from(
    ["0", "1", "200", "true", "false", "nan", "inf", "-1", "0.5", "parent", "chunk", "rewrite,hyde", "decompose",
     "bm25=1,dense=0", "bm25=0,dense=0", "Dense=0", "bm2=1", "weighted_rrf", "combsum", "rrf", "bm25s", "tenant"]))
VALID_SETS = st.lists(st.sampled_from(["top_k=3", "rrf_k=30", "dedup=chunk", "overfetch=2", "min_similarity=-1",
                                       "min_similarity=0.3", "hybrid_enabled=false", "max_hops=1", "chunk_tokens=60",
                                       "bm25_engine=rank-bm25", "require_codes=false"]), max_size=3) | st.just(
    ["fusion=weighted_rrf", "fusion_weights=bm25=1,dense=0"]) | st.just(["fusion=combsum", "fusion_weights=dense=0.5"])
SETS = VALID_SETS | VALID_SETS | st.lists(st.tuples(st.sampled_from(NAMES), VALUES).map(lambda p: f"{p[0]}={p[1]}") | TEXT,
                                          max_size=3)
FILTERS = st.sampled_from([["tenant=lumen"], ["tenant=ventura"]]) | st.sampled_from([["tenant=lumen"], ["tenant=ventura"]]) \
    | st.lists(st.one_of(st.sampled_from(["tenant=lumen", "tenant=ventura", "tenant=1", "tenant=true", "year=2024",
                                          "year=x", "nope=1", "tenant", "=lumen"]), TEXT.map(lambda t: f"tenant={t}")),
               max_size=3)
QUESTIONS = st.one_of(st.sampled_from(["O PX-7 não foi ativado apesar do pagamento, o que faço?",
                                       "Posso usar o cartão virtual em uma compra presencial?",
                                       "E-mail de confirmação não chegou", "Qual o prazo do PX-7 e qual o prazo do reembolso?",
                                       "?!", ""]), TEXT)


@pytest.fixture(scope="module")
def patched_open(tmp_path_factory):
    """``ask``'s workbench (``retrieval.cli.ask.open_bench``) is built with the hash embedder on a temporary store
    (one per index variant)."""
    chroma = tmp_path_factory.mktemp("cli-store")
    benches: dict[tuple, Workbench] = {}

    def _open(settings: Settings, corpus):
        s = settings.with_overrides(chroma_path=chroma)
        key = (s.chunk_tokens, s.chunk_overlap, s.bm25_engine, s.tenant_field, str(corpus))
        if key not in benches:
            bench = Workbench(s, embedder=HashEmbedder(), progress=False)
            bench.load_corpus(corpus)
            benches[key] = bench
        bench = benches[key]
        return _Bound(bench, s)

    original = cli.ask.open_bench
    cli.ask.open_bench = _open
    yield
    cli.ask.open_bench = original


class _Bound:
    """The shared workbench answering with the request's own settings."""

    def __init__(self, bench: Workbench, settings: Settings) -> None:
        self._bench, self._settings, self.state = bench, settings, bench.state

    def ask(self, question, filters):
        return self._bench.ask(question, filters, settings=self._settings)


@settings(max_examples=budget(80))
@given(question=QUESTIONS, sets=SETS, filters=FILTERS,
       transforms=st.lists(st.sampled_from(["rewrite", "multi_query", "hyde", "decompose", "multi_hop", "self_query",
                                            "rewrite", "multi_hop", "decompose", "nope"]), max_size=3),
       mmr=st.one_of(st.none(), st.sampled_from(["0.5", "2", "-1", "x"])), as_json=st.booleans())
def test_ask_from_the_command_line_succeeds_or_fails_in_one_line(patched_open, monkeypatch, question, sets, filters,
                                                                  transforms, mmr, as_json):
    for key in [k for k in __import__("os").environ if k.startswith("RETRIEVAL_") and k != "RETRIEVAL_READER_STATES_AT_INDEX"]:
        monkeypatch.delenv(key)
    args = ["ask", question]
    for item in sets:
        args += ["--set", item]
    for item in filters:
        args += ["--filter", item]
    for item in transforms:
        args += ["--transform", item]
    if mmr is not None:
        args += ["--mmr", mmr]
    if as_json:
        args.append("--json")
    result = CliRunner().invoke(cli.app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code != 0:
        event(f"exit {result.exit_code}")
        assert result.exit_code == 2, (result.exit_code, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) >= 1
        if lines[0].startswith("Usage:"):  # typer's own usage errors (an option value it cannot parse)
            return
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert result.stdout == ""
        return
    event("exit 0")
    if as_json:
        data = json.loads(result.stdout)  # stdout holds the JSON and nothing else
        tenant = data["filters"]["tenant"]
        from retrieval.stages.tiers import TIERS

        assert data["tier"] in TIERS
        if tenant not in ("lumen", "ventura"):  # a tenant the corpus does not have: nothing at all is found
            assert data["tier"] == "refusal" and not data["final"] and not data["fused"]["items"]
            assert not data["lexical"]["items"] and not data["dense"]["items"]
        for name in ("lexical", "dense", "fused", "reranked"):
            assert all(i["chunk_id"].startswith(f"{tenant}-") for i in data[name]["items"]), name
        assert all(f["chunk_id"].startswith(f"{tenant}-") for f in data["final"])
        assert all(c.startswith(f"{tenant}-") for c in data["answer"]["citations"])
        for variant in data["variants"]:
            for side in ("lexical", "dense"):
                assert all(i["chunk_id"].startswith(f"{tenant}-") for i in (variant.get(side) or {}).get("items", []))
