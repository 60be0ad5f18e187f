"""Issue classes of the reliability work, one concrete member each (the property tests cover the classes):
exact tenant identity, one tenant per request, load-time refusals, one-line errors, settings that take effect
or are refused, codes that need evidence, cross-encoder truncation records."""

from __future__ import annotations

import json

import pytest

from retrieval.ingest.corpus import chunk_documents, load_corpus
from retrieval.backends.lexical import LexicalIndex
from retrieval.core.codes import codes, corpus_codes, invariant_flags
from retrieval.core.errors import CorpusError, InvalidFilter, InvalidGlossary, InvalidSetting, RetrievalError
from retrieval.core.filters import Filters, build_filters
from retrieval.core.types import Document, RankedList, ScoredItem
from retrieval.settings import Settings
from retrieval.stages.fusion import fuse, parse_weights, weighted_rrf
from retrieval.stages.transforms import Glossary


def _jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, repr(text)
    return text


SECRET = "A senha do cofre é 4512 para o time."


# -- tenancy ---------------------------------------------------------------------------------------------
def test_tenant_field_mixing_json_types_is_refused_with_file_and_line(tmp_path):
    path = _jsonl(tmp_path / "c.jsonl", [
        {"id": "a", "text": SECRET, "metadata": {"tenant": 1}},
        {"id": "b", "text": SECRET, "metadata": {"tenant": "x"}},
        {"id": "c", "text": SECRET, "metadata": {"tenant": True}},
    ])
    with pytest.raises(CorpusError) as err:
        load_corpus(path)
    message = _one_line(err.value)
    assert "c.jsonl:2:" in message and "c.jsonl:1" in message and "tenant" in message
    for pair in ([1, 1.0], [True, 1], ["1", 1]):
        path = _jsonl(tmp_path / "d.jsonl", [{"id": str(n), "text": SECRET, "metadata": {"tenant": v}}
                                             for n, v in enumerate(pair)])
        with pytest.raises(CorpusError, match=r"d\.jsonl:2: tenant field 'tenant'"):
            load_corpus(path)
    # Another field name as the tenant field: checked when named, free otherwise.
    assert len(load_corpus(path, tenant_field="org")) == 2


def test_bm25_indexes_and_filters_keep_tenants_1_and_true_apart():
    """The leak: tenants 1 and True merged one BM25 index (True == 1) and passed ``True in (1,)``."""
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


def test_filter_values_keep_their_type_and_one_tenant_per_request():
    types = {"tenant": {int}, "flag": {bool}, "code": {int, str}, "price": {float}}
    assert build_filters({"tenant": 1}, types, "tenant").get("tenant") == (1,)
    with pytest.raises(InvalidFilter, match="bool"):
        build_filters({"tenant": True}, types, "tenant")  # True is not the tenant 1
    with pytest.raises(InvalidFilter, match="int"):
        build_filters([("tenant", "1"), ("flag", 1)], types, "tenant")  # 1 is not True
    with pytest.raises(InvalidFilter):
        build_filters([("tenant", "1_0")], types, "tenant")  # Python's int() would read 10
    assert build_filters([("tenant", "1"), ("code", "7")], types, "tenant").get("code") == (7, "7")
    assert build_filters([("tenant", "1"), ("price", 2)], types, "tenant").get("price") == (2.0,)
    with pytest.raises(InvalidFilter, match=r"exactly one tenant; got 2") as err:
        build_filters([("tenant", "1"), ("tenant", "2")], types, "tenant")
    _one_line(err.value)
    with pytest.raises(InvalidFilter, match="exactly one tenant"):
        build_filters({"tenant": [1, 2]}, types, "tenant")
    assert build_filters([("tenant", "1"), ("tenant", 1)], types, "tenant").get("tenant") == (1,)  # same one


def test_chroma_where_is_exact_per_type():
    assert Filters((("tenant", (1,)),)).chroma_where() == {"tenant": {"$eq": 1}}
    assert Filters((("c", (1, 2)),)).chroma_where() == {"c": {"$in": [1, 2]}}
    mixed = Filters((("tenant", ("a",)), ("c", (1, "1")))).chroma_where()
    assert mixed == {"$and": [{"tenant": {"$eq": "a"}}, {"$or": [{"c": {"$eq": 1}}, {"c": {"$eq": "1"}}]}]}


