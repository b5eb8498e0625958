"""What the sdist and the wheel carry, checked without building them (.ci/wheel-smoke.sh
builds both and runs every command from an empty folder): MANIFEST.in takes what builds
and tests the package, the license metadata is PEP 639's, the wheel's built-in
scenarios land where the package looks, and no text the harness prints sends an
installed user to a file only the repository has."""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest

import harness
from harness.run import builtin
from tests.paths import ROOT

#: folders no sdist is made from (tools' caches, build output, what installs put beside)
NOT_SOURCES = {".git", ".venv", ".tox", "build", "dist", "site", "results", "runs",
               "node_modules", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache",
               ".ruff_cache", ".benchmarks"}


def _files(root: Path) -> set[str]:
    found: set[str] = set()
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in NOT_SOURCES and not d.endswith(".egg-info")]
        found.update(Path(folder, n).relative_to(root).as_posix() for n in names)
    return found


def manifest(root: Path) -> set[str]:
    """The files MANIFEST.in's commands take from `root` (the ones it uses: include, graft,
    global-exclude), applied in order as setuptools applies them."""
    candidates = _files(root)
    taken: set[str] = set()
    for line in (root / "MANIFEST.in").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        command, patterns = words[0], words[1:]
        if command == "include":
            taken |= {f for f in candidates if any(fnmatch.fnmatchcase(f, p) for p in patterns)}
        elif command == "graft":
            taken |= {f for f in candidates for d in patterns if f.startswith(f"{d}/")}
        elif command == "global-exclude":
            taken = {f for f in taken
                     if not any(fnmatch.fnmatchcase(Path(f).name, p) for p in patterns)}
        else:
            raise AssertionError(f"MANIFEST.in: {command} is not read by this test; teach it")
    return taken


@pytest.fixture(scope="module")
def sdist_files() -> set[str]:
    if not (ROOT / "MANIFEST.in").is_file():
        pytest.skip("no MANIFEST.in beside the tests (an installed copy)")
    return manifest(ROOT)


def test_the_sdist_holds_what_builds_the_wheel(sdist_files: set[str]) -> None:
    """cext/build_ffi.py, which setup.py names, cext/units.py, which both read, every C file
    setup.py names and every unit's files."""
    named = set(re.findall(r"cext/[\w.]+\.[ch]\b", (ROOT / "setup.py").read_text()))
    spec = importlib.util.spec_from_file_location("_test_units", ROOT / "cext" / "units.py")
    assert spec is not None and spec.loader is not None
    units = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = units
    spec.loader.exec_module(units)
    named |= set(units.sources(units.UNITS)) | set(units.headers(units.UNITS))
    assert {"cext/build_ffi.py", "cext/units.py"} <= sdist_files
    assert named and named <= sdist_files, sorted(named - sdist_files)


@pytest.mark.parametrize("folder", ["cext", "scenarios", "tests", "benchmarks", "docs", ".ci",
                                    "peers"])
def test_the_sdist_holds_every_source_file_of(folder: str, sdist_files: set[str]) -> None:
    """Every file of these folders (npm's install output under peers/js aside, which
    .ci/install-peers.sh puts there), the reproduction's scenarios among them."""
    wanted = {f for f in _files(ROOT) if f.startswith(f"{folder}/")
              and not f.endswith((".pyc", ".pyo"))
              and not fnmatch.fnmatchcase(f, "peers/js/package*.json")}
    assert wanted and wanted <= sdist_files, sorted(wanted - sdist_files)
    if folder == "scenarios":
        assert {"scenarios/default.toml", "scenarios/reproduce/a_balance_sweep.toml"} <= wanted


def test_the_sdist_holds_the_license_and_readme(sdist_files: set[str]) -> None:
    """And nothing of the committed results."""
    assert {"LICENSE", "README.md"} <= sdist_files  # setup.py and pyproject.toml: always
    assert not any(f.startswith("results/") for f in sdist_files)


def test_license_metadata() -> None:
    """PEP 639: an SPDX expression and the license file, with a setuptools that reads them
    (older ones warn that a license table is deprecated)."""
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("no pyproject.toml beside the tests (an installed copy)")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    assert project["project"]["license-files"] == ["LICENSE"]
    assert "setuptools>=77" in project["build-system"]["requires"]
    assert "Copyright (c) 2026 The ring-harness authors" in (ROOT / "LICENSE").read_text()
    assert "core/native/abi/*.h" in project["tool"]["setuptools"]["package-data"]["harness"]


def test_the_wheel_copies_scenarios_where_the_package_looks() -> None:
    """setup.py's build_py writes the copy at the path harness.run.builtin reads."""
    if not (ROOT / "setup.py").is_file():
        pytest.skip("no setup.py beside the tests (an installed copy)")
    where = builtin.PACKAGED.relative_to(Path(harness.__file__).resolve().parent.parent)
    assert f'Path(self.build_lib, {", ".join(map(repr, where.parts))})'.replace(
        "'", '"') in (ROOT / "setup.py").read_text()


# --- texts an installed user reads ---------------------------------------------------------

#: a repository folder named in a string (not in a docstring or a comment)
REPOSITORY_PATH = re.compile(r"(?<![\w./-])(results|scenarios|docs|\.ci|benchmarks|peers|cext|"
                             r"tests)/")
#: strings that name one on purpose, and why
ALLOWED = {
    ("harness/apps/benchgate/ab_base.py", "benchmarks/conftest.py"):
        "the files a base commit's export must hold, not a text",
    ("harness/apps/benchgate/ab_base.py", "benchmarks/test_timing.py"):
        "the files a base commit's export must hold, not a text",
    ("harness/apps/reproduction/render.py", "`results/reproduce/`"):
        "REPRODUCTION.md's introduction, whose committed rendering stays as it is",
    ("harness/apps/reproduction/sources.py", "docs/design.md"):
        "a source of REPRODUCTION.md's figures, whose committed rendering stays as it is",
    ("harness/cli/__init__.py", "(default: results/)"):
        "the folder reproduce writes to, not a file to read",
    ("harness/cli/gate.py", "benchmarks/baseline"):
        "the gate's default baseline folder: the gate runs in a checkout",
    ("harness/core/tools.py", "bash .ci/install-peers.sh"):
        "what installs every optional tool, which doctor says is in a checkout",
    ("harness/run/reference.py", "docs/reference/scenario.md"):
        "how the repository's scenario reference page is regenerated",
}


def _texts(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def test_no_printed_text_points_at_a_repository_file() -> None:
    """Help, messages and reports name a documentation page by its title or a built-in
    scenario by its name, not results/..., docs/..., scenarios/... (which an installed user
    does not have); the few deliberate ones are listed with their reason."""
    package = Path(harness.__file__).resolve().parent
    found = []
    for path in sorted(package.rglob("*.py")):
        module = f"harness/{path.relative_to(package).as_posix()}"
        for line, text in _texts(path):
            if REPOSITORY_PATH.search(text) and not any(
                    module == allowed and part in text for allowed, part in ALLOWED):
                found.append(f"{module}:{line}: {text[:80]!r}")
    assert found == []
