"""Labels that survive a re-chunking: what a question names is resolved against the corpus as it is chunked now.

* A relevant id that names a chunk (``doc-1#3``) is read as its parent (``doc-1``): the metrics read parents,
  and a chunk id of another chunking would otherwise match nothing.
* A character span of a parent (``evidence``) makes that parent relevant and its text a gold span, checked
  against the current chunks like any answer string (:func:`~.diagnose.evidence_check`: whole in a chunk, or
  cut by the chunking).
* A span past its parent's end, or of a parent the corpus does not hold, is named, never scored silently.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from ...core.types import Chunk, Document, Question


def resolve_labels(questions: Sequence[Question], documents: Sequence[Document],
                   chunks: Sequence[Chunk]) -> tuple[list[Question], dict[str, Any]]:
    """The questions with their labels resolved against ``documents`` and ``chunks``, and what was resolved
    or refused: ``{"chunk_ids": [{"id", "named", "parent"}], "spans": n, "bad_spans": [{"id", "parent",
    "start", "end", "why"}]}``."""
    texts = {d.id: d.text for d in documents}
    parent_of = {c.chunk_id: c.parent_id for c in chunks}
    named, bad, spans = [], [], 0
    out = []
    for q in questions:
        relevant = []
        for r in q.relevant:
            parent = r if r in texts else parent_of.get(r) or (r.rpartition("#")[0] if "#" in r else r)
            if parent != r and parent in texts:
                named.append({"id": q.id, "named": r, "parent": parent})
                r = parent
            relevant.append(r)
        answers = list(q.answers)
        for parent, start, end in q.evidence:
            spans += 1
            text = texts.get(parent)
            if text is None or end > len(text):
                bad.append({"id": q.id, "parent": parent, "start": start, "end": end,
                            "why": "not in the corpus" if text is None else f"past the parent's end ({len(text)})"})
                continue
            relevant.append(parent)
            answers.append(text[start:end])
        out.append(replace(q, relevant=tuple(dict.fromkeys(relevant)), answers=tuple(dict.fromkeys(answers))))
    return out, {"chunk_ids": named, "spans": spans, "bad_spans": bad}
