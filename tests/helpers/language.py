"""One language per view: the words that give a view away as the other language, every string a page shows, and
the pieces of them that hold such a word (the corpus' own texts and code spans left out)."""

from __future__ import annotations

import json
import re

from helpers.apptest import plain, walk
from helpers.paths import ROOT
from streamlit.testing.v1 import AppTest

PX7 = "O PX-7 não foi ativado apesar do pagamento, o que faço?"

#: Words that give a view away as the other language (word boundaries; case-sensitive where the case tells).
ENGLISH = [r"\bthe\b", r"\bThe\b", r"\bSave\b", r"\bquestions?\b", r"\bQuestion\b", r"\bWhere\b", r"\bTimings\b",
           r"\bjudged\b", r"\bJudged\b", r"\bof\b", r"\band\b", r"\bnot\b", r"\bonly\b", r"\bOnly\b", r"\bscore\b",
           r"\bReranked\b", r"\bConfiguration\b", r"\bEvaluation\b", r"\bAnswer(ed)?\b", r"\bchunks?\b",
           r"\bparent\b", r"\bMetrics\b", r"\bRun\b", r"\bwith\b", r"\bfrom\b", r"\bwhy\b", r"\bWhy\b",
           r"\bsaved\b", r"\bfile\b", r"\bshows?\b"]
PORTUGUESE = [r"não", r"\bpergunta", r"\bPergunta", r"Salvar", r"julgad", r"Julgad", r"\btrechos?\b",
              r"\bnenhum", r"\bposição", r"Configuraç", r"\bResposta", r"\bAvaliação", r"\bvocê", r"\bcom\b",
              r"\bpara\b", r"\bestá\b", r"\bOnde\b", r"\bTempos\b"]


def corpus_texts() -> str:
    """The lab corpus' titles and texts, one block: what the pages quote as user content."""
    out = []
    for line in (ROOT / "data" / "lab" / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            doc = json.loads(line)
            out.extend([doc.get("title") or "", doc.get("text") or ""])
    return "\n".join(out)


CONTENT = corpus_texts()


#: Elements whose value is text the page wrote (a widget's value is the user's input, left out).
TEXT_ELEMENTS = {"markdown", "caption", "title", "header", "subheader", "info", "warning", "error", "success",
                 "exception", "latex", "toast"}


def visible(at: AppTest) -> list[str]:
    """Every visible string of the page's last run: what a reader sees, user content (code spans, values typed in
    widgets) left out."""
    strings: list[str] = []
    for root in (at.main, at.sidebar):
        for node in walk(root):
            kind = getattr(node, "type", "")
            if kind in {"code", "json"}:  # a source shown as source (the decision record)
                continue
            if kind == "dataframe":
                columns = json.loads(node.proto.columns or "{}")
                strings.extend((columns.get(str(c)) or {}).get("label") or str(c) for c in node.value.columns)
                continue
            value = getattr(node, "value", None) if kind in TEXT_ELEMENTS else None
            for text in (value, getattr(node, "label", None), getattr(node, "help", None),
                         getattr(node, "placeholder", None)):
                if isinstance(text, str) and text:
                    strings.append(text)
            if kind == "radio":
                strings.extend(str(o) for o in node.options)
    return strings


def words_of_the_other_language(strings: list[str], forbidden: list[str], content: str) -> list[str]:
    """The strings (pieces of them) that hold a forbidden word, user content left out."""
    found = []
    for raw in strings:
        text = re.sub(r"(`+).*?\1", " ", raw, flags=re.S)  # code spans: ids, terms, paths, recorded reasons
        text = plain(text)
        text = re.sub(r"\[\d+\]", "\n", text)  # the answer's citation marks
        text = re.sub(r":[a-z]+(?:-[a-z]+)?\[", "", text).replace("**", "").replace("]", "")
        text = text.replace(PX7, " ")
        for piece in re.split(r"\n| · |…", text):
            piece = " ".join(piece.split())
            if len(piece) >= 8 and piece in content:  # a quote of the corpus or the answer
                continue
            if any(re.search(word, piece) for word in forbidden):
                found.append(piece)
    return found
