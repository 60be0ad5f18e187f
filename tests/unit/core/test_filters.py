"""A request's filters are checked against its own tenant's fields: a refusal, a picker and the self-query name
only what that tenant's documents carry, never a field, a field's type or a value that exists only in another
tenant.

Acme's documents carry ``doc_type``, ``region`` and an integer ``batch``; Globex's carry ``doc_type`` (one of them
``secret``), ``clearance`` and a string ``batch``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import ROOT
from helpers.tenant_corpus import ACME_FIELDS, write_corpus
from helpers.errors import one_line

from retrieval.core.errors import InvalidFilter, TenantRequired
from retrieval.core.filters import Filters, build_filters

GLOBEX_ONLY = ("clearance", "secret", "alpha", "str")



@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory):
    """The two-tenant corpus, BM25 only (no embedder: the filters are checked before any search)."""
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    folder = tmp_path_factory.mktemp("tenant_fields")
    wb = Workbench(Settings(chroma_path=folder / "chroma", _env_file=None), embedder=None, progress=False)
    wb.load_corpus(write_corpus(folder))
    return wb


def refusal(bench, filters) -> str:
    with pytest.raises(InvalidFilter) as caught:
        bench.ask("Quando roda o backup?", filters)
    return str(caught.value)


def test_an_unknown_field_names_only_the_tenants_own_fields(bench) -> None:
    message = refusal(bench, {"tenant": "acme", "colour": "azul"})
    assert message == f"unknown filter field 'colour' ({ACME_FIELDS})"
    assert "clearance" not in message
    # a field that exists only in Globex is unknown to Acme, and the refusal lists Acme's fields only
    message = refusal(bench, [("tenant", "acme"), ("clearance", "top")])
    assert message == f"unknown filter field 'clearance' ({ACME_FIELDS})"
    # Globex's own request names its own fields (and none of Acme's)
    message = refusal(bench, {"tenant": "globex", "region": "norte"})
    assert message == ("unknown filter field 'region' (documents with tenant='globex' have: batch, clearance, "
                       "doc_type, tenant)")


def test_a_fields_type_is_the_tenants_own(bench) -> None:
    """``batch`` is an integer in Acme and a string in Globex: Acme's 'alpha' is refused as not an int (before,
    it was read as Globex's string type and matched nothing without a word)."""
    message = refusal(bench, {"tenant": "acme", "batch": "alpha"})
    assert message == "filter 'batch': 'alpha' is not a int"
    trace = bench.ask("Quando roda o backup?", {"tenant": "acme", "batch": "3"})
    assert trace.filters == {"tenant": "acme", "batch": 3}
    assert {item.chunk_id for item in trace.lexical.items} == {"acme-backup#0"}
    trace = bench.ask("Onde fica o cofre?", {"tenant": "globex", "batch": "alpha"})
    assert trace.filters == {"tenant": "globex", "batch": "alpha"}


def test_the_tenant_is_read_before_any_other_field(bench) -> None:
    with pytest.raises(TenantRequired) as caught:  # no field list at all without a tenant
        bench.ask("Quando roda o backup?", {"clearance": "top"})
    assert str(caught.value) == ("this corpus is multi-tenant: name a tenant with --filter tenant=VALUE (or pick "
                                 "one in the app)")
    assert refusal(bench, {"tenant": "acmee", "region": "norte"}) == \
        "unknown filter field 'region' (no document has tenant='acmee')"
    assert refusal(bench, {"tenant": ["acme", "globex"], "clearance": "top"}) == (
        "a request names exactly one tenant; got 2 ('acme', 'globex'): nothing is searched across tenants")


