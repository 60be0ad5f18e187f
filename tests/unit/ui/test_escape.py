"""Attacker text in Markdown: :func:`ui.escape.md` and :func:`ui.escape.code` render as the text itself, never
as an image, a link, HTML, emphasis or a Streamlit directive (checked with a CommonMark renderer,
markdown-it-py, which Streamlit's own dependencies bring)."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ui.escape import code, md, md_text

RENDER = MarkdownIt("commonmark").enable("table").enable("strikethrough")
ATTACKS = [
    "![x](http://127.0.0.1:9/x.png)",
    "[click](javascript:alert(1))",
    "<img src=http://127.0.0.1:9/x.png>",
    "<http://127.0.0.1:9/>",
    "a`![x](http://127.0.0.1:9/x.png)`b",
    "``![x](http://127.0.0.1:9/x.png)``",
    "x\n\n![x](http://127.0.0.1:9/x.png)",
    "x\r\n\r\n[y](http://127.0.0.1:9/)",
    "[x]: http://127.0.0.1:9/x.png\n\n![x]",
    "**bold** _it_ ~~s~~ # h | a | b |",
    ":red[alarm] :material/lock: $x^2$ &lt;b&gt;",
    "www.example.com alice@example.com http://example.com",
]


def inline_html(markdown: str) -> str:
    """The HTML of ``markdown`` without the paragraph wrapper."""
    out = RENDER.render(markdown).strip()
    return out.removeprefix("<p>").removesuffix("</p>")


@pytest.mark.parametrize("text", ATTACKS)
def test_escaped_text_renders_as_itself(text: str) -> None:
    rendered = inline_html(md(text))
    assert "<img" not in rendered and "<a " not in rendered and "<strong" not in rendered
    assert html.unescape(rendered) == " ".join(text.replace("\r\n", "\n").split("\n")).replace("\r", " ")
    for directive in (":red[", ":material/", "$x"):  # Streamlit's syntax is escaped too
        if directive in text:
            assert "\\" + directive[0] in md(text)
    assert "http\\:" in md("http://x") and "www\\." in md("www.x") and "@b\\.c" in md("a@b.c")  # no autolinks


@pytest.mark.parametrize("text", ATTACKS)
def test_a_code_span_holds_the_whole_text(text: str) -> None:
    rendered = inline_html(code(text))
    assert rendered.startswith("<code>") and rendered.endswith("</code>") and rendered.count("<code>") == 1
    assert "<img" not in rendered and "<a " not in rendered
    one_line = " ".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    assert html.unescape(rendered.removeprefix("<code>").removesuffix("</code>")) == one_line


def test_plain_ids_are_unchanged_in_a_code_span() -> None:
    assert code("lumen-px7-ativacao#0") == "`lumen-px7-ativacao#0`"
    assert md("lumen") == "lumen"


def test_md_text_keeps_line_breaks_and_escapes_the_rest() -> None:
    text = "line one\n![x](http://127.0.0.1:9/x.png)\nline three"
    rendered = RENDER.render(md_text(text))
    assert "<img" not in rendered and rendered.count("\n") >= 2


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("![]()<>`*_~:$#|\\&.@/ \n\rahx19")), max_size=40))
def test_no_generated_text_makes_an_image_a_link_or_html(text: str) -> None:
    for markdown in (md(text), code(text), md_text(text)):
        rendered = RENDER.render(markdown)
        assert "<img" not in rendered and "<a " not in rendered, (text, markdown, rendered)
        assert "<code>" not in rendered or markdown == code(text), (text, markdown)


def test_leading_spaces_never_make_a_code_block() -> None:
    # found by the generated test: '    1' (four spaces) rendered as an indented code block
    for markdown in (md("    1"), md_text("ok\n    1"), md_text("\r    1"), md_text("\n\n    1"), md("\t\tx")):
        assert "<code>" not in RENDER.render(markdown)


#: GFM's autolink literals (``www.``, ``http(s)://``, an e-mail address, ``mailto:``/``xmpp:``) as Streamlit's
#: renderer (micromark) finds them: in the Markdown source, where an escape is a construct of its own.
AUTOLINK = re.compile(r"(?i)(?:www\.|https?://|(?:mailto|xmpp):|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)")
LINKY = ["see https://evil.example/login?next=/ now", "www.evil.example", "alice@example.com",
         "Bob.Smith+tag@mail.example.co.uk", "mailto:carol@example.com", "xmpp:dave@example.com",
         "HTTP://EVIL.EXAMPLE/X", "(https://evil.example)", "<alice@example.com>"]


@pytest.mark.parametrize("text", LINKY)
def test_no_url_or_e_mail_in_a_text_becomes_a_link(text: str) -> None:
    """A document's text, a title or a user's e-mail name: no clickable link the document did not ask for."""
    from ui.widgets import highlighted

    for markdown in (md(text), md_text(text), highlighted(text, ["evil", "alice", "example"])):
        assert not AUTOLINK.search(markdown), (text, markdown)
        assert "<a " not in RENDER.render(markdown)
    assert AUTOLINK.search(text)  # the detector finds the raw text's link
