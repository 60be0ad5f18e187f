"""Property-based tests of the input paths (corpus, SQuAD, glossary, filters, settings, fusion weights, codes):
whatever the input, the result is a value or one of the project's own errors with a one-line message; tenant
identity is exact in value and type; a weight takes effect or is refused."""

from __future__ import annotations

import json
import math
import unicodedata

from helpers.fuzz import budget, typed
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from retrieval.ingest.corpus import chunk_documents, load_corpus, load_questions
from retrieval.backends.lexical import LexicalIndex
from retrieval.backends.store import RESERVED_KEYS, RESERVED_PREFIXES
from retrieval.core.codes import codes
from retrieval.core.errors import (
    CorpusError,
    InvalidFilter,
    InvalidGlossary,
    InvalidSetting,
    RetrievalError,
    TenantRequired,
)
from retrieval.core.filters import Filters, build_filters
from retrieval.core.text import tokenize
from retrieval.core.types import Document, RankedList, ScoredItem
from retrieval.settings import Settings
from retrieval.stages.fusion import fuse
from retrieval.stages.transforms import Glossary

# Any Unicode text: other scripts, combining marks, symbols (surrogates are not text: JSON escapes them apart).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
WORDS = st.sampled_from(["senha", "cofre", "prazo", "reembolso", "ativação", "não", "PX-7", "E-mail", "NF-e",
                         "garantia", "пароль", "密码", "كلمة", "κωδικός", "cafe\u0301", "Ñandú", "x\u0327\u0301"])
SENTENCE = st.lists(st.one_of(WORDS, TEXT), min_size=1, max_size=12).map(" ".join)
JSON_SCALAR = st.one_of(st.booleans(), st.integers(-2**70, 2**70), st.floats(), TEXT, st.none())
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                               st.dictionaries(TEXT, inner, max_size=3)), max_leaves=6)
TENANT = st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 1.5, -0.0]), st.sampled_from(["1", "a", "", "lumen"]))
KEY = st.one_of(st.sampled_from(["tenant", "kind", "year", "", " ", "$and", "$in", "#x", "chroma:document", "rw_hash",
                                 "rw_parent", "año", "ключ"]), TEXT)


def _one_line_error(exc: BaseException, *names: str) -> None:
    assert isinstance(exc, RetrievalError), repr(exc)
    text = str(exc)
    assert text and "\n" not in text and "\r" not in text, repr(text)
    for name in names:
        assert name in text, (name, text)


def _bad_key(key: str) -> bool:
    return not key.strip() or key.startswith(RESERVED_PREFIXES) or key in RESERVED_KEYS


# -- corpus ------------------------------------------------------------------------------------------------
RECORD = st.fixed_dictionaries(
    {"id": st.one_of(st.integers(0, 5).map(str), st.integers(0, 5), TEXT)},
    optional={"title": st.one_of(TEXT, st.integers()), "text": st.one_of(SENTENCE, st.just(""), st.integers()),
              "metadata": st.one_of(st.dictionaries(KEY, st.one_of(TENANT, JSON_SCALAR), max_size=4),
                                    st.dictionaries(st.just("tenant"), TENANT, max_size=1), JSON_VALUE)})


@settings(max_examples=budget(150))
@given(records=st.lists(st.one_of(RECORD, JSON_VALUE), min_size=0, max_size=6), tenant_field=st.sampled_from(["tenant", "kind"]))
def test_any_jsonl_corpus_loads_or_is_refused_in_one_line_naming_file_and_line(tmp_path_factory, records, tenant_field):
    path = tmp_path_factory.mktemp("c") / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records), encoding="utf-8")
    try:
        docs = load_corpus(path, tenant_field)
    except CorpusError as exc:
        _one_line_error(exc)
        assert str(path) in str(exc)
        return
    # Loaded: every key acceptable to the stores, every value a scalar they hold, one type in the tenant field.
    for doc in docs:
        for key, value in doc.metadata.items():
            assert not _bad_key(key), key
            assert type(value) in (str, int, float, bool)
            assert not isinstance(value, float) or math.isfinite(value)
    kinds = {type(d.metadata[tenant_field]) for d in docs if tenant_field in d.metadata}
    assert len(kinds) <= 1, kinds
    chunk_documents(docs, 20, 5)  # chunking never fails on a loaded corpus


