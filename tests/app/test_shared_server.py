"""The app on a shared server with an access policy (README, "Deploying for several users").

Alice may open the lab's ``lumen`` tenant, Bob its ``ventura``: each sees only their own in the tenant picker,
the filter values, the labeled questions, the "Where is my document?" search and every line of the page (the
whole rendered tree is searched for the other tenant's name) and every file the page offers for download (the
report, the trace, the lists); a link cannot name the other tenant; a request with no user, or whose user has no
tenant, sees one line. The identity comes from ``st.user`` (AppTest's
``user``) or from the proxy header (``ui.access.request_headers`` replaced: AppTest sends no headers). Without
a policy the sidebar says it is in single-user mode. Document ids, titles, tenants and metadata values that
hold Markdown render as text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.apptest import APP, assert_ok, open_tab, rendered, walk
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"
VT3 = "O que é o erro VT-3 que aparece na maquininha?"
EVAL_PAGE = str(Path(APP).parent / "pages" / "2_Evaluation.py")
POLICY = """users:
  alice@example.com: [lumen]
  bob@example.com: [ventura]
  carol@example.com: []
default: []
"""
IMG = "![x](http://127.0.0.1:9/x.png)"
MARKDOWN = MarkdownIt("commonmark").enable("table").enable("strikethrough")


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY, encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_ACCESS_POLICY", str(path))
    return path


def as_user(email: str | None, script: str = APP, **params: str) -> AppTest:
    """The page run once for ``email`` logged in through Streamlit's login (``None``: nobody logged in)."""
    at = AppTest.from_file(script, default_timeout=300)
    at.user = {"is_logged_in": True, "email": email} if email else {}
    at.query_params.update(params)
    return at.run()


#: The main page's tabs (ui/i18n.py keys): only the open one is drawn on a run.
TABS = ("tab_grid", "tab_lists", "tab_movement", "tab_compare", "tab_judge", "tab_where", "tab_timings")


def rendered_every_tab(at: AppTest) -> str:
    """:func:`rendered` of the page with each of its tabs open in turn; the first tab is open again after."""
    out = [rendered(open_tab(at, tab)) for tab in TABS]
    open_tab(at, TABS[0])
    return "\n".join(out)


def markdown_sources(at: AppTest) -> list[str]:
    """Every text the browser renders as Markdown: bodies (markdown, captions, alerts, headings), labels
    (widgets, expanders, tabs) and tooltips."""
    out = []
    for node in walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "ListFields"):
            continue
        for field, value in proto.ListFields():
            if field.name in ("body", "label", "help") and isinstance(value, str) and value:
                out.append(value)
    return out


NO_TENANT = "— pick a tenant —"


def options(at: AppTest, key: str) -> list[str]:
    """A select box's options as the user sees them (formatted)."""
    return list(at.selectbox(key=key).options)


def url_warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if w.value.startswith("URL parameter ignored: ")]


def test_alice_sees_only_her_tenant_everywhere(policy: Path) -> None:
    at = as_user("alice@example.com")
    assert_ok(at)
    assert options(at, "tenant") == [NO_TENANT, "lumen"]
    assert "ventura" not in rendered(at)
    assert [c.value for c in at.sidebar.caption][0] == "Signed in as alice\\@example\\.com"
    at = as_user("alice@example.com", q=PX7, tenant="lumen")
    assert_ok(at)
    assert "Answer" in [s.value for s in at.subheader]  # it answers
    assert "ventura" not in rendered_every_tab(at)
    picks = options(at, "picked")
    assert len(picks) == 1 + 23 and all(by.startswith("lab-") for by in picks[1:])  # lumen's labeled questions only
    at = open_tab(at, "tab_where")
    at.text_input(key="where_q").set_value("ventura").run()  # another tenant's ids and titles are not searched
    assert options(at, "where_pick") == ["—"]
    at.text_input(key="where_q").set_value("a").run()
    found = [o for o in options(at, "where_pick") if o != "—"]
    assert found and all(o.startswith("lumen-") for o in found)
    assert "ventura" not in rendered(at)


