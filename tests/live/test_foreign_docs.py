"""The two minimal adapters of docs/guide/foreign-peers.md work as printed: the C library
compiles against the shipped header and the Python program speaks the protocol; a run
measures both beside our ring and reports their agreement (hash mod N: about 1/N)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.native.foreign import HEADER
from tests.paths import ROOT
from tests.toolchains import require_program

PAGE = ROOT / "docs" / "guide" / "foreign-peers.md"


def examples() -> dict[str, str]:
    """The code blocks the page marks `<!-- example: NAME -->`, by name."""
    found = re.findall(r"<!-- example: (\S+) -->\n```\w+\n(.*?)```", PAGE.read_text(), re.S)
    return dict(found)


def test_page_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both printed adapters build, load or start, and route every key of a run."""
    cc = require_program("cc")
    code = examples()
    assert set(code) == {"mod_n.c", "mod_n.py"}
    (tmp_path / "mod_n.c").write_text(code["mod_n.c"])
    (tmp_path / "mod_n.py").write_text(code["mod_n.py"])
    library = tmp_path / "libmod_n.so"
    subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    "-I", str(HEADER.parent), str(tmp_path / "mod_n.c"), "-o", str(library)],
                   check=True)
    scenario = tmp_path / "mod.toml"
    scenario.write_text(
        'name = "mod"\n[servers]\ncount = 8\n[keys]\ncount = 4000\n[measure]\n'
        'layouts = ["cffi-packed"]\nmetrics = ["balance"]\nrepeats = 1\n'
        f'peers = [{{ library = "{library}", name = "mod-c" }}, '
        f'{{ command = ["{sys.executable}", "{tmp_path / "mod_n.py"}"], name = "mod-py" }}]\n')
    assert main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 0, \
        capsys.readouterr().err
    result = json.loads((tmp_path / "out" / "mod.json").read_text())
    subjects = {s["name"]: s for s in result["runs"][0]["subjects"]}
    for name in ("mod-c", "mod-py"):
        assert 0.05 < subjects[name]["agreement"] < 0.25  # 1/8 by chance
    foreign = [s for s in subjects.values() if "foreign" in s["figures"]]
    assert sorted(s["figures"]["foreign"]["door"] for s in foreign) == ["command", "library"]
