"""Tokenizer and BM25 (Lucene IDF, per-tenant indexes, per-term contributions, codes)."""

from __future__ import annotations

import math
import unicodedata

import pytest

from retrieval.ingest.corpus import chunk_documents
from retrieval.backends.lexical import K1, B, LexicalIndex, lucene_idf
from retrieval.core.filters import Filters
from retrieval.core.text import tokenize
from retrieval.core.types import Document


SECRET = "A senha do cofre é 4512 para o time."


def _chunks(*docs):
    return chunk_documents([Document(i, "", t, m) for i, t, m in docs], 200, 20)


def test_nfc_and_nfd_tokens_identical_and_accents_folded():
    q = "Não consigo emitir a NF-e: ação bloqueada"
    nfd = unicodedata.normalize("NFD", q)
    assert nfd != q
    assert tokenize(nfd) == tokenize(q) == ["nao", "consigo", "emitir", "nf-e", "nf", "acao", "bloqueada"]


def test_fold_removes_combining_marks_outside_the_latin_block_too():
    from retrieval.core.text import fold

    # U+0591 (Hebrew accent) and U+20D7 (combining arrow) are combining marks outside U+0300-U+036F.
    assert fold("x\u0591y\u20d7 Ação “ª” ﬁ") == "xy acao “a” fi"
    assert fold("e\u0301") == fold("é") == "e"


def test_codes_whole_and_by_parts_and_negations_kept():
    assert tokenize("PX-7") == ["px-7", "px", "7"]
    assert tokenize("E-42, nunca sem exceto salvo caso quando se") == [
        "e-42", "42", "nunca", "sem", "exceto", "salvo", "caso", "quando", "se"]
    assert tokenize("o de a para") == []  # stopwords from the package
    assert tokenize("?!... —") == []


def test_lucene_idf_counts_a_term_in_half_the_documents():
    # "ativacao" is in 2 of 2 documents: Robertson's IDF would be ≤ 0, Lucene's is ln(1 + 0.5/2.5) = ln 1.2.
    assert lucene_idf(2, 2) == pytest.approx(math.log(1.2))
    index = LexicalIndex(_chunks(("d1", "ativacao rapida", {}), ("d2", "ativacao lenta demorada", {})), "tenant")
    items = index.search("ativacao", Filters(), 10).items
    assert [i.chunk_id for i in items] == ["d1#0", "d2#0"]
    # d1 has 2 tokens, d2 has 3: avgdl = 2.5.
    expected = math.log(1.2) * 1 * (K1 + 1) / (1 + K1 * (1 - B + B * 2 / 2.5))
    assert items[0].score == pytest.approx(expected)
    assert items[0].terms == {"ativacao": pytest.approx(expected)}


def test_contributions_sum_to_score_and_zero_scores_never_listed():
    index = LexicalIndex(_chunks(("a", "reembolso do valor pago em dez dias", {}),
                                 ("b", "frete gratis para compras acima", {}),
                                 ("c", "reembolso parcial do frete", {})), "tenant")
    items = index.search("reembolso do frete", Filters(), 10).items
    assert {i.chunk_id for i in items} == {"a#0", "b#0", "c#0"}
    assert items[0].chunk_id == "c#0"
    for item in items:
        assert sum(item.terms.values()) == pytest.approx(item.score)
    assert index.search("inexistente", Filters(), 10).items == ()


def test_px7_ranks_above_px17_and_px_space_7_still_matches():
    index = LexicalIndex(_chunks(("px17", "O PX-17 ativa em 72 horas.", {}),
                                 ("px7", "O PX-7 ativa em 24 horas.", {})), "tenant")
    assert [i.parent_id for i in index.search("PX-7", Filters(), 10).items] == ["px7", "px17"]
    assert [i.parent_id for i in index.search("PX-17", Filters(), 10).items] == ["px17", "px7"]
    assert index.search("PX 7", Filters(), 10).items[0].parent_id == "px7"


def test_one_index_per_tenant_scores_independent_of_other_tenant():
    a = ("a1", "senha do portal expirada", {"tenant": "A"})
    alone = LexicalIndex(_chunks(a), "tenant")
    mixed = LexicalIndex(_chunks(a, ("b1", "senha senha senha portal", {"tenant": "B"}),
                                 ("b2", "senha", {"tenant": "B"})), "tenant")
    flt = Filters((("tenant", ("A",)),))
    assert mixed.search("senha portal", flt, 5).items == alone.search("senha portal", flt, 5).items
    assert [i.chunk_id for i in mixed.search("senha", Filters((("tenant", ("B",)),)), 5).items] == ["b1#0", "b2#0"]


def test_metadata_filter_inside_lexical_generator():
    docs = [("x1", "garantia de doze meses", {"tenant": "A", "year": 2023}),
            ("x2", "garantia de vinte meses", {"tenant": "A", "year": 2024})]
    index = LexicalIndex(_chunks(*docs), "tenant")
    flt = Filters((("tenant", ("A",)), ("year", (2024,))))
    assert [i.chunk_id for i in index.search("garantia", flt, 5).items] == ["x2#0"]


