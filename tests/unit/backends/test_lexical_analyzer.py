"""BM25 with a stemming analyser (``bm25_analyzer``): the setting, codes first, separate indexes per analyser."""

from __future__ import annotations

import json

import pytest

from retrieval.backends.lexical import LexicalIndex
from retrieval.core.errors import InvalidSetting
from retrieval.core.filters import Filters
from retrieval.core.types import Document
from retrieval.ingest.corpus import chunk_documents
from retrieval.pipeline.view import TraceView
from retrieval.settings import INDEX_SETTINGS, Settings

#: A trace dict as the explanations read it (its typed view).
view = TraceView.from_dict

DOCS = (("px7", "O PX-7 ativa em 72 horas depois do pagamento.", {}),
        ("px17", "O PX-17 ativa em 48 horas depois do pagamento.", {}),
        ("prazo", "Os prazos de entrega dos contratos são de dez dias.", {}),
        ("lei", "A Lei 8.112/90 rege os servidores.", {}))


def _chunks(*docs):
    return chunk_documents([Document(i, "", t, m) for i, t, m in docs], 200, 20)


def _ids(ranked):
    return [i.chunk_id.split("#")[0] for i in ranked.items]


@pytest.mark.parametrize("engine", ["bm25s", "rank-bm25"])
def test_a_code_question_still_finds_its_chunk_first_with_the_analyser_on(engine):
    index = LexicalIndex(_chunks(*DOCS), "tenant", engine, analyzer="portuguese")
    ranked = index.search("Quando o PX-7 ativa?", Filters(), 10)
    assert _ids(ranked)[:2] == ["px7", "px17"]
    assert "px-7" in ranked.items[0].terms and "px-7" not in ranked.items[1].terms


def test_plural_question_finds_the_singular_only_with_the_analyser_on():
    chunks = _chunks(*DOCS)
    assert _ids(LexicalIndex(chunks, "tenant", analyzer="fold").search("prazo do contrato", Filters(), 10)) == []
    ranked = LexicalIndex(chunks, "tenant", analyzer="portuguese").search("prazo do contrato", Filters(), 10)
    assert _ids(ranked) == ["prazo"] and set(ranked.items[0].terms) == {"praz", "contrat"}


def test_numbers_are_kept_whole():
    index = LexicalIndex(_chunks(*DOCS), "tenant", analyzer="portuguese")
    ranked = index.search("8.112/90", Filters(), 10)
    assert _ids(ranked) == ["lei"] and set(ranked.items[0].terms) == {"8", "112", "90"}
    assert _ids(index.search("72", Filters(), 10)) == ["px7"]


def test_document_frequencies_stay_over_folded_tokens_for_the_judge():
    chunks = _chunks(*DOCS)
    for engine in ("bm25s", "rank-bm25"):
        n, df = LexicalIndex(chunks, "tenant", engine, analyzer="portuguese").document_frequencies()
        n0, df0 = LexicalIndex(chunks, "tenant", engine).document_frequencies()
        assert n == n0 == 4
        assert [df(t) for t in ("prazos", "praz", "pagamento", "px-7")] == [1, 0, 2, 1]
        assert [df0(t) for t in ("prazos", "praz", "pagamento", "px-7")] == [1, 0, 2, 1]


def test_the_setting_is_index_level_defaults_to_fold_and_is_refused_in_one_line():
    base = Settings(_env_file=None)
    assert base.bm25_analyzer == "fold" and "bm25_analyzer" in INDEX_SETTINGS
    assert base.with_overrides(bm25_analyzer="portuguese").index_key() != base.index_key()
    with pytest.raises(InvalidSetting) as exc:
        base.with_overrides(bm25_analyzer="klingon")
    assert "\n" not in str(exc.value) and str(exc.value).startswith("invalid setting bm25_analyzer='klingon'")
    with pytest.raises(InvalidSetting, match="milvus backend's sparse BM25 does not stem") as exc:
        base.with_overrides(bm25_analyzer="portuguese", backend="milvus")
    assert "\n" not in str(exc.value)
    with pytest.raises(ValueError, match="unknown BM25 analyser"):
        LexicalIndex([], "tenant", analyzer="klingon")


def test_an_index_built_twice_with_different_analysers_keeps_separate_bm25(tmp_path):
    from retrieval.offline.evaluation import runner

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": "", "text": t}) + "\n" for i, t, _ in DOCS))
    built = []

    class Bench:  # the Workbench's index, without an embedder: BM25 alone
        def __init__(self, settings, progress=True):
            from retrieval.pipeline.workbench import Workbench

            self.inner = Workbench(settings, embedder=None, progress=False)
            built.append(settings.bm25_analyzer)

        def load_corpus(self, path):
            self.inner.load_corpus(path)

    base = Settings(_env_file=None, chroma_path=tmp_path / "chroma", dense_enabled=False)
    open_bench = runner.bench_factory(corpus, progress=False)
    runner_workbench = runner.Workbench
    try:
        runner.Workbench = Bench
        fold = open_bench(base)
        pt = open_bench(base.with_overrides(bm25_analyzer="portuguese"))
        assert open_bench(base.with_overrides(bm25_analyzer="portuguese")) is pt and open_bench(base) is fold
    finally:
        runner.Workbench = runner_workbench
    assert built == ["fold", "portuguese"] and fold is not pt
    ask = lambda b: [i.chunk_id for i in b.inner.state.lexical.search("prazo", Filters(), 5).items]  # noqa: E731
    assert ask(fold) == [] and len(ask(pt)) == 1


def test_the_card_shows_each_stem_with_the_question_words_behind_it(tmp_path):
    """The chunk's card (and the grid's BM25 column it feeds) names a stemmed term with the words it stands for;
    a code stays as written, and under ``fold`` every term is shown as it is."""
    from retrieval.explain.card import provenance
    from retrieval.pipeline.workbench import Workbench

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": "", "text": t}, ensure_ascii=False) + "\n"
                              for i, t, _ in DOCS), encoding="utf-8")
    for analyzer, expected in (("portuguese", ["7", "pagament (pagamento, pagamentos)", "px", "px-7"]),
                               ("fold", ["7", "pagamento", "px", "px-7"])):
        settings = Settings(_env_file=None, chroma_path=tmp_path / "chroma", dense_enabled=False,
                            bm25_analyzer=analyzer, reranker_model="none", support_gate=False, evidence_model=False)
        bench = Workbench(settings, embedder=None, progress=False)
        bench.load_corpus(corpus)
        trace = bench.ask("PX-7 e o pagamento dos pagamentos?").to_dict()
        terms = provenance(view(trace), "px7#0")["bm25"]["terms"]
        assert sorted(t for t, _ in terms) == expected, terms
