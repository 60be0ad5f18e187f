"""Corpus and question readers: every accepted format, and clear errors that name file and line."""

from __future__ import annotations

import json

import pytest
from helpers.errors import one_line

from retrieval.ingest.corpus import chunk_documents, load_corpus, load_questions
from retrieval.core.errors import CorpusError, InvalidFilter, TenantRequired
from retrieval.core.filters import build_filters, field_types


def _jsonl(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows),
                    encoding="utf-8")
    return path


SECRET = "A senha do cofre é 4512 para o time."


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
    ('{"id": "a", "text": "ok", "metadata": {"x": [{"y": 1}]}}', r":1: metadata 'x' is a list: it must hold"),
    ('{"id": "a", "text": "ok", "metadata": {"x": {"y": 1}}}', r":1: metadata 'x' must be"),
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
    assert set(docs) == {"sub/a", "b"}  # relative path without the extension
    assert docs["sub/a"].title == "Guia"
    assert docs["sub/a"].metadata == {"tenant": "A", "year": 2024, "format": "markdown", "folder": ("sub",)}
    assert docs["b"].metadata == {"format": "text", "folder": (".",)}
    assert docs["sub/a"].text == "Texto do guia."
    assert (docs["b"].title, docs["b"].text) == ("b", "Outro texto.")  # one line: the text, titled by its name


def test_markdown_heading_is_the_title_and_leaves_the_text(tmp_path):
    (tmp_path / "tcu-432.md").write_text("\n# Enunciado 432\n\nA indicação de marca é admitida.\n\n## Notas\nx.\n",
                                         encoding="utf-8")
    (tmp_path / "h3.md").write_text("---\ntenant: A\n---\n### Terceiro nível ###\nCorpo.\n", encoding="utf-8")
    (tmp_path / "later.md").write_text("Corpo primeiro.\n# Não é título\nMais.\n", encoding="utf-8")
    (tmp_path / "tag.md").write_text("#hashtag não é título\nCorpo.\n", encoding="utf-8")
    docs = {d.id: d for d in load_corpus(tmp_path)}
    assert set(docs) == {"tcu-432", "h3", "later", "tag"}
    assert docs["tcu-432"].title == "Enunciado 432"
    assert docs["tcu-432"].text.startswith("A indicação de marca")
    assert "Enunciado 432" not in docs["tcu-432"].text and "## Notas" in docs["tcu-432"].text
    assert (docs["h3"].title, docs["h3"].text.strip(), docs["h3"].metadata) == ("Terceiro nível", "Corpo.", {"tenant": "A", "format": "markdown", "folder": (".",)})
    # a heading after body text is not the title, nor is "#word": the file name is, and the text is unchanged
    assert (docs["later"].title, docs["later"].text) == ("later", "Corpo primeiro.\n# Não é título\nMais.\n")
    assert (docs["tag"].title, docs["tag"].text) == ("tag", "#hashtag não é título\nCorpo.\n")
    # the "## Notas" heading opens a section of its own: a chunk never spans two sections (tests/unit/backends/test_markup.py)
    chunks = chunk_documents([docs["tcu-432"]], 200, 0)
    assert [(c.chunk_id, c.metadata.get("section"), c.text) for c in chunks] == [
        ("tcu-432#0", None, "A indicação de marca é admitida."), ("tcu-432#1", "Notas", "x.")]


def test_markdown_title_falls_back_to_front_matter_then_file_name(tmp_path):
    (tmp_path / "yaml.md").write_text("---\ntitle: Do YAML\ntenant: B\n---\nSó corpo.\n", encoding="utf-8")
    (tmp_path / "both.md").write_text("---\ntitle: Do YAML\n---\n# Do cabeçalho\nCorpo.\n", encoding="utf-8")
    (tmp_path / "plain.md").write_text("Só corpo, sem título.\n", encoding="utf-8")
    (tmp_path / "only.md").write_text("# Apenas um cabeçalho\n", encoding="utf-8")
    docs = {d.id: d for d in load_corpus(tmp_path)}
    assert (docs["yaml"].title, docs["yaml"].text, docs["yaml"].metadata) == ("Do YAML", "Só corpo.\n", {"tenant": "B", "format": "markdown", "folder": (".",)})
    assert (docs["both"].title, docs["both"].text) == ("Do cabeçalho", "Corpo.\n")  # the heading comes first
    assert (docs["plain"].title, docs["plain"].text) == ("plain", "Só corpo, sem título.\n")
    # a heading that is the whole file is its text (without the marks), titled by the file name
    assert (docs["only"].title, docs["only"].text) == ("only", "Apenas um cabeçalho")


def test_text_file_title_is_its_first_line_when_more_follow(tmp_path):
    (tmp_path / "aviso.txt").write_text("\nAviso de manutenção\n\nO sistema para às 22h.\nVolta às 23h.\n",
                                        encoding="utf-8")
    (tmp_path / "uma.txt").write_text("Uma linha só.\n", encoding="utf-8")
    (tmp_path / "meta.txt").write_text("---\ntitle: Declarado\n---\nPrimeira linha.\nSegunda.\n", encoding="utf-8")
    docs = {d.id: d for d in load_corpus(tmp_path)}
    assert (docs["aviso"].title, docs["aviso"].text) == ("Aviso de manutenção", "O sistema para às 22h.\nVolta às 23h.\n")
    assert (docs["uma"].title, docs["uma"].text) == ("uma", "Uma linha só.\n")
    assert (docs["meta"].title, docs["meta"].text) == ("Declarado", "Primeira linha.\nSegunda.\n")


