"""The feature fingerprint knows reached code by its qualified name: moving a helper or a declaration to another
module keeps the version, changing a formula changes it, and two modules' helpers of one name are refused.

Each case is a small package written to disk (the fingerprint reads sources), declaring its features with the
judge's own ``_f``."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import pytest

from retrieval.learned.judge.fingerprint import FingerprintClash, fingerprint

COUNT = '''
def _count(words, held):
    return sum(1 for w in words if w in held)
'''
COUNT_CHANGED = '''
def _count(words, held):
    return sum(1 for w in set(words) if w in held)
'''
SHARE = '''
def share(words, held):
    return _count(words, held) / len(words) if words else 0.0
'''
CONTEXT = '''
class Ctx:
    def __init__(self, words, held):
        self.words, self.held = words, held
'''
DECLARATION = '''
FEATURES = (
    _f("share", "[0, 1]", "Share of the words held.", lambda c, n: share(c.words[n], c.held)),
    _f("held", "{0, 1}", "1 when a word is held.", lambda c, n: float(_count(c.words[n], c.held) > 0)),
)
'''
DECLARE = "from retrieval.learned.judge.declaration import _f\n"


def _version(root: Path, monkeypatch: pytest.MonkeyPatch, name: str, files: dict[str, str],
             context_in: str = "helpers") -> str:
    """The fingerprint of package ``name`` (its modules' sources given; ``decl`` declares ``FEATURES``,
    ``context_in`` holds the context class ``Ctx``)."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module, text in files.items():
        (package / f"{module}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    decl = importlib.import_module(f"{name}.decl")
    context = importlib.import_module(f"{name}.{context_in}").Ctx
    return fingerprint("_f", (("group", decl.FEATURES, context),), package="fpcase")


def _one_module(count: str = COUNT) -> dict[str, str]:
    return {"helpers": count + SHARE + CONTEXT,
            "decl": DECLARE + "from .helpers import _count, share\n" + DECLARATION}


def test_moving_a_helper_to_another_module_keeps_the_fingerprint(tmp_path, monkeypatch):
    here = _version(tmp_path, monkeypatch, "fpcase_here", _one_module())
    # _count to its own module, the context class to another, the declarations beside share: same code, new homes.
    moved = _version(tmp_path, monkeypatch, "fpcase_moved", {
        "counting": COUNT,
        "contexts": CONTEXT,
        "decl": DECLARE + "from .counting import _count\n" + SHARE + DECLARATION,
    }, context_in="contexts")
    assert here == moved


def test_changing_a_helpers_body_changes_the_fingerprint(tmp_path, monkeypatch):
    here = _version(tmp_path, monkeypatch, "fpcase_body", _one_module())
    changed = _version(tmp_path, monkeypatch, "fpcase_changed", _one_module(COUNT_CHANGED))
    # A comment or a line break is not a formula.
    reworded = _version(tmp_path, monkeypatch, "fpcase_reworded", _one_module(
        COUNT.replace("return sum(", "# how many are held\n    return sum(\n        ")))
    assert changed != here
    assert reworded == here


def test_a_typing_change_keeps_the_fingerprint(tmp_path, monkeypatch):
    """Annotations compute nothing: a helper typed, a local annotated or a dataclass-like field declared with its
    type reads as before; the same helper with another default does not."""
    here = _version(tmp_path, monkeypatch, "fpcase_untyped", _one_module())
    typed = COUNT.replace("def _count(words, held):", "def _count(words: list[str], held: set[str]) -> int:\n"
                          "    found: int = sum(1 for w in words if w in held)\n    return found")
    untyped_local = COUNT.replace("def _count(words, held):", "def _count(words, held):\n"
                                  "    found = sum(1 for w in words if w in held)\n    return found")
    assert _version(tmp_path, monkeypatch, "fpcase_typed", _one_module(typed)) == \
        _version(tmp_path, monkeypatch, "fpcase_local", _one_module(untyped_local)) != here
    assert _version(tmp_path, monkeypatch, "fpcase_annotated", _one_module(
        COUNT.replace("def _count(words, held):", "def _count(words: 'list[str]', held) -> 'int':"))) == here
    assert _version(tmp_path, monkeypatch, "fpcase_default", _one_module(
        COUNT.replace("def _count(words, held):", "def _count(words, held=()):"))) != here


def test_two_modules_helpers_of_one_name_are_refused(tmp_path, monkeypatch):
    """share reaches one _count and the declarations another: by qualified name alone the two could not be told
    apart (a change to either, or a swap of their bodies, could leave the version as it was), so it is refused."""
    files = {
        "helpers": "from .counting import _count\n" + SHARE + CONTEXT,
        "counting": COUNT,
        "decl": DECLARE + "from .helpers import share\n" + COUNT_CHANGED + DECLARATION,
    }
    with pytest.raises(FingerprintClash, match=r"_count is defined in both fpcase_clash\.(counting|decl) and "
                                               r"fpcase_clash\.(counting|decl)"):
        _version(tmp_path, monkeypatch, "fpcase_clash", files)

