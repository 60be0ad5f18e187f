"""The package's floors (docs/architecture.md): a module imports from its own floor and those below, never from
above, and no module imports another inside a function to dodge a cycle. The one function-level import is the
reader's torch module, loaded only when the reader is (a page that never reads never imports torch)."""

from __future__ import annotations

import ast
import importlib
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


# --- Plain imports, the pages and the benchmark --------------------------------------------------------------------

PROJECT = ROOT.parent
#: What sits outside the package: the pages (``app.py``, ``pages/``, ``ui/``), the benchmark, the scripts and the
#: reader's experiment. The package imports none of them; the pages never import the benchmark, nor it them.
OUTSIDE = ("ui", "app", "pages", "bench", "scripts", "experiments")
PAGES = ("ui", "app", "pages")


def outside_files(*tops: str) -> dict[str, Path]:
    found = {}
    for top in tops:
        path = PROJECT / f"{top}.py"
        if path.is_file():
            found[top] = path
        for file in sorted((PROJECT / top).rglob("*.py")) if (PROJECT / top).is_dir() else ():
            found[".".join((top, *file.relative_to(PROJECT / top).with_suffix("").parts))] = file
    return found


def absolute_imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """``(module, names)`` of every absolute import in ``path``: ``import a.b`` → ``("a.b", ())``,
    ``from a.b import c, d`` → ``("a.b", ("c", "d"))``."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.module, tuple(alias.name for alias in node.names)))
    return out


def test_plain_imports_climb_no_floor_either() -> None:
    known = modules()
    climbs = []
    for module, path in known.items():
        for target, _ in absolute_imports(path):
            if target.startswith("retrieval.") and target in known \
                    and FLOORS.index(floor(target)) > FLOORS.index(floor(module)):
                climbs.append(f"{module} -> {target}")
    assert not climbs, climbs


def test_the_package_imports_nothing_outside_it() -> None:
    found = [f"{m} -> {t}" for m, p in modules().items() for t, _ in absolute_imports(p)
             if t.split(".")[0] in OUTSIDE]
    assert not found, found


def test_the_pages_and_the_benchmark_do_not_import_each_other() -> None:
    pages = [f"{m} -> {t}" for m, p in outside_files(*PAGES).items() for t, _ in absolute_imports(p)
             if t.split(".")[0] in ("bench", "scripts", "experiments")]
    bench = [f"{m} -> {t}" for m, p in outside_files("bench").items() for t, _ in absolute_imports(p)
             if t.split(".")[0] in PAGES]
    assert not pages and not bench, pages + bench


def public(package: str) -> tuple[str, ...]:
    """The ``__all__`` a package declares (its public modules and names)."""
    return tuple(getattr(importlib.import_module(package), "__all__", ()))


def test_the_pages_read_only_the_declared_public_api() -> None:
    """Each step of a module path the pages import is in its package's ``__all__`` (``retrieval.offline.evaluation``
    needs ``evaluation`` in ``retrieval.offline.__all__``), and a name imported from a package is in its
    ``__all__``: what a page may read is declared, and the rest of the package can move."""
    undeclared = []
    for module, path in outside_files(*PAGES).items():
        for target, names in absolute_imports(path):
            if not target.startswith("retrieval."):
                continue
            parts = target.split(".")
            for depth in range(2, len(parts) + 1):
                package, step = ".".join(parts[:depth - 1]), parts[depth - 1]
                if package != "retrieval" and step not in public(package):
                    undeclared.append(f"{module}: {target} ({step} not in {package}.__all__)")
                    break
            else:
                if (PROJECT / Path(*parts) / "__init__.py").is_file():
                    undeclared += [f"{module}: {target}.{n} (not in its __all__)" for n in names
                                   if n not in public(target)]
    assert not undeclared, undeclared
