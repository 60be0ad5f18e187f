"""The data roots: what the app may read and write, refused in one line that says nothing about what exists
outside them."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from retrieval.core.errors import PathRefused, RetrievalError
from retrieval.core.paths import PROJECT_ROOT
from retrieval.serving import roots
from retrieval.settings import Settings


@pytest.fixture()
def tree(tmp_path: Path) -> dict[str, Path]:
    """A root holding a corpus file and a folder, and a folder outside it holding a secret."""
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "corpus.jsonl").write_text('{"id": "a", "text": "x"}\n', encoding="utf-8")
    (root / "docs" / "one.md").write_text("# One\nbody\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n", encoding="utf-8")
    return {"root": root, "outside": outside, "tmp": tmp_path}


def refused(raw: object, root: Path, **kwargs) -> str:
    with pytest.raises(PathRefused) as info:
        roots.confine(raw, [root], **kwargs)
    text = str(info.value)
    assert text.startswith("refused: ") and "\n" not in text, text
    assert isinstance(info.value, RetrievalError)
    return text


def test_a_file_and_a_folder_inside_a_root_are_accepted_as_their_real_paths(tree) -> None:
    root = tree["root"]
    assert roots.confine(str(root / "corpus.jsonl"), [root], want="file") == (root / "corpus.jsonl").resolve()
    assert roots.confine(root / "docs", [root], want="folder") == (root / "docs").resolve()
    assert roots.confine(str(root / "docs" / ".." / "corpus.jsonl"), [root]) == (root / "corpus.jsonl").resolve()
    assert roots.confine(str(root), [root], want="folder") == root.resolve()  # the root itself


def test_relative_paths_are_relative_to_the_working_directory(tree, monkeypatch) -> None:
    monkeypatch.chdir(tree["root"])
    assert roots.confine("corpus.jsonl", [tree["root"]]) == (tree["root"] / "corpus.jsonl").resolve()
    refused("../outside/secret.md", tree["root"])


def test_outside_paths_and_dot_dot_escapes_are_refused(tree) -> None:
    root = tree["root"]
    for raw in (str(tree["outside"] / "secret.md"), "/etc", "/etc/passwd", str(root / ".." / "outside"),
                f"{root}/docs/../../outside/secret.md", "/", str(root) + "-sibling", "~", "", "   "):
        refused(raw, root)


def test_the_wanted_kind_is_required(tree) -> None:
    root = tree["root"]
    text = refused(str(root / "docs"), root, want="file")
    assert "is not a file inside the data roots" in text
    assert "is not a folder inside" in refused(str(root / "corpus.jsonl"), root, want="folder")


def test_an_existing_and_a_missing_outside_path_get_the_same_message(tree) -> None:
    root = tree["root"]
    outside = tree["outside"]
    existing = refused(str(outside / "secret.md"), root)
    missing = refused(str(outside / "nothing.md"), root)
    assert existing.replace("secret", "nothing") == missing
    assert refused("/etc", root).replace("/etc", "/no-such-dir") == refused("/no-such-dir", root)
    # Inside a root too: a missing file reads as a wrong kind does.
    assert refused(str(root / "missing.jsonl"), root, want="file").replace("missing.jsonl", "docs") == \
        refused(str(root / "docs"), root, want="file")


def test_outside_paths_are_refused_without_touching_the_filesystem(tree, monkeypatch) -> None:
    """The lexical check comes first: a path outside the roots is never stat'ed, listed or resolved (only the
    roots themselves are)."""
    touched: list[str] = []

    def spy(real):
        def call(path, *args, **kwargs):
            touched.append(os.fspath(path))
            return real(path, *args, **kwargs)
        return call

    for module, name in ((os, "stat"), (os, "lstat"), (os, "listdir"), (os, "scandir"), (os.path, "realpath"),
                         (os.path, "exists"), (os.path, "isdir"), (os.path, "isfile")):
        monkeypatch.setattr(module, name, spy(getattr(module, name)))
    secret = str(tree["outside"] / "secret.md")
    refused(secret, tree["root"])
    refused("/etc/shadow", tree["root"])
    refused(f"{tree['root']}/../outside/secret.md", tree["root"])
    assert touched and not [p for p in touched if p.startswith((str(tree["outside"]), "/etc"))], touched


def test_a_symlink_inside_a_root_that_points_out_is_refused(tree) -> None:
    root = tree["root"]
    (root / "link.md").symlink_to(tree["outside"] / "secret.md")
    (root / "linkdir").symlink_to(tree["outside"], target_is_directory=True)
    (root / "dangling.jsonl").symlink_to(tree["outside"] / "new.jsonl")
    refused(str(root / "link.md"), root)
    refused(str(root / "linkdir"), root)
    refused(str(root / "linkdir" / "secret.md"), root)
    refused(str(root / "dangling.jsonl"), root, want="file", for_writing=True)
    assert not (tree["outside"] / "new.jsonl").exists()


def test_a_symlink_inside_a_root_to_another_file_inside_is_its_target(tree) -> None:
    root = tree["root"]
    (root / "alias.jsonl").symlink_to(root / "corpus.jsonl")
    assert roots.confine(str(root / "alias.jsonl"), [root], want="file") == (root / "corpus.jsonl").resolve()


def test_a_root_that_is_a_symlink_accepts_both_spellings(tree) -> None:
    real = tree["root"]
    link = tree["tmp"] / "root-link"
    link.symlink_to(real, target_is_directory=True)
    assert roots.confine(str(link / "corpus.jsonl"), [link]) == (real / "corpus.jsonl").resolve()
    assert roots.confine(str(real / "corpus.jsonl"), [link]) == (real / "corpus.jsonl").resolve()


def test_devices_are_refused_even_inside_a_root() -> None:
    refused("/dev/zero", Path("/tmp"))  # outside
    refused("/dev/zero", Path("/dev"))  # inside: a character device is not a regular file
    refused("/dev/zero", Path("/dev"), want="file", for_writing=True)
    refused("/dev/zero", Path("/dev"), want="file", max_bytes=10)


def test_a_fifo_and_a_socket_are_refused(tree) -> None:
    root = tree["root"]
    os.mkfifo(root / "pipe.jsonl")
    refused(str(root / "pipe.jsonl"), root)  # never opened: opening a FIFO would block
    refused(str(root / "pipe.jsonl"), root, want="file", for_writing=True)
    path = str(root / "sock")
    with socket.socket(socket.AF_UNIX) as sock:
        if len(path) < 100:
            sock.bind(path)
            refused(path, root)


def test_writing_a_missing_file_in_a_root_folder_is_allowed_but_no_folder_is_created(tree) -> None:
    root = tree["root"]
    assert roots.confine(str(root / "new.jsonl"), [root], want="file", for_writing=True) == \
        (root / "new.jsonl").resolve()
    assert roots.confine(str(root / "corpus.jsonl"), [root], want="file", for_writing=True) == \
        (root / "corpus.jsonl").resolve()
    refused(str(root / "missing" / "new.jsonl"), root, want="file", for_writing=True)
    refused(str(tree["outside"] / "new.jsonl"), root, want="file", for_writing=True)
    refused(str(tree["tmp"] / "elsewhere" / "new.jsonl"), root, want="file", for_writing=True)
    refused(str(root / "docs"), root, want="file", for_writing=True)  # a folder is not a file
    assert not (root / "missing").exists() and not (tree["tmp"] / "elsewhere").exists()
    missing_root = tree["tmp"] / "no-root"
    refused(str(missing_root), missing_root, want="file", for_writing=True)  # the root's own parent is outside
    with pytest.raises(ValueError):
        roots.confine(str(root / "new.jsonl"), [root], want="either", for_writing=True)


def test_the_write_message_is_the_same_for_a_missing_folder_and_an_outside_file(tree) -> None:
    root = tree["root"]
    inside = refused(str(root / "missing" / "x.jsonl"), root, want="file", for_writing=True)
    outside = refused("/etc/x.jsonl", root, want="file", for_writing=True)
    assert inside.split(" is not ")[1] == outside.split(" is not ")[1]
    assert "a new file in an existing folder" in inside


def test_the_size_guard_refuses_large_files_and_folders_before_reading(tree) -> None:
    root = tree["root"]
    size = (root / "corpus.jsonl").stat().st_size
    assert roots.confine(str(root / "corpus.jsonl"), [root], max_bytes=size) == (root / "corpus.jsonl").resolve()
    text = refused(str(root / "corpus.jsonl"), root, max_bytes=size - 1)
    assert "input limit" in text and "RETRIEVAL_MAX_INPUT_BYTES" in text
    (root / "docs" / "two.md").write_text("x" * 100, encoding="utf-8")
    assert roots.confine(str(root / "docs"), [root], max_bytes=1000) == (root / "docs").resolve()
    assert "input limit" in refused(str(root / "docs"), root, max_bytes=50)


def test_a_folder_holding_a_device_or_a_link_out_is_read_without_them(tree) -> None:
    """The folder passes the roots; the reader never opens the device nor follows the link, and names both."""
    from retrieval.ingest.corpus import read_corpus

    root = tree["root"]
    (root / "docs" / "zero.txt").symlink_to("/dev/zero")
    (root / "docs" / "secret.md").symlink_to(tree["outside"] / "secret.md")
    assert roots.confine(str(root / "docs"), [root], max_bytes=10**9) == (root / "docs").resolve()
    docs, report = read_corpus(root / "docs")
    assert docs and all("secret" not in d.text.lower() for d in docs)
    assert sorted((s.path, s.reason) for s in report.skipped) == [("secret.md", "link_outside"),
                                                                  ("zero.txt", "link_outside")]


def test_odd_strings_are_refused_in_one_line(tree) -> None:
    root = tree["root"]
    for raw in ("\0", f"{root}/a\0b", "\ud800", "x" * 5000, "line\nbreak", f"{root}/" + "y" * 5000):
        refused(raw, root)


def test_settings_give_the_roots(monkeypatch, tmp_path) -> None:
    defaults = roots.data_roots(Settings(_env_file=None))
    assert defaults[:3] == (PROJECT_ROOT / "data", PROJECT_ROOT / "judgments", PROJECT_ROOT / "models")
    assert defaults[-1] == Path(os.path.expanduser("~/retrieval-data"))
    monkeypatch.setenv("RETRIEVAL_DATA_ROOTS", os.pathsep.join([str(tmp_path), "data", "", "~/x"]))
    configured = Settings(_env_file=None)
    assert roots.data_roots(configured) == (tmp_path, PROJECT_ROOT / "data", Path(os.path.expanduser("~/x")))
    assert configured.max_input_bytes == 512 * 1024 * 1024
    monkeypatch.setenv("RETRIEVAL_MAX_INPUT_BYTES", "10")
    (tmp_path / "big.jsonl").write_text("x" * 11, encoding="utf-8")
    with pytest.raises(PathRefused):
        roots.confine_input(tmp_path / "big.jsonl", Settings(_env_file=None))
    with pytest.raises(PathRefused):  # a data root is not a write root
        roots.confine_output(tmp_path / "j.jsonl", Settings(_env_file=None))
    monkeypatch.setenv("RETRIEVAL_WRITE_ROOTS", str(tmp_path))
    assert roots.confine_output(tmp_path / "j.jsonl", Settings(_env_file=None)) == tmp_path.resolve() / "j.jsonl"


def test_writes_stay_inside_the_write_roots(monkeypatch, tmp_path) -> None:
    defaults = roots.write_roots(Settings(_env_file=None))
    assert defaults == (PROJECT_ROOT / "judgments", Path(os.path.expanduser("~/retrieval-data")))
    lab_set = PROJECT_ROOT / "data" / "lab" / "questions.jsonl"
    with pytest.raises(PathRefused) as caught:  # a link's judgments=data/lab/questions.jsonl cannot rewrite the lab set
        roots.confine_output(lab_set, Settings(_env_file=None))
    assert str(caught.value).startswith(f"refused: {str(lab_set)!r} is not a file, or a new file in an existing "
                                        "folder, inside the write roots (RETRIEVAL_WRITE_ROOTS: ")
    assert roots.confine_input(lab_set, Settings(_env_file=None)) == lab_set.resolve()  # still read as input
    assert roots.confine_output(PROJECT_ROOT / "judgments" / "j.jsonl", Settings(_env_file=None)) == \
        (PROJECT_ROOT / "judgments").resolve() / "j.jsonl"
    monkeypatch.setenv("RETRIEVAL_WRITE_ROOTS", os.pathsep.join([str(tmp_path), "data"]))
    assert roots.write_roots(Settings(_env_file=None)) == (tmp_path, PROJECT_ROOT / "data")


def test_the_judgments_folder_is_a_default_root_and_is_kept_in_git() -> None:
    assert roots.JUDGMENTS_DIR in roots.default_roots()
    assert (roots.JUDGMENTS_DIR / ".gitkeep").is_file()


def test_the_app_reads_the_lab_corpus_and_the_shipped_models_whatever_its_data_roots(tree, monkeypatch):
    """RETRIEVAL_DATA_ROOTS set to a team's folder: the app's default corpus still loads (its process reads the
    shipped roots too), while a typed path outside the team's folder is still refused."""
    from retrieval.ingest.corpus import load_corpus
    from retrieval.core import safeio
    from retrieval.core.paths import LAB_CORPUS

    settings = Settings(data_roots=str(tree["root"]), _env_file=None)
    with safeio.confined_to((*roots.data_roots(settings), *roots.SHIPPED_ROOTS), roots.write_roots(settings)):
        assert len(load_corpus(LAB_CORPUS)) == len(LAB_CORPUS.read_text(encoding="utf-8").splitlines())
        with pytest.raises(RetrievalError, match="is not inside the data roots"):
            load_corpus(tree["outside"] / "secret.md")
    with pytest.raises(PathRefused):
        roots.confine(str(LAB_CORPUS), roots.data_roots(settings))
