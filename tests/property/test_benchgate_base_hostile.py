"""Hostile bases for `ring-bench-gate --against REV`, generated: trees committed to a
temporary git repository with absolute symlinks, symlinks that climb out of the tree (by
`..`, through a subfolder, with odd names), a `.gitattributes` that export-ignores the suite
or part of it, a missing conftest, and symlinks that stay inside the tree (kept). Each base
ends in exit 2 with one line naming the first problem (the suite's absence, then a link out
of the tree, then what the export left out), never a traceback, and leaves nothing in the
base cache and no temporary folder.

And the cache key: any difference in the build's flag variables or the compiler's version
is another key, so a base built at -O0 is never reused for a run at the usual flags.

RING_HARNESS_FUZZ_EXAMPLES sets the examples (30 by default, about half a second each).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.apps.benchgate import ab_base
from harness.apps.benchgate.ab_base import BUILD_VARIABLES, REQUIRED_FILES, cache_key
from harness.cli.gate import main
from tests.fuzz_examples import fuzz_examples

EXAMPLES = fuzz_examples(30)
#: what the base's setup.py says once it has checked the kept links: the export got through
LINKS_KEPT = "error: every inside link kept"

#: folders a hazard is placed in (depth 0 to 3)
FOLDERS = ("", "benchmarks/", "harness/", "a/b/", "benchmarks/deep/er/")
#: names a link may take: a terminal's controls and a newline must not break the line
NAMES = st.text(st.sampled_from("abz_- .é\n\x1b\x9b"), min_size=1, max_size=8).filter(
    lambda name: name.strip(" .") != "" and not name.startswith("-"))
#: what an export-ignore may hide: the rule, the path the refusal names, and the folder
#: whose links the export leaves out with it (None: only .py files)
IGNORED = {
    ".gitattributes:benchmarks export-ignore": ("benchmarks/", "benchmarks/"),
    ".gitattributes:/benchmarks/** export-ignore": ("benchmarks/", "benchmarks/"),
    ".gitattributes:bench* export-ignore": ("benchmarks/", "benchmarks/"),
    ".gitattributes:*.py export-ignore": ("benchmarks/", None),
    ".gitattributes:benchmarks/conftest.py export-ignore": ("benchmarks/conftest.py", None),
    "benchmarks/.gitattributes:conftest.py export-ignore": ("benchmarks/conftest.py", None),
    "benchmarks/.gitattributes:test_*.py export-ignore": ("benchmarks/test_timing.py", None),
    ".gitattributes:setup.py export-ignore": ("setup.py", None),
    ".gitattributes:harness export-ignore": ("harness/", "harness/"),
}


@dataclass
class Tree:
    """A base's tree: files (path -> text), symlinks (path -> target), and what the gate
    must say about it."""

    files: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    expected: list[str] = field(default_factory=list)


@st.composite
def hostile_trees(draw: st.DrawFn) -> Tree:
    tree = Tree({name: "" for name in REQUIRED_FILES})
    inside = draw(st.lists(st.sampled_from(FOLDERS), max_size=3))
    for number, folder in enumerate(inside):
        # Up to the top and back down: inside, however it is spelled.
        climb = "../" * folder.count("/")
        tree.links[f"{folder}in{number}"] = draw(st.sampled_from(
            [f"{climb}setup.py", f"{climb}benchmarks", "./x/../y", f"{climb}."]))
    hazards = draw(st.lists(st.sampled_from(["absolute", "climbing", "ignored", "no conftest"]),
                            unique=True, max_size=3))
    outside: list[str] = []
    if "absolute" in hazards:
        target = draw(st.sampled_from(["/etc/passwd", "/", "/nonexistent/x", "//tmp"]))
        outside.append(f"{draw(st.sampled_from(FOLDERS))}l{draw(NAMES)}")
        tree.links[outside[-1]] = target
    if "climbing" in hazards:
        folder = draw(st.sampled_from(FOLDERS))
        extra = draw(st.integers(1, 3))
        spelled = draw(st.sampled_from(["{up}outside", "{up}", "sub/../{up}x", "./{up}."]))
        outside.append(f"{folder}l{draw(NAMES)}")
        tree.links[outside[-1]] = spelled.format(up="../" * (folder.count("/") + extra))
    if "ignored" in hazards:
        rule = draw(st.sampled_from(sorted(IGNORED)))
        where, pattern = rule.split(":", 1)
        tree.files[where] = f"{pattern}\n"
        ignored, hidden = IGNORED[rule]
        # A link out of the tree in a folder the export leaves out is never exported.
        outside = [link for link in outside if hidden is None or not link.startswith(hidden)]
    if "no conftest" in hazards:
        del tree.files["benchmarks/conftest.py"]
        tree.expected = ["has no benchmark suite to run: missing benchmarks/conftest.py"]
    elif outside:
        tree.expected = ["its tree holds", "a base is only exported when every symlink"]
    elif "ignored" in hazards:
        tree.expected = [f"the base's export lacks {ignored}", "export-ignores"]
    else:
        tree.files["setup.py"] = (
            "import os\n"
            f"links = {tree.links!r}\n"
            "assert all(os.readlink(name) == target for name, target in links.items())\n"
            f"raise SystemExit({LINKS_KEPT!r})\n")
        tree.expected = [f"does not build: {LINKS_KEPT}"]
    return tree


def git(folder: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t",
                    "-c", "core.symlinks=true", *arguments], capture_output=True, check=True)


def commit(folder: Path, tree: Tree) -> None:
    folder.mkdir()
    git(folder, "init", "-q")
    for name, text in tree.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    for name, target in tree.links.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).symlink_to(target)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "base")


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tree=hostile_trees())
def test_every_hostile_base_is_one_line_exit_2_and_leaves_nothing(
        tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit 2, one line naming the first problem, an empty cache, no temporary folder."""
    with tempfile.TemporaryDirectory() as top:
        root = Path(top)
        repo, cache, scratch = root / "repo", root / "cache", root / "tmp"
        scratch.mkdir()
        commit(repo, tree)
        (repo / "benchmarks").mkdir(exist_ok=True)
        (repo / "benchmarks" / "conftest.py").touch()  # the candidate's suite, not committed
        err = io.StringIO()
        with monkeypatch.context() as patch:
            patch.setenv("RING_BENCH_AB_CACHE", str(cache))
            patch.setenv("TMPDIR", str(scratch))
            patch.setattr(tempfile, "tempdir", str(scratch))
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                status = main(["--against", "HEAD", "--suite", str(repo / "benchmarks")])
        lines = err.getvalue().splitlines()
        assert (status, len(lines)) == (2, 1), err.getvalue()
        assert lines[0].startswith("ring-bench-gate: unusable data: --against HEAD")
        for expected in tree.expected:
            assert expected in lines[0]
        assert (sorted(os.listdir(cache)) if cache.exists() else []) == []
        assert os.listdir(scratch) == []