@settings(max_examples=budget(50))
@given(data=JSON_VALUE)
def test_any_squad_like_json_loads_or_is_one_corpus_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("s") / "squad.json"
    path.write_text(json.dumps({"data": data} if not isinstance(data, dict) else data), encoding="utf-8")
    for load in (load_corpus, load_questions):
        try:
            load(path)
        except CorpusError as exc:
            _one_line_error(exc, "squad.json")


@settings(max_examples=budget(50))
@given(data=st.one_of(JSON_VALUE, st.dictionaries(st.sampled_from(["abbreviations", "spelling", "synonyms"]), JSON_VALUE)),
       broken=st.booleans())
def test_any_glossary_loads_or_is_one_line_naming_the_file(tmp_path_factory, data, broken):
    path = tmp_path_factory.mktemp("g") / "glossary.json"
    text = json.dumps(data, ensure_ascii=False)
    path.write_text(text[:-1] if broken and len(text) > 1 else text, encoding="utf-8")
    try:
        glossary = Glossary.load(path)
    except InvalidGlossary as exc:
        _one_line_error(exc, str(path))
        return
    assert all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in glossary.synonyms.values())
    assert all(isinstance(v, str) for v in [*glossary.abbreviations.values(), *glossary.spelling.values()])


# -- tenancy: exact in value and type ----------------------------------------------------------------------
@settings(max_examples=budget(80))
@given(tenants=st.lists(TENANT, min_size=1, max_size=6), pick=st.integers(0, 5), engine=st.sampled_from(["bm25s", "rank-bm25"]),
       words=st.lists(WORDS, min_size=1, max_size=4))
def test_bm25_never_returns_another_tenants_chunk_even_when_values_compare_equal(tenants, pick, engine, words):
    """Built below the corpus loader (which refuses mixed types): True, 1, 1.0 and "1" stay four tenants."""
    docs = [Document(f"d{n}", "", f"senha cofre {' '.join(words)} segredo{n}", {"tenant": t}) for n, t in enumerate(tenants)]
    chunks = chunk_documents(docs, 50, 5)
    index = LexicalIndex(chunks, "tenant", engine)
    tenant = tenants[pick % len(tenants)]
    found = index.search("senha " + " ".join(words), Filters((("tenant", (tenant,)),)), 20)
    expected = {f"d{n}" for n, t in enumerate(tenants) if typed(t) == typed(tenant)}
    assert {i.parent_id for i in found.items} == expected
    assert index.size(tenant) == len(expected)


@settings(max_examples=budget(100))
@given(values=st.lists(st.tuples(st.sampled_from(["tenant", "kind", "year", "nope"]),
                                 st.one_of(TENANT, TEXT, st.lists(TENANT, max_size=3))), max_size=4),
       corpus=st.lists(st.fixed_dictionaries({"tenant": TENANT, "kind": st.one_of(TENANT, TEXT),
                                              "year": st.integers(1990, 2030)}), min_size=1, max_size=5))
def test_filters_are_typed_exactly_or_refused(values, corpus):
    types = {}
    for meta in corpus:
        for key, value in meta.items():
            types.setdefault(key, set()).add(type(value))
    try:
        flt = build_filters(values, types, "tenant")
    except (InvalidFilter, TenantRequired) as exc:
        _one_line_error(exc)
        return
    tenants = flt.get("tenant")
    assert tenants is not None and len(tenants) == 1  # exactly one tenant per request
    for key, allowed in flt.clauses:
        assert all(type(v) in types[key] for v in allowed)
    for meta in corpus:  # matches() is exact equality of (type, value) on every clause
        expected = all(typed(meta[key]) in {typed(v) for v in allowed} for key, allowed in flt.clauses)
        assert flt.matches(meta) == expected
    assert flt == build_filters(values, types, "tenant") and hash(flt) == hash(build_filters(values, types, "tenant"))


# -- settings: one line, naming the setting -----------------------------------------------------------------
FIELDS = sorted(Settings.model_fields)


@settings(max_examples=budget(80))
@given(name=st.one_of(st.sampled_from(FIELDS), TEXT.map(str.lower)),
       value=st.one_of(TEXT, st.integers(-10**6, 10**6).map(str), st.sampled_from(
           ["0", "-1", "200", "true", "nan", "inf", "rewrite,hyde", "bm25=1,dense=0", "bm25=0,dense=0", "Dense=0",
            "weighted_rrf", "combsum", "[]", "none"])))
