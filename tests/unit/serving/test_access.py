"""The access policy: a valid file in each format, every malformed one refused in one line naming the file,
a user without tenants, and the filters the app applies with it (tenants, questions, filter values, the
"Where is my document?" search, the self-query)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval.core.errors import InvalidPolicy
from retrieval.core.paths import PROJECT_ROOT
from retrieval.core.tenants import visible_questions, visible_tenants
from retrieval.core.types import Question
from retrieval.serving import access
from retrieval.serving.access import AccessPolicy, allowed_tenants, load_policy, parse_policy
from retrieval.settings import Settings

YAML = """users:
  alice@example.com: [lumen]
  Bob@Example.com: [ventura, lumen]
  carol@example.com: []
default: []
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    with pytest.raises(InvalidPolicy) as caught:
        load_policy(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"access policy {path}: "), message
    return message


def test_a_yaml_policy_gives_each_user_their_tenants(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, "policy.yaml", YAML))
    assert policy.allowed_tenants("alice@example.com") == frozenset({"lumen"})
    assert policy.allowed_tenants("  Bob@Example.com ") == frozenset({"ventura", "lumen"})  # trimmed
    assert policy.allowed_tenants("bob@example.com") == frozenset()  # no case folding: another name
    assert policy.allowed_tenants("carol@example.com") == frozenset()  # named, with no tenant
    assert policy.allowed_tenants("mallory@example.com") == frozenset()  # not named: the default, none
    assert policy.allowed_tenants(None) == frozenset() and policy.allowed_tenants("") == frozenset()
    assert policy.allowed_tenants("alice@example.com\r\nX-Forwarded-User: bob") == frozenset()  # no control chars


def test_the_same_policy_in_toml_and_json(tmp_path: Path) -> None:
    toml = write(tmp_path, "policy.toml", 'default = ["lumen"]\n[users]\n"alice@example.com" = ["lumen"]\n'
                                          '"bob@example.com" = ["ventura", 7]\n')
    data = {"users": {"alice@example.com": ["lumen"], "bob@example.com": ["ventura", 7]}, "default": ["lumen"]}
    as_json = write(tmp_path, "policy.json", json.dumps(data))
    for path in (toml, as_json):
        policy = load_policy(path)
        assert policy.allowed_tenants("bob@example.com") == frozenset({"ventura", "7"})  # an integer as written
        assert policy.allowed_tenants("someone@example.com") == frozenset({"lumen"})  # the default


def test_yaml_scalars_are_read_as_written(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, "p.yml", "users:\n  a: [007, no, 1:20]\n"))
    assert policy.allowed_tenants("a") == frozenset({"007", "no", "1:20"})  # not 7, False and 80


def test_without_a_policy_every_tenant_is_open() -> None:
    assert allowed_tenants(None, "anyone") is None
    assert visible_tenants(["lumen", "ventura"], None) == ["lumen", "ventura"]
    assert access.policy_from_settings(Settings(_env_file=None)) is None