@pytest.mark.parametrize("corpus", ["lab", "faquad"])
def test_bm25s_engine_ranks_like_rank_bm25(corpus):
    from helpers.paths import FAQUAD

    from retrieval.ingest.corpus import load_corpus, load_questions
    from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS

    base = {"lab": (LAB_CORPUS, LAB_QUESTIONS), "faquad": (FAQUAD / "corpus.jsonl", FAQUAD / "questions.jsonl")}
    if not base[corpus][0].exists():
        pytest.skip("FaQuAD (../shared/data/faquad) is not on this machine")
    corpus_path, questions_path = base[corpus]
    chunks = chunk_documents(load_corpus(corpus_path), 120, 30)
    a, b = LexicalIndex(chunks, "tenant", "rank-bm25"), LexicalIndex(chunks, "tenant", "bm25s")
    for q in load_questions(questions_path)[:200]:
        flt = Filters(tuple((k, (v,)) for k, v in q.filters.items()))
        ra, rb = a.search(q.question, flt, 20).items, b.search(q.question, flt, 20).items
        assert [i.chunk_id for i in ra] == [i.chunk_id for i in rb], q.id
        assert [i.score for i in ra] == pytest.approx([i.score for i in rb], rel=1e-4)


@pytest.mark.parametrize("engine", ["rank-bm25", "bm25s"])
def test_both_engines_exact_sums_filters_and_ties(engine):
    docs = [("t2", "garantia estendida", {"tenant": "A", "year": 2024}),
            ("t1", "garantia estendida", {"tenant": "A", "year": 2024}),
            ("t3", "garantia estendida", {"tenant": "A"}),  # no year: never matches a year filter
            ("t4", "garantia", {"tenant": "A", "year": 2023})]
    index = LexicalIndex(_chunks(*docs), "tenant", engine)
    flt = Filters((("tenant", ("A",)), ("year", (2024, 2025))))
    items = index.search("garantia estendida", flt, 10).items
    assert [i.chunk_id for i in items] == ["t1#0", "t2#0"]  # equal scores: chunk id breaks the tie
    for item in items:
        assert item.score == sum(item.terms.values())  # exactly, not approximately
        assert set(item.terms) == {"garantia", "estendida"}
    assert [i.chunk_id for i in index.search("garantia estendida", Filters((("tenant", ("A",)),)), 2).items] == [
        "t1#0", "t2#0"]  # window cut after the tie-break, over all tied chunks
    assert index.search("garantia", Filters((("tenant", ("A",)), ("year", (1999,)))), 5).items == ()


def test_bm25s_maxscore_pruning_keeps_the_exhaustive_ranking():
    """Common terms' long postings are probed, not scanned, yet every window equals rank-bm25's."""
    docs = [(f"d{i:02d}", f"garantia prazo {'troca defeito' if i % 13 == 0 else 'loja'} item{i % 7}",
             {"tenant": "A", "year": 2020 + i % 3}) for i in range(40)]
    chunks = _chunks(*docs)
    exhaustive, pruned = LexicalIndex(chunks, "tenant", "rank-bm25"), LexicalIndex(chunks, "tenant", "bm25s")
    for question in ("garantia prazo defeito", "garantia loja item3", "prazo troca", "garantia prazo"):
        for window in (1, 2, 3, 10):
            for flt in (Filters((("tenant", ("A",)),)), Filters((("tenant", ("A",)), ("year", (2021,))))):
                ra, rb = exhaustive.search(question, flt, window).items, pruned.search(question, flt, window).items
                assert [i.chunk_id for i in ra] == [i.chunk_id for i in rb], (question, window, flt)
                assert [i.score for i in ra] == pytest.approx([i.score for i in rb], rel=1e-6)
    engine = pruned._indexes[("str", "A")].engine  # keyed by the exact tenant (type, value)
    positions, _ = engine.top(tokenize("garantia prazo defeito"), 2)
    assert positions.tolist() == [0, 13, 26, 39]  # only the "defeito" chunks were scored: 36 others pruned
    positions, _ = engine.top(tokenize("garantia prazo"), 2)
    assert len(positions) == 40  # common terms only: scored exhaustively


def test_every_scripts_letters_are_tokens_and_cjk_runs_are_bigrams():
    assert tokenize("Москва é a capital") == ["москва", "capital"]
    assert tokenize("Αθήνα") == ["αθηνα"]                         # Greek accents folded like Portuguese ones
    assert tokenize("東京都") == ["東京", "京都"]
    assert tokenize("人") == ["人"]
    assert tokenize("abc東京") == ["abc", "東京"]
    index = LexicalIndex(_chunks(("ru", "Столица России — Москва.", {"tenant": "A"}),
                                 ("pt", "A capital do Brasil é Brasília.", {"tenant": "A"})), "tenant")
    assert [i.chunk_id for i in index.search("Москва", Filters((("tenant", ("A",)),)), 5).items] == ["ru#0"]