def test_pickers_and_the_self_query_offer_only_the_tenants_values(bench) -> None:
    from retrieval.core.filters import Filters
    from retrieval.pipeline.expand import self_query

    state = bench.state
    assert state.filter_values(["acme"]) == {"tenant": ["acme"], "doc_type": ["faq", "manual"],
                                             "region": ["norte", "sul"], "batch": [3, 4]}
    assert state.field_types_of(["acme"]) == {"tenant": {str}, "doc_type": {str}, "region": {str}, "batch": {int}}
    assert state.field_types_of(["nobody"]) == {}
    # "secret" is a Globex doc_type: written in an Acme question it draws no filter
    flt = Filters((("tenant", ("acme",)),))
    narrowed, query, _ = self_query("Onde está o manual secret do norte?", state, flt, bench.settings)
    assert query.filters_added == {"doc_type": ["manual"], "region": ["norte"]}
    assert narrowed.as_dict() == {"tenant": "acme", "doc_type": "manual", "region": "norte"}
    _, query, _ = self_query("Onde está o manual secret?", state, Filters((("tenant", ("globex",)),)), bench.settings)
    assert query.filters_added == {"doc_type": ["secret"]}


def test_a_link_filter_on_another_tenants_field_or_value_is_said_once(bench) -> None:
    """The app's link filters (``f.<field>=``): a field the tenant's documents lack is refused in the request's
    words (naming only the tenant's fields), a value they lack is named back as written; both leave the pending
    filters, and the rest stay for the pickers."""
    from retrieval.explain import links

    state = bench.state
    pending = {"clearance": ("top",), "region": ("norte",), "doc_type": ("secret", "faq"), "tenant": ("acme",)}
    kept, problems = links.link_filter_problems(pending, state.filter_values(["acme"]), ["acme"],
                                                state.field_types, "tenant", state.field_types_of)
    assert kept == {"region": ("norte",), "doc_type": ("faq",), "tenant": ("acme",)}
    assert [p.text() for p in problems] == [f"f.clearance: unknown filter field 'clearance' ({ACME_FIELDS})",
                        "f.doc_type: no document with tenant='acme' has doc_type 'secret'"]
    # a corpus without tenants: the whole corpus' fields and values
    kept, problems = links.link_filter_problems({"colour": ("azul",), "region": ("oeste",)},
                                                {"region": ["norte", "sul"]}, [], {"region": {str}}, "tenant")
    assert kept == {"region": ()}
    assert [p.text() for p in problems] == ["f.colour: unknown filter field 'colour' (the corpus has: region)",
                        "f.region: no document has region 'oeste'"]


@pytest.mark.slow
def test_the_cli_names_only_the_tenants_fields(tmp_path: Path) -> None:
    """``python -m retrieval ask --filter tenant=acme --filter colour=azul``: exit 2, one error line."""
    corpus = write_corpus(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRIEVAL_") or k == "RETRIEVAL_READER_STATES_AT_INDEX"}
    env.update(RETRIEVAL_CHROMA_PATH=str(tmp_path / "chroma"), RETRIEVAL_EMBEDDING_MODEL=str(tmp_path / "none"))
    result = subprocess.run([sys.executable, "-m", "retrieval", "ask", "Quando roda o backup?", "--corpus",
                             str(corpus), "--filter", "tenant=acme", "--filter", "colour=azul"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 2 and result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: unknown filter field 'colour' ({ACME_FIELDS})"]
    assert not any(word in result.stderr for word in ("clearance", "globex"))


def test_filter_values_keep_their_type_and_one_tenant_per_request():
    """Regression: a filter's True matched tenant 1 (True == 1), and a request could name two tenants."""
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
    one_line(err.value)
    with pytest.raises(InvalidFilter, match="exactly one tenant"):
        build_filters({"tenant": [1, 2]}, types, "tenant")
    assert build_filters([("tenant", "1"), ("tenant", 1)], types, "tenant").get("tenant") == (1,)  # same one


def test_chroma_where_is_exact_per_type():
    assert Filters((("tenant", (1,)),)).chroma_where() == {"tenant": {"$eq": 1}}
    assert Filters((("c", (1, 2)),)).chroma_where() == {"c": {"$in": [1, 2]}}
    mixed = Filters((("tenant", ("a",)), ("c", (1, "1")))).chroma_where()
    assert mixed == {"$and": [{"tenant": {"$eq": "a"}}, {"$or": [{"c": {"$eq": 1}}, {"c": {"$eq": "1"}}]}]}
