"""Third-party registration: a package's entry points add layouts, algorithms and metrics
everywhere.

The demo plugin (tests/plugin_demo/ring_harness_demo.py) is installed the way
pip installs a package: its module on the path and a `.dist-info` folder
whose `entry_points.txt` names the groups `ring_harness.layouts`,
`ring_harness.algorithms` and `ring_harness.metrics`. A fresh interpreter then finds it through
importlib.metadata, as it would find any installed plugin.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.recipes.algorithms import BUILT_IN
from tests.paths import PLUGIN_DEMO

PLUGIN = PLUGIN_DEMO / "ring_harness_demo.py"


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    """A folder holding the installed plugin: its module and its distribution metadata."""
    folder = tmp_path / "site"
    dist = folder / "ring_harness_demo-0.1.dist-info"
    dist.mkdir(parents=True)
    shutil.copy(PLUGIN, folder / PLUGIN.name)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ring-harness-demo\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[ring_harness.layouts]\ndemo-bisect = ring_harness_demo:DemoBisectLayout\n\n"
        "[ring_harness.algorithms]\ndemo-modulo = ring_harness_demo:DemoModuloAlgorithm\n\n"
        "[ring_harness.metrics]\ndemo-top-share = ring_harness_demo:DemoTopShareMetric\n")
    return folder


def _python(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, check=False)


def test_plugin_layout_is_measured_and_checked_like_ours(site: Path, tmp_path: Path) -> None:
    """The plugin's layout appears in the run's tables and passes the same parity check."""
    scenario = tmp_path / "plugin.toml"
    scenario.write_text('name = "plugin"\n[servers]\ncount = 5\n[generator]\n'
                        'points_per_weight = 20\n[keys]\ncount = 2000\n'
                        '[measure]\nlayouts = ["numpy-packed", "demo-bisect"]\n'
                        'metrics = ["balance", "throughput"]\nrepeats = 1\nscalar_keys = 100\n')
    done = _python(site, "-m", "harness", "run", str(scenario), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "plugin.json").read_text())
    (run,) = result["runs"]
    assert run["parity"]["forms"] == ["numpy-packed", "demo-bisect"]
    assert [s["name"] for s in run["subjects"]] == ["numpy-packed", "demo-bisect"]
    assert "demo-bisect" in (tmp_path / "out" / "plugin.md").read_text()


def test_plugin_algorithm_is_registered(site: Path) -> None:
    """The plugin's algorithm is in ALGORITHMS and routes through the common contract."""
    done = _python(site, "-c", (
        "from harness.recipes.algorithms import ALGORITHMS\n"
        "from harness.recipes.constructions.generator import Server\n"
        "a = ALGORITHMS['demo-modulo'].build([Server('x'), Server('y'), Server('z')])\n"
        "print(list(ALGORITHMS), a.route([b'k1', b'k2']).tolist())"))
    assert done.returncode == 0, done.stderr
    # The built-in algorithms in registry order, then the plugin's.
    assert done.stdout.startswith(str([cls.name for cls in BUILT_IN] + ["demo-modulo"]))


def test_a_plugin_cannot_take_a_registered_name(site: Path) -> None:
    """A plugin registering an existing name stops the harness with a message naming it."""
    entry_points = site / "ring_harness_demo-0.1.dist-info" / "entry_points.txt"
    entry_points.write_text("[ring_harness.layouts]\n"
                            "numpy-packed = ring_harness_demo:DemoBisectLayout\n")
    (site / "ring_harness_demo.py").write_text(
        PLUGIN.read_text().replace('name = "demo-bisect"', 'name = "numpy-packed"'))
    done = _python(site, "-c", "from harness.recipes.layouts import LAYOUTS; print(list(LAYOUTS))")
    assert done.returncode != 0
    assert "registers 'numpy-packed', a name already taken" in done.stderr


def test_plugin_algorithm_runs_in_a_scenario(site: Path, tmp_path: Path) -> None:
    """`[algorithm] name = "demo-modulo"`: measured like ours, parity checked, in the tables."""
    scenario = tmp_path / "modulo.toml"
    scenario.write_text('name = "modulo"\n[algorithm]\nname = "demo-modulo"\n'
                        '[servers]\ncount = 4\n[keys]\ncount = 3000\n'
                        '[measure]\nrepeats = 1\nscalar_keys = 100\n'
                        '[[operations]]\nkind = "add"\nserver = "new"\n')
    done = _python(site, "-m", "harness", "run", str(scenario), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out" / "modulo.json").read_text())
    (run,) = result["runs"]
    assert run["algorithm"] == "demo-modulo" and run["label"] == "mod N"
    (subject,) = run["subjects"]
    assert subject["name"] == "demo-modulo" and subject["kind"] == "algorithm"
    assert set(subject["figures"]) == {"memory", "throughput"}
    (move,) = run["figures"]["movement"]
    assert move["ring_moved"] == move["mod_n_moved"]  # it is hash mod N
    assert "## Lookup time (mod N" in (tmp_path / "out" / "modulo.md").read_text()


def test_plugin_table_metric_is_parsed_checked_measured_and_rendered(site: Path,
                                                                    tmp_path: Path) -> None:
    """A table metric is one class and one entry-point line: its table turns it on, its own
    rule refuses a table that does not fit the scenario (exit 2, one line, nothing
    written), and it is measured, stored, read back and rendered."""
    scenario = tmp_path / "top.toml"
    out = tmp_path / "out"
    body = ('name = "top"\n[servers]\ncount = 5\n[generator]\npoints_per_weight = 20\n'
            '[keys]\ncount = 2000\n[measure]\nmetrics = ["balance"]\n')
    scenario.write_text(body + "[demo_top_share]\ntop = 9\n")
    refused = _python(site, "-m", "harness", "run", str(scenario), "--out", str(out))
    assert (refused.returncode, refused.stderr.strip().splitlines()) == (
        2, [f"error: {scenario}: demo_top_share.top must be at most the servers on the ring "
            "(5) (got 9)"])
    assert not out.exists()
    scenario.write_text(body + "[demo_top_share]\ntop = 2\n")
    done = _python(site, "-m", "harness", "run", str(scenario), "--out", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "top.json").read_text())
    (run,) = result["runs"]
    figure = run["figures"]["demo_top_share"]
    # The two most loaded of five servers own at least two fifths of the keys.
    assert figure["top"] == 2 and 0.4 <= figure["share"] < 1
    assert result["scenario"]["demo_top_share"] == {"top": 2}
    assert "## Most loaded servers" in (out / "top.md").read_text()
    shown = _python(site, "-m", "harness", "show", str(out / "top.json"))
    assert shown.returncode == 0, shown.stderr
    assert f"{100 * figure['share']:.2f}%" in shown.stdout