def test_thai_and_lao_runs_are_split_into_words_by_icu_and_keep_their_marks():
    # Written without spaces: one token before; ICU's dictionary finds the words, vowel and tone marks kept.
    assert tokenize("ภาษาไทยเป็นภาษาที่ไม่มีการเว้นวรรค") == ["ภาษา", "ไทย", "เป็น", "ภาษา", "ที่", "ไม่มี", "การ",
                                                              "เว้น", "วรรค"]
    assert tokenize("ພາສາລາວ") == ["ພາສາ", "ລາວ"]
    assert tokenize("PX-7 ไทย ação") == ["px-7", "px", "7", "ไทย", "acao"]   # other scripts as before
    index = LexicalIndex(_chunks(("th", "ประเทศไทยมีภาษาไทยเป็นภาษาราชการ", {"tenant": "A"}),
                                 ("th2", "กรุงเทพมหานครเป็นเมืองหลวง", {"tenant": "A"}),
                                 ("pt", "A capital do Brasil é Brasília.", {"tenant": "A"})), "tenant")
    # a word inside a run of the document: found only once the run is split into words
    assert [i.chunk_id for i in index.search("ภาษาราชการ", Filters((("tenant", ("A",)),)), 5).items] == ["th#0"]
    assert [i.chunk_id for i in index.search("เมืองหลวง", Filters((("tenant", ("A",)),)), 5).items] == ["th2#0"]


def test_an_answer_quotes_whole_sentences_never_a_clause_after_a_semicolon_or_colon():
    from retrieval.core.text import split_sentences, whole_sentences
    from retrieval.core.types import FinalItem
    from retrieval.stages.answer import ExtractiveAnswerer

    text = ("Guarde a nota fiscal e o número de série; o suporte pede os dois. Não compre uma segunda licença: "
            "a primeira vale para dois aparelhos.\nGarantia: 12 meses.")
    assert whole_sentences(text) == ["Guarde a nota fiscal e o número de série; o suporte pede os dois.",
                                     "Não compre uma segunda licença: a primeira vale para dois aparelhos.",
                                     "Garantia: 12 meses."]
    assert len(split_sentences(text)) == 6   # the chunker's finer units are unchanged
    answer = ExtractiveAnswerer().answer("Preciso comprar uma segunda licença?",
                                         [FinalItem("d#0", "d", 1, 1.0, 0.9, text)])
    assert answer.sentences == [{"text": "Não compre uma segunda licença: a primeira vale para dois aparelhos.",
                                 "citations": ["d#0"]}]


def test_bm25_indexes_and_filters_keep_tenants_1_and_true_apart():
    """Regression (a leak): tenants 1 and True merged in one BM25 index (True == 1) and passed ``True in (1,)``."""
    docs = [Document("one", "", SECRET + " Time um.", {"tenant": 1}),
            Document("true", "", SECRET + " Time verdadeiro.", {"tenant": True}),
            Document("float", "", SECRET + " Time real.", {"tenant": 1.0})]
    chunks = chunk_documents(docs, 50, 5)
    for engine in ("bm25s", "rank-bm25"):
        index = LexicalIndex(chunks, "tenant", engine)
        assert index.size(1) == index.size(True) == index.size(1.0) == 1
        for tenant, parent in ((1, "one"), (True, "true"), (1.0, "float")):
            found = index.search("Qual a senha do cofre?", Filters((("tenant", (tenant,)),)), 10)
            assert [i.parent_id for i in found.items] == [parent], (engine, tenant)
    one, true = Filters((("tenant", (1,)),)), Filters((("tenant", (True,)),))
    assert one != true and len({one, true}) == 2  # caches keyed by filters never merge them
    assert one.matches({"tenant": 1}) and not one.matches({"tenant": True}) and not one.matches({"tenant": 1.0})
    assert not true.matches({"tenant": 1})
    assert one.narrowed("tenant", [True]).get("tenant") == ()


def test_a_tenant_the_corpus_does_not_have_finds_nothing():
    """Regression (found by the CLI property test, ``--filter tenant=``): the empty tenant was not a value like any other.

    The empty tenant finds its own documents, and a tenant the corpus lacks finds nothing (no other tenant's
    chunk, and no list of tenant names either)."""
    docs = [Document("a", "", "senha do cofre", {"tenant": "lumen"}), Document("b", "", "senha do cofre", {"tenant": ""})]
    index = LexicalIndex(chunk_documents(docs, 50, 5), "tenant")
    assert [i.parent_id for i in index.search("senha", Filters((("tenant", ("",)),)), 5).items] == ["b"]
    assert index.search("senha", Filters((("tenant", ("lumn",)),)), 5).items == ()
    assert index.search("senha", Filters((("tenant", ()),)), 5).items == ()  # an emptied clause never widens
