"""A two-tenant corpus whose tenants' metadata fields differ (shared by the library, CLI and page tests of
tenant-scoped filters).

Acme's documents carry ``doc_type``, ``region`` and an integer ``batch``; Globex's carry ``doc_type`` (one of them
``secret``), ``clearance`` and a string ``batch``.
"""

from __future__ import annotations

import json
from pathlib import Path

DOCS = [
    {"id": "acme-backup", "title": "Backup", "text": "O backup noturno roda às 2h e guarda trinta dias de cópias.",
     "metadata": {"tenant": "acme", "doc_type": "faq", "region": "norte", "batch": 3}},
    {"id": "acme-senha", "title": "Senha", "text": "Para trocar a senha abra o portal e clique em esqueci a senha.",
     "metadata": {"tenant": "acme", "doc_type": "manual", "region": "sul", "batch": 4}},
    {"id": "globex-cofre", "title": "Cofre", "text": "O cofre secret abre com a chave dupla do gerente.",
     "metadata": {"tenant": "globex", "doc_type": "secret", "clearance": "top", "batch": "alpha"}},
]
ACME_FIELDS = "documents with tenant='acme' have: batch, doc_type, region, tenant"


def write_corpus(folder: Path) -> Path:
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCS), encoding="utf-8")
    return path
