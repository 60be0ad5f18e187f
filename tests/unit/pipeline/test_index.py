"""Building the index (retrieval/pipeline/index.py): the tenant field the settings name is checked at corpus load."""

from __future__ import annotations

import pytest
from helpers.tiny_index import index_of, write_docs

from retrieval.core.errors import CorpusError
from retrieval.settings import Settings

SECRET = "A senha do cofre é 4512 para o time."
TENANT_DOCS = [{"id": "a", "text": SECRET, "metadata": {"tenant": "t1"}},
               {"id": "b", "text": SECRET, "metadata": {"tenant": "t2"}}]


def _load(tmp_path, docs, **overrides):
    """The index of ``docs`` (the lab corpus where ``None``) under the settings with ``overrides``."""
    path = write_docs(tmp_path / "t.jsonl", docs) if docs is not None else None
    return index_of(path, Settings(_env_file=None, **overrides))


def test_a_misspelled_tenant_field_is_refused_in_one_line_naming_the_keys(tmp_path):
    """Regression: a RETRIEVAL_TENANT_FIELD that no document carries was loaded, and every request found nothing."""
    with pytest.raises(CorpusError) as err:
        _load(tmp_path, None, tenant_field="tennant")  # the lab corpus
    message = str(err.value)
    assert "\n" not in message and "'tennant' (RETRIEVAL_TENANT_FIELD) is in no document" in message
    assert "their metadata keys are" in message and "'tenant'" in message and "'year'" in message


def test_a_partial_tenant_field_is_refused_naming_the_count(tmp_path):
    """Regression: documents without the tenant field were loaded, where no request could ever find them."""
    docs = [*TENANT_DOCS, {"id": "e", "text": "Sem dono.", "metadata": {"year": 2024}}]
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
