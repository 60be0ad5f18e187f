"""Reading corpora and question sets through the project's contracts, and splitting parents into subchunks.

Accepted corpora (docs/contracts.md, "Data contracts"): a JSONL file of parent documents; a folder of files in every
declared format (:mod:`.folder`, :mod:`.formats`: HTML, PDF, DOCX, ODT, Markdown, MDX, text; ``README.md`` skipped;
id = relative path without extension; a file that cannot be read is skipped and named, never refusing the folder);
a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``); a SQuAD JSON file. Every error names the file
(and line).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
import unicodedata
from pathlib import Path
from typing import Any, Iterable

from ..core import safeio
from ..core.errors import CorpusError
from ..core.inputs import check_json_depth, check_regular_file
from ..core.text import fold, has_words, plain_codes, split_sentences
from ..core.types import RESERVED_KEYS, RESERVED_PREFIXES, Chunk, Document, Question
from . import markup
from .collection import CollectionError, collection_documents, is_collection
from .folder import IntakeReport, Skipped, folder_documents
from .location import PAGE_END_KEY, PAGE_KEY
from .metadata import MAX_METADATA_TEXT_BYTES

_SCALARS = (str, int, float, bool)
_INT64 = (-(2**63), 2**63 - 1)

#: Sizes every backend can store, checked at load for both alike (UTF-8 bytes, which no Milvus version counts
#: as fewer than characters), so a corpus that loads on the local backend also syncs to Milvus: one value past
#: a Milvus field's ``max_length`` fails the sync of the whole corpus (every request then ``lexical_only``).
#: A document id: the chunk id ``{id}#{n}`` must fit Milvus's id field (1,024).
MAX_ID_BYTES = 1000
#: A tenant value (Milvus's partition key field).
MAX_TENANT_BYTES = 1024
#: A metadata string (Milvus's typed metadata fields): :data:`.metadata.MAX_METADATA_TEXT_BYTES`.
#: The tenant field checked at load when the caller does not name another (RETRIEVAL_TENANT_FIELD's default).
DEFAULT_TENANT_FIELD = "tenant"
#: The longest integer a corpus or question file may write (Python refuses to read more than 4,300 digits;
#: no id, year or count needs more than this).
MAX_INT_DIGITS = 64


class _LongNumber(Exception):
    def __init__(self, digits: int) -> None:
        self.digits = digits


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _LongNumber(digits)
    return int(text)


def _loads(text: str, where: str) -> Any:
    """``json.loads`` of ``text``, an integer of more than :data:`MAX_INT_DIGITS` digits refused in one line
    naming ``where``."""
    try:
        return json.loads(text, parse_int=_parse_int)
    except _LongNumber as exc:
        raise CorpusError(f"{where}: a number of {exc.digits:,} digits (at most {MAX_INT_DIGITS})") from None


def _decode(data: bytes, path: Path) -> str:
    """``data`` as UTF-8, or one line naming the line and column of the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise CorpusError(f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at column {column})") from None


def _read_utf8(path: Path) -> str:
    try:
        return _decode(safeio.read_bytes(path), path)
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc


def _json_kind(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", type(None): "null",
            list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)


#: Unicode categories an id may not hold: control characters (NUL, a line break, a tab, DEL, the C1 controls),
#: format characters (zero-width space U+200B, zero-width joiner, soft hyphen, BOM, bidirectional controls: all
#: invisible), line and paragraph separators (U+2028, U+2029), and lone surrogates.
_REFUSED_IN_IDS = {"Cc": "a control character", "Cf": "an invisible format character",
                   "Zl": "a line separator", "Zp": "a paragraph separator", "Cs": "a lone surrogate"}


