"""Property-based tests of the race-free opens (retrieval/core/safeio.py): under a context's roots, whatever path
is asked for (``..``, ``.``, links in, out, dangling, missing parts), :func:`open_beneath` either refuses it or
opens a file that lies inside the roots, for reading and for writing; never the file outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.fuzz import budget
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.core import safeio
from retrieval.core.errors import PathRefused

PARTS = ["a.jsonl", "sub", "b.jsonl", "link_in", "link_out", "dangling", "..", ".", "missing", "outside",
         "secret.jsonl"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("safeio")
    root, outside = base / "root", base / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.jsonl").write_text("a", encoding="utf-8")
    (root / "sub" / "b.jsonl").write_text("b", encoding="utf-8")
    (outside / "secret.jsonl").write_text("secret", encoding="utf-8")
    (root / "link_in").symlink_to(root / "sub", target_is_directory=True)
    (root / "link_out").symlink_to(outside, target_is_directory=True)
    (root / "sub" / "secret.jsonl").symlink_to(outside / "secret.jsonl")
    (root / "dangling").symlink_to(root / "nowhere")
    return {"root": root, "outside": outside}


@settings(max_examples=budget(150))
@given(parts=st.lists(st.sampled_from(PARTS), min_size=1, max_size=5), write=st.booleans())
def test_an_open_is_refused_or_inside_the_roots(tree: dict[str, Path], parts: list[str], write: bool) -> None:
    root, outside = tree["root"], tree["outside"]
    secret = os.stat(outside / "secret.jsonl")
    path = os.path.join(str(root), *parts)
    flags = (os.O_WRONLY | os.O_APPEND) if write else os.O_RDONLY
    with safeio.confined_to([root], [root]):
        try:
            fd = safeio.open_beneath(path, flags, write=write)
        except (PathRefused, OSError):
            return
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    assert (info.st_dev, info.st_ino) != (secret.st_dev, secret.st_ino), parts
    assert os.path.realpath(path).startswith(str(root.resolve()) + os.sep), parts
    assert (outside / "secret.jsonl").read_text(encoding="utf-8") == "secret"
