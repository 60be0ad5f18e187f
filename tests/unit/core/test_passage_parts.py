"""A chunk's passage as three parts (head, text, tail): joined, they are the passage each template always wrote, so
vectors stored before the one-pass reader keep matching their chunks' passages."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.core.types import PASSAGE_TEMPLATES, Chunk


def _written_before(c: Chunk, template: str) -> str:
    """The passage templates as written before the parts existed (the formula, kept here as the reference)."""
    if template == "title-newline":
        return "\n".join(part for part in (c.title, c.context, c.text, c.code) if part)
    body = " ".join(part for part in (c.context, c.text, c.code) if part)
    if template == "title-period":
        title = c.title.rstrip()
        return f"{title}{'' if title.endswith(('.', '?', '!', ':')) else '.'} {body}" if title else body
    return body


PARTS = st.sampled_from(["", "a", "Garantia", "Prazo.", " PX-7 ", "Por quê?", "\n", "x = 1"])


@settings(max_examples=400, deadline=None)
@given(PARTS, PARTS, PARTS, PARTS, st.sampled_from(PASSAGE_TEMPLATES))
def test_the_parts_join_into_the_passage_each_template_always_wrote(title, context, text, code, template):
    chunk = Chunk("d#0", "d", 0, title, text, {}, "h", context, code)
    head, middle, tail = chunk.passage_parts(template)
    assert middle == text
    assert head + middle + tail == chunk.passage(template) == _written_before(chunk, template)
