"""The public API: the names `harness` exports, loaded lazily, and the Python API page's
examples, run as written."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from tests.paths import ROOT

API_PAGE = ROOT / "docs" / "reference" / "api.md"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
INTERNAL = "not in `harness.__all__` is internal and may move"


def test_every_public_name_is_its_owners_object() -> None:
    """Each name in `__all__` resolves to the object of the module that owns it, and every
    lazily loaded name is in `__all__`."""
    owners = harness._OWNERS
    assert set(harness.__all__) == {*owners, "__version__"}
    for name, owner in owners.items():
        assert getattr(harness, name) is getattr(importlib.import_module(owner), name), name


def test_the_user_facing_names_are_public() -> None:
    """What a user scripts with is there: algorithms and constructions by name, servers,
    scenarios run, results read, and the result model."""
    assert {"get_algorithm", "ALGORITHMS", "get_construction", "CONSTRUCTIONS", "Server",
            "load_scenario", "run_scenario", "load_result", "Result", "Run", "Subject",
            "result_schema"} <= set(harness.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    """A name the package does not export fails as a missing attribute does."""
    with pytest.raises(AttributeError, match="no attribute 'runner'"):
        _ = harness.runner
    assert set(harness.__all__) <= set(dir(harness))


def test_importing_the_package_loads_no_layer_above_core() -> None:
    """`import harness` imports none of the runner, the report or the metrics until a name
    that needs them is used."""
    code = ("import sys, harness; print(sorted(m for m in sys.modules if m.startswith("
            "('harness.run', 'harness.report', 'harness.metrics', 'harness.apps', "
            "'harness.cli'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"


def test_no_module_of_the_package_imports_its_root() -> None:
    """The root sits above every layer: no module imports `harness` itself, so the root's
    imports of the upper layers close no cycle."""
    found = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and node.module == "harness"
                    and not node.level) or (isinstance(node, ast.Import) and any(
                        alias.name == "harness" for alias in node.names)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_the_package_and_the_api_page_say_the_rest_is_internal() -> None:
    """The package docstring and the API page state the rule for names outside `__all__`."""
    assert harness.__doc__ is not None
    assert INTERNAL in " ".join(harness.__doc__.split())
    assert INTERNAL in " ".join(API_PAGE.read_text(encoding="utf-8").replace("**", "").split())


def test_the_api_page_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The Python blocks of docs/reference/api.md run as written, in order, in an empty
    folder: a scenario run, its result written, read back and validated, and an algorithm
    and a construction built by name."""
    blocks = PYTHON_BLOCK.findall(API_PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "api_page"}
    for block in blocks:
        exec(compile(block, str(API_PAGE), "exec"), namespace)
    out = capsys.readouterr().out
    assert out.startswith("k=40 keys per server: CV ") and "\nk=160 " in out
    assert "numpy-aligned: " in out and "points on nginx's ring" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "small.html", "small.json", "small.md"]
