"""Judge features on a hand-built three-chunk case (coverage and missing tokens computed by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval.backends.lexical import LexicalIndex
from retrieval.core.filters import Filters
from retrieval.core.text import tokenize
from retrieval.core.types import Chunk, Document, RankedList, ScoredItem
from retrieval.learned.judge.features import (
    CANDIDATE_FEATURES,
    CANDIDATE_NAMES,
    FEATURE_DOCS,
    GATE_NAMES,
    GATE_SIGNS,
    SENTENCE_NAMES,
    JudgeInput,
    TextView,
    candidate_features,
    focus_missing_words,
    focus_of,
    gate_features,
    holds,
    sentence_features,
    tenant_stats,
    word_forms,
)
from retrieval.stages.fusion import rrf

QUESTION = "Qual o prazo de garantia do leitor biométrico?"
DOCS = [Document("a", "Alfa", "A garantia do leitor é de 12 meses. Vale para defeitos.", {}),
        Document("b", "Beta", "O prazo de entrega é de 5 dias.", {}),
        Document("c", "Gama", "Erro E-42 no leitor.", {})]


def idf(n_docs: int, df: int) -> float:
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


@pytest.fixture(scope="module")
def case():
    chunks = [Chunk(f"{d.id}#0", d.id, 0, d.title, d.text, {}, d.id) for d in DOCS]
    lexical = LexicalIndex(chunks, "tenant")
    lex = lexical.search(QUESTION, Filters(()), 20)
    q_vec = np.array([1.0, 0.0])
    vectors = {"a#0": np.array([0.8, 0.6]), "b#0": np.array([0.6, 0.8]), "c#0": np.array([0.0, 1.0])}
    dense = RankedList("dense", "cosine", (ScoredItem("a#0", "a", 1, 0.8), ScoredItem("b#0", "b", 2, 0.6)))
    fused = rrf({"bm25": lex, "dense": dense}, 60)
    view = TextView.build(chunks, DOCS)
    inp = JudgeInput(QUESTION, lex, dense, fused, q_vec, vectors, view, tenant_stats(lexical))
    return inp, candidate_features(inp, 20)


def test_every_feature_is_documented_once():
    assert len(set(CANDIDATE_NAMES)) == len(CANDIDATE_NAMES)
    assert len(set(SENTENCE_NAMES)) == len(SENTENCE_NAMES)
    assert all(FEATURE_DOCS[n].doc and FEATURE_DOCS[n].range for n in (*CANDIDATE_NAMES, *SENTENCE_NAMES, *GATE_NAMES))
    assert len(set(GATE_NAMES)) == len(GATE_NAMES) == len(GATE_SIGNS) and set(GATE_SIGNS) <= {-1, 1}
    assert len(CANDIDATE_FEATURES) == len(CANDIDATE_NAMES)


def test_tokens_of_the_hand_case():
    assert tokenize(QUESTION) == ["prazo", "garantia", "leitor", "biometrico"]


def test_coverage_and_missing_tokens_by_hand(case):
    inp, rows = case
    # Three chunks: df(prazo) = 1, df(garantia) = 1, df(leitor) = 2, df(biometrico) = 0.
    i_p, i_g, i_l, i_b = idf(3, 1), idf(3, 1), idf(3, 2), idf(3, 0)
    total = i_p + i_g + i_l + i_b
    by_id = {cid: rows.X[j] for j, cid in enumerate(rows.chunk_ids)}
    col = CANDIDATE_NAMES.index
    assert set(by_id) == {"a#0", "b#0", "c#0"}
    assert by_id["a#0"][col("cov_chunk")] == pytest.approx((i_g + i_l) / total)
    assert by_id["b#0"][col("cov_chunk")] == pytest.approx(i_p / total)
    assert by_id["c#0"][col("cov_chunk")] == pytest.approx(i_l / total)
    assert by_id["a#0"][col("cov_chunk_count")] == pytest.approx(2 / 4)
    # "biometrico" is in no candidate and nowhere in the index.
    assert rows.missing_tokens == ("biometrico",)
    assert rows.unseen_tokens == ("biometrico",)
    for j in range(3):
        assert rows.X[j, col("q_missing_window")] == pytest.approx(i_b / total)
        assert rows.X[j, col("q_unseen_index")] == pytest.approx(i_b / total)
        assert rows.X[j, col("q_missing_window_max")] == pytest.approx(1.0)  # idf(unseen) / idf(unseen)
        assert rows.X[j, col("best_cov_window")] == pytest.approx((i_g + i_l) / total)
    assert by_id["c#0"][col("cov_gap")] == pytest.approx((i_g + i_l - i_l) / total)
    # Title coverage: no title holds a question token.
    assert all(by_id[c][col("cov_title")] == 0.0 for c in by_id)


def test_rank_and_cosine_features_by_hand(case):
    inp, rows = case
    by_id = {cid: rows.X[j] for j, cid in enumerate(rows.chunk_ids)}
    col = CANDIDATE_NAMES.index
    # c#0 is a lexical-only find: its cosine comes from its stored vector (0.0), gap to the best 0.8.
    assert by_id["c#0"][col("dense_cos")] == pytest.approx(0.0)
    assert by_id["c#0"][col("dense_gap")] == pytest.approx(0.8)
    assert by_id["c#0"][col("dense_rank_recip")] == 0.0
    assert by_id["b#0"][col("dense_rank_recip")] == pytest.approx(0.5)
    assert by_id["a#0"][col("cos_rank_norm")] == 0.0 and by_id["c#0"][col("cos_rank_norm")] == 1.0
    lex = {i.chunk_id: i for i in inp.lexical.items}
    best = max(i.score for i in inp.lexical.items)
    for cid, item in lex.items():
        assert by_id[cid][col("bm25_norm")] == pytest.approx(item.score / best)
        assert by_id[cid][col("bm25_rank_recip")] == pytest.approx(1 / item.rank)
    top = inp.fused.items[0]
    assert by_id[top.chunk_id][col("rrf_norm")] == 1.0 and by_id[top.chunk_id][col("fused_rank_recip")] == 1.0
    assert by_id["a#0"][col("in_both")] == 1.0 and by_id["c#0"][col("in_both")] == 0.0


def test_codes_negation_and_proximity():
    docs = [Document("x", "X", "O PX-17 não liga sem bateria.", {}), Document("y", "Y", "O PX-7 liga.", {})]
    chunks = [Chunk(f"{d.id}#0", d.id, 0, d.title, d.text, {}, d.id) for d in docs]
    lexical = LexicalIndex(chunks, "tenant")
    question = "Por que o PX-7 não liga?"
    lex = lexical.search(question, Filters(()), 20)
    inp = JudgeInput(question, lex, RankedList("dense", "cosine", ()), rrf({"bm25": lex}, 60), None, {},
                     TextView.build(chunks, docs), tenant_stats(lexical))
    rows = candidate_features(inp, 20)
    by_id = {cid: rows.X[j] for j, cid in enumerate(rows.chunk_ids)}
    col = CANDIDATE_NAMES.index
    assert by_id["y#0"][col("code_match")] == 1.0 and by_id["y#0"][col("code_conflict")] == 0.0
    assert by_id["x#0"][col("code_match")] == 0.0 and by_id["x#0"][col("code_conflict")] == 1.0
    assert by_id["x#0"][col("neg_align")] == 1.0 and by_id["y#0"][col("neg_align")] == -1.0
    assert by_id["x#0"][col("cond_align")] == 0.0  # the question has no condition word
    # Question tokens px-7, px, 7, nao, liga; y holds px-7 px 7 liga in 4 consecutive tokens → 4 / 4.
    assert by_id["y#0"][col("proximity")] == pytest.approx(1.0)


def test_sentence_features_by_hand(case):
    inp, rows = case
    sent = sentence_features(QUESTION, ["a#0", "b#0"], inp.view, inp.stats)
    assert sent.texts == ("A garantia do leitor é de 12 meses.", "Vale para defeitos.", "O prazo de entrega é de 5 dias.")
    i_p, i_g, i_l, i_b = idf(3, 1), idf(3, 1), idf(3, 2), idf(3, 0)
    total = i_p + i_g + i_l + i_b
    col = SENTENCE_NAMES.index
    assert sent.X[0, col("s_cov")] == pytest.approx((i_g + i_l) / total)
    assert sent.X[1, col("s_cov")] == 0.0 and sent.X[1, col("s_prev_cov")] == pytest.approx((i_g + i_l) / total)
    assert sent.X[0, col("s_cov_rel")] == 1.0
    assert sent.X[2, col("s_chunk_rank_recip")] == 0.5 and sent.X[0, col("s_has_number")] == 1.0
    assert sent.X[1, col("s_position")] == 1.0 and sent.X[0, col("s_position")] == 0.0


def test_gate_features_by_hand(case):
    inp, rows = case
    i_p, i_g, i_l, i_b = idf(3, 1), idf(3, 1), idf(3, 2), idf(3, 0)
    total = i_p + i_g + i_l + i_b
    col = GATE_NAMES.index
    j_a, j_b = rows.chunk_ids.index("a#0"), rows.chunk_ids.index("b#0")
    # "qual" is a question word: the focus is the four content tokens.
    assert focus_of(QUESTION, rows.terms).tokens == ("prazo", "garantia", "leitor", "biometrico")
    x = gate_features(inp, rows, [j_a, j_b])[0]
    assert x[col("g_cov_best")] == pytest.approx((i_g + i_l) / total)          # a#0 alone
    assert x[col("g_cov_union")] == pytest.approx((i_p + i_g + i_l) / total)   # a#0 and b#0 together
    assert x[col("g_focus_cov_top")] == pytest.approx((i_g + i_l) / total)     # the first selected chunk, a#0
    assert x[col("g_focus_missing")] == pytest.approx(i_b / total)             # only "biometrico" is nowhere
    assert x[col("g_focus_missing_n")] == 1.0
    # One sentence of a#0 ("A garantia do leitor é de 12 meses.") holds garantia and leitor.
    assert x[col("g_sentence_cov")] == pytest.approx((i_g + i_l) / total)
    assert x[col("g_cos_best")] == pytest.approx(0.8)
    assert x[col("g_cos_peak")] == pytest.approx(0.8 - 0.7)  # the median of the nonzero cosines 0.8 and 0.6
    assert x[col("g_code_match")] == 0.0 and x[col("g_code_conflict")] == 0.0
    assert focus_missing_words(inp, rows, [j_a, j_b]) == ("biometrico",)
    only_b = gate_features(inp, rows, [j_b])[0]
    assert only_b[col("g_focus_missing")] == pytest.approx((i_g + i_l + i_b) / total)
    assert only_b[col("g_focus_missing_n")] == 3.0


def test_a_focus_word_is_held_by_its_stem_or_prefix():
    question = "A licença ativada pode ser reembolsada? How do I get a refund?"
    forms = word_forms("O reembolso de uma licença só vale antes da ativação.")
    focus = focus_of(question, __import__("retrieval.learned.judge.features", fromlist=["question_terms"]).question_terms(
        question, tenant_stats(LexicalIndex([], "tenant"))))
    held = {t: holds(f, forms) for t, f in zip(focus.tokens, focus.forms)}
    # "how", "do", "i", "get", "a" are question words or English stopwords; "refund" is not in the text.
    assert set(focus.tokens) == {"licenca", "ativada", "pode", "reembolsada", "refund"} - {"pode"}
    assert held == {"licenca": True, "ativada": True, "reembolsada": True, "refund": False}


def test_a_question_that_names_nothing_has_no_focus_and_no_support_from_focus(case):
    inp, rows = case
    from dataclasses import replace as dc_replace

    from retrieval.learned.judge.features import candidate_features as cf

    for question in ("qual?", "Como faço?", "O que posso fazer?"):
        q_inp = dc_replace(inp, question=question)
        q_rows = cf(q_inp, 20)
        x = gate_features(q_inp, q_rows, [0, 1])[0]
        assert focus_of(question, q_rows.terms).tokens == ()
        assert x[GATE_NAMES.index("g_focus_cov_best")] == 0.0 and x[GATE_NAMES.index("g_focus_cov_top")] == 0.0
        assert x[GATE_NAMES.index("g_focus_missing")] == 1.0


def test_english_function_words_only_leave_the_focus():
    from retrieval.learned.judge.features import question_terms

    stats = tenant_stats(LexicalIndex([], "tenant"))
    # Content words that a long English stopword list would drop ("area", "face", "site", the code NF-e) stay.
    q = "Onde encontro a NF-e? Does the face ID work in the area of the site?"
    assert focus_of(q, question_terms(q, stats)).tokens == ("encontro", "nf-e", "nf", "face", "id", "work", "area", "site")


def test_short_stems_and_short_prefixes_do_not_match():
    from retrieval.learned.judge.features import question_terms

    stats = tenant_stats(LexicalIndex([], "tenant"))
    for question, text in (("Qual a taxa?", "Chame um táxi."), ("A garantia é internacional?", "Use a internet."),
                           ("Qual o valor da contratação?", "O valor é contra a regra.")):
        focus = focus_of(question, question_terms(question, stats))
        forms = word_forms(text)
        word = {"Qual a taxa?": "taxa", "A garantia é internacional?": "internacional"}.get(question, "contratacao")
        j = focus.tokens.index(word)
        assert not holds(focus.forms[j], forms), (question, text)


# -- the executable registry ---------------------------------------------------------------------------------
def test_a_table_has_one_column_per_declaration_in_declaration_order():
    from retrieval.learned.judge.declaration import _f, _table

    feats = (_f("first", "", "", lambda ctx, n: ctx[n] * 10), _f("second", "", "", lambda ctx, n: -ctx[n]))
    X = _table(feats, [1.0, 2.0, 3.0], 3)
    assert X.tolist() == [[10.0, -1.0], [20.0, -2.0], [30.0, -3.0]]
    assert _table(feats, [], 0).shape == (0, 2)


def test_the_gate_signs_are_the_declared_ones():
    against = {n for n, s in zip(GATE_NAMES, GATE_SIGNS) if s < 0}
    assert against == {"g_focus_missing", "g_focus_missing_n", "g_unseen_index", "g_code_conflict"}


def test_the_feature_set_version_follows_every_declaration(monkeypatch):
    import dataclasses

    from retrieval.learned.judge import features as F

    now = F._feature_set_version()
    assert now == F.feature_set_version() and now.startswith("judge-features-")
    declared = F.CANDIDATE_FEATURES
    monkeypatch.setattr(F, "CANDIDATE_FEATURES", (declared[1], declared[0], *declared[2:]))
    reordered = F._feature_set_version()
    monkeypatch.setattr(F, "CANDIDATE_FEATURES", declared)
    assert F._feature_set_version() == now
    flipped = tuple(dataclasses.replace(f, sign=-f.sign) if f.name == "g_cos_best" else f for f in F.GATE_FEATURES)
    monkeypatch.setattr(F, "GATE_FEATURES", flipped)
    resigned = F._feature_set_version()
    assert len({now, reordered, resigned}) == 3


def test_each_column_is_computed_by_its_own_feature(case):
    """Columns are looked up by name: cov_chunk and cov_chunk_count of the hand case are where their names say."""
    inp, rows = case
    a = rows.chunk_ids.index("a#0")
    q = [t for t in dict.fromkeys(tokenize(QUESTION))]
    held = set(tokenize(DOCS[0].title + " " + DOCS[0].text))
    assert rows.column("cov_chunk_count")[a] == pytest.approx(sum(t in held for t in q) / len(q))
    assert rows.column("fused_rank_recip")[a] == pytest.approx(1.0 / rows.fused_ranks[a])


def test_reader_features_by_hand(case):
    """The reader's scores arrive with the input (the judge never runs a model itself)."""
    import dataclasses

    inp, rows = case
    assert np.all(rows.column("reader_maxsim") == 0.0) and np.all(rows.column("reader_gap") == 0.0)  # did not run
    read = dataclasses.replace(inp, reader={"a#0": 0.9, "b#0": 0.5, "c#0": 0.6})
    rows = candidate_features(read, 20)
    by_id = dict(zip(rows.chunk_ids, rows.column("reader_maxsim")))
    assert by_id == pytest.approx({"a#0": 0.9, "b#0": 0.5, "c#0": 0.6})
    gap = dict(zip(rows.chunk_ids, rows.column("reader_gap")))
    assert gap == pytest.approx({"a#0": 0.0, "b#0": 0.4, "c#0": 0.3})
    col = GATE_NAMES.index
    j_b, j_c = rows.chunk_ids.index("b#0"), rows.chunk_ids.index("c#0")
    x = gate_features(read, rows, [j_b, j_c])[0]
    assert x[col("g_reader_best")] == pytest.approx(0.6)
    assert x[col("g_reader_peak")] == pytest.approx(0.6 - 0.6)    # the window's median of 0.9, 0.5, 0.6
    x = gate_features(read, rows, [rows.chunk_ids.index("a#0")])[0]
    assert x[col("g_reader_peak")] == pytest.approx(0.9 - 0.6)


