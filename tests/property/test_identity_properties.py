"""Property-based tests of who a request names (retrieval/serving/access.py): whatever set of headers arrives,
the user header names someone only when it is there exactly once in all its spellings (letter case, ``_`` for
``-``) and holds no comma; and a policy gives a name's tenants only to a name equal to it after NFC and trimming,
never to a case-folded or compatibility-folded look-alike."""

from __future__ import annotations

import unicodedata

from helpers.fuzz import budget
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from retrieval.serving.access import normalize_user, parse_policy, user_from_headers

NAME = "X-Forwarded-User"


@st.composite
def spelling(draw) -> str:
    """The header's name in some spelling: each letter's case drawn, each ``-`` possibly an ``_``."""
    out = []
    for ch in NAME:
        if ch == "-":
            out.append(draw(st.sampled_from("-_")))
        else:
            out.append(ch.upper() if draw(st.booleans()) else ch.lower())
    return "".join(out)


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12)
others = st.tuples(st.sampled_from(["Host", "Cookie", "X-Forwarded-Users", "X-Forwarded", "User", "Origin"]), names)


@settings(max_examples=budget(150))
@given(copies=st.lists(st.tuples(spelling(), names), max_size=3), rest=st.lists(others, max_size=4),
       data=st.data())
def test_the_user_header_names_someone_only_when_it_is_there_once(copies, rest, data) -> None:
    headers = data.draw(st.permutations(copies + rest))
    user = user_from_headers(headers, NAME)
    if len(copies) != 1 or "," in copies[0][1]:
        assert user is None
    else:
        assert user == normalize_user(copies[0][1])


letters = st.text(st.sampled_from("aAsS\u017fkK\u212a\u00dfe\u00e9\u0301i\u0130\u0131@. "), min_size=1, max_size=6)


@settings(max_examples=budget(200))
@given(policy_name=letters, asked=letters)
def test_tenants_go_only_to_the_same_name_after_nfc(policy_name: str, asked: str) -> None:
    assume(normalize_user(policy_name) is not None)
    policy = parse_policy({"users": {policy_name: ["t"]}})
    same = unicodedata.normalize("NFC", policy_name).strip() == unicodedata.normalize("NFC", asked).strip()
    assert (policy.allowed_tenants(asked) == frozenset({"t"})) == same
