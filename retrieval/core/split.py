"""The fixed dev / held-out split of a question set: a hash of the question id, the same for the evaluation,
the training and the experiments.
"""

from __future__ import annotations

import hashlib


def split_of(question_id: str) -> str:
    """Fixed split by a hash of the question id: 70 % ``dev``, 30 % ``heldout``."""
    bucket = int(hashlib.sha1(question_id.encode("utf-8")).hexdigest(), 16) % 100
    return "dev" if bucket < 70 else "heldout"