@pytest.mark.parametrize("first, second", [("a.md", "a.txt"), ("sub/x.md", "sub/x.txt")])
def test_two_files_with_one_stem_keep_their_extension_in_their_ids(tmp_path, first, second):
    for name in (first, second):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("Corpo.", encoding="utf-8")
    (tmp_path / "x.md").write_text("Outro x, noutra pasta: outro id.", encoding="utf-8")
    docs = {d.id: d for d in load_corpus(tmp_path)}
    assert set(docs) == {first, second, "x"}  # the gazette as PDF and as DOCX: two documents, neither refused
    assert (docs[first].metadata["format"], docs[second].metadata["format"]) == ("markdown", "text")


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
    from retrieval.core.types import Document

    words = " ".join(f"palavra{i}." for i in range(50))
    chunks = chunk_documents([Document("p", "T", words, {"tenant": "A"})], 20, 5)
    assert [c.chunk_id for c in chunks] == [f"p#{n}" for n in range(len(chunks))]
    assert len(chunks) >= 3
    assert all(c.metadata == {"tenant": "A"} and c.parent_id == "p" for c in chunks)
    assert all(len(c.text.split()) <= 20 for c in chunks)
    # consecutive chunks overlap by whole sentences
    assert chunks[0].text.split()[-1] in chunks[1].text.split()


def test_lab_and_faquad_gold_spans_survive_chunking():
    from helpers.paths import FAQUAD

    from retrieval.core.paths import LAB_CORPUS, LAB_QUESTIONS
    from retrieval.settings import Settings

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
    from retrieval.core.types import Document

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
    from retrieval.ingest.corpus import load_questions
    from retrieval.core.errors import CorpusError

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


def test_tenant_field_mixing_json_types_is_refused_with_file_and_line(tmp_path):
    """Regression: a corpus whose tenant field mixed JSON types (1, "x", true) was loaded as it was."""
    path = _jsonl(tmp_path / "c.jsonl", [
        {"id": "a", "text": SECRET, "metadata": {"tenant": 1}},
        {"id": "b", "text": SECRET, "metadata": {"tenant": "x"}},
        {"id": "c", "text": SECRET, "metadata": {"tenant": True}},
    ])
    with pytest.raises(CorpusError) as err:
        load_corpus(path)
    message = one_line(err.value)
    assert "c.jsonl:2:" in message and "c.jsonl:1" in message and "tenant" in message
    for pair in ([1, 1.0], [True, 1], ["1", 1]):
        path = _jsonl(tmp_path / "d.jsonl", [{"id": str(n), "text": SECRET, "metadata": {"tenant": v}}
                                             for n, v in enumerate(pair)])
        with pytest.raises(CorpusError, match=r"d\.jsonl:2: tenant field 'tenant'"):
            load_corpus(path)
    # Another field name as the tenant field: checked when named, free otherwise.
    assert len(load_corpus(path, tenant_field="org")) == 2


@pytest.mark.parametrize("key", ["", "  ", "$and", "$or", "#document", "chroma:document", "rw_hash", "rw_parent",
                                 "rw_position"])
def test_metadata_keys_empty_operator_or_reserved_are_refused(tmp_path, key):
    """Regression: empty, ``$`` operator and reserved metadata keys were loaded into the stores."""
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "ok", "metadata": {"tenant": "x"}},
                                         {"id": "b", "text": "ok", "metadata": {"tenant": "x", key: "v"}}])
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: metadata key") as err:
        load_corpus(path)
    one_line(err.value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**70])
def test_metadata_values_the_stores_cannot_hold_are_refused(tmp_path, value):
    """Regression: NaN, infinite and over-64-bit metadata values, which the stores cannot hold, were loaded."""
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "ok", "metadata": {"n": value}}), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"c\.jsonl:1: metadata 'n'"):
        load_corpus(path)


@pytest.mark.parametrize("data", [{"data": ["x"]}, {"data": [{"paragraphs": "x"}]}, {"data": [{"paragraphs": [1]}]},
                                  {"data": [{"paragraphs": [{"context": "c", "qas": [{"id": 1}]}]}]},
                                  {"data": [{"paragraphs": [{"context": 5}]}]}, ["x"], {"data": {}}])
def test_malformed_squad_is_one_corpus_error(tmp_path, data):
    """Regression: a malformed SQuAD file was not refused in one line naming the file."""
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for load in (load_corpus, load_questions):
        with pytest.raises(CorpusError) as err:
            load(path)
        assert "squad.json" in one_line(err.value)


def test_jsonl_lines_are_split_at_newlines_only(tmp_path):
    """Regression (found by the property test): a title holding U+0085 or U+2028 unescaped cut its line in two."""
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
