"""The package's floors (docs/architecture.md): a module imports from its own floor and those below, never from
above, and no module imports another inside a function to dodge a cycle. The one function-level import is the
reader's torch module, loaded only when the reader is (a page that never reads never imports torch)."""

from __future__ import annotations

import ast
from pathlib import Path

import retrieval

ROOT = Path(retrieval.__file__).resolve().parent
#: The floors, lowest first; ``settings`` sits above the stages it validates against and below the pipeline.
FLOORS = ("core", "ingest", "backends", "learned", "stages", "settings", "pipeline", "explain", "offline", "serving", "cli",
          "__main__", "__init__")
#: Function-level imports of the package that are not there to dodge a cycle.
LAZY_ALLOWED = {("retrieval.learned.reader.loader", "retrieval.learned.reader.interaction")}


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        name = ".".join(("retrieval", *path.relative_to(ROOT).with_suffix("").parts))
        found[name.removesuffix(".__init__")] = path
    return found


def floor(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(module: str, path: Path, known: dict[str, Path]):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("retrieval"):
            continue
        for alias in node.names:
            full = f"{target}.{alias.name}"
            yield (full if full in known else target), id(node) in top


def test_no_import_climbs_a_floor() -> None:
    known = modules()
    climbs = [f"{m} -> {t}" for m, p in known.items() for t, _ in imports(m, p, known)
              if FLOORS.index(floor(t)) > FLOORS.index(floor(m))]
    assert not climbs, climbs
    assert len(known) > 90


def test_no_function_level_import_dodges_a_cycle() -> None:
    known = modules()
    lazy = {(m, t) for m, p in known.items() if floor(m) != "cli" for t, at_top in imports(m, p, known)
            if not at_top}
    assert lazy == LAZY_ALLOWED, lazy - LAZY_ALLOWED
