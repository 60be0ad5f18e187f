"""Property-based tests of the data roots: whatever path string the app is handed (``..``, symlinks in and out,
absolute, relative, ``~``, any Unicode, NUL), ``roots.confine`` either refuses it in one line or returns a real
path inside the roots, of the kind asked; a path lexically outside the roots is always refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.fuzz import budget
from hypothesis import event, given, settings
from hypothesis import strategies as st

from retrieval.core.errors import PathRefused
from retrieval.serving.roots import confine


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """root/ (files, a subfolder, links in, out, dangling and looping, a FIFO) beside outside/ (a secret)."""
    base = tmp_path_factory.mktemp("roots")
    root, outside = base / "root", base / "outside"
    (root / "sub" / "deeper").mkdir(parents=True)
    outside.mkdir()
    for path in (root / "a.jsonl", root / "sub" / "b.md", root / "café.md", root / "cafe\u0301.txt",
                 root / "sub" / "deeper" / "c.txt", outside / "secret.md"):
        path.write_text("x\n", encoding="utf-8")
    (root / "link_out").symlink_to(outside, target_is_directory=True)
    (root / "link_in").symlink_to(root / "sub", target_is_directory=True)
    (root / "file_out.md").symlink_to(outside / "secret.md")
    (root / "file_in.md").symlink_to(root / "sub" / "b.md")
    (root / "dangling.jsonl").symlink_to(outside / "new.jsonl")
    (root / "up").symlink_to("..", target_is_directory=True)
    (root / "loop").symlink_to(root / "loop")
    (root / "dev").symlink_to("/dev/zero")
    os.mkfifo(root / "pipe")
    (base / "root-alias").symlink_to(root, target_is_directory=True)
    return {"base": base, "root": root, "outside": outside}


NAME = st.sampled_from(["..", ".", "", "sub", "deeper", "a.jsonl", "b.md", "c.txt", "café.md", "cafe\u0301.txt",
                     "link_out", "link_in", "file_out.md", "file_in.md", "dangling.jsonl", "up", "loop", "dev",
                "pipe", "secret.md", "outside", "root", "root-alias", "new.jsonl", "etc", "passwd", "~"])
# Mostly the tree's own names (so that many paths land inside), sometimes any Unicode name.
SEGMENT = st.one_of(NAME, NAME, NAME, st.text(st.characters(blacklist_categories=("Cs",),
                                                             blacklist_characters="/\0"), min_size=1, max_size=6))
# Paths that exist from the root (through links in, out and back up), so that many examples are accepted.
START = st.sampled_from(["", "a.jsonl", "sub", "sub/b.md", "sub/deeper", "sub/deeper/c.txt", "café.md",
                         "cafe\u0301.txt", "link_in", "link_in/b.md", "file_in.md", "up/root/a.jsonl",
                         "sub/deeper/../b.md", "link_in/../a.jsonl", "new.jsonl", "sub/new.md", "link_out/secret.md",
                         "file_out.md", "dangling.jsonl", "up/outside/secret.md", "dev", "pipe", "loop"])
TAIL = st.one_of(st.just([]), st.just([]), st.just([]), st.lists(SEGMENT, min_size=1, max_size=4))
ODD = st.text(max_size=12)  # anything, NUL and lone surrogates included


def prefixes(tree: dict[str, Path]) -> list[str]:
    root, base = tree["root"], tree["base"]
    inside = [str(root), str(base / "root-alias"), os.path.relpath(root)] * 8  # most paths start in a root
    return inside + [str(base), str(tree["outside"]), "/", "/etc", "/dev", "~", os.path.relpath(base), "", "."]


def lexically_inside(raw: str, roots: list[Path]) -> bool:
    """The test's own oracle: the path as written, ``..`` folded, under a root as given or as resolved."""
    lexical = os.path.abspath(os.path.expanduser(raw))
    forms = {os.path.abspath(r) for r in roots} | {os.path.realpath(r) for r in roots}
    return any(lexical == r or lexical.startswith(r + os.sep) for r in forms)