# -- load-time refusals ------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["", "  ", "$and", "$or", "#document", "chroma:document", "rw_hash", "rw_parent",
                                 "rw_position"])
def test_metadata_keys_empty_operator_or_reserved_are_refused(tmp_path, key):
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "ok", "metadata": {"tenant": "x"}},
                                         {"id": "b", "text": "ok", "metadata": {"tenant": "x", key: "v"}}])
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: metadata key") as err:
        load_corpus(path)
    _one_line(err.value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**70])
def test_metadata_values_the_stores_cannot_hold_are_refused(tmp_path, value):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "ok", "metadata": {"n": value}}), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c\.jsonl:1: metadata 'n'"):
        load_corpus(path)


@pytest.mark.parametrize("data", [{"data": ["x"]}, {"data": [{"paragraphs": "x"}]}, {"data": [{"paragraphs": [1]}]},
                                  {"data": [{"paragraphs": [{"context": "c", "qas": [{"id": 1}]}]}]},
                                  {"data": [{"paragraphs": [{"context": 5}]}]}, ["x"], {"data": {}}])
def test_malformed_squad_is_one_corpus_error(tmp_path, data):
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    from retrieval.ingest.corpus import load_questions

    for load in (load_corpus, load_questions):
        with pytest.raises(CorpusError) as err:
            load(path)
        assert "squad.json" in _one_line(err.value)


@pytest.mark.parametrize("content, match", [
    ('["pgto", "pagamento"]', "JSON object"),
    ('{"abbreviations": {"pgto": "pagamento"', "invalid glossary JSON"),
    ('{"synonyms": {"reembolso": "estorno"}}', "synonyms of 'reembolso' must be a list"),
    ('{"synonyms": {"reembolso": [1]}}', "must be a list of texts"),
    ('{"abbreviations": ["pgto"]}', "'abbreviations' must be an object"),
    ('{"spelling": {"x": 3}}', "must be a non-empty text"),
    ('{"synonym": {}}', "unknown glossary section"),
])
def test_invalid_glossary_is_one_line_naming_the_file(tmp_path, content, match):
    path = tmp_path / "glossary.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidGlossary, match=match) as err:
        Glossary.load(path)
    assert str(path) in _one_line(err.value)
    assert isinstance(err.value, RetrievalError)


# -- settings take effect or are refused -------------------------------------------------------------------
def _lists():
    bm25 = RankedList("lexical", "bm25", (ScoredItem("a", "a", 1, 3.0), ScoredItem("b", "b", 2, 2.0)))
    dense = RankedList("dense", "cosine", (ScoredItem("c", "c", 1, 0.9), ScoredItem("a", "a", 2, 0.8)))
    return {"bm25": bm25, "dense": dense}


@pytest.mark.parametrize("method", ["weighted_rrf", "combsum"])
def test_weight_zero_ranker_is_dropped_from_the_fusion_and_said(method):
    fused = fuse(_lists(), method, 60, {"bm25": 1.0, "dense": 0.0})
    assert fused.chunk_ids() == ["a", "b"]  # c (dense only) is not listed, a is ordered by bm25 alone
    assert all(set(i.contributions) == {"bm25"} for i in fused.items)
    if method == "weighted_rrf":
        assert [i.score for i in fused.items] == pytest.approx([1 / 61, 1 / 62])
    assert "dropped from the fusion (weight 0): dense" in fused.note.text()


def test_weights_of_rankers_without_a_list_are_reported():
    fused = weighted_rrf({"bm25": ["a"]}, weights={"bm25": 1.0, "dense": 0.5, "bm25:rewrite": 2.0})
    assert fused.note.text() == "weights with no list in this request: dense, bm25:rewrite"
    assert weighted_rrf({"bm25": ["a"], "bm25:multi_query#2": ["b"]}, weights={"bm25:multi_query": 0.0}).chunk_ids() \
        == ["a"]  # a variant's weight covers its numbered lists


@pytest.mark.parametrize("text, match", [
    ("bm25=0,dense=0", "all 0"), ("Dense=0", "unknown ranker 'Dense'"), ("bm2=0", "unknown ranker 'bm2'"),
    ("bm25:hyde=1", "dense:hyde"), ("dense:foo=1", "unknown ranker"), ("bm25=1,bm25=2", "twice"),
    ("bm25=-1", "≥ 0"), ("bm25=nan", "finite"), ("bm25", "name=number"),
])
def test_bad_fusion_weights_are_refused_in_one_line(text, match):
    with pytest.raises(InvalidSetting, match=match) as err:
        Settings(_env_file=None).with_overrides(fusion="weighted_rrf", fusion_weights=text)
    _one_line(err.value)
    assert "fusion_weights" in str(err.value)