def test_a_link_cannot_name_another_tenant(policy: Path) -> None:
    at = as_user("alice@example.com", q=PX7, tenant="ventura")
    assert_ok(at)
    assert url_warnings(at) == ["URL parameter ignored: tenant: not one of the tenants you may open"]
    assert at.selectbox(key="tenant").value == ""
    (pick,) = [w.value for w in at.warning if "Pick a tenant" in w.value]
    assert pick.startswith("Pick a tenant in the sidebar before asking (yours here: lumen).")
    assert "Answer" not in [s.value for s in at.subheader]  # nothing was searched
    assert "ventura" not in rendered(at)
    unknown = as_user("alice@example.com", q=PX7, tenant="no-such-tenant")  # the same words: nothing confirmed
    assert url_warnings(unknown) == url_warnings(at)
    assert "no-such-tenant" not in rendered(unknown)


def test_two_users_against_one_app_each_see_only_their_tenant(policy: Path) -> None:
    alice = as_user("alice@example.com")
    bob = as_user("bob@example.com")
    assert "may open no tenant" in rendered(as_user("BOB@example.com"))  # names are compared exactly (after NFC)
    assert options(alice, "tenant") == [NO_TENANT, "lumen"] and options(bob, "tenant") == [NO_TENANT, "ventura"]
    # Filter values of the user's tenants only: 2022 is a lumen year.
    assert "2022" in map(str, alice.multiselect(key="flt_year").options)
    assert "2022" not in map(str, bob.multiselect(key="flt_year").options)
    alice = as_user("alice@example.com", q=PX7, tenant="lumen")
    bob = as_user("bob@example.com", q=VT3, tenant="ventura")
    alice.run()  # the two sessions interleaved, one process, one cached index
    for at, own, other in ((alice, "lumen", "ventura"), (bob, "ventura", "lumen")):
        assert_ok(at)
        assert at.selectbox(key="tenant").value == own
        page = rendered_every_tab(at)
        assert f"{own}-" in page and other not in page, own
    again = as_user("bob@example.com", q=PX7, tenant="lumen")
    assert url_warnings(again) == ["URL parameter ignored: tenant: not one of the tenants you may open"]
    assert "lumen" not in rendered(again)


def test_no_user_or_a_user_without_tenants_sees_one_line(policy: Path) -> None:
    for at, line in ((as_user(None, q=PX7, tenant="lumen"), "Not authorised: sign in to use this workbench."),
                     (as_user("carol@example.com"), "Not authorised: carol\\@example\\.com may open no tenant of "
                                                     "this workbench."),
                     (as_user("mallory@example.com"), "Not authorised: mallory\\@example\\.com may open no tenant "
                                                       "of this workbench."),
                     (as_user(None, script=EVAL_PAGE), "Not authorised: sign in to use this workbench.")):
        assert not at.exception
        assert [e.value for e in at.error] == [line]
        assert not at.selectbox and not at.text_input and not at.sidebar.caption and not at.markdown
        assert "lumen" not in rendered(at) and "ventura" not in rendered(at)
    logged_out = AppTest.from_file(APP, default_timeout=120)
    logged_out.user = {"is_logged_in": False}  # Streamlit's login configured, nobody logged in: a button
    logged_out.run()
    assert [b.label for b in logged_out.button] == ["Log in"]
    unverified = AppTest.from_file(APP, default_timeout=120)
    unverified.user = {"is_logged_in": True, "email": "alice@example.com", "email_verified": False}
    assert [e.value for e in unverified.run().error] == ["Not authorised: sign in to use this workbench."]