def _shown_id(value: str, limit: int = 80) -> str:
    """An id as one line of an error: Python's escaped quoting (``'a\\u200bb'``, ``'a\\x00'``), cut at ``limit``."""
    return repr(value[:limit]) + ("…" if len(value) > limit else "")


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be an id (a document, question or relevant id), or ``None``.

    An id holding a control character, a format character or a line/paragraph separator
    (:data:`_REFUSED_IN_IDS`) is refused rather than normalised: ``doc\u200b1`` and ``doc1`` print alike but are
    two ids, and a NUL or a line break corrupts every line-based export (TREC runs, qrels, logs). Spaces are
    allowed (the TREC exports skip such ids, naming them).
    """
    for ch in value:
        kind = unicodedata.category(ch)
        if kind in _REFUSED_IN_IDS:
            name = unicodedata.name(ch, "") if kind != "Cs" else ""
            return f"holds U+{ord(ch):04X}{f' ({name})' if name else ''}, {_REFUSED_IN_IDS[kind]}"
    return None


def _check_id(value: Any, where: str, what: str = "'id'") -> str:
    """An id as the files may write it: a non-empty string, or an integer (its digits); a boolean, a fraction,
    null or a container is refused in one line (``true`` must not become the id ``'True'``), and so is a string
    holding a control or format character (:func:`id_problem`), the id shown escaped."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        shown = json.dumps(value)[:40] if isinstance(value, (bool, float, type(None))) else _json_kind(value)
        raise CorpusError(f"{where}: {what} must be a string (or an integer), not {_json_kind(value)} ({shown})")
    if not str(value).strip():
        raise CorpusError(f"{where}: missing or empty {what}")
    problem = id_problem(str(value))
    if problem is not None:
        raise CorpusError(f"{where}: {what} {_shown_id(str(value))} {problem}; ids may not hold control or "
                          "invisible format characters (two ids that print alike would be two documents)")
    return str(value)


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", fold(text)).strip("-") or "doc"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON)
        return False
    return True


def _check_metadata(meta: Any, where: str) -> dict[str, Any]:
    """Metadata as a dict of scalars whose keys the stores accept.

    Raises:
        CorpusError (with ``where``): not an object; a key empty, starting with ``$`` / ``#`` / ``chroma:`` or
            reserved by the stores; a value that is not a string, boolean, 64-bit integer or finite number.
    """

    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise CorpusError(f"{where}: 'metadata' must be an object")
    for key, value in meta.items():
        if not isinstance(key, str) or not key.strip():
            raise CorpusError(f"{where}: metadata key {key!r} is empty")
        if key.startswith(RESERVED_PREFIXES) or key in RESERVED_KEYS:
            raise CorpusError(f"{where}: metadata key {key!r} is reserved by the stores (keys may not start "
                              f"with {', '.join(RESERVED_PREFIXES)} nor be {', '.join(sorted(RESERVED_KEYS))})")
        if not _encodable(key):
            raise CorpusError(f"{where}: metadata key {key!r} is not valid Unicode text")
        if isinstance(value, (list, tuple)):  # a multi-valued field: non-empty, scalars of one type (what the stores keep)
            if not value or not all(isinstance(v, _SCALARS) for v in value) \
                    or len({type(v) for v in value}) > 1:
                raise CorpusError(f"{where}: metadata {key!r} is a list: it must hold strings, numbers or "
                                  "booleans of one type, and at least one")
            for member in value:
                _check_value(key, member, where)
            continue
        if not isinstance(value, _SCALARS):
            raise CorpusError(f"{where}: metadata {key!r} must be a string, number or boolean (or a list of them)")
        _check_value(key, value, where)
    return {k: tuple(dict.fromkeys(v)) if isinstance(v, list) else v for k, v in meta.items()}