def test_weights_need_a_weighted_fusion_and_variant_weights_their_transform():
    base = Settings(_env_file=None)
    with pytest.raises(InvalidSetting, match="plain rrf ignores them"):
        base.with_overrides(fusion_weights="bm25=1,dense=0.5")
    with pytest.raises(InvalidSetting, match="'rewrite' transform"):
        base.with_overrides(fusion="weighted_rrf", fusion_weights="bm25:rewrite=2")
    ok = base.with_overrides(fusion="weighted_rrf", fusion_weights="bm25:rewrite=2,dense:hyde=0.5",
                             transforms="rewrite,hyde")
    assert ok.fusion_weight_map == {"bm25:rewrite": 2.0, "dense:hyde": 0.5}
    assert parse_weights("bm25=1,dense=0") == {"bm25": 1.0, "dense": 0.0}


@pytest.mark.parametrize("overrides, expected", [
    ({"chunk_overlap": "200"}, "chunk_overlap=200: must be smaller than chunk_tokens (120)"),
    ({"top_k": "0"}, "invalid setting top_k='0': Input should be greater than or equal to 1"),
    ({"dedup": "doc"}, "invalid setting dedup='doc': Input should be 'parent' or 'chunk'"),
    ({"rrf_k": "abc"}, "invalid setting rrf_k='abc'"),
    ({"transforms": "rewrite,nope"}, "unknown transform(s) nope"),
    ({"nope": "1"}, "unknown setting(s): 'nope'"),
])
def test_setting_errors_are_one_line_naming_setting_value_and_rule(overrides, expected):
    with pytest.raises(InvalidSetting) as err:
        Settings(_env_file=None).with_overrides(**overrides)
    assert expected in _one_line(err.value)


# -- codes need evidence -----------------------------------------------------------------------------------
def test_capitalised_hyphenated_words_are_not_codes():
    assert codes("E-mail de confirmação não chegou") == []
    assert codes("T-shirt, K-pop, X-ray, E-book e Check-in") == []
    assert codes("PX-7, E-42, NF-e, USB-C e px-17") == ["PX-7", "E-42", "NF-e", "USB-C", "px-17"]
    assert invariant_flags("E-mail de confirmação não chegou", "email de confirmação não chegou") == ()
    assert codes("O X-Pro travou", known={"x-pro"}) == ["X-Pro"]  # a code the corpus itself uses
    texts = ["Emita a NF-e.", "O X-Pro e o K-pop. Veja o e-mail.", "E-mail enviado; k-pop tocando."]
    assert corpus_codes(texts) == frozenset({"nf-e", "x-pro"})


# -- cross-encoder truncation ------------------------------------------------------------------------------
class _WordTokenizer:
    """Whitespace 'tokens' plus [CLS] [SEP] [SEP], like a BERT pair encoding."""

    model_max_length = 512

    def __call__(self, first, second, **_):
        return {"input_ids": [[0] * (len(a.split()) + len(b.split()) + 3) for a, b in zip(first, second)]}


class _TruncatingModel:
    max_length = 10
    tokenizer = _WordTokenizer()

    def predict(self, pairs, show_progress_bar=False):
        # Reads the first max_length tokens only: two passages that differ past the limit score the same.
        return [float(len(" ".join([q, p]).split()[: self.max_length - 3])) for q, p in pairs]


def test_cross_encoder_records_truncation_per_item():
    from retrieval.stages.rerank.cross_encoder import CrossEncoderReranker

    reranker = CrossEncoderReranker("fake", _TruncatingModel())
    passages = ["um dois", "um dois tres quatro cinco seis sete", "um dois tres quatro cinco seis oito"]
    scores, records = reranker.score_items("qual prazo", passages)
    assert scores[1] == scores[2]  # identical up to the limit
    assert records == [{"truncated": False, "tokens": 7, "limit": 10},
                       {"truncated": True, "tokens": 12, "limit": 10},
                       {"truncated": True, "tokens": 12, "limit": 10}]
    assert reranker.truncation("qual prazo", passages[:1]) == records[:1]


