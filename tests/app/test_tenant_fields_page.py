"""In the app, a filter is checked against the chosen tenant's own fields: the refusal of a link's filter and of
an evaluated question's filter names only that tenant's fields, and the pickers list only its fields and values.

The corpus (tests/helpers/tenant_corpus.py): Acme's documents carry ``doc_type``, ``region`` and ``batch``;
Globex's carry ``doc_type`` (one of them ``secret``), ``clearance`` and ``batch``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.apptest import APP, assert_ok, plain, rendered
from helpers.tenant_corpus import ACME_FIELDS, write_corpus
from streamlit.testing.v1 import AppTest

EVAL_PAGE = str(Path(APP).parent / "pages" / "2_Evaluation.py")

@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))
    return write_corpus(tmp_path)


@pytest.fixture
def alice_sees_acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("users:\n  alice@example.com: [acme]\n  bob@example.com: [globex]\n", encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_ACCESS_POLICY", str(policy))


def url_warnings(at: AppTest) -> list[str]:
    return [plain(w.value) for w in at.warning if w.value.startswith("URL parameter ignored: ")]


def signed_in(email: str | None, script: str = APP) -> AppTest:
    at = AppTest.from_file(script, default_timeout=300)
    if email:
        at.user = {"is_logged_in": True, "email": email}
    return at


def test_a_link_filter_names_only_the_tenants_fields(corpus: Path) -> None:
    """Single-user mode: ``f.colour`` (no tenant's field) and ``f.clearance`` (Globex's) on an Acme link are each
    refused in one line naming Acme's fields, Globex's doc_type ``secret`` is named back as absent from Acme;
    ``f.region`` and ``f.doc_type=faq`` apply."""
    at = signed_in(None)
    at.query_params.update({"corpus": str(corpus), "tenant": "acme", "q": "Quando roda o backup?",
                            "f.colour": "azul", "f.clearance": "top", "f.region": "norte"})
    at.query_params["f.doc_type"] = ["secret", "faq"]
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sorted(url_warnings(at)) == [
        f"URL parameter ignored: f.clearance: unknown filter field 'clearance' ({ACME_FIELDS})",
        f"URL parameter ignored: f.colour: unknown filter field 'colour' ({ACME_FIELDS})",
        "URL parameter ignored: f.doc_type: no document with tenant=`acme` has doc_type `secret`"]
    assert at.multiselect(key="flt_region").value == ["norte"]
    assert at.multiselect(key="flt_doc_type").value == ["faq"]
    assert sorted(ms.key for ms in at.sidebar.multiselect if ms.key.startswith("flt_")) == [
        "flt_batch", "flt_doc_type", "flt_region"]
    assert at.multiselect(key="flt_doc_type").options == ["faq", "manual"]  # not Globex's 'secret'
    at.selectbox(key="tenant").set_value("globex").run()  # said once per session, not again for another tenant
    assert len(url_warnings(at)) == 3


def test_a_signed_in_user_never_sees_another_tenants_field_or_value(corpus: Path, alice_sees_acme: None) -> None:
    at = signed_in("alice@example.com")
    at.query_params.update({"corpus": str(corpus), "tenant": "acme", "q": "Onde está o manual secret?",
                            "f.colour": "azul", "transforms": "self_query"})
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert url_warnings(at) == [f"URL parameter ignored: f.colour: unknown filter field 'colour' ({ACME_FIELDS})"]
    assert at.selectbox(key="tenant").options == ["— pick a tenant —", "acme"]
    assert at.multiselect(key="flt_doc_type").options == ["faq", "manual"]
    # "secret" is written in the question, but only Globex has that doc_type: the self-query draws 'manual' alone
    drawn = [q.get("filters_added") for trace in at.session_state["traces"].values() for q in trace["queries"]
             if q["kind"] == "self_query"]
    assert drawn and all(d == {"doc_type": ["manual"]} for d in drawn), drawn
    page = rendered(at)
    for other in ("globex", "clearance", "alpha"):
        assert other not in page, other
    assert "region" in page and "batch" in page


def test_an_evaluated_questions_filter_names_only_the_tenants_fields(corpus: Path, tmp_path: Path,
                                                                    alice_sees_acme: None) -> None:
    """The Evaluation page refuses a question whose filter names a field Acme's documents lack, in one line that
    names Acme's fields only."""
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Quando roda o backup?", "group": "g",
                                     "relevant": ["acme-backup"], "filters": {"tenant": "acme", "colour": "azul"}})
                         + "\n", encoding="utf-8")
    at = signed_in("alice@example.com", EVAL_PAGE)
    at.session_state["ev_set"], at.session_state["ev_corpus"] = "custom", str(corpus)
    at.session_state["ev_questions"], at.session_state["ev_configs"] = str(questions), ["bm25"]
    at.run()
    assert_ok(at)
    at.button[0].click().run()
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [
        f"The evaluation did not run: unknown filter field 'colour' ({ACME_FIELDS})"]
    assert "clearance" not in rendered(at) and "globex" not in rendered(at)


def test_a_field_with_too_many_values_for_a_picker_is_typed_and_its_link_filter_applies(
        corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A field with more values than a picker holds (here: any field over one value) gets a text box: the link's
    ``f.batch=4`` fills it and filters the request (Acme's backup, batch 3, is out of every list), ``f.batch=9``
    is named back; typing ``3, zz`` applies batch 3 (an integer, as the documents carry it) and names ``zz``."""
    from retrieval.explain import links

    monkeypatch.setattr(links, "PICKER_MAX_VALUES", 1)
    at = signed_in(None)
    at.query_params.update({"corpus": str(corpus), "tenant": "acme", "q": "Quando roda o backup?"})
    at.query_params["f.batch"] = ["4", "9"]
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert url_warnings(at) == ["URL parameter ignored: f.batch: no document with tenant=`acme` has batch `9`"]
    assert at.text_input(key="flt_text_batch").value == "4"
    assert not [ms.key for ms in at.sidebar.multiselect if ms.key.startswith("flt_")]  # every field is typed

    def listed(at: AppTest) -> set[str]:
        trace = [tr for sig, tr in at.session_state["traces"].items() if json.loads(sig)[-1] == ""][-1]  # the latest
        return {i["chunk_id"].split("#")[0] for name in ("lexical", "dense", "fused") for i in trace[name]["items"]}

    assert listed(at) == {"acme-senha"}
    at.text_input(key="flt_text_batch").set_value("3, zz").run()
    assert not at.exception
    assert [plain(w.value) for w in at.warning if "zz" in w.value] == [
        "No document of this tenant has batch = `zz`: not applied."]
    assert listed(at) == {"acme-backup"}