def under(path: str, root: Path) -> bool:
    real_root = os.path.realpath(root)
    return path == real_root or path.startswith(real_root + os.sep)


@settings(max_examples=budget(400))
@given(data=st.data(), start=START, segments=TAIL, odd=st.one_of(*[st.none()] * 7, ODD),
       want=st.sampled_from(["file", "folder", "either", "either"]), for_writing=st.booleans(),
       root_choice=st.sampled_from(["root", "alias"]), max_bytes=st.sampled_from([None, None, None, 10**6, 1]))
def test_an_accepted_path_is_a_real_path_inside_the_roots(tree, data, start, segments, odd, want, for_writing,
                                                         root_choice, max_bytes) -> None:
    prefix = data.draw(st.sampled_from(prefixes(tree)))
    parts = [p for p in (prefix, start) if p] + segments
    raw = odd if odd is not None else "/".join(parts)
    if for_writing:
        want = "file"
    roots = [tree["root"] if root_choice == "root" else tree["base"] / "root-alias"]
    try:
        result = confine(raw, roots, want=want, for_writing=for_writing, max_bytes=max_bytes)
    except PathRefused as exc:
        text = str(exc)
        assert text.startswith("refused: ") and "\n" not in text and "\r" not in text, repr(text)
        event("refused")
        return
    event("accepted (for writing)" if for_writing else "accepted")
    # Accepted: the raw path was lexically inside, and the returned path is real, inside, of the kind asked.
    assert lexically_inside(raw, roots), raw
    real = str(result)
    assert os.path.isabs(real) and os.path.realpath(real) == real, (raw, real)
    assert under(real, tree["root"]), (raw, real)
    assert not under(real, tree["outside"])
    if result.exists():
        assert result.is_file() or result.is_dir()
        assert not result.is_symlink()
        if want == "file":
            assert result.is_file()
        elif want == "folder":
            assert result.is_dir()
        if max_bytes is not None and result.is_file():
            assert result.stat().st_size <= max_bytes
    else:
        assert for_writing and result.parent.is_dir() and under(str(result.parent), tree["root"]), (raw, real)


@settings(max_examples=budget(150))
@given(data=st.data(), segments=st.lists(SEGMENT, max_size=5))
def test_a_path_lexically_outside_the_roots_is_refused_alike_whether_or_not_it_exists(tree, data, segments) -> None:
    prefix = data.draw(st.sampled_from(prefixes(tree)))
    raw = "/".join([prefix, *segments]) if prefix else "/".join(segments)
    roots = [tree["root"]]
    if lexically_inside(raw, roots):
        return
    messages = []
    for candidate in (raw, raw.rstrip("/") + "/no-such-thing-here"):
        with pytest.raises(PathRefused) as info:
            confine(candidate, roots, want="either")
        messages.append(str(info.value).replace(repr(candidate), "<raw>", 1))
    assert messages[0] == messages[1]


@settings(max_examples=budget(100))
@given(data=st.data(), start=START, root_choice=st.sampled_from(["root", "alias"]))
def test_a_regular_file_or_folder_inside_the_roots_is_accepted(tree, data, start, root_choice) -> None:
    """The other side: confine does not refuse what it should take (a path inside whose real path is a file or
    folder inside), so the property above is not met by refusing everything."""
    prefix = data.draw(st.sampled_from(prefixes(tree)[:3]))
    raw = "/".join(p for p in (prefix, start) if p)
    roots = [tree["root"] if root_choice == "root" else tree["base"] / "root-alias"]
    real = os.path.realpath(os.path.abspath(raw))
    expected = lexically_inside(raw, roots) and under(real, tree["root"]) and (os.path.isfile(real) or os.path.isdir(real))
    event("accepted" if expected else "refused")
    if expected:
        assert str(confine(raw, roots, want="either")) == real
    else:
        with pytest.raises(PathRefused):
            confine(raw, roots, want="either")
