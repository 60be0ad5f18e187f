"""Parity across a change that should not change behaviour: dump what the product shows, then compare two dumps.

    python scripts/parity.py dump before/            # traces, evaluation figures and page texts
    python scripts/parity.py dump after/ --only traces,pages
    python scripts/parity.py compare before/ after/

What is dumped (each part one JSON file in the folder):

* ``traces.json``: every lab question through ``ask`` under several configurations (timings removed, floats
  rounded to 6 digits);
* ``eval.json``: ``eval --json`` on the lab set (four configurations) and, where ``../shared/data/faquad`` exists,
  on FaQuAD's held-out split (two configurations): each configuration's overall metrics, tier and per-question
  final parents;
* ``pages.json``: every visible string of both pages in both languages (the main page with each of its tabs
  opened on three lab questions, the Evaluation page after a small run), as the one-language test reads them.

Used when code moves: the lists, tiers, answers, figures and pages must stay the same (added fields are allowed).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the tests' helpers package

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
    "convex": {"fusion": "convex", "fusion_weights": "bm25=0.3", "reranker_model": "none"},
    "chunk_dedup": {"dedup": "chunk", "top_k": 3},
    "reader": {"reranker_model": "reader"},
}
VOLATILE = {"timings_ms", "ms", "load_ms", "seconds", "wall_total", "total_p50", "total_p95", "standalone_estimate",
            "timings", "created", "started", "ended"}
QUESTIONS = ("O PX-7 não foi ativado apesar do pagamento, o que faço?",)
#: Measured times in the pages' texts ("412.3 ms", "1,204 ms", "3.1 s"): they vary from run to run.
_TIMES = re.compile(r"\d[\d,.]*\s?(?:ms|s)\b")


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, str):  # two checkouts compared: the project's own folder is not a difference
        return value.replace(str(ROOT), "<root>")
    return value


def _workbench():
    try:
        from retrieval.pipeline.workbench import open_workbench
    except ImportError:  # the layout before the package was put in folders
        from retrieval.pipeline import open_workbench
    from retrieval.settings import Settings

    return open_workbench(Settings(), progress=False)


def _lab_questions():
    try:
        from retrieval.ingest.corpus import load_questions
    except ImportError:
        from retrieval.corpus import load_questions
    return load_questions(ROOT / "data" / "lab" / "questions.jsonl")


def dump_traces() -> dict[str, Any]:
    bench = _workbench()
    out: dict[str, Any] = {}
    for name, overrides in CONFIGS.items():
        settings = bench.settings.with_overrides(**overrides)
        for q in _lab_questions():
            try:
                out[f"{name}/{q.id}"] = _strip(bench.ask(q.question, q.filters, settings=settings).to_dict())
            except Exception as exc:  # noqa: BLE001 - a crash is part of what is compared
                out[f"{name}/{q.id}"] = {"error": exc.__class__.__name__}
    return out


def _eval(corpus: Path, questions: Path, configs: str, split: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "retrieval", "eval", "--corpus", str(corpus), "--questions",
                           str(questions), "--configs", configs, "--split", split, "--json"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    report = json.loads(done.stdout)
    return {name: {"tier": cfg["tier"], "overall": _strip(cfg["overall"]),
                   "questions": {q["id"]: [q.get("final"), q.get("layer")] for q in cfg["questions"]}}
            for name, cfg in report["configs"].items()}


def dump_eval() -> dict[str, Any]:
    lab = ROOT / "data" / "lab"
    out = {"lab": _eval(lab / "corpus.jsonl", lab / "questions.jsonl", "bm25,dense,hybrid,hybrid+rerank", "all")}
    faquad = ROOT.parent / "shared" / "data" / "faquad"
    if faquad.is_dir():
        out["faquad"] = _eval(faquad / "corpus.jsonl", faquad / "questions.jsonl", "hybrid,hybrid+rerank",
                              "heldout")
    return out


def dump_pages() -> dict[str, Any]:
    from helpers.apptest import APP, EVALUATION_PAGE as PAGE, open_tab
    from helpers.language import visible
    from streamlit.testing.v1 import AppTest

    out: dict[str, Any] = {}
    tabs = ("tab_grid", "tab_lists", "tab_movement", "tab_compare", "tab_judge", "tab_timings")
    for lang in ("en", "pt"):
        for n, (question, tenant) in enumerate([(QUESTIONS[0], "lumen"), ("Qual o prazo de reembolso?", "lumen"),
                                                ("What is the capital of Mars?", "ventura")]):
            at = AppTest.from_file(APP, default_timeout=300)
            at.query_params.update({"q": question, "tenant": tenant, "lang": lang})
            at.run()
            for tab in tabs:
                open_tab(at, tab, lang)
                out[f"main/{lang}/{n}/{tab}"] = visible(at)
        at = AppTest.from_file(PAGE, default_timeout=600)
        at.query_params["lang"] = lang
        at.run()
        at.selectbox(key="ev_split").set_value("heldout")
        at.multiselect(key="ev_configs").set_value(["bm25", "hybrid"])
        at.selectbox(key="ev_reranker").set_value("none")
        at.button[0].click().run()
        out[f"evaluation/{lang}"] = visible(at)
    return {key: [_TIMES.sub("<time>", s) for s in strings] for key, strings in out.items()}


PARTS = {"traces": dump_traces, "eval": dump_eval, "pages": dump_pages}


def dump(folder: str, only: str | None = None) -> None:
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    for name, build in PARTS.items():
        if only and name not in only.split(","):
            continue
        data = build()
        (target / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True),
                                             encoding="utf-8")
        print(f"{name}: {len(data)} entries written to {target / (name + '.json')}")


def _diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in b:
                out.append(f"{where}.{key}: removed")
            elif key in a:  # added fields are allowed
                _diff(a[key], b[key], f"{where}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{where}[{n}]", out)
    elif a != b:
        out.append(f"{where}: {str(a)[:160]!r} != {str(b)[:160]!r}")


def compare(before: str, after: str) -> int:
    problems: list[str] = []
    for name in PARTS:
        a_path, b_path = Path(before) / f"{name}.json", Path(after) / f"{name}.json"
        if not (a_path.exists() and b_path.exists()):
            continue
        a, b = json.loads(a_path.read_text(encoding="utf-8")), json.loads(b_path.read_text(encoding="utf-8"))
        found: list[str] = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                found.append(f"{key}: present in only one dump")
            else:
                _diff(a[key], b[key], key, found)
        print(f"{name}: {len(a)} entries compared; {len(found)} differences")
        problems += [f"{name}: {line}" for line in found]
    for line in problems[:2000]:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "dump":
        dump(args[1], args[3] if len(args) == 4 and args[2] == "--only" else None)
    elif len(args) == 3 and args[0] == "compare":
        sys.exit(compare(args[1], args[2]))
    else:
        sys.exit(__doc__)
