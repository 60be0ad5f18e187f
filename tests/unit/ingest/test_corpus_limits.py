"""Values too long for a backend's fields are refused when the corpus loads, for both backends alike: one
document id over 1,024 characters failed the Milvus sync of the whole corpus (every request then
lexical_only) while the local backend took it."""

from __future__ import annotations

import json

import pytest

from retrieval.ingest.corpus import (
    MAX_ID_BYTES,
    MAX_METADATA_TEXT_BYTES,
    MAX_TENANT_BYTES,
    chunk_documents,
    load_corpus,
)
from retrieval.core.errors import CorpusError
from retrieval.pipeline.workbench import Workbench
from retrieval.settings import Settings

TEXT = "O prazo do PX-7 é de sete dias."


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, repr(text)
    return text


@pytest.mark.parametrize("backend", ["local", "milvus"])
def test_an_id_too_long_for_the_id_field_is_refused_at_load_on_both_backends(tmp_path, backend):
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "ok", "text": TEXT}, {"id": "x" * 1025, "text": TEXT}])
    settings = Settings(_env_file=None, chroma_path=tmp_path / "chroma", backend=backend,
                        milvus_uri=str(tmp_path / "m.db"))
    with pytest.raises(CorpusError) as err:
        Workbench(settings, embedder=None, progress=False).load_corpus(path)
    assert _one_line(err.value) == (f"{path}:2: document id {'x' * 40!r}… is 1,025 bytes long; the limit is 1,000 "
                                    "(UTF-8 bytes: its chunk ids must fit the vector store's id field)")


def test_ids_are_measured_in_utf8_bytes_and_the_limit_itself_loads(tmp_path):
    at_limit = "a" * MAX_ID_BYTES
    docs = load_corpus(_jsonl(tmp_path / "ok.jsonl", [{"id": at_limit, "text": TEXT}]))
    assert max(len(c.chunk_id.encode()) for c in chunk_documents(docs, 120, 30)) <= 1024
    with pytest.raises(CorpusError, match=r"is 1,002 bytes long"):
        load_corpus(_jsonl(tmp_path / "e.jsonl", [{"id": "é" * 501, "text": TEXT}]))  # 501 characters


def test_a_folder_file_whose_path_is_too_long_an_id_is_refused_naming_it(tmp_path):
    root = tmp_path / "docs"
    deep = root.joinpath(*["d" * 200] * 5)
    deep.mkdir(parents=True)
    (deep / "a.md").write_text(f"# A\n\n{TEXT}\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"a\.md: document id .* bytes long; the limit is 1,000"):
        load_corpus(root)


def test_a_tenant_or_a_metadata_text_too_long_for_its_field_is_refused(tmp_path):
    tenant = "t" * (MAX_TENANT_BYTES + 1)
    path = _jsonl(tmp_path / "t.jsonl", [{"id": "a", "text": TEXT, "metadata": {"tenant": "ok"}},
                                         {"id": "b", "text": TEXT, "metadata": {"tenant": tenant}}])
    with pytest.raises(CorpusError) as err:
        load_corpus(path)
    assert _one_line(err.value).startswith(f"{path}:2: tenant {'t' * 40!r}… ('tenant') is 1,025 bytes long; "
                                           "the limit is 1,024")
    load_corpus(_jsonl(tmp_path / "t2.jsonl", [{"id": "a", "text": TEXT, "metadata": {"tenant": tenant[1:]}}]))
    note = "n" * (MAX_METADATA_TEXT_BYTES + 1)
    with pytest.raises(CorpusError, match=r"m.jsonl:1: metadata 'note' holds 65,536 bytes of text; the limit is 65,535"):
        load_corpus(_jsonl(tmp_path / "m.jsonl", [{"id": "a", "text": TEXT, "metadata": {"note": note}}]))
