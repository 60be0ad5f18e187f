"""Corpus and question readers: every accepted format, and clear errors that name file and line."""

from __future__ import annotations

import json

import pytest

from retrieval.corpus import chunk_documents, load_corpus, load_questions
from retrieval.errors import CorpusError, InvalidFilter, TenantRequired
from retrieval.filters import build_filters, field_types


def _jsonl(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows),
                    encoding="utf-8")
    return path


def test_duplicate_id_names_file_and_both_lines(tmp_path):
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}, {"id": "a", "text": "z"}])
    with pytest.raises(CorpusError, match=r"c\.jsonl:3: duplicate id 'a' \(first at .*c\.jsonl:1\)"):
        load_corpus(path)


@pytest.mark.parametrize("row, message", [
    ('{"id": "a", "text": ""}', r":1: document 'a' has an empty 'text'"),
    ('{"id": "a", "text": "   "}', r":1: document 'a' has an empty 'text'"),
    ('{"id": "a", "text": "ok"', r":1: invalid JSON"),
    ('{"text": "ok"}', r":1: missing or empty 'id'"),
    ('["a"]', r":1: each line must be a JSON object"),
    ('{"id": "a", "text": "ok", "metadata": {"x": [1]}}', r":1: metadata 'x' must be"),
])
def test_malformed_lines(tmp_path, row, message):
    with pytest.raises(CorpusError, match=message):
        load_corpus(_jsonl(tmp_path / "c.jsonl", [row]))


def test_empty_corpus_and_missing_path(tmp_path):
    with pytest.raises(CorpusError, match="no document"):
        load_corpus(_jsonl(tmp_path / "c.jsonl", ["", "  "]))
    with pytest.raises(CorpusError, match="no such file"):
        load_corpus(tmp_path / "missing.jsonl")


def test_folder_with_front_matter_skips_readme(tmp_path):
    (tmp_path / "README.md").write_text("# ignore me", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("---\ntitle: Guia\ntenant: A\nyear: 2024\n---\nTexto do guia.",
                                           encoding="utf-8")
    (tmp_path / "b.txt").write_text("Outro texto.", encoding="utf-8")
    docs = {d.id: d for d in load_corpus(tmp_path)}
    assert set(docs) == {"sub/a.md", "b.txt"}
    assert docs["sub/a.md"].title == "Guia"
    assert docs["sub/a.md"].metadata == {"tenant": "A", "year": 2024}
    assert docs["sub/a.md"].text == "Texto do guia."


def test_squad_file_gives_documents_and_questions(tmp_path):
    squad = {"data": [{"title": "Ensino_Superior", "paragraphs": [
        {"context": "A UFMS fica em Campo Grande.", "qas": [
            {"id": "q1", "question": "Onde fica a UFMS?", "answers": [{"text": "Campo Grande", "answer_start": 15}]}]}]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(squad), encoding="utf-8")
    (doc,) = load_corpus(path)
    assert (doc.id, doc.title, doc.metadata) == ("ensino-superior-p0", "Ensino Superior", {"article": "Ensino_Superior"})
    (q,) = load_questions(path)
    assert (q.id, q.relevant, q.answers) == ("q1", ("ensino-superior-p0",), ("Campo Grande",))


def test_beir_folder(tmp_path):
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "title": "T", "text": "texto um"}, {"_id": "d2", "text": "dois"}])
    _jsonl(tmp_path / "queries.jsonl", [{"_id": "q1", "text": "um?"}, {"_id": "q2", "text": "sem qrels"}])
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n", encoding="utf-8")
    assert [d.id for d in load_corpus(tmp_path)] == ["d1", "d2"]
    (q,) = load_questions(tmp_path)
    assert (q.id, q.relevant, q.graded) == ("q1", ("d1",), {"d1": 2})