def test_any_set_value_gives_settings_or_one_line_naming_the_setting(name, value):
    base = Settings(_env_file=None)
    try:
        changed = base.with_overrides(**{name: value})
    except InvalidSetting as exc:
        _one_line_error(exc)
        assert (name if name in FIELDS else repr(name)) in str(exc) or "invalid settings:" in str(exc)
        return
    assert name in FIELDS
    if changed.fusion_weights:  # a weight never silently does nothing
        assert changed.fusion in ("weighted_rrf", "combsum")


# -- fusion: weights take effect -----------------------------------------------------------------------------
IDS = st.lists(st.sampled_from([f"c{n}" for n in range(8)]), unique=True, max_size=6)


@settings(max_examples=budget(60))
@given(bm25=IDS, dense=IDS, rewrite=IDS, method=st.sampled_from(["weighted_rrf", "combsum"]),
       weights=st.dictionaries(st.sampled_from(["bm25", "dense", "bm25:rewrite"]),
                               st.sampled_from([0.0, 0.5, 1.0, 2.0]), max_size=3))
def test_a_weight_zero_ranker_neither_lists_nor_orders(bm25, dense, rewrite, method, weights):
    def ranked(ids, stage):
        return RankedList(stage, "x", tuple(ScoredItem(c, c, r, 10.0 - r) for r, c in enumerate(ids, start=1)))

    lists = {"bm25": ranked(bm25, "lexical"), "dense": ranked(dense, "dense"), "bm25:rewrite": ranked(rewrite, "lexical")}
    fused = fuse(lists, method, 60, weights)

    def weight(r):
        return weights.get(r, weights.get(r.split(":")[0], 1.0))

    live = {r for r in lists if weight(r) > 0}
    expected = {c for r in live for c in (i.chunk_id for i in lists[r].items)}
    assert set(fused.chunk_ids()) == expected
    for item in fused.items:
        assert set(item.contributions) <= live and set(item.ranks) <= live
    dead = sorted(set(lists) - live)
    if dead:
        assert fused.note and all(r in fused.note.text() for r in dead)


# -- codes need evidence -----------------------------------------------------------------------------------
@settings(max_examples=budget(40))
@given(head=st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), tail=st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8),
       digit=st.integers(0, 999), rest=SENTENCE)
def test_capital_and_hyphen_are_not_evidence_of_a_code(head, tail, digit, rest):
    word = f"{head}-{tail}"
    assert word not in codes(f"{word} {rest}")
    assert word in codes(f"{word} {rest}", known={word.lower()})
    assert f"{head}-{digit}" in codes(f"{rest} {head}-{digit}")


@settings(max_examples=budget(30))
@given(text=SENTENCE)
def test_codes_are_the_same_in_nfc_and_nfd(text):
    assert codes(unicodedata.normalize("NFC", text)) == codes(unicodedata.normalize("NFD", text))


# -- every script is searchable ------------------------------------------------------------------------------
SCRIPT_LETTERS = st.sampled_from([(0x0430, 0x044F), (0x03B1, 0x03C9), (0x0627, 0x064A), (0x0905, 0x0939),
                                  (0x4E00, 0x4FFF), (0x3041, 0x3096), (0xAC00, 0xAD00), (0x61, 0x7A)])


@settings(max_examples=budget(60))
@given(data=st.data())
def test_a_word_of_any_script_finds_its_document_and_nfc_equals_nfd(data):
    low, high = data.draw(SCRIPT_LETTERS)
    word = data.draw(st.text(st.characters(min_codepoint=low, max_codepoint=high, categories=("L",)), min_size=2,
                             max_size=8))
    assume(tokenize(word))          # a stopword of the Latin range has no token by design
    docs = [Document("target", "", f"{word} relatório", {"tenant": "A"}),
            Document("other", "", "outro relatório qualquer", {"tenant": "A"})]
    index = LexicalIndex(chunk_documents(docs, 50, 5), "tenant")
    found = index.search(word, Filters((("tenant", ("A",)),)), 5)
    assert found.items and found.items[0].parent_id == "target"
    assert tokenize(unicodedata.normalize("NFD", word)) == tokenize(unicodedata.normalize("NFC", word))
