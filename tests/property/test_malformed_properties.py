"""Property-based tests of malformed input: whatever bytes an access policy file (YAML, TOML, JSON) or a corpus
or question file holds, reading it either succeeds or is refused with the project's own error in one line, never
another exception (a parser's recursion, Python's integer limit, a decoding error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fuzz import budget
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.ingest.corpus import load_corpus, load_questions
from retrieval.core.errors import CorpusError, InvalidPolicy
from retrieval.serving.access import AccessPolicy, load_policy

#: Pieces that make parsers work: brackets, quotes, numbers, keys, separators, bytes that are not UTF-8.
PIECES = [b"[", b"]", b"{", b"}", b'"', b"'", b":", b",", b"=", b"\n", b"  ", b"users", b"default", b"id",
          b"text", b"true", b"7.5", b"9" * 5000, b"&a", b"*a", b"!!str", b"- ", b"#", b"\xff", b"\xc3", b"\\u0000",
          b"alice@example.com", b"[users]", b'"users": {', b'{"id": ', b'"text": "x"']
content = st.lists(st.sampled_from(PIECES), max_size=30).map(b"".join)


@pytest.mark.parametrize("suffix", [".yaml", ".toml", ".json"])
@settings(max_examples=budget(60))
@given(data=content)
def test_a_policy_file_is_read_or_refused_in_one_line(tmp_path_factory, suffix: str, data: bytes) -> None:
    path = Path(tmp_path_factory.mktemp("policy")) / f"p{suffix}"
    path.write_bytes(data)
    try:
        assert isinstance(load_policy(path), AccessPolicy)
    except InvalidPolicy as exc:
        assert "\n" not in str(exc)


@settings(max_examples=budget(80))
@given(lines=st.lists(content, min_size=1, max_size=4))
def test_a_corpus_or_question_file_is_read_or_refused_in_one_line(tmp_path_factory, lines: list[bytes]) -> None:
    path = Path(tmp_path_factory.mktemp("corpus")) / "c.jsonl"
    path.write_bytes(b"\n".join(lines))
    for load in (load_corpus, load_questions):
        try:
            load(path)
        except CorpusError as exc:
            assert "\n" not in str(exc)