def test_a_plugin_metric_lacking_a_member_is_one_line(site: Path, tmp_path: Path) -> None:
    """A metric class that does not subclass MetricBase lacks the protocol's defaults: the
    command that loads the metrics stops with one line naming the plugin and the member."""
    (site / "ring_harness_bare.py").write_text("class Bare:\n    name = 'bare'\n")
    (site / "ring_harness_demo-0.1.dist-info" / "entry_points.txt").write_text(
        "[ring_harness.metrics]\nbare = ring_harness_bare:Bare\n")
    scenario = tmp_path / "bare.toml"
    scenario.write_text("[servers]\ncount = 2\n")
    done = _python(site, "-m", "harness", "run", str(scenario), "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stderr.strip().splitlines()) == (1, [
        "failed: plugin 'ring_harness_bare:Bare' (ring_harness.metrics) lacks `table`, which "
        "the Metric (harness/metrics/base.py) protocol declares (its default comes with "
        "subclassing harness.metrics.base.MetricBase)"])


BROKEN = '''
import os
import sys

from ring_harness_demo import DemoBisectLayout, DemoModuloAlgorithm

FAIL = os.environ.get("BROKEN_AT", "")


class BrokenLayout(DemoBisectLayout):
    name = "broken-bisect"

    def lookup_many(self, key_hashes):
        if FAIL == "exit":
            sys.exit(3)
        raise RuntimeError("boom in lookup_many")


class BrokenAlgorithm(DemoModuloAlgorithm):
    name = "broken-modulo"

    @classmethod
    def parse_params(cls, fields):
        if FAIL == "parse_params":
            raise ValueError("boom in parse_params")
        return super().parse_params(fields)

    @classmethod
    def check_servers(cls, servers, params):
        if FAIL == "check_servers":
            raise KeyError("boom in check_servers")
        return super().check_servers(servers, params)
'''


@pytest.mark.parametrize(("fail", "table", "code", "line"), [
    ("parse_params", '[algorithm]\nname = "broken-modulo"\n', 2,
     "error: plugin ring_harness_broken:BrokenAlgorithm (ring_harness.algorithms): "
     "parse_params raised ValueError: boom in parse_params"),
    ("check_servers", '[algorithm]\nname = "broken-modulo"\n', 2,
     "error: plugin ring_harness_broken:BrokenAlgorithm (ring_harness.algorithms): "
     "check_servers raised KeyError: 'boom in check_servers'"),
    ("lookup_many", '[measure]\nlayouts = ["broken-bisect"]\nmetrics = ["balance"]\n', 1,
     "failed: plugin ring_harness_broken:BrokenLayout (ring_harness.layouts): "
     "lookup_many raised RuntimeError: boom in lookup_many"),
    ("exit", '[measure]\nlayouts = ["broken-bisect"]\nmetrics = ["balance"]\n', 1,
     "failed: plugin ring_harness_broken:BrokenLayout (ring_harness.layouts): "
     "lookup_many exited with status 3"),
])
def test_a_failing_plugin_is_one_line_naming_it(site: Path, tmp_path: Path, fail: str,
                                                table: str, code: int, line: str) -> None:
    """A plugin's exception (or sys.exit) in validation is exit 2, in the run exit 1: one
    line naming the plugin, its function and the error; no traceback, nothing written."""
    (site / "ring_harness_broken.py").write_text(BROKEN)
    (site / "ring_harness_demo-0.1.dist-info" / "entry_points.txt").write_text(
        "[ring_harness.layouts]\nbroken-bisect = ring_harness_broken:BrokenLayout\n\n"
        "[ring_harness.algorithms]\nbroken-modulo = ring_harness_broken:BrokenAlgorithm\n")
    scenario = tmp_path / "broken.toml"
    scenario.write_text(f"[servers]\ncount = 4\n[keys]\ncount = 300\n{table}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path]),
           "BROKEN_AT": fail}
    done = subprocess.run([sys.executable, "-m", "harness", "run", str(scenario), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          check=False)
    assert (done.returncode, done.stderr.strip().splitlines()) == (code, [line])
    assert not (tmp_path / "out").exists()