FLAG_VALUES = st.sampled_from(["", "-O0", "-O2", "-O3 -march=native", "gcc", "clang",
                               "-fsanitize=address", " -O0", "-O0 "])


@settings(max_examples=200, deadline=None)
@given(first=st.fixed_dictionaries({name: FLAG_VALUES for name in BUILD_VARIABLES}),
       second=st.fixed_dictionaries({name: FLAG_VALUES for name in BUILD_VARIABLES}),
       compilers=st.lists(st.sampled_from(["gcc (Debian 12.2.0-14) 12.2.0 (exit 0)",
                                           "gcc (Debian 13.1.0-1) 13.1.0 (exit 0)",
                                           "unknown (TimeoutExpired)"]),
                          min_size=2, max_size=2))
def test_the_cache_key_differs_whenever_a_build_flag_or_the_compiler_does(
        first: dict[str, str], second: dict[str, str], compilers: list[str]) -> None:
    """Two builds share a key exactly when every flag variable and the compiler agree."""
    one = cache_key("t" * 40, {**first, "compiler": compilers[0]})
    other = cache_key("t" * 40, {**second, "compiler": compilers[1]})
    assert (one == other) == (first == second and compilers[0] == compilers[1])


@pytest.mark.parametrize("variable", ["RING_HARNESS_EXTRA_CFLAGS", "RING_HARNESS_EXTRA_LDFLAGS",
                                      "CFLAGS"])
def test_a_base_built_with_other_flags_is_not_reused(
        variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built once at the usual flags, then with the variable set (-O0): a second build, not
    the cached one; each is reused for a run with its own flags."""
    repo = tmp_path / "repo"
    commit(repo, Tree({name: "" for name in REQUIRED_FILES}))
    monkeypatch.setenv("RING_BENCH_AB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(variable, raising=False)
    commit_id = ab_base.locate_base(repo, "HEAD")
    usual = ab_base.prepare_base(repo, "HEAD", commit_id)
    monkeypatch.setenv(variable, "-O0")
    slow = ab_base.prepare_base(repo, "HEAD", commit_id)
    assert not usual.cached and not slow.cached and slow.source != usual.source
    assert ab_base.prepare_base(repo, "HEAD", commit_id).cached
    monkeypatch.delenv(variable)
    assert ab_base.prepare_base(repo, "HEAD", commit_id).source == usual.source
