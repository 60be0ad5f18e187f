"""Reading corpora and question sets through the project's contracts, in every accepted form.

Accepted corpora (docs/contracts.md, "Data contracts"): a JSONL file of parent documents; a folder of files in every
declared format (:mod:`.folder`, :mod:`.formats`: HTML, PDF, DOCX, ODT, Markdown, MDX, text; ``README.md`` skipped;
id = relative path without extension; a file that cannot be read is skipped and named, never refusing the folder);
a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``); a SQuAD JSON file. Every error names the file
(and line).

The work is done by one module per job, whose public names are importable from here as before: reading JSON files
(:mod:`.records`), ids (:mod:`.ids`), a document's checks and the sizes every backend stores (:mod:`.documents`),
a question's checks (:mod:`.questions`), the SQuAD, BEIR and TREC formats (:mod:`.datasets`) and the chunker
(:mod:`.chunking`).
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import CorpusError
from ..core.types import Document, Question
from .chunking import chunk_documents, content_hash, context_line, document_text
from .collection import CollectionError, collection_documents, is_collection
from .datasets import _beir_doc, _beir_questions, _is_beir, _squad, load_trec
from .documents import (DEFAULT_TENANT_FIELD, MAX_ID_BYTES, MAX_METADATA_TEXT_BYTES, MAX_TENANT_BYTES, _document,
                        _multi_valued, _unique)
from .folder import IntakeReport, Skipped, folder_documents
from .ids import _shown_id, id_problem
from .questions import QUESTION_KEYS, _question, _question_text
from .records import MAX_INT_DIGITS, _read_jsonl

__all__ = [
    "DEFAULT_TENANT_FIELD", "MAX_ID_BYTES", "MAX_INT_DIGITS", "MAX_METADATA_TEXT_BYTES", "MAX_TENANT_BYTES",
    "QUESTION_KEYS", "chunk_documents", "content_hash", "context_line", "document_text", "id_problem",
    "load_corpus", "load_questions", "load_trec", "read_corpus",
]


def load_corpus(path: str | Path, tenant_field: str | None = DEFAULT_TENANT_FIELD) -> list[Document]:
    """The parent documents of ``path`` (:func:`read_corpus` without its report)."""
    return read_corpus(path, tenant_field)[0]


def read_corpus(path: str | Path, tenant_field: str | None = DEFAULT_TENANT_FIELD
                ) -> tuple[list[Document], IntakeReport]:
    """Read parent documents from ``path`` (JSONL file, folder, BEIR folder or SQuAD JSON), and the report of what
    was read: files per format, documents, pages, each file skipped with its reason (:class:`.folder.IntakeReport`;
    its chunk counts are filled once the documents are chunked).

    A folder is read file by file in every declared format (:mod:`.folder`): a file that cannot be read, or whose
    document breaks a rule below (an id too long…), is skipped with its reason and never refuses the folder; a
    metadata value that cannot be kept is dropped with a warning. A single file (JSONL, SQuAD, BEIR) is refused
    whole at its first bad line, as before.

    Args:
        tenant_field: the metadata field naming the tenant (``RETRIEVAL_TENANT_FIELD``); its values must all
            have one JSON type.

    Raises:
        CorpusError: unreadable file, a path that is not a regular file (a FIFO, a device), invalid JSON or JSON
            nested more than 64 levels deep (with file:line; checked before parsing), missing/empty id or text, duplicate id
            (naming both places), metadata that is not scalars or lists of scalars, a metadata key that is empty,
            starts with ``$`` or is reserved by the stores, a tenant field mixing JSON types (or holding a list), a
            malformed SQuAD file, an empty corpus (a folder: naming what was skipped), or a value larger than every
            backend can store: an id over :data:`MAX_ID_BYTES`, a tenant over :data:`MAX_TENANT_BYTES`, a metadata
            string over :data:`MAX_METADATA_TEXT_BYTES` (UTF-8 bytes).
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or folder")
    if _is_beir(path):
        source = path / "corpus.jsonl"
        docs = _unique(((f"{source}:{n}", _beir_doc(rec, f"{source}:{n}")) for n, rec in _read_jsonl(source)),
                       tenant_field, source)
        return _multi_valued(docs), _single_file_report(source, "jsonl", docs)
    if path.is_dir():
        if is_collection(path):  # a user's uploads: its manifest's entries, each read once and kept
            try:
                found, report = collection_documents(path, tenant_field)
            except CollectionError as exc:
                raise CorpusError(str(exc)) from None
        else:
            found, report = folder_documents(path)
        checked: list[tuple[str, Document]] = []
        seen: set[str] = set()
        for where, d in found:
            if d.id in seen:  # ``a.md`` beside ``a.md.txt``: the later file is named, the first kept
                report.skipped.append(Skipped(Path(where).relative_to(path).as_posix(), "unreadable",
                                              f"its document id {d.id!r} is another file's"))
                continue
            if tenant_field and isinstance(d.metadata.get(tenant_field), tuple):
                report.unread(d.id, "unreadable", f"its tenant field {tenant_field!r} holds a list: a document "
                                                  "belongs to one tenant")
                continue
            try:
                checked.append((where, _document({"id": d.id, "title": d.title, "text": d.text,
                                                  "metadata": d.metadata}, where, markup_kind=d.markup)))
                seen.add(d.id)
            except CorpusError as exc:
                report.unread(d.id, "unreadable", str(exc).removeprefix(f"{where}: "))
        if not checked:
            named = "; ".join(f"{x.path}: {x.detail or x.reason}" for x in report.skipped[:3])
            raise CorpusError(f"{path}: the folder holds no document the workbench can read"
                              + (f" ({report.skipped_line()}: {named})" if report.skipped else ""))
        return _multi_valued(_unique(checked, tenant_field, path)), report
    if path.suffix.lower() == ".json":
        docs = _squad(path)[0]
        return docs, _single_file_report(path, "squad", docs)
    docs = _unique(((f"{path}:{n}", _document(rec, f"{path}:{n}")) for n, rec in _read_jsonl(path)), tenant_field,
                   path)
    return _multi_valued(docs), _single_file_report(path, "jsonl", docs)