# -- shrunk examples found by the property tests -----------------------------------------------------------
def test_codes_read_nfc_and_nfd_alike():
    """Found by the property test: in NFD the accent of "À" is not a word character, so "ÀA-0" showed a code."""
    import unicodedata

    assert codes("ÀA-0") == codes(unicodedata.normalize("NFD", "ÀA-0")) == []
    assert codes(unicodedata.normalize("NFD", "Ativação do PX-7")) == ["PX-7"]


def test_jsonl_lines_are_split_at_newlines_only(tmp_path):
    """Found by the property test: a title holding U+0085 (or U+2028) unescaped cut its line in two."""
    path = tmp_path / "c.jsonl"
    rows = [{"id": "a", "title": "\x85", "text": "senha\u2028cofre", "metadata": {"tenant": False}},
            {"id": "b", "text": "ok", "metadata": {"tenant": True}}]
    path.write_text("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    docs = load_corpus(path)
    assert [(d.id, d.title, d.text) for d in docs] == [("a", "\x85", "senha\u2028cofre"), ("b", "", "ok")]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [*rows, {"id": "a", "text": "x"}]),
                    encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c\.jsonl:3: duplicate id 'a' \(first at .*c\.jsonl:1\)"):
        load_corpus(path)


def test_a_tenant_the_corpus_does_not_have_finds_nothing():
    """Found by the CLI property test (``--filter tenant=``): the empty tenant is a value like any other, and
    a tenant the corpus lacks finds nothing (no other tenant's chunk, and no list of tenant names either)."""
    docs = [Document("a", "", "senha do cofre", {"tenant": "lumen"}), Document("b", "", "senha do cofre", {"tenant": ""})]
    index = LexicalIndex(chunk_documents(docs, 50, 5), "tenant")
    assert [i.parent_id for i in index.search("senha", Filters((("tenant", ("",)),)), 5).items] == ["b"]
    assert index.search("senha", Filters((("tenant", ("lumn",)),)), 5).items == ()
    assert index.search("senha", Filters((("tenant", ()),)), 5).items == ()  # an emptied clause never widens


# -- the tenant field named by the settings, at corpus load -------------------------------------------------------
_TENANT_DOCS = [{"id": "a", "text": SECRET, "metadata": {"tenant": "t1"}},
                {"id": "b", "text": SECRET, "metadata": {"tenant": "t2"}}]


def _load(tmp_path, docs, **overrides):
    import threading

    from retrieval.pipeline.index import build_index

    settings = Settings(_env_file=None, **overrides)
    path = _jsonl(tmp_path / "t.jsonl", docs) if docs is not None else None
    return build_index(settings, path, None, "no embedder here", lambda: (None, "unused"), threading.RLock())


def test_a_misspelled_tenant_field_is_refused_in_one_line_naming_the_keys(tmp_path):
    with pytest.raises(CorpusError) as err:
        _load(tmp_path, None, tenant_field="tennant")  # the lab corpus
    message = str(err.value)
    assert "\n" not in message and "'tennant' (RETRIEVAL_TENANT_FIELD) is in no document" in message
    assert "their metadata keys are" in message and "'tenant'" in message and "'year'" in message


def test_a_partial_tenant_field_is_refused_naming_the_count(tmp_path):
    docs = [*_TENANT_DOCS, {"id": "e", "text": "Sem dono.", "metadata": {"year": 2024}}]
    with pytest.raises(CorpusError, match=r"1 of 3 documents have no tenant field 'tenant' \(first: 'e'\)"):
        _load(tmp_path, docs)


def test_the_lab_corpus_and_single_tenant_corpora_still_load(tmp_path):
    lab = _load(tmp_path, None)
    assert lab.tenants == ["lumen", "ventura"]
    plain = [{"id": "x", "text": "Um texto.", "metadata": {"category": "manual"}}, {"id": "y", "text": "Outro."}]
    assert _load(tmp_path, plain).tenants == []  # no tenant under the default name: single-tenant
    bare = [{"id": "x", "text": "Um texto."}, {"id": "y", "text": "Outro."}]
    assert len(_load(tmp_path, bare, tenant_field="org").documents) == 2  # no metadata at all: nothing misspelled
    org = [{"id": "x", "text": "Um.", "metadata": {"org": "A"}}, {"id": "y", "text": "Dois.", "metadata": {"org": "B"}}]
    assert _load(tmp_path, org, tenant_field="org").tenants == ["A", "B"]