def _check_value(key: str, value: Any, where: str) -> None:
    """One scalar of a metadata field: finite, within 64 bits, valid text within the stores' limit."""
    if isinstance(value, float) and not math.isfinite(value):
        raise CorpusError(f"{where}: metadata {key!r} must be a finite number, got {value!r}")
    if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
        raise CorpusError(f"{where}: metadata {key!r} is an integer beyond 64 bits ({value})")
    if isinstance(value, str) and not _encodable(value):
        raise CorpusError(f"{where}: metadata {key!r} is not valid Unicode text")
    if isinstance(value, str) and len(value.encode("utf-8")) > MAX_METADATA_TEXT_BYTES:
        raise CorpusError(f"{where}: metadata {key!r} holds {len(value.encode('utf-8')):,} bytes of text; the "
                          f"limit is {MAX_METADATA_TEXT_BYTES:,} (UTF-8 bytes, what a Milvus text field holds)")


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    check_regular_file(path)
    try:
        # JSON Lines are separated by "\n" only: str.splitlines() would also cut at U+0085, U+2028 and other
        # separators that a JSON string may hold unescaped.
        lines = [line.removesuffix("\r") for line in _read_utf8(path).split("\n")]
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        check_json_depth(line, path, number)
        try:
            record = _loads(line, f"{path}:{number}")
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise CorpusError(f"{path}:{number}: each line must be a JSON object")
        yield number, record


def _document(record: dict[str, Any], where: str, id_key: str = "id", markup_kind: str = "") -> Document:
    if id_key not in record:
        raise CorpusError(f"{where}: missing or empty '{id_key}'")
    doc_id = _check_id(record.get(id_key), where, f"'{id_key}'")
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        raise CorpusError(f"{where}: document {doc_id!r} has an empty 'text'")
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise CorpusError(f"{where}: 'title' must be a string")
    if not all(_encodable(x) for x in (str(doc_id), title, text)):
        raise CorpusError(f"{where}: document {str(doc_id)!r} holds invalid Unicode (a lone surrogate)")
    size = len(str(doc_id).encode("utf-8"))
    if size > MAX_ID_BYTES:
        raise CorpusError(f"{where}: document id {str(doc_id)[:40]!r}… is {size:,} bytes long; the limit is "
                          f"{MAX_ID_BYTES:,} (UTF-8 bytes: its chunk ids must fit the vector store's id field)")
    return Document(str(doc_id), title, text, _check_metadata(record.get("metadata"), where), markup_kind)


def _unique(docs: Iterable[tuple[str, Document]], tenant_field: str | None = DEFAULT_TENANT_FIELD,
            source: Path | None = None) -> list[Document]:
    """The documents, refusing duplicate ids and a tenant field that mixes JSON types.

    Tenant identity is exact in type: a corpus whose tenant values are ``1`` and ``true`` (or ``1`` and
    ``"1"``, or ``1`` and ``1.0``) is refused here, naming the first line of each type.
    """
    seen: dict[str, str] = {}
    tenant_type: tuple[str, str] | None = None
    out: list[Document] = []
    for where, doc in docs:
        if doc.id in seen:
            raise CorpusError(f"{where}: duplicate id {doc.id!r} (first at {seen[doc.id]})")
        seen[doc.id] = where
        if tenant_field and tenant_field in doc.metadata:
            tenant = doc.metadata[tenant_field]
            if isinstance(tenant, tuple):
                raise CorpusError(f"{where}: the tenant field {tenant_field!r} holds a list ({list(tenant)[:5]}): a "
                                  "document belongs to one tenant")
            if isinstance(tenant, str) and len(tenant.encode("utf-8")) > MAX_TENANT_BYTES:
                raise CorpusError(f"{where}: tenant {tenant[:40]!r}… ({tenant_field!r}) is "
                                  f"{len(tenant.encode('utf-8')):,} bytes long; the limit is {MAX_TENANT_BYTES:,} "
                                  "(UTF-8 bytes, what the vector store's tenant field holds)")
            kind = _json_type(tenant)
            if tenant_type is None:
                tenant_type = (kind, where)
            elif kind != tenant_type[0]:
                raise CorpusError(
                    f"{where}: tenant field '{tenant_field}' is a {kind} here but a {tenant_type[0]} at "
                    f"{tenant_type[1]}: a tenant field must hold one JSON type (tenants are exact in value and type)")
        out.append(doc)
    if not out:
        raise CorpusError(f"{source}: the corpus holds no document" if source else "the corpus holds no document")
    return out


