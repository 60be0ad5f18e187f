"""Trace parity: run every lab question through ``ask`` under several configurations and write the traces
(timings removed) to a JSON file, or compare two such files.

    python scripts/trace_parity.py dump before.json
    python scripts/trace_parity.py compare before.json after.json

Used when pipeline code moves: the lists, tiers and answers must stay the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "dense_only": {"hybrid_enabled": False},
    "bm25": {"dense_enabled": False},
    "transforms": {"transforms": ("rewrite", "multi_query", "hyde", "self_query")},
    "decompose": {"transforms": ("decompose",)},
    "multi_hop": {"transforms": ("multi_hop",)},
    "mmr": {"mmr_lambda": 0.5},
    "bi_encoder": {"reranker_model": "bi-encoder:use-m3"},
    "weighted": {"fusion": "weighted_rrf", "fusion_weights": "bm25=0.5,dense=1"},
    "chunk_dedup": {"dedup": "chunk", "top_k": 3},
}
VOLATILE = {"timings_ms", "ms"}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


def dump(path: str) -> None:
    from retrieval.backends.corpus import load_questions
    from retrieval.core.paths import LAB_QUESTIONS
    from retrieval.pipeline.workbench import open_workbench
    from retrieval.settings import Settings

    bench = open_workbench(Settings(), progress=False)
    out: dict[str, Any] = {}
    for name, overrides in CONFIGS.items():
        settings = bench.settings.with_overrides(**overrides)
        for q in load_questions(LAB_QUESTIONS):
            try:
                out[f"{name}/{q.id}"] = _strip(bench.ask(q.question, q.filters, settings=settings).to_dict())
            except Exception as exc:  # noqa: BLE001 - a crash is part of what is compared
                out[f"{name}/{q.id}"] = {"error": exc.__class__.__name__}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(out, fh, ensure_ascii=False, indent=1, sort_keys=True)
    print(f"{len(out)} traces written to {path}")


def _diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in b:
                out.append(f"{where}.{key}: removed")
            elif key not in a:
                continue  # added fields are allowed
            else:
                _diff(a[key], b[key], f"{where}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{where}[{n}]", out)
    elif a != b:
        out.append(f"{where}: {str(a)[:120]!r} != {str(b)[:120]!r}")


def compare(before: str, after: str) -> int:
    with open(before, encoding="utf-8") as fh:
        a = json.load(fh)
    with open(after, encoding="utf-8") as fh:
        b = json.load(fh)
    problems: list[str] = []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            problems.append(f"{key}: present in only one file")
            continue
        _diff(a[key], b[key], key, problems)
    for line in problems[:60]:
        print(line)
    print(f"{len(a)} traces compared; {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