def test_chunks_carry_parent_metadata_and_ids():
    from retrieval.types import Document

    words = " ".join(f"palavra{i}." for i in range(50))
    chunks = chunk_documents([Document("p", "T", words, {"tenant": "A"})], 20, 5)
    assert [c.chunk_id for c in chunks] == [f"p#{n}" for n in range(len(chunks))]
    assert len(chunks) >= 3
    assert all(c.metadata == {"tenant": "A"} and c.parent_id == "p" for c in chunks)
    assert all(len(c.text.split()) <= 20 for c in chunks)
    # consecutive chunks overlap by whole sentences
    assert chunks[0].text.split()[-1] in chunks[1].text.split()


def test_lab_and_faquad_gold_spans_survive_chunking():
    from _paths import FAQUAD

    from retrieval.settings import LAB_CORPUS, LAB_QUESTIONS, Settings

    s = Settings(_env_file=None)
    sets = [(LAB_CORPUS, LAB_QUESTIONS)]
    if (FAQUAD / "corpus.jsonl").exists():  # ../shared is there in CI, not on a user's machine
        sets.append((FAQUAD / "corpus.jsonl", FAQUAD / "questions.jsonl"))
    for corpus, questions in sets:
        chunks = chunk_documents(load_corpus(corpus), s.chunk_tokens, s.chunk_overlap)
        by_parent = {}
        for c in chunks:
            by_parent.setdefault(c.parent_id, []).append(c.text)
        cut = [q.id for q in load_questions(questions) if q.answers and q.relevant
               and not any(a in t for a in q.answers for p in q.relevant for t in by_parent[p])]
        assert cut == [], f"{corpus.name}: spans cut by chunking: {cut[:5]}"


def test_filters_typed_in_and_tenant_required():
    from retrieval.types import Document

    chunks = chunk_documents([Document("a", "", "x", {"tenant": "A", "year": 2024, "vip": True})], 50, 5)
    types = field_types(chunks)
    flt = build_filters([("tenant", "A"), ("year", "2024"), ("year", "2023")], types, "tenant")
    assert flt.as_dict() == {"tenant": "A", "year": [2024, 2023]}
    assert flt.matches({"tenant": "A", "year": 2023}) and not flt.matches({"tenant": "A", "year": "2024"})
    assert flt.chroma_where() == {"$and": [{"tenant": {"$eq": "A"}}, {"year": {"$in": [2024, 2023]}}]}
    assert build_filters({"tenant": "A", "vip": "true"}, types, "tenant").get("vip") == (True,)
    with pytest.raises(TenantRequired):
        build_filters({"year": 2024}, types, "tenant")
    with pytest.raises(InvalidFilter, match="unknown filter field 'colour'"):
        build_filters({"tenant": "A", "colour": "x"}, types, "tenant")
    with pytest.raises(InvalidFilter, match="'year'"):
        build_filters({"tenant": "A", "year": "dois mil"}, types, "tenant")


def test_trec_topics_and_qrels(tmp_path):
    from retrieval.corpus import load_questions
    from retrieval.errors import CorpusError

    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tQual o prazo do PX-7?\nq2\tPergunta sem resposta\nq3\tNão julgada\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 doc-a 2\nq1 0 doc-b 1\nq1 0 doc-c 0\nq2 0 doc-a 0\n", encoding="utf-8")
    qs = load_questions(topics, qrels=qrels)
    assert [q.id for q in qs] == ["q1", "q2"]  # q3 has no judgment: left out, as trec_eval does
    assert qs[0].relevant == ("doc-a", "doc-b") and qs[0].graded == {"doc-a": 2, "doc-b": 1}
    assert qs[1].relevant == () and qs[0].group == "trec"
    sgml = tmp_path / "topics.401"
    sgml.write_text("<top>\n<num> Number: 401\n<title> foreign minorities, Germany\n<desc> Description:\n"
                    "x\n</top>\n", encoding="utf-8")
    (tmp_path / "q401").write_text("401 0 FBIS3-1 1\n", encoding="utf-8")
    assert load_questions(sgml, qrels=tmp_path / "q401")[0].question == "foreign minorities, Germany"
    qrels.write_text("q1 doc-a 2\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="qrels.txt:1"):
        load_questions(topics, qrels=qrels)