def _json_type(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number with a fraction", str: "string"}.get(type(value), "value")


def _squad(path: Path, questions_read: bool = False) -> tuple[list[Document], list[Question]]:
    """A SQuAD file's paragraphs as documents and its questions; ``questions_read`` (:func:`load_questions`)
    checks each question's id and text as an evaluation needs them, naming ``data[a].paragraphs[p].qas[n]``."""
    text = _read_text(path)
    check_json_depth(text, path)
    try:
        data = _loads(text, str(path))
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}: not a readable SQuAD JSON file ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise CorpusError(f"{path}: a SQuAD file needs a top-level 'data' list")
    docs: list[tuple[str, Document]] = []
    questions: list[Question] = []
    for a, article in enumerate(data["data"]):
        if not isinstance(article, dict):
            raise CorpusError(f"{path}: data[{a}] must be an object with 'title' and 'paragraphs'")
        title = str(article.get("title", f"article-{a}"))
        paragraphs = article.get("paragraphs", [])
        if not isinstance(paragraphs, list):
            raise CorpusError(f"{path}: data[{a}].paragraphs must be a list")
        for p, paragraph in enumerate(paragraphs):
            doc_id = f"{_slug(title)}-p{p}"
            where = f"{path}: data[{a}].paragraphs[{p}]"
            if not isinstance(paragraph, dict) or not isinstance(paragraph.get("context", ""), str):
                raise CorpusError(f"{where} must be an object with a 'context' string")
            docs.append((where, _document({"id": doc_id, "title": title.replace("_", " "),
                                           "text": paragraph.get("context", ""),
                                           "metadata": {"article": title}}, where)))
            qas = paragraph.get("qas", [])
            if not isinstance(qas, list):
                raise CorpusError(f"{where}.qas must be a list")
            for n, qa in enumerate(qas):
                spot = f"{where}.qas[{n}]"
                if not isinstance(qa, dict) or "id" not in qa or not isinstance(qa.get("question"), str) \
                        or not qa["question"].strip():
                    raise CorpusError(f"{spot} must be an object with an 'id' and a non-empty 'question'")
                raw_answers = qa.get("answers", [])
                if not isinstance(raw_answers, list) or not all(isinstance(x, dict) for x in raw_answers):
                    raise CorpusError(f"{spot}.answers must be a list of objects")
                answers = tuple(dict.fromkeys(str(x["text"]) for x in raw_answers if x.get("text")))
                impossible = bool(qa.get("is_impossible"))
                if questions_read:
                    _question_text(qa["question"], f"{spot}: question {_shown_id(_check_id(qa['id'], spot))}")
                questions.append(Question(str(qa["id"]), qa["question"], "squad",
                                          () if impossible else (doc_id,), {}, None, answers))
    return _unique(docs, None, path), questions


def _is_beir(path: Path) -> bool:
    return path.is_dir() and (path / "corpus.jsonl").is_file() and (path / "queries.jsonl").is_file()


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


def _multi_valued(docs: list[Document]) -> list[Document]:
    """The documents with each multi-valued field a tuple in every document that has it (a ``tags: dados`` in one
    file and ``tags: [dados, api]`` in another): the stores keep one kind per field, and a filter matches both by
    member."""
    multi = {k for d in docs for k, v in d.metadata.items() if isinstance(v, tuple)}
    if not multi:
        return docs
    out = []
    for d in docs:
        if any(k in multi and not isinstance(v, tuple) for k, v in d.metadata.items()):
            meta = {k: (v,) if k in multi and not isinstance(v, tuple) else v for k, v in d.metadata.items()}
            d = Document(d.id, d.title, d.text, meta, d.markup)
        out.append(d)
    return out


def _beir_doc(record: dict[str, Any], where: str) -> Document:
    record = dict(record)
    record.setdefault("id", record.pop("_id", None))
    return _document(record, where)


#: The keys of a question record (JSONL). Kept in the file but not read by an evaluation: ``raters`` (what
#: ``judge agreement --consensus-out`` writes), ``plausible_answers`` and ``near`` (a SQuAD 2.0 set's unanswerable
#: questions: the span that looks like an answer, the paragraph written against; ``../shared/data/squad2-pt``). A
#: key starting with ``_`` is a note of the file's author and is ignored; any other key is refused, naming these,
#: so a misspelled ``relevent`` never turns a question into an abstention question.
QUESTION_KEYS = ("id", "question", "group", "relevant", "filters", "graded", "answers", "evidence", "raters",
                 "plausible_answers", "near")


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