def test_the_proxy_header_names_the_user(policy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ui import access as access_ui

    monkeypatch.setenv("RETRIEVAL_USER_HEADER", "X-Forwarded-User")
    monkeypatch.setattr(access_ui, "request_headers", lambda: {"X-Forwarded-User": "bob@example.com"})
    at = as_user("alice@example.com")  # the header is the only source once it is configured
    assert_ok(at)
    assert options(at, "tenant") == [NO_TENANT, "ventura"]
    assert not any(b.label == "Log out" for b in at.sidebar.button)  # signed in by the proxy, not by the app
    monkeypatch.setattr(access_ui, "request_headers", lambda: {})
    assert [e.value for e in as_user("alice@example.com").error] == ["Not authorised: sign in to use this workbench."]


def test_a_policy_that_cannot_be_read_opens_nothing(policy: Path) -> None:
    policy.write_text("users:\n  alice@example.com: lumen\n", encoding="utf-8")  # a string, not a list
    at = as_user("alice@example.com")
    assert not at.exception
    assert [e.value for e in at.error] == ["Not authorised: this workbench's access policy "
                                           "(RETRIEVAL_ACCESS_POLICY) is not valid; the server log says why."]
    assert not at.selectbox and "lumen" not in rendered(at)


def test_without_a_policy_the_sidebar_says_single_user_mode_once() -> None:
    at = AppTest.from_file(APP, default_timeout=300).run()
    assert_ok(at)
    notices = [i.value for i in at.sidebar.info]
    assert notices == ["**Single-user mode**: no access policy is set (`RETRIEVAL_ACCESS_POLICY`), so anyone who "
                       "can open this URL sees every tenant."]
    assert not [i for i in at.main.info if "Single-user" in i.value]
    assert options(at, "tenant") == [NO_TENANT, "lumen", "ventura"]


def test_the_evaluation_page_evaluates_only_the_users_tenant(policy: Path) -> None:
    at = as_user("bob@example.com", script=EVAL_PAGE)
    assert_ok(at)
    assert not [b for b in at.button if b.key == "ev_train"]  # training reads every tenant's questions
    at.selectbox(key="ev_split").set_value("heldout")
    at.multiselect(key="ev_configs").set_value(["bm25"])
    at.button[0].click().run()
    assert_ok(at)
    report = at.session_state["ev_report"]
    questions = {row["id"] for row in report["configs"]["bm25"]["questions"]}
    lab = [json.loads(line) for line in (Path(APP).parent / "data" / "lab" / "questions.jsonl").open()]
    ventura = {q["id"] for q in lab if q["filters"]["tenant"] == "ventura"}
    assert questions and questions <= ventura
    assert "lumen" not in rendered(at)


def test_the_evaluation_report_reads_another_tenants_document_as_not_in_the_corpus(
        policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bob's own question set lists Lumen's PX-7 article as relevant to a Ventura question, with a span of its
    text: the report's label checks read Ventura's documents only, so the article is an id not in the corpus
    (not "in tenant 'lumen'") and its span is in no relevant parent (not found whole)."""
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"id": "mine-1", "question": VT3, "group": "g", "relevant": ["lumen-px7-ativacao"],
                                "filters": {"tenant": "ventura"},
                                "answers": ["ativado automaticamente em até 24 horas"]}) + "\n", encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))
    at = AppTest.from_file(EVAL_PAGE, default_timeout=300)
    at.user = {"is_logged_in": True, "email": "bob@example.com"}
    at.session_state["ev_set"], at.session_state["ev_questions"] = "custom", str(mine)
    at.session_state["ev_configs"] = ["bm25"]
    at.run()
    assert_ok(at)
    at.button[0].click().run()
    assert_ok(at)
    report = at.session_state["ev_report"]
    problems = report["question_problems"]
    assert problems["relevant_not_in_corpus"] == [{"id": "mine-1", "relevant": ["lumen-px7-ativacao"]}]
    assert problems["relevant_in_other_tenant"] == [] and problems["tenant_not_in_corpus"] == []
    evidence = report["evidence_check"]
    assert evidence["whole"] == 0 and [e["id"] for e in evidence["not_in_parent"]] == ["mine-1"]
    assert "'lumen'" not in rendered(at) and '"lumen"' not in json.dumps(report)


def test_ids_titles_tenants_and_values_render_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus whose id, title, tenant and metadata value hold Markdown images and HTML: no Markdown the page
    sends makes an image or a link (the page once fetched these URLs)."""
    evil_tenant = "![t](http://127.0.0.1:9/tenant.png)"
    docs = [{"id": IMG, "title": "Backup ![t](http://127.0.0.1:9/t.png) <img src=http://127.0.0.1:9/h.png>",
             "text": "O backup noturno roda às 2h e guarda trinta dias de cópias.",
             "metadata": {"tenant": "acme", "doc_type": "![m](http://127.0.0.1:9/m.png)"}},
            {"id": "acme-senha", "title": "Senha", "text": "Para trocar a senha abra o portal e clique em esqueci.",
             "metadata": {"tenant": "acme", "doc_type": "faq"}},
            {"id": "other-1", "title": "[link](http://127.0.0.1:9/)", "text": "Outro inquilino guarda o backup.",
             "metadata": {"tenant": evil_tenant, "doc_type": "faq"}}]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"corpus": str(corpus), "q": "Quando roda o backup?"})
    at.run()
    assert_ok(at)
    assert any(w.value.startswith("This corpus has 2 tenants (\\!\\[t\\]\\(http\\://127\\.0\\.0\\.1\\:9/tenant\\.png"
                                  "\\), acme)") for w in at.warning)
    at.selectbox(key="tenant").set_value("acme").run()
    sources = markdown_sources(open_tab(at, "tab_lists")) + markdown_sources(open_tab(at, "tab_judge"))
    assert f"**#1** `{IMG}#0`" in sources and f"Grade · `{IMG}`" in sources
    at = open_tab(at, "tab_where")
    at.text_input(key="where_q").set_value("backup").run()
    at.selectbox(key="where_pick").set_value(f"{IMG}#0").run()
    assert_ok(at)
    sources += markdown_sources(at) + markdown_sources(open_tab(at, "tab_grid"))
    assert any(IMG in s for s in sources)  # the id is on the page (in code spans) …
    for source in sources:  # … and nothing renders as an image, a link or HTML
        html = MARKDOWN.render(source)
        assert "<img" not in html and "<a " not in html and "<script" not in html, (source, html)