@pytest.mark.parametrize("name, text, says", [
    ("p.yaml", "users:\n  alice@example.com: lumen\n", "users.'alice@example.com' must be a list of tenants"),
    ("p.yaml", "users:\n  a: [x]\n  a: [y]\n", "key 'a' appears twice (line 3)"),
    ("p.yaml", "users:\n  \u00e9: [x]\n  e\u0301: [y]\n",
     "user 'e\u0301' is listed twice (as '\u00e9'; names are compared after NFC normalisation)"),
    ("p.yaml", "user:\n  a: [x]\n", "unknown key 'user'"),
    ("p.yaml", "default: [x]\n", "'users' is missing"),
    ("p.yaml", "- a\n- b\n", "must be a mapping"),
    ("p.yaml", "", "must be a mapping"),
    ("p.yaml", "users: [a, b]\n", "'users' must be a mapping"),
    ("p.yaml", "users:\n  a: [x\n", "invalid YAML"),
    ("p.yaml", "users:\n  a: ['']\n", "an empty tenant name"),
    ("p.yaml", "users:\n  a: [[x]]\n", "tenant ['x'] is a list"),
    ("p.yaml", "users:\n  a: [x]\ndefault: x\n", "default must be a list of tenants"),
    ("p.json", '{"users": {"a": [true]}}', "tenant True is a boolean"),
    ("p.json", '{"users": {"a": [1.5]}}', "tenant 1.5 is a number"),
    ("p.json", '{"users": {"a": ["x"], "a": ["y"]}}', "key 'a' appears twice"),
    ("p.json", '{"users": ', "invalid JSON at line 1"),
    ("p.toml", "[users]\na = 'x'\n", "users.'a' must be a list"),
    ("p.toml", "[users\n", "invalid TOML"),
    ("p.txt", "users: {}", "the file must end in .yaml, .yml, .toml, .json"),
    ("p.json", '{"users": {"a": [' + "9" * 50_000 + ']}}', "an integer of 50,000 digits"),
    ("p.toml", "[users]\na = [" + "9" * 50_000 + "]\n", "an integer of more than 4,300 digits"),
    ("p.toml", "[users]\na = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deep"),
    ("p.toml", "[users]\na = " + "{x=" * 50_000 + "1" + "}" * 50_000 + "\n", "nested too deep"),
    ("p.json", '{"users": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}", "JSON nested too deep"),
    ("p.yaml", "users:\n  a: " + "[" * 100_000 + "]" * 100_000 + "\n", "YAML nested too deep"),
    ("p.yaml", "users:\n  a: [" + "x" * 300 + "]\n", "is longer than 256 characters"),
    ("p.yaml", "users: !!python/object:os.system [x]\n", "'users' must be a mapping"),  # a tag is text
    ("p.yaml", "users:\n  a: &x [t]\n  b: *x\n  c: *y\n", "invalid YAML"),
])
def test_a_malformed_policy_is_refused_in_one_line(tmp_path: Path, name: str, text: str, says: str) -> None:
    assert says in refusal(write(tmp_path, name, text))


def test_a_missing_or_odd_file_is_refused_never_single_user_mode(tmp_path: Path, monkeypatch) -> None:
    assert "cannot be read" in refusal(tmp_path / "missing.yaml")
    (tmp_path / "folder.yaml").mkdir()
    assert "not a regular file" in refusal(tmp_path / "folder.yaml")
    (tmp_path / "bad.yaml").write_bytes(b"users:\n  a: [\xff]\n")
    assert "not UTF-8" in refusal(tmp_path / "bad.yaml")
    monkeypatch.setenv("RETRIEVAL_ACCESS_POLICY", str(tmp_path / "missing.yaml"))
    with pytest.raises(InvalidPolicy):
        access.policy_from_settings(Settings(_env_file=None))


def test_the_setting_names_the_file_relative_to_the_project(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RETRIEVAL_ACCESS_POLICY", "deploy/policy.yaml")
    assert access.policy_path(Settings(_env_file=None)) == PROJECT_ROOT / "deploy" / "policy.yaml"
    path = write(tmp_path, "policy.yaml", YAML)
    monkeypatch.setenv("RETRIEVAL_ACCESS_POLICY", str(path))
    policy = access.policy_from_settings(Settings(_env_file=None))
    assert policy is not None and allowed_tenants(policy, "alice@example.com") == frozenset({"lumen"})


def test_the_user_header_setting_takes_a_header_name_only(monkeypatch) -> None:
    from retrieval.core.errors import InvalidSetting

    monkeypatch.setenv("RETRIEVAL_USER_HEADER", " X-Forwarded-User ")
    assert Settings(_env_file=None).user_header == "X-Forwarded-User"
    monkeypatch.setenv("RETRIEVAL_USER_HEADER", "X-User: alice")
    with pytest.raises((InvalidSetting, ValueError)):
        Settings(_env_file=None)


def test_tenants_and_questions_a_user_may_see() -> None:
    policy = parse_policy({"users": {"alice": ["lumen", "7"]}})
    allowed = policy.allowed_tenants("alice")
    assert visible_tenants(["lumen", "ventura"], allowed) == ["lumen"]
    assert visible_tenants([7, 8], allowed) == [7]  # an integer tenant by its written form
    questions = [Question("q1", "a?", "g", ("d1",), filters={"tenant": "lumen"}),
                 Question("q2", "b?", "g", ("d2",), filters={"tenant": "ventura"}),
                 Question("q3", "c?", "g", ("d3",))]
    assert [q.id for q in visible_questions(questions, "tenant", allowed, True)] == ["q1"]
    assert [q.id for q in visible_questions(questions, "tenant", allowed, False)] == ["q1", "q3"]
    assert [q.id for q in visible_questions(questions, "tenant", None, True)] == ["q1", "q2", "q3"]


def test_an_empty_policy_opens_nothing() -> None:
    policy = AccessPolicy({})
    assert allowed_tenants(policy, "alice") == frozenset()
    assert visible_tenants(["lumen"], frozenset()) == []


@pytest.fixture(scope="module")
def lab_state(tmp_path_factory: pytest.TempPathFactory):
    """The lab corpus' index without an embedder (BM25 only): enough for filter values and the search."""
    from retrieval.pipeline.workbench import Workbench

    settings = Settings(_env_file=None, dense_enabled=False, chroma_path=tmp_path_factory.mktemp("chroma"))
    bench = Workbench(settings, embedder=None, progress=False)
    bench.load_corpus(None)
    return bench.state


def test_filter_values_and_the_document_search_stay_inside_the_tenants(lab_state) -> None:
    from retrieval.explain import where as explain

    assert 2022 in lab_state.filter_values()["year"]
    ventura = lab_state.filter_values(["ventura"])
    assert ventura["tenant"] == ["ventura"]
    assert 2022 not in ventura["year"] and 2023 in ventura["year"]  # a year only lumen has is not listed
    assert lab_state.filter_values(["lumen", "ventura"]) == lab_state.filter_values()
    assert lab_state.filter_values([]) == {}
    assert lab_state.filter_values(["no-such-tenant"]) == {}
    found = explain.search_targets(lab_state, "px", limit=100, tenants=["ventura"])
    assert found == [] or all(pid.startswith("ventura-") for pid, _ in found)
    assert all(pid.startswith("lumen-") for pid, _ in explain.search_targets(lab_state, "px", 100, ["lumen"]))
    assert explain.search_targets(lab_state, "px", 100, ["lumen"])  # lumen's PX documents are found


def test_the_self_query_draws_only_values_of_the_requests_tenant(lab_state) -> None:
    from retrieval.core.filters import Filters
    from retrieval.pipeline.expand import self_query

    s = Settings(_env_file=None, dense_enabled=False)
    lumen = Filters((("tenant", ("lumen",)),))
    ventura = Filters((("tenant", ("ventura",)),))
    _, query, _ = self_query("o que mudou em 2022?", lab_state, lumen, s)
    assert query.filters_added == {"year": [2022]}
    _, query, _ = self_query("o que mudou em 2022?", lab_state, ventura, s)
    assert not query.filters_added  # 2022 exists only in lumen: ventura's request never names it


def test_user_names_match_exactly_after_nfc_and_never_by_case_folding() -> None:
    policy = parse_policy({"users": {"sam@example.com": ["lumen"], "kate": ["lumen"], "strasse": ["lumen"],
                                     "Kelvin": ["ventura"], "caf\u00e9": ["ventura"], "A": ["x"], "a": ["y"]}})
    for other in ("\u017fam@example.com", "SAM@example.com", "\u212Aate", "KATE", "stra\u00dfe", "STRASSE",
                  "kelvin", "CAF\u00c9"):
        assert policy.allowed_tenants(other) == frozenset(), other  # long s, Kelvin sign, sharp s, case
    assert policy.allowed_tenants("\u212Aelvin") == frozenset({"ventura"})  # NFC: the Kelvin sign is K
    assert policy.allowed_tenants("cafe\u0301") == frozenset({"ventura"})  # NFD and NFC are one name
    assert policy.allowed_tenants("A") == frozenset({"x"}) and policy.allowed_tenants("a") == frozenset({"y"})


def test_a_user_header_carried_twice_in_any_spelling_names_nobody() -> None:
    name = "X-Forwarded-User"
    assert access.user_from_headers([("X-Forwarded-User", " alice@example.com ")], name) == "alice@example.com"
    assert access.user_from_headers([("x-forwarded-user", "alice")], name) == "alice"
    assert access.user_from_headers([("Host", "h")], name) is None
    for twice in ([("X-Forwarded-User", "alice"), ("x-forwarded-user", "alice")],
                  [("X-Forwarded-User", "alice"), ("X-FORWARDED-USER", "bob")],
                  [("X-Forwarded-User", "alice"), ("X_Forwarded_User", "bob")],
                  [("X-Forwarded-User", "alice"), ("X-Forwarded-User", "")]):
        assert access.user_from_headers(twice, name) is None, twice
    assert access.user_from_headers([("X-Forwarded-User", "alice@example.com, bob@example.com")], name) is None
    assert access.user_from_headers([("X-Forwarded-User", "alice\x00")], name) is None
    assert access.user_from_headers([("X-Forwarded-\u0055ser", "alice")], name) == "alice"  # plain ASCII U
    assert access.user_from_headers([("X-Forwarded-\u0075ser", "a"), ("X-Forwarded-\u016Bser", "b")], name) == "a"
