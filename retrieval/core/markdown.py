"""Text from a corpus, a file, a URL or a header, made safe to put into Markdown: the page's and the exports'.

Streamlit renders Markdown in ``st.markdown``, ``st.caption``, ``st.info`` / ``st.warning`` / ``st.error`` /
``st.success``, ``st.write`` of a string and in widget labels (where it also draws images and links), with its
own directives (``:red[…]``, ``:material/icon:``, emoji shortcodes) and LaTeX (``$…$``); a downloaded Markdown
file (the decision record, :func:`retrieval.offline.report.decision_record`) is rendered by whatever opens it. A
document id, title, tenant name, question, configuration name or metadata value is attacker text on a shared
server: ``![x](http://host/x.png)`` in an id made the page fetch that image. Every such value goes through
:func:`md` (as text) or :func:`code` (as a code span) before it is put into Markdown; tables, charts and select
boxes' options of the page show plain text and need neither. The app imports these through :mod:`ui.escape`.
"""

from __future__ import annotations

import re

# The characters that can start Markdown, Streamlit or HTML syntax, backslash-escaped (CommonMark makes an escaped
# ASCII punctuation character literal text): no emphasis, code, link, image, autolink (``http\\:``,
# ``www\\.`` and ``a\\@b\\.c`` no longer match GFM's autolink literals, which read the source: an escape
# is a construct of its own, and cmark-gfm's see it as a text node of its own), HTML (``\\<``), entity
# (``\\&``), table, heading, list or quote marker, Streamlit directive or emoji (``\\:``) or LaTeX (``\\$``) can start. Quotes, commas, slashes
# and the like are left as they are: they start nothing.
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~:&@])")
# Line breaks (CommonMark's and Unicode's) and other control characters: a blank line would end a code span's
# paragraph, letting what follows render as Markdown.
_BREAKS = re.compile(r"\r\n|[\x00-\x1f\x7f\x85\u2028\u2029]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BACKTICKS = re.compile(r"`+")
# A line's leading spaces and tabs (four of them start an indented code block): shown as no-break spaces,
# which CommonMark does not count as indentation.
_LEADING = re.compile(r"(?:^|(?<=\r))[ \t]+", re.M)


def _keep_indent(text: str) -> str:
    return _LEADING.sub(lambda m: "\u00a0" * len(m.group()), text)


def md(value: object) -> str:
    """``value`` as one line of literal Markdown text: every character that starts syntax backslash-escaped,
    line breaks and control characters turned into spaces (an id, a title, a tenant, a metadata value)."""
    return _keep_indent(_PUNCTUATION.sub(r"\\\1", _BREAKS.sub(" ", str(value))))


def md_text(value: object) -> str:
    """``value`` as literal Markdown text that keeps its line breaks (an answer, a document's text): every
    character that starts syntax escaped, control characters other than line breaks and tabs turned into spaces."""
    return _keep_indent(_PUNCTUATION.sub(r"\\\1", _CONTROLS.sub(" ", str(value))))


def code(value: object) -> str:
    """``value`` as an inline code span no text can leave: fenced by one backtick more than its longest run of
    backticks, padded with spaces, line breaks and control characters turned into spaces."""
    text = _BREAKS.sub(" ", str(value))
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    if not text.strip():
        return fence + " " + text + " " + fence if text else "` `"
    pad = " " if longest or text.startswith(" ") or text.endswith(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
