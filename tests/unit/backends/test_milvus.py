"""Milvus filter expressions are built from typed filters: values are literals that cannot close themselves."""

from __future__ import annotations

import json

import pytest

from retrieval.backends.lexical import lucene_idf
from retrieval.backends.milvus import Schema, doc_weights, literal, sparse_vector, tenant_key, term_id
from retrieval.core.errors import InvalidFilter
from retrieval.core.filters import Filters

HOSTILE = 'x" or 1==1 or doc_type == "\' \\ ) or (true'


def test_string_literal_is_escaped_and_round_trips():
    rendered = literal(HOSTILE)
    assert rendered == '"x\\" or 1==1 or doc_type == \\"\' \\\\ ) or (true"'
    assert json.loads(rendered) == HOSTILE
    # Every inner double quote is escaped: the literal ends only at its last character.
    body = rendered[1:-1]
    assert all(body[i - 1] == "\\" for i, ch in enumerate(body) if ch == '"')


#: The escapes Milvus's parser reads in a double-quoted string (measured on Milvus Lite: \\uXXXX, \\xHH, octal,
#: \\a, \\b, \\f and \\v are refused; a raw line feed or carriage return ends the string).
MILVUS_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}


def _milvus_reads(rendered: str) -> str:
    """The value Milvus's parser reads from a double-quoted literal, or AssertionError where it refuses it."""
    assert rendered[0] == rendered[-1] == '"'
    out, chars = [], iter(rendered[1:-1])
    for ch in chars:
        assert ch not in '"\n\r', f"raw {ch!r} inside the literal"
        if ch == "\\":
            nxt = next(chars)
            assert nxt in MILVUS_ESCAPES, f"unknown escape sequence \\{nxt}"
            ch = MILVUS_ESCAPES[nxt]
        out.append(ch)
    return "".join(out)


def test_every_character_survives_in_an_escape_milvus_reads():
    """Control characters built expressions Milvus rejected (JSON's \\u0001): the tenant's every request fell to
    lexical_only. Every character from U+0000 to U+2FFF, and some beyond the BMP, reads back as itself."""
    chars = [chr(c) for c in range(0x3000) if not 0xD800 <= c <= 0xDFFF] + ["😀", "\U0010FFFF", "\ue000"]
    for ch in chars:
        value = f"a{ch}b{ch}"
        assert _milvus_reads(literal(value)) == value, repr(ch)
    for value in ("", "\\", '"', "\\\"", 'a\\"b', "\\u0041", "\\n", "x\\", "\n\r\t\x00\x0b\x0c\x7f\x85\u2028",
                  "josé", "🚀", HOSTILE):
        assert _milvus_reads(literal(value)) == value, repr(value)
    with pytest.raises(InvalidFilter, match="not valid Unicode"):
        literal("a\ud800")


def test_a_json_path_key_is_a_literal_too():
    schema = Schema({"tenant": {str}, 'we"ird\x01 key\n': {str}}, "tenant")
    flt = Filters((("tenant", ("t\x01",)), ('we"ird\x01 key\n', ("v\x02",))))
    assert schema.expression(flt, "t\x01") == ('(tenant == "t\x01") and (meta["we\\"ird\x01 key\\n"] == "v\x02")')


def test_typed_literals():
    assert literal(True) == "true" and literal(False) == "false"
    assert literal(2024) == "2024" and literal(2.5) == "2.5"
    assert literal("automático") == '"automático"'  # Milvus reads no \\u escape
    with pytest.raises(InvalidFilter):
        literal(float("nan"))
    with pytest.raises(InvalidFilter):
        literal(["a"])


def test_expression_tenant_first_and_in_within_key():
    schema = Schema({"tenant": {str}, "doc_type": {str}, "year": {int}, "weird key": {str}}, "tenant")
    assert schema.scalars == {"doc_type": "VARCHAR", "year": "INT64"}
    flt = Filters((("tenant", ("lumen",)), ("doc_type", ("faq", HOSTILE)), ("year", (2023, 2024)),
                   ("weird key", ("a", 2))))
    expr = schema.expression(flt, "lumen")
    assert expr == ('(tenant == "lumen") and (m_doc_type in ["faq", ' + literal(HOSTILE) + ']) and '
                    '(m_year in [2023, 2024]) and (meta["weird key"] == "a" or meta["weird key"] == 2)')
    assert schema.expression(Filters((("tenant", ("lumen",)), ("year", ()))), "lumen") == 'id == "" and id != ""'


def test_tenant_keys_keep_types_apart():
    assert tenant_key("1") == "1" and tenant_key(1) == "json:1" and tenant_key(None) == ""


def test_sparse_vector_inner_product_is_bm25():
    # BM25 of a two-token query on a 3-token document in a tenant of 4 chunks, avgdl 2, by hand.
    doc = ["px-7", "ativacao", "px-7"]
    weights = doc_weights(doc, avgdl=2.0)
    norm = 1.5 * (1 - 0.75 + 0.75 * 3 / 2.0)
    assert weights["px-7"] == pytest.approx(2 * 2.5 / (2 + norm))
    assert weights["ativacao"] == pytest.approx(1 * 2.5 / (1 + norm))
    query = {term_id("px-7"): lucene_idf(4, 1), term_id("prazo"): lucene_idf(4, 2)}
    doc_vec = sparse_vector(weights)
    ip = sum(w * doc_vec.get(d, 0.0) for d, w in query.items())
    assert ip == pytest.approx(lucene_idf(4, 1) * 2 * 2.5 / (2 + norm))
    assert term_id("a") == 0xE40C292C  # the FNV-1a 32-bit test vector: stable across processes
