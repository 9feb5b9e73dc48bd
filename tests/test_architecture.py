"""The layers of sdckit, checked from the source (docs/architecture.md, "Layers").

Every module under ``src/sdckit`` is parsed with :mod:`ast` (nothing is imported) and its
imports collected: ``import`` and ``from ... import`` statements at module level, in class
bodies, in functions and under ``if TYPE_CHECKING:``, relative ones resolved against the
module's package (``from . import x`` names the submodule ``x`` where there is one), the
literal ``importlib.import_module("sdckit....")`` calls and the ``name -> module`` maps given
to :func:`sdckit._lazy.lazy_exports` (a lazily exported name is an import on first use).
Three rules hold:

1. **No upward import**: no module imports a module of a higher layer (:data:`LAYERS`),
   wherever the import stands (a function-level import is still a dependency).
2. **No import cycle between modules** through the imports that run when a module is
   imported (module level, outside ``if TYPE_CHECKING:``): a strongly connected component of
   more than one module (Tarjan, "Depth-first search and linear graph algorithms", SIAM J.
   Comput. 1(2), 1972) is a cycle.
3. **No cycle between packages** (the layer folders ``sdckit.<package>``, and each top-level
   module) through any import that is not upward: two packages of one layer may depend on
   each other in one direction only. (A cycle through two layers always holds an upward
   import, which rule 1 reports.)

A registry of :mod:`sdckit.core.registry` may name its implementation by a
``"package.module:attribute"`` string (``"sdckit.spark.source:SparkSource"`` in the engine
registry of ``jobs``): that is the plugin mechanism -- the string is loaded on first use by
the registry, imports nothing where it is written -- and is allowed; so is any other string.

:data:`KNOWN` may list violations accepted for a while, each with the change that removes it
(empty now); the test fails on any violation not in it and on any entry of it that no longer
occurs, so the list can only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

#: The layers, lowest first (docs/architecture.md); a module may import its own layer and
#: the layers below. ``synthesis`` stands beside ``algorithms``: its ``safepub`` method is the
#: SafePub algorithm run as a synthesizer, and ``evaluation`` compares synthetic releases.
#: Besides the packages, the top-level modules: ``errors`` (the error types every layer
#: raises), ``_lazy`` (the lazy-export helper of package ``__init__`` files) and ``_version``
#: belong with ``core``; ``datasets`` (bundled example data, read with ``core.io``) with the
#: packages over ``core``; ``cli`` (the entry point over ``commands``), ``client`` (the query
#: server's HTTP client, which reads the server's limits) and the package ``sdckit`` itself
#: (the public facade, lazily exporting from every layer) at the top.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core", "errors", "_lazy", "_version"),
    ("models", "risk", "utility", "masking", "tables", "dp", "datasets"),
    ("algorithms", "synthesis", "evaluation"),
    ("report",),
    ("jobs",),
    ("commands", "server", "ui", "spark", "cli", "client", "sdckit"),
)

#: Violations accepted for a while: (rule, importer, imported) -> the change that removes it.
#: Empty: every layer rule holds. An entry must name its seam, and one whose import is gone
#: fails :func:`test_every_known_violation_still_occurs`, so the list can only shrink.
KNOWN: dict[tuple[str, str, str], str] = {}


@dataclass(frozen=True)
class Import:
    """One import of an sdckit module: who imports what, where, and whether it runs when
    the importer is imported (``eager``: module level, outside ``if TYPE_CHECKING:``)."""

    source: str
    target: str
    line: int
    eager: bool

    @property
    def where(self) -> str:
        return f"{self.source.replace('.', '/')}.py:{self.line}"


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package is its ``__init__``)."""
    found = {}
    for path in sorted((SRC / "sdckit").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def package(module: str) -> str:
    """The layer folder (or top-level module) of ``module``: ``sdckit.jobs.mask`` -> ``jobs``,
    the package ``sdckit`` itself -> ``sdckit``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}


def _known_module(name: str) -> str:
    """``name`` itself when it is a module, else its longest prefix that is one."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _string_map(node: ast.expr, assigned: dict[str, ast.expr]) -> dict[str, str]:
    """The literal ``{name: module}`` of a lazy-export call's argument (a dict literal or a
    module-level name bound to one)."""
    if isinstance(node, ast.Name):
        node = assigned.get(node.id, node)
    if not isinstance(node, ast.Dict):
        return {}
    return {
        k.value: v.value
        for k, v in zip(node.keys, node.values, strict=True)
        if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and isinstance(v.value, str)
    }


def imports_of(module: str) -> Iterator[Import]:
    """The sdckit modules ``module`` imports (see the module docstring)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    is_package = MODULES[module].name == "__init__.py"
    here = module if is_package else module.rsplit(".", 1)[0]
    assigned = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }

    def absolute(name: str | None, level: int) -> str:
        if level == 0:
            return name or ""
        base = here.split(".")
        base = base[: len(base) - (level - 1)]
        return ".".join([*base, name] if name else base)

    def found(target: str, node: ast.AST, eager: bool) -> Iterator[Import]:
        if target == "sdckit" or target.startswith("sdckit."):
            yield Import(module, _known_module(target), node.lineno, eager)  # type: ignore[attr-defined]

    def visit(node: ast.AST, eager: bool) -> Iterator[Import]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from found(alias.name, node, eager)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.module, node.level)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield from found(sub if sub in MODULES else base, node, eager)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            args = node.args
            if name == "import_module" and args and isinstance(args[0], ast.Constant):
                if isinstance(args[0].value, str):
                    yield from found(absolute(args[0].value, 0), node, False)
            if name == "lazy_exports" and len(args) == 2:
                for target in _string_map(args[1], assigned).values():
                    dots = len(target) - len(target.lstrip("."))
                    yield from found(absolute(target[dots:] or None, dots), node, False)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            eager = False
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from visit(child, False)
            for child in node.orelse:
                yield from visit(child, eager)
            return
        for child in ast.iter_child_nodes(node):
            yield from visit(child, eager)

    yield from visit(tree, True)


ALL_IMPORTS = [imp for module in MODULES for imp in imports_of(module)]


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan 1972), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def violations() -> dict[tuple[str, str, str], list[str]]:
    """Every broken rule: (rule, importer, imported) -> the messages (one per import line)."""
    found: dict[tuple[str, str, str], list[str]] = {}

    def add(rule: str, imp: Import, detail: str) -> None:
        message = f"{imp.where}: {imp.source} imports {imp.target} ({rule}: {detail})"
        messages = found.setdefault((rule, imp.source, imp.target), [])
        if message not in messages:  # one line naming a module twice
            messages.append(message)

    for imp in ALL_IMPORTS:
        src, dst = package(imp.source), package(imp.target)
        if LAYER_OF[dst] > LAYER_OF[src]:
            add("upward import", imp, f"layer {dst!r} is above layer {src!r}")

    module_edges: dict[str, set[str]] = {}
    for imp in ALL_IMPORTS:
        if imp.eager and imp.source != imp.target:
            module_edges.setdefault(imp.source, set()).add(imp.target)
    for component in strongly_connected(module_edges):
        members = set(component)
        for imp in ALL_IMPORTS:
            if imp.eager and imp.source in members and imp.target in members:
                if imp.source != imp.target:
                    add("module import cycle", imp, "cycle among " + ", ".join(component))

    level = [
        (imp, package(imp.source), package(imp.target))
        for imp in ALL_IMPORTS
        if LAYER_OF[package(imp.target)] <= LAYER_OF[package(imp.source)]
    ]
    package_edges: dict[str, set[str]] = {}
    for _, src, dst in level:
        if src != dst:
            package_edges.setdefault(src, set()).add(dst)
    for component in strongly_connected(package_edges):
        members = set(component)
        for imp, src, dst in level:
            if src != dst and src in members and dst in members:
                add("package import cycle", imp, "cycle among packages " + ", ".join(component))
    return found


FOUND = violations()


def test_every_package_has_a_layer() -> None:
    """A new package (or top-level module) must be placed in :data:`LAYERS`."""
    missing = sorted({package(m) for m in MODULES} - set(LAYER_OF))
    assert not missing, f"add these to LAYERS in {__file__}: {missing}"


def test_the_import_parser_sees_every_kind_of_import() -> None:
    """The collector finds function-level, relative and ``import_module`` imports (checked on
    modules known to hold each kind), so an empty result means no violation, not no
    parsing."""
    kinds = {(i.source, i.target, i.eager) for i in ALL_IMPORTS}
    assert ("sdckit", "sdckit.core.schema", True) in kinds
    assert ("sdckit", "sdckit.algorithms.anonymize", False) in kinds  # lazy export
    assert any(not i.eager and i.source.startswith("sdckit.commands.") for i in ALL_IMPORTS)
    assert ("sdckit.cli", "sdckit.commands", True) in kinds
    assert len(ALL_IMPORTS) > 500


@pytest.mark.parametrize("rule", ["upward import", "module import cycle", "package import cycle"])
def test_no_violation_beyond_the_known_ones(rule: str) -> None:
    """Rules 1-3 of the module docstring; a new violation is listed by file, line and rule."""
    new = [
        message
        for key, messages in sorted(FOUND.items())
        if key[0] == rule and key not in KNOWN
        for message in messages
    ]
    assert not new, "\n".join(new)


def test_every_known_violation_still_occurs() -> None:
    """An entry of :data:`KNOWN` whose import is gone must leave the list."""
    gone = sorted(key for key in KNOWN if key not in FOUND)
    assert not gone, f"remove these from KNOWN in {__file__} (fixed): {gone}"
