"""The fingerprint of the code that computes a feature set: a model trained on one version of a feature's code is
refused by another, even when the feature kept its name and its text.

For each declared feature, the fingerprint reads its declaration's source (the ``_f(...)`` call, in the module that
declares it: name, range, text, sign and the function that computes it; not its label, which only shows it) and,
transitively, the source of every project function or class that function names (type annotations aside): the
helpers, the group's context class (what ``w.covs`` reads) and the tokenizer, codes and text functions they import.
Sources are compared as Python reads them (:func:`ast.unparse`: comments and layout do not count) and without their
type annotations (they compute nothing), so a reformatting or a typing change keeps the version and a changed formula
changes it.

Reached code is known by its qualified name (``_coverage``, ``TextView.tokens``), not by its module's: moving a
function or a declaration to another module keeps the version. So a qualified name must name one object: two
modules' objects of the same qualified name, both reached, are refused (:class:`FingerprintClash`) rather than one
read for both or each read under a name that no longer tells which feature uses which.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
import types
from typing import Any, Iterable, Mapping


class FingerprintClash(ValueError):
    """Two reached objects of different modules share a qualified name: rename one (the fingerprint knows code by
    its qualified name alone)."""


class _Unannotated(ast.NodeTransformer):
    """A source's syntax without its type annotations: ``x: int = 0`` reads ``x = 0``, a bare ``x: int`` (a
    dataclass field) reads ``x``, and a function's parameters and return lose theirs."""

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        if node.value is None:
            return ast.copy_location(ast.Expr(node.target), node)
        return ast.copy_location(ast.Assign([node.target], self.visit(node.value)), node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.returns = None
        self.generic_visit(node)
        return node

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function


def _normalized(source: str) -> str:
    tree = _Unannotated().visit(ast.parse(textwrap.dedent(source)))
    for node in ast.walk(tree):  # docstrings describe, they do not compute
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef, ast.Module)) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def _names(node: ast.AST) -> set[str]:
    """The names ``node``'s code reads, type annotations left out (a type named in a signature computes nothing)."""
    skipped: set[int] = set()
    for n in ast.walk(node):
        notes = [getattr(n, "returns", None), getattr(n, "annotation", None)] if not isinstance(n, ast.Name) else []
        for note in notes:
            if note is not None:
                skipped |= {id(x) for x in ast.walk(note)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in skipped}


def _project_object(value: Any, package: str) -> bool:
    return isinstance(value, (types.FunctionType, type)) and (getattr(value, "__module__", "") or "").startswith(package)


def declaration_calls(module: types.ModuleType, factory: str) -> dict[str, ast.Call]:
    """``feature name → its declaration call`` (``factory("name", ...)``) in ``module``'s source."""
    tree = ast.parse(inspect.getsource(module))
    calls: dict[str, ast.Call] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == factory and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            calls[node.args[0].value] = node
    return calls


def fingerprint(factory: str, groups: Iterable[tuple[str, Iterable[Any], Any]], package: str = "retrieval") -> str:
    """The digest of a feature set's declarations and of all the project code they reach.

    Args:
        factory: the name of the function each declaration calls (``_f``); a feature's declaration is looked up in
            the source of the module that defines its function (``value``).
        groups: ``(group, features in order, context class)`` per group; a feature has ``name``, ``range``,
            ``doc``, ``sign`` and ``value``.
        package: code outside it (numpy, the standard library) is not read.
    """
    declared: dict[str, dict[str, ast.Call]] = {}  # module name → its declaration calls
    parts: list[str] = []
    pending: list[Any] = []
    for group, features, context in groups:
        parts.append(f"group {group}")
        pending.append(context)
        for feature in features:
            parts.append(f"{group}|{feature.name}|{feature.range}|{feature.doc}|{feature.sign}")
            module = inspect.getmodule(feature.value)
            if module is None:
                continue
            if module.__name__ not in declared:
                try:
                    declared[module.__name__] = declaration_calls(module, factory)
                except (OSError, TypeError):  # a module without source: nothing to read
                    declared[module.__name__] = {}
            call = declared[module.__name__].get(feature.name)
            if call is None:  # declared at run time, not in the module's source: its declaration stands for it
                continue
            kept = ast.Call(call.func, call.args, [k for k in call.keywords if k.arg != "label"])
            parts.append(ast.unparse(kept))
            computes = [a for a in call.args if isinstance(a, ast.Lambda)]  # the function; the rest is data
            namespace: Mapping[str, Any] = vars(module)
            pending += [namespace[n] for node in computes for n in sorted(_names(node))
                        if n in namespace and _project_object(namespace[n], package)]
    reached: dict[str, tuple[str, str]] = {}  # qualified name → (its module, its normalized source)
    while pending:
        obj = pending.pop()
        name, module_name = obj.__qualname__, obj.__module__
        if name in reached:
            if reached[name][0] != module_name:
                raise FingerprintClash(f"{name} is defined in both {reached[name][0]} and {module_name}, and the "
                                       "features reach both: rename one")
            continue
        try:
            source = _normalized(inspect.getsource(obj))
        except (OSError, TypeError):  # a built-in or generated object: its name stands for it
            source = name
        reached[name] = (module_name, source)
        owner = inspect.getmodule(obj)
        scope = vars(owner) if owner is not None else {}
        for read in sorted(_names(ast.parse(source))):
            value = scope.get(read)
            if value is not None and _project_object(value, package):
                pending.append(value)
    # In name order, not discovery order; the modules do not count.
    parts += [f"{name}\n{reached[name][1]}" for name in sorted(reached)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:12]
