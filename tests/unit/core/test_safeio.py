"""Race-free roots (retrieval/core/safeio.py): once a context declares its roots, a corpus, question set or
judgments file is opened from the root's descriptor one component at a time with ``O_NOFOLLOW``, so a symlink
swapped in after the path was checked is refused instead of followed, for reads and for writes. A thread swaps a
folder and a file for links out of the root while the main thread loads and saves: every load gives the inside
text or a refusal, never the outside one, and the outside file is never written."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from retrieval.ingest.corpus import load_corpus, load_questions
from retrieval.core import safeio
from retrieval.core.errors import PathRefused, RetrievalError
from retrieval.offline import judgments
from retrieval.serving.roots import confine

DOC = '{"id": "inside", "title": "t", "text": "inside text"}\n'
SECRET = '{"id": "secret", "title": "t", "text": "outside secret"}\n'
QUESTION = '{"id": "q1", "question": "inside?", "group": "g", "relevant": ["d"]}\n'


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    (outside / "sub").mkdir(parents=True)
    for base, text in ((root, DOC), (outside, SECRET)):
        (base / "sub" / "corpus.jsonl").write_text(text, encoding="utf-8")
        (base / "sub" / "judged.jsonl").write_text(QUESTION if base == root else SECRET, encoding="utf-8")
    (root / "real.jsonl").write_text(DOC, encoding="utf-8")
    (root / "link.jsonl").symlink_to(root / "real.jsonl")  # a link inside the root, to a file inside it
    return {"root": root, "outside": outside}


def test_a_symlink_swapped_in_after_the_check_is_refused(tree: dict[str, Path]) -> None:
    root, outside = tree["root"], tree["outside"]
    checked = confine(root / "sub" / "corpus.jsonl", [root], want="file")
    with safeio.confined_to([root], [root]):
        assert [d.id for d in load_corpus(checked)] == ["inside"]
        assert [d.id for d in load_corpus(root / "link.jsonl")] == ["inside"]  # resolved first, inside
        (root / "sub").rename(root / "sub-away")
        (root / "sub").symlink_to(outside / "sub", target_is_directory=True)  # the folder swapped
        with pytest.raises(PathRefused):
            load_corpus(checked)
        with pytest.raises(PathRefused):
            judgments.save(root / "sub" / "judged.jsonl", "inside?", {"d": 2})
        (root / "sub").unlink()
        (root / "sub-away").rename(root / "sub")
        (root / "sub" / "corpus.jsonl").unlink()
        (root / "sub" / "corpus.jsonl").symlink_to(outside / "sub" / "corpus.jsonl")  # the file swapped
        with pytest.raises(PathRefused):
            load_corpus(checked)
        with pytest.raises(PathRefused):
            safeio.open_beneath(outside / "sub" / "corpus.jsonl")  # outside the roots: refused outright
        with pytest.raises(PathRefused):  # a read root is no write root
            with safeio.confined_to([root, outside], [root]):
                judgments.save(outside / "sub" / "judged.jsonl", "x", {"d": 1})
    assert (outside / "sub" / "judged.jsonl").read_text(encoding="utf-8") == SECRET
    # unconfined (the command line): paths open as given
    assert [d.id for d in load_corpus(root / "sub" / "corpus.jsonl")] == ["secret"]


def test_links_swapped_while_loading_and_saving_never_reach_outside(tree: dict[str, Path]) -> None:
    root, outside = tree["root"], tree["outside"]
    stop = threading.Event()
    swaps = [0]

    def swapper() -> None:
        """Swap root/sub between the real folder and a link to outside/sub, as fast as it can."""
        real, away, link = root / "sub", root / "sub-real", root / "sub-link"
        link.symlink_to(outside / "sub", target_is_directory=True)
        while not stop.is_set():
            os.rename(real, away)
            os.rename(link, real)  # now a link
            os.rename(real, link)
            os.rename(away, real)  # the folder again
            swaps[0] += 1

    thread = threading.Thread(target=swapper, daemon=True)
    with safeio.confined_to([root], [root]):
        thread.start()
        try:
            outcomes = {"inside": 0, "refused": 0}
            deadline = time.monotonic() + 1.5
            n = 0
            while time.monotonic() < deadline:
                n += 1
                try:
                    ids = [d.id for d in load_corpus(root / "sub" / "corpus.jsonl")]
                    assert ids == ["inside"], ids
                    outcomes["inside"] += 1
                except RetrievalError:
                    outcomes["refused"] += 1
                try:
                    assert [q.id for q in load_questions(root / "sub" / "judged.jsonl")] == ["q1"]
                    judgments.save(root / "sub" / "judged.jsonl", "inside?", {"d": n % 4})
                except (RetrievalError, FileNotFoundError, NotADirectoryError):
                    pass
        finally:
            stop.set()
            thread.join(10)
    assert swaps[0] > 10 and outcomes["inside"] > 0, (swaps, outcomes)
    assert (outside / "sub" / "judged.jsonl").read_text(encoding="utf-8") == SECRET  # never written
    assert (outside / "sub" / "corpus.jsonl").read_text(encoding="utf-8") == SECRET
    assert not [p for p in (outside / "sub").iterdir() if p.name.endswith((".tmp", ".lock"))]


def test_a_fifo_is_refused_by_its_descriptor(tree: dict[str, Path]) -> None:
    root = tree["root"]
    fifo = root / "pipe.jsonl"
    os.mkfifo(fifo)
    with safeio.confined_to([root]):
        fd = safeio.open_beneath(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            with pytest.raises(PathRefused, match="not a regular file"):
                safeio.read_fd(fd, fifo)
        finally:
            os.close(fd)
