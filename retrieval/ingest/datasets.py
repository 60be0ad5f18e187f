"""The public datasets' formats: a SQuAD JSON file (its paragraphs as documents, its questions), a BEIR folder
(``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``) and TREC topics with a TREC qrels file."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from ..core import safeio
from ..core.errors import CorpusError
from ..core.inputs import check_json_depth, check_regular_file
from ..core.text import fold
from ..core.types import Document, Question
from .documents import _document, _unique
from .ids import _check_id, _shown_id
from .questions import _question_text
from .records import _loads, _read_jsonl, _read_text


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", fold(text)).strip("-") or "doc"


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


def _beir_doc(record: dict[str, Any], where: str) -> Document:
    record = dict(record)
    record.setdefault("id", record.pop("_id", None))
    return _document(record, where)


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
