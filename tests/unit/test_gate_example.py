"""The worked example of docs/guide/gate-your-ring.md, built and gated for real: the C ring
of examples/gate-your-ring compiled (cc is always there) as it is and with each defect
ring.c can compile in, and `ring-harness gate` run on each. A 1.25x slowdown is caught in
A/B mode, a 2x memory bloat and one changed route in A/B and baseline mode, and unchanged
code passes both. The scenario is the example's, cut to its C peer and the metrics these
checks need, so that a gate takes seconds (the A/B tests, four runs and two samplings
each, are marked slow: `pytest -m slow tests/unit/test_gate_example.py`). The targets
measured over ten runs of each are benchmarks/gate_targets.py's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.paths import ROOT

EXAMPLE = ROOT / "examples" / "gate-your-ring"
DEFECTS = {"plain": [], "slowdown": ["-DRING_SLOWDOWN"], "bloat": ["-DRING_BLOAT"],
           "route": ["-DRING_ROUTE_CHANGE"]}


def _toml(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, dict) else "{ " + ", ".join(
        f"{k} = {_toml(v)}" for k, v in value.items()) + " }"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example copied, its C ring built four ways (builds/NAME.so), and a scenario of
    its C peer alone with balance and memory."""
    folder = tmp_path_factory.mktemp("gate-example") / "example"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("build"))
    environment = {**os.environ, "RING_HARNESS": f"{sys.executable} -m harness"}
    (folder / "builds").mkdir()
    for name, flags in DEFECTS.items():
        subprocess.run(["./build.sh", *flags], cwd=folder, env=environment, check=True)
        shutil.copy(folder / "build" / "libring.so", folder / "builds" / f"{name}.so")
    scenario = tomllib.loads((folder / "scenario.toml").read_text())
    peer = scenario["measure"]["peers"][0]
    assert peer["name"] == "ring-c"
    lines = [f'name = "{scenario["name"]}"', "[servers]", "count = 50", "[generator]",
             *(f"{k} = {_toml(v)}" for k, v in scenario["generator"].items()),
             "[keys]", "count = 100_000", "[measure]", 'layouts = ["cffi-packed"]',
             'metrics = ["balance", "memory"]', f"peers = [{_toml(peer)}]", "[gate]",
             *(f"{k} = {v}" for k, v in scenario["gate"].items())]
    (folder / "small.toml").write_text("\n".join(lines) + "\n")
    return folder


def _use(example: Path, build: str) -> None:
    shutil.copy(example / "builds" / f"{build}.so", example / "build" / "libring.so")


def _gate(example: Path, argv: list[str], capsys: pytest.CaptureFixture[str],
          ) -> tuple[int, str, dict[str, Any]]:
    report = example / "report.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(example)
        code = main(["gate", "small.toml", *argv, "--json", str(report),
                     "--max-seconds", "10"])
    err = capsys.readouterr().err
    document: dict[str, Any] = json.loads(report.read_text()) if report.exists() else {}
    report.unlink(missing_ok=True)
    return code, err, document


def _failed(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f["subject"], f["figure"]) for f in document["figures"]
            if f["verdict"] == "regression"}


@pytest.mark.slow  # four runs of the scenario and two samplings: 30 s on a loaded machine
def test_ab_catches_a_slowdown_and_passes_unchanged_code(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--base-library", str(example / "builds" / "plain.so")]
    _use(example, "plain")
    code, err, document = _gate(example, base, capsys)
    assert (code, err) == (0, ""), err
    timing = next(f for f in document["figures"] if f["figure"] == "ns_per_key")
    assert timing["low"] <= 1.05 and timing["detectable"] is not None
    _use(example, "slowdown")
    code, err, document = _gate(example, base, capsys)
    assert code == 1 and _failed(document) == {("ring-c", "ns_per_key")}, err
    assert err.startswith("regression: ring-c ns_per_key 1.")


@pytest.mark.slow  # as above
def test_ab_catches_a_bloat_and_a_changed_route(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--base-library", str(example / "builds" / "plain.so")]
    _use(example, "bloat")
    code, _, document = _gate(example, base, capsys)
    assert code == 1
    assert {("k=100/ring-c", "structure_bytes"), ("k=100/ring-c", "bytes_per_entry")} <= \
        _failed(document)
    _use(example, "route")
    code, _, document = _gate(example, base, capsys)
    assert code == 1
    # the run stops at the key its claim of parity loses; the A/B comparison names the key
    assert {("changed run", "agreement"), ("ring-c", "routes_as_base")} <= _failed(document)
    routes = next(f for f in document["figures"] if f["figure"] == "routes_as_base")
    assert routes["new"] == pytest.approx(1 - 1 / 100_000)


def test_baseline_catches_a_bloat_and_a_changed_route_and_passes_unchanged_code(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _use(example, "plain")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(example)
        assert main(["run", "small.toml", "--no-history", "--out", "baseline"]) == 0
    capsys.readouterr()
    baseline = ["--baseline", str(example / "baseline" / "gate-your-ring.json")]
    code, err, document = _gate(example, baseline, capsys)
    assert (code, err) == (0, "") and document["verdict"] == "pass"
    _use(example, "bloat")
    code, err, document = _gate(example, baseline, capsys)
    assert code == 1 and ("k=100/ring-c", "structure_bytes") in _failed(document), err
    _use(example, "route")
    code, err, document = _gate(example, baseline, capsys)
    assert code == 1 and _failed(document) == {("run", "agreement")}
    assert document["timings"].startswith("not judged")
    assert "key-7" in err


def test_ab_work_past_the_time_budget_is_refused_before_it_starts(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both runs of the scenario and the sampling are priced (harness.apps.gate.ab's
    sampling_cost beside the runs' own cost) before any peer starts."""
    _use(example, "plain")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(example)
        code = main(["gate", "small.toml", "--base-library", "builds/plain.so",
                     "--max-minutes", "0.05"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "time budget of --max-minutes 0.05" in err


@pytest.mark.slow  # a base exported, built and run beside the change: 30 s or more
def test_base_rev_exports_builds_and_gates_a_revision(
        example: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--base-rev HEAD --build ./build.sh in a repository of the example: the committed
    ring is exported, built there, and its library taken from the export; a bloat in the
    work tree is caught."""
    repository = example.parent / "repository"
    shutil.copytree(example, repository, ignore=shutil.ignore_patterns("build", "builds"))
    (repository / ".gitignore").write_text("build/\n")
    git = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
    monkeypatch.setenv("RING_HARNESS", f"{sys.executable} -m harness")
    subprocess.run(["./build.sh", "-DRING_BLOAT"], cwd=repository, check=True)
    monkeypatch.chdir(repository)
    code = main(["gate", "small.toml", "--base-rev", "HEAD", "--build", "./build.sh",
                 "--max-seconds", "10"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    # twice the points' bytes; the rest of what the library allocates stays
    assert "regression: k=100/ring-c structure_bytes 1.7" in captured.err
    assert "against revision HEAD built by './build.sh'" in captured.out