def _question(rec: dict[str, Any], where: str, max_chars: int | None = None) -> Question:
    """One record of a JSONL question set, every field checked (:func:`load_questions`); errors name ``where``
    (file:line) and, once it is read, the question id."""
    if rec.get("id") in (None, "") or not isinstance(rec.get("question"), str) or not rec["question"].strip():
        raise CorpusError(f"{where}: a question needs 'id' and a non-empty 'question'")
    qid = _check_id(rec["id"], where)
    at = f"{where}: question {_shown_id(qid)}"
    unknown = [k for k in rec if k not in QUESTION_KEYS and not k.startswith("_")]
    if unknown:
        raise CorpusError(f"{at}: unknown key {_shown_id(unknown[0])} (a question's keys are "
                          f"{', '.join(QUESTION_KEYS)}; a key starting with '_' is a note and is ignored)")
    question = _question_text(rec["question"], at, max_chars)
    group = rec.get("group")
    if group is not None and not isinstance(group, str):
        raise CorpusError(f"{at}: 'group' must be a string, not {_json_kind(group)}")
    relevant: Any = rec.get("relevant", [])
    if not isinstance(relevant, list):
        shown = "" if relevant is None else f" ({json.dumps(relevant, ensure_ascii=False)[:40]})"
        raise CorpusError(f"{at}: 'relevant' must be a list of document ids, not {_json_kind(relevant)}{shown}; "
                          "write [] or leave it out for a question whose right answer is an abstention")
    relevant = [_check_id(r, at, "each 'relevant' id") for r in relevant]
    filters = rec.get("filters")
    filters = {} if filters is None else filters
    if not isinstance(filters, dict):
        raise CorpusError(f"{at}: 'filters' must be an object of field → value, not {_json_kind(filters)}")
    for key, value in filters.items():
        if not key.strip():
            raise CorpusError(f"{at}: a filter's field name is empty")
        scalars = value if isinstance(value, list) else [value]
        if not scalars or not all(
                isinstance(v, _SCALARS) and not (isinstance(v, float) and not math.isfinite(v)) for v in scalars):
            raise CorpusError(f"{at}: filter {_shown_id(key)} must be a string, number or boolean (or a non-empty "
                              f"list of them), not {_json_kind(value)}")
    graded = rec.get("graded")
    if graded is not None and (not isinstance(graded, dict) or not all(
            type(v) is int and 0 <= v <= 3 for v in graded.values())):
        raise CorpusError(f"{at}: 'graded' must be an object of parent id → grade 0-3")
    for parent in graded or ():
        _check_id(parent, at, "each 'graded' id")
    answers = rec.get("answers")
    answers = [] if answers is None else answers
    if not isinstance(answers, list) or not all(isinstance(x, str) for x in answers):
        raise CorpusError(f"{at}: 'answers' must be a list of strings")
    return Question(qid, question, group or "default",
                    tuple(relevant), dict(filters), {str(k): int(v) for k, v in graded.items()} if graded else None,
                    tuple(answers), _evidence(rec.get("evidence"), at))


def _question_text(text: Any, at: str, max_chars: int | None = None) -> str:
    """A question's text as the evaluation will ask it, or one line naming ``at``: text with letters or digits
    once control and invisible characters are removed (the pipeline's own reading of a question), at most
    ``max_chars`` characters when given."""
    if not isinstance(text, str):
        raise CorpusError(f"{at}: 'question' must be a string, not {_json_kind(text)}")
    cleaned = "".join(ch for ch in plain_codes(unicodedata.normalize("NFC", text))
                      if ch in "\t\n" or ch.isprintable()).strip()
    if not cleaned:
        raise CorpusError(f"{at}: the question is empty once its control and invisible characters are removed")
    if not has_words(cleaned):
        raise CorpusError(f"{at}: the question has no letters or digits")
    if max_chars is not None and len(cleaned) > max_chars:
        raise CorpusError(f"{at}: the question has {len(cleaned):,} characters; the limit is {max_chars:,} "
                          "(RETRIEVAL_MAX_QUESTION_CHARS)")
    return text