def _single_file_report(path: Path, name: str, docs: list[Document]) -> IntakeReport:
    report = IntakeReport(str(path))
    for doc in docs:
        report.read(name, doc.id)
    report.formats[name].files = 1
    return report


def load_questions(path: str | Path, qrels: str | Path | None = None,
                   max_question_chars: int | None = None) -> list[Question]:
    """Read labeled questions: our JSONL, a BEIR folder (queries + ``qrels/test.tsv`` or the first tsv),
    a SQuAD JSON file, or TREC topics with a TREC qrels file (``qrels`` given; see :func:`load_trec`).

    Everything an evaluation reads of a question is checked here, before any run, so an error names the file,
    the line and the question id rather than surfacing half-way through the evaluation: the id and every id it
    names (relevant, graded, evidence parents: :func:`id_problem`), a question with letters or digits once its
    invisible characters are removed (and at most ``max_question_chars`` characters, when given: the settings'
    ``max_question_chars``), and in our JSONL each field's type, strictly:

    * ``relevant``: a list of document ids (strings, or integers read as their digits); leave it out, or write
      ``[]``, for an abstention question. ``0``, ``""``, ``null`` or an object are refused (they used to read as
      "no relevant document": an abstention question by accident);
    * ``filters``: an object of field → a string, number or boolean, or a non-empty list of them;
    * ``graded``: an object of document id → grade 0-3; ``answers``: a list of strings; ``group``: a string;
      ``evidence``: a list of ``{"parent", "start", "end"}``;
    * any other key (``relevent``, ``relevants``) is refused naming the known keys (:data:`QUESTION_KEYS`); a
      key starting with ``_`` is a note and is ignored.

    Raises:
        CorpusError: unreadable file, a path that is not a regular file, invalid JSON or JSON nested more than
            64 levels deep (file:line), a question without ``id`` or text, duplicate ids, or any rule above
            broken (file:line and the question id, escaped).
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or folder")
    if qrels is not None:
        questions = load_trec(path, Path(qrels))
    elif _is_beir(path):
        questions = _beir_questions(path)
    elif path.suffix.lower() == ".json":
        questions = _squad(path, questions_read=True)[1]
    else:
        questions = []
        places: dict[str, str] = {}  # question id -> where it was read
        for number, rec in _read_jsonl(path):
            where = f"{path}:{number}"
            q = _question(rec, where, max_question_chars)
            if q.id in places:
                raise CorpusError(f"{where}: duplicate question id {_shown_id(q.id)} (first at {places[q.id]})")
            places[q.id] = where
            questions.append(q)
        return questions
    seen: set[str] = set()
    for q in questions:  # TREC, BEIR, SQuAD: their ids and texts were checked where they were read
        if q.id in seen:
            raise CorpusError(f"{path}: duplicate question id {_shown_id(q.id)}")
        seen.add(q.id)
        if max_question_chars is not None:
            _question_text(q.question, f"{path}: question {_shown_id(q.id)}", max_question_chars)
    return questions