def test_reader_sentence_features_by_hand(case):
    """Each context sentence carries the reader's score of that sentence; a chunk whose sentences were not
    read lends them its own score; the gate reads the best sentence of the selected chunks."""
    import dataclasses

    inp, rows = case
    plain = sentence_features(QUESTION, ["a#0", "b#0"], inp.view, inp.stats)
    col = SENTENCE_NAMES.index
    assert np.all(plain.X[:, col("s_reader")] == 0.0) and np.all(plain.X[:, col("s_reader_gap")] == 0.0)
    read = dataclasses.replace(inp, reader={"a#0": 0.8, "b#0": 0.5, "c#0": 0.6},
                               reader_sentences={"a#0": (0.85, 0.7)})      # b#0's one sentence was not read
    sent = sentence_features(QUESTION, ["a#0", "b#0"], read.view, read.stats, None, read.reader,
                             read.reader_sentences)
    assert sent.texts[:2] == ("A garantia do leitor é de 12 meses.", "Vale para defeitos.")
    assert list(sent.X[:, col("s_reader")]) == pytest.approx([0.85, 0.7, 0.5])
    assert list(sent.X[:, col("s_reader_gap")]) == pytest.approx([0.0, 0.15, 0.35])
    rows = candidate_features(read, 20)
    g = GATE_NAMES.index
    x = gate_features(read, rows, [rows.chunk_ids.index("a#0"), rows.chunk_ids.index("b#0")])[0]
    assert x[g("g_reader_sentence")] == pytest.approx(0.85)
    x = gate_features(read, rows, [rows.chunk_ids.index("b#0")])[0]
    assert x[g("g_reader_sentence")] == pytest.approx(0.5)           # no sentence read: the chunk's score