def test_the_downloads_hold_nothing_of_another_tenant(policy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What Alice downloads from the main page (the HTML report, the trace JSON, the four lists' CSV) names no
    id, title or tenant of Ventura's: with every query transform on (the self-query reads filter values, the
    variants search again), after a "Where is my document?" search, and for a question written about a Ventura
    code. The files' bytes are read from the test runtime's media storage (the page's proto holds only a URL)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1 import app_test

    storages: list[MemoryMediaFileStorage] = []

    class Recording(MemoryMediaFileStorage):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            storages.append(self)

    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", Recording)

    def downloads(at: AppTest) -> dict[str, str]:
        storage = storages[-1]  # the storage of the latest run
        out = {}
        for button in at.get("download_button"):
            out[button.proto.label] = storage.get_file(button.proto.url.rsplit("/", 1)[1]).content.decode("utf-8")
        return out

    lab = [json.loads(line) for line in (Path(APP).parent / "data" / "lab" / "corpus.jsonl").open(encoding="utf-8")]
    ventura = [d for d in lab if d["metadata"]["tenant"] == "ventura"]
    lumen_text = " ".join(d["title"] + " " + d["text"] for d in lab if d["metadata"]["tenant"] == "lumen").lower()
    needles = {"ventura"} | {d["id"].lower() for d in ventura} | {d["title"].lower() for d in ventura
                                                                  if d["title"].lower() not in lumen_text}
    transforms = "rewrite,multi_query,hyde,decompose,multi_hop,self_query"
    for question in (PX7, "Qual a garantia dos aparelhos de 2022?", "O erro VT-3 aparece na maquininha"):
        at = as_user("alice@example.com", q=question, tenant="lumen", transforms=transforms)
        assert_ok(at)
        if question == PX7:  # "Where is my document?" searched and one of its finds explained, then downloaded
            at = open_tab(at, "tab_where")
            at.text_input(key="where_q").set_value("a").run()
            found = [o for o in options(at, "where_pick") if o != "—"]
            at.selectbox(key="where_pick").set_value(found[0].split(" · ")[0]).run()
            assert_ok(at)
        files = downloads(open_tab(at, "tab_timings"))
        assert set(files) == {"Download this question's report (HTML)", "Trace (JSON)", "lexical (CSV)",
                              "dense (CSV)", "fused (CSV)", "reranked (CSV)"}
        trace = json.loads(files["Trace (JSON)"])
        assert trace["filters"]["tenant"] == "lumen" and trace["queries"][1:]  # the variants ran
        assert any(item["chunk_id"].startswith("lumen-") for item in trace["fused"]["items"])
        for name, text in files.items():
            leaked = sorted(n for n in needles if n in text.lower())
            assert not leaked, (question, name, leaked)
