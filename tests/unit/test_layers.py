"""The package's shape: layers that point one way, no import cycle, and contracts that name
every module (import-linter checks the contracts themselves in `tox -e lint`)."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import ROOT

PACKAGE = ROOT / "harness"
LAYERS = ("cli", "apps", "report", "run", "metrics", "recipes", "core")


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(importer: str, path: Path, node: ast.ImportFrom | ast.Import) -> Iterator[str]:
    """The harness modules an import statement loads (a name imported from a package
    counts as its submodule when there is one)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                   for a in node.names]
    for target in targets:
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        if target and target != importer:
            yield target


def _graph() -> dict[str, set[str]]:
    """Every import between harness modules, including those inside functions and under
    TYPE_CHECKING: a cycle hidden behind either is still a cycle in the design."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[name].update(_resolve(name, path, node))
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_counting_local_and_type_checking_imports() -> None:
    """No two harness modules import each other, directly or round a longer loop."""
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a loop of three modules is reported as one component."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_function_local_import_of_a_harness_module() -> None:
    """Imports of our own modules sit at the top of the module: none is hidden in a function
    (third-party ones may be, when they are optional or slow to import)."""
    local = []
    for name, path in MODULES.items():
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.level or (
                        node.module or "").startswith("harness")):
                    local.append(f"{name}:{node.lineno}")
                if isinstance(node, ast.Import) and any(
                        a.name.startswith("harness") for a in node.names):
                    local.append(f"{name}:{node.lineno}")
    assert local == []


def test_the_layers_contract_names_every_subpackage_in_order() -> None:
    """Every package under harness/ is a layer of the contract, in the documented order."""
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    assert layers == [f"harness.{layer}" for layer in LAYERS]
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(LAYERS)


def test_every_module_outside_the_binding_package_is_a_forbidden_source() -> None:
    """The forbidden contract lists each core module (a new one cannot slip past it)."""
    contract = next(c for c in _contracts() if c["type"] == "forbidden")
    sources = contract["source_modules"]
    assert isinstance(sources, list)
    core = sorted(name for name in MODULES if name.startswith("harness.core.")
                  and not name.startswith("harness.core.native"))
    assert sorted(s for s in sources if s.startswith("harness.core.")) == core
    assert {s for s in sources if not s.startswith("harness.core.")} == {
        f"harness.{layer}" for layer in LAYERS if layer != "core"}
    assert contract["forbidden_modules"] == ["cffi", "harness.core.native.compiled",
                                             "harness.core.native._c"]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_imports_only_layers_below_it(layer: str) -> None:
    """The layers contract, checked here too without import-linter: no module of a layer
    imports a module of a layer above it."""
    above = {f"harness.{name}" for name in LAYERS[: LAYERS.index(layer)]}
    wrong = [(importer, imported) for importer, imports in _graph().items()
             if importer.startswith(f"harness.{layer}") for imported in imports
             if any(imported == a or imported.startswith(a + ".") for a in above)]
    assert wrong == []