def _evidence(value: Any, where: str) -> tuple[tuple[str, int, int], ...]:
    """A question's ``evidence``: ``[{"parent": id, "start": n, "end": m}, …]`` (character offsets in the
    parent's text, end exclusive)."""
    if value is None:
        return ()
    spans = []
    for span in value if isinstance(value, list) else [None]:
        if not (isinstance(span, dict) and isinstance(span.get("parent"), str) and span["parent"] and all(
                type(span.get(k)) is int for k in ("start", "end")) and 0 <= span["start"] < span["end"]):
            raise CorpusError(f'{where}: \'evidence\' must be a list of {{"parent": id, "start": n, "end": m}} with '
                              "0 ≤ start < end")
        spans.append((_check_id(span["parent"], where, "each evidence 'parent' id"), span["start"], span["end"]))
    return tuple(spans)


def _read_text(path: Path) -> str:
    check_regular_file(path)
    return _read_utf8(path)


def load_trec(topics: Path, qrels: Path) -> list[Question]:
    """TREC topics plus a TREC qrels file as labeled questions (group ``trec``, no filters).

    Topics: either a tab-separated file, ``qid<TAB>query text`` per line (MS MARCO / Anserini style), or the
    classic SGML form (``<top> <num> Number: 401 <title> text … </top>``; the title is the query). Qrels:
    ``qid iteration docno relevance`` per line, whitespace-separated. Grades > 0 are relevant (and feed
    nDCG as gains); a topic whose judgments are all 0 has an empty ``relevant`` (an abstention); topics
    without any judgment are left out, as ``trec_eval`` does.

    Raises:
        CorpusError: an unreadable file, a qrels line without four fields or with a non-integer grade
            (file:line), or a topics line without a tab.
    """
    if not qrels.exists():
        raise CorpusError(f"{qrels}: no such file")
    judged: dict[str, dict[str, int]] = {}
    for number, line in enumerate(_read_text(qrels).splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 4 or not parts[3].lstrip("-").isdigit():
            raise CorpusError(f"{qrels}:{number}: a qrels line is 'qid iteration docno relevance'")
        _check_id(parts[0], f"{qrels}:{number}", "the qid")
        _check_id(parts[2], f"{qrels}:{number}: question {_shown_id(parts[0])}", "the docno")
        judged.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    text = _read_text(topics)
    pairs: list[tuple[str, str, str]] = []  # (qid, query, where)
    if "<top>" in text:
        for match in re.finditer(r"<top>(.*?)</top>", text, flags=re.S):
            block = match.group(1)
            num = re.search(r"<num>\s*(?:Number:)?\s*(\S+)", block)
            title = re.search(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<desc>|<narr>|<[a-z]+>|$)", block, flags=re.S)
            if num and title and title.group(1).strip():
                at = text.count("\n", 0, match.start()) + 1
                pairs.append((num.group(1), " ".join(title.group(1).split()), f"{topics}:{at}"))
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            qid, sep, query = line.partition("\t")
            if not sep or not qid.strip() or not query.strip():
                raise CorpusError(f"{topics}:{number}: a topics line is 'qid<TAB>query'")
            pairs.append((qid.strip(), query.strip(), f"{topics}:{number}"))
    out = []
    for qid, query, where in pairs:
        if qid not in judged:
            continue
        _question_text(query, f"{where}: question {_shown_id(_check_id(qid, where, 'the qid'))}")
        grades = {d: g for d, g in judged[qid].items() if g > 0}
        out.append(Question(qid, query, "trec", tuple(grades), {}, grades or None))
    return out


def _beir_questions(root: Path) -> list[Question]:
    qrels_dir = root / "qrels"
    tsvs = sorted(qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
    chosen = next((t for t in tsvs if t.stem == "test"), tsvs[0] if tsvs else None)
    graded: dict[str, dict[str, int]] = {}
    if chosen is not None:
        check_regular_file(chosen)
        with safeio.opened_text(chosen) as handle:
            reader = csv.reader(handle, delimiter="\t")
            for row in reader:
                if len(row) < 3 or not row[2].lstrip("-").isdigit():
                    continue  # header line
                where = f"{chosen}:{reader.line_num}"
                _check_id(row[1], f"{where}: question {_shown_id(_check_id(row[0], where, 'the query-id'))}",
                          "the corpus-id")
                graded.setdefault(row[0], {})[row[1]] = int(row[2])
    out = []
    for number, rec in _read_jsonl(root / "queries.jsonl"):
        qid = str(rec.get("_id", rec.get("id", "")))
        if qid not in graded and chosen is not None:
            continue
        where = f"{root / 'queries.jsonl'}:{number}"
        checked = _check_id(rec.get("_id", rec.get("id")), where, "'_id'")
        _question_text(rec.get("text", ""), f"{where}: question {_shown_id(checked)}")
        grades = {d: g for d, g in graded.get(qid, {}).items() if g > 0}
        out.append(Question(qid, rec.get("text", ""), "beir", tuple(grades), {}, grades or None))
    return out


def content_hash(*parts: object) -> str:
    """SHA-1 over the JSON of ``parts`` (stable key order): the identity of a chunk's indexed content."""
    return hashlib.sha1(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _windows(sentences: list[str], size: int, overlap: int) -> list[list[str]]:
    """Pack sentences into windows of at most ``size`` words; consecutive windows share trailing sentences
    of at most ``overlap`` words. A sentence longer than ``size`` is cut into word runs."""
    return [[text for text, _ in window] for window in _tagged_windows([(s, None) for s in sentences], size, overlap)]


def _tagged_windows(units: list[tuple[str, Any]], size: int, overlap: int) -> list[list[tuple[str, Any]]]:
    """:func:`_windows` of units that each carry a tag (which block of a Markdown section they come from); the
    word runs of a unit longer than ``size`` keep its tag."""
    pieces: list[tuple[str, Any]] = []
    for sentence, tag in units:
        words = sentence.split()
        if len(words) <= size:
            pieces.append((sentence, tag))
        else:
            step = size - overlap
            pieces.extend((" ".join(words[i : i + size]), tag) for i in range(0, len(words) - overlap, step))
    counts = [len(p.split()) for p, _ in pieces]
    windows: list[list[tuple[str, Any]]] = []
    start = 0
    while start < len(pieces):
        end, total = start, 0
        while end < len(pieces) and (total + counts[end] <= size or end == start):
            total += counts[end]
            end += 1
        windows.append(pieces[start:end])
        if end >= len(pieces):
            break
        back, shared = end, 0
        while back - 1 > start and shared + counts[back - 1] <= overlap:
            back -= 1
            shared += counts[back]
        start = back
    return windows


def document_text(doc: Document) -> str:
    """A parent's text as plain text: a Markdown or MDX document's as :func:`.markup.plain_text` reads it (its
    headings, text and code, one block per line), any other document's as it is."""
    return markup.plain_text(doc.text, doc.markup == markup.MDX) if doc.markup else doc.text


def context_line(doc: Document, max_words: int = 40) -> str:
    """Contextual retrieval's line for every chunk of ``doc`` (local adapter, no LLM): the parent's title and
    its first sentence as a summary, cut to ``max_words`` words."""
    sentences = split_sentences(document_text(doc))
    summary = " ".join((sentences[0] if sentences else "").split()[:max_words])
    return f"Documento: {doc.title or doc.id}. Resumo: {summary}"


def chunk_documents(docs: Iterable[Document], chunk_tokens: int, chunk_overlap: int,
                    contextual: bool = False) -> list[Chunk]:
    """Split parents into subchunks of at most ``chunk_tokens`` words on sentence boundaries.

    Args:
        contextual: attach :func:`context_line` to each chunk, stored apart from its text (the indexes read
            it; the context sent to the answer and the citations show the original text only).

    Returns:
        Chunks with ids ``"{parent_id}#{n}"`` (n from 0), each carrying its parent's metadata and title. A
        Markdown or MDX parent is chunked section by section (:func:`_markup_chunks`).
    """
    chunks: list[Chunk] = []
    for doc in docs:
        context = context_line(doc) if contextual else ""
        if doc.markup:
            chunks.extend(_markup_chunks(doc, chunk_tokens, chunk_overlap, context))
            continue
        for n, window in enumerate(_windows(split_sentences(doc.text), chunk_tokens, chunk_overlap)):
            text = " ".join(window)
            chunk_id = f"{doc.id}#{n}"
            chunks.append(Chunk(chunk_id, doc.id, n, doc.title, text, dict(doc.metadata),
                                content_hash(chunk_id, doc.title, text, dict(doc.metadata), context), context))
    return chunks


def _code_units(code: str, size: int) -> list[str]:
    """A code block cut into runs of whole lines of at most ``size`` words each (a longer line is a run of its
    own, which the windows cut into word runs)."""
    runs: list[list[str]] = [[]]
    words = 0
    for line in code.split("\n"):
        count = len(line.split())
        if runs[-1] and words + count > size:
            runs.append([])
            words = 0
        runs[-1].append(line)
        words += count
    return ["\n".join(run) for run in runs if any(line.strip() for line in run)]


def _joined(window: list[tuple[str, Any]], kind: str) -> str:
    """The pieces of one kind of a window: pieces of one block joined by a space (text) or a line break (code);
    blocks by a line break (text: every block is a line, so a sentence never runs into the next block) or a
    blank line (code)."""
    inner, outer = (" ", "\n") if kind == "text" else ("\n", "\n\n")
    out, last = "", None
    for piece, (piece_kind, block) in window:
        if piece_kind != kind:
            continue
        out += (inner if block == last else outer) + piece if out else piece
        last = block
    return out


def _markup_chunks(doc: Document, chunk_tokens: int, chunk_overlap: int, context: str) -> list[Chunk]:
    """A Markdown or MDX parent's chunks: each section (:func:`.markup.parse`) packed into windows of its own,
    so no chunk spans two sections. A chunk's ``text`` holds its text blocks, one line each (a paragraph, a
    list item, a table row); its ``code`` its code blocks; its ``context`` the section path after the
    contextual line, if any; its metadata the section path under :data:`.markup.SECTION_KEY` and, in a paged
    source (page markers, :func:`.formats.page_marker`), its first page under :data:`.location.PAGE_KEY` and its last
    under :data:`.location.PAGE_END_KEY` where it runs over more than one."""
    chunks: list[Chunk] = []
    for section in markup.parse(doc.text, doc.markup == markup.MDX):
        units: list[tuple[str, Any]] = []
        for b, block in enumerate(section.blocks):
            pieces = _code_units(block.text, chunk_tokens) if block.kind == "code" else split_sentences(block.text)
            units.extend((piece, (block.kind, b)) for piece in pieces)
        label = section.label
        if len(label.encode("utf-8")) > MAX_METADATA_TEXT_BYTES:  # what every backend's text field holds
            label = label.encode("utf-8")[:MAX_METADATA_TEXT_BYTES].decode("utf-8", "ignore")
        meta = {**doc.metadata, markup.SECTION_KEY: label} if label else dict(doc.metadata)
        line = "\n".join(part for part in (context, label) if part)
        for window in _tagged_windows(units, chunk_tokens, chunk_overlap):
            text, code = _joined(window, "text"), _joined(window, "code")
            n = len(chunks)
            chunk_id = f"{doc.id}#{n}"
            pages = sorted({section.blocks[b].page for _, (_, b) in window} - {0})
            here = dict(meta)
            if pages:
                here[PAGE_KEY] = pages[0]
                if pages[-1] != pages[0]:
                    here[PAGE_END_KEY] = pages[-1]
            parts = (chunk_id, doc.title, text, dict(here), line) + ((code,) if code else ())
            chunks.append(Chunk(chunk_id, doc.id, n, doc.title, text, here, content_hash(*parts), line, code))
    return chunks
