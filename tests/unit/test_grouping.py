"""Where a test file lives says what it needs: tests/unit/ nothing optional, tests/live/ a
live server, a browser, valgrind or a peer's toolchain, tests/property/ hypothesis (the
fuzzers and the property tests). These checks keep that true as files are added."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.paths import GROUPS, TESTS

#: what stays at tests/: the package marker, conftest.py (which must apply to every group)
#: and the helpers the groups share
SHARED_FILES = {"__init__.py", "conftest.py", "paths.py", "toolchains.py", "browser.py",
                "live_servers.py", "fake_peer.py", "injected_layouts.py", "peak_memory.py",
                "screenshots.py", "shipped_estimates.py", "fuzz_peer.py", "fuzz_examples.py",
                "docs_whole_figures.py"}
SHARED_FOLDERS = {"fixtures", "plugin_demo", *GROUPS}
#: the helpers whose import means a live need (a browser, a server started by the test)
LIVE_HELPERS = {"tests.browser", "tests.live_servers"}
#: the functions of tests/toolchains.py that skip without a tool (require_* besides)
TOOL_FUNCTIONS = {"shipped_adapters"}


def _raises(node: ast.With) -> bool:
    """`with pytest.raises(...)`: a test that a missing tool skips, which needs no tool."""
    return any(isinstance(item.context_expr, ast.Call)
               and isinstance(item.context_expr.func, ast.Attribute)
               and item.context_expr.func.attr == "raises" for item in node.items)


def _needs(node: ast.AST) -> Iterator[str]:
    """Each optional tool's mark in a test module: a `mark.tools` marker, a require_* or
    shipped_adapters() call, an import of the browser or the live servers."""
    if isinstance(node, ast.With) and _raises(node):
        return
    if (isinstance(node, ast.Attribute) and node.attr == "tools"
            and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"):
        yield f"line {node.lineno}: pytest.mark.tools"
    if isinstance(node, ast.Call):
        name = (node.func.id if isinstance(node.func, ast.Name)
                else node.func.attr if isinstance(node.func, ast.Attribute) else "")
        if name.startswith("require_") or name in TOOL_FUNCTIONS:
            yield f"line {node.lineno}: {name}()"
    if isinstance(node, ast.ImportFrom) and node.module in LIVE_HELPERS:
        yield f"line {node.lineno}: imports {node.module}"
    if isinstance(node, ast.Import):
        yield from (f"line {node.lineno}: imports {alias.name}" for alias in node.names
                    if alias.name in LIVE_HELPERS)
    for child in ast.iter_child_nodes(node):
        yield from _needs(child)


def _test_files(group: str) -> list[Path]:
    return sorted((TESTS / group).glob("test_*.py"))


def _tool_needs(path: Path) -> list[str]:
    return list(_needs(ast.parse(path.read_text(encoding="utf-8"), str(path))))


def test_no_test_file_sits_directly_in_tests() -> None:
    """tests/ holds the shared helpers and the groups' folders only: a new test file goes
    into tests/unit/, tests/live/ or tests/property/ (docs/guide/where-things-go.md)."""
    files = {p.name for p in TESTS.iterdir() if p.is_file() and p.suffix == ".py"}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert sorted(files - SHARED_FILES) == []
    assert sorted(folders - SHARED_FOLDERS) == []
    stray = [str(p.relative_to(TESTS)) for p in TESTS.rglob("test_*.py")
             if p.parent.parent != TESTS or p.parent.name not in GROUPS]
    assert stray == []


def test_every_group_is_a_package_of_tests() -> None:
    """Each group imports as tests.GROUP (its modules import one another by that name)."""
    for group in GROUPS:
        assert (TESTS / group / "__init__.py").is_file(), group
        assert _test_files(group), group


def test_unit_and_property_tests_need_no_tool() -> None:
    """A file that marks a test with a tool, calls require_* or shipped_adapters(), or opens
    a browser or a live server belongs in tests/live/."""
    found = {f"{group}/{path.name}": needs for group in ("unit", "property")
             for path in _test_files(group) if (needs := _tool_needs(path))}
    assert found == {}


def test_every_live_test_file_needs_a_tool() -> None:
    """And the other way round: a file in tests/live/ that needs no tool belongs in
    tests/unit/ (or tests/property/), where every run of the suite runs it."""
    assert [path.name for path in _test_files("live") if not _tool_needs(path)] == []


def test_every_property_test_file_uses_hypothesis() -> None:
    """tests/property/ holds the hypothesis-driven files: each has a @given test."""
    def given(path: Path) -> bool:
        return any(isinstance(node, ast.Name | ast.Attribute)
                   and (node.id if isinstance(node, ast.Name) else node.attr) == "given"
                   for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))

    assert [path.name for path in _test_files("property") if not given(path)] == []
