"""The gate's targets on the worked example (examples/gate-your-ring), measured by hand.

    .venv/bin/python benchmarks/gate_targets.py [--runs 10] [--out FILE.json]

Copies the example into a scratch folder, builds its C ring four ways (as it is, and with
each defect compiled in: RING_SLOWDOWN, RING_BLOAT, RING_ROUTE_CHANGE; see ring.c), and
runs `python -m harness gate` on each, `--runs` times:

- A/B mode (`--base-library` the plain build) for the unchanged build and every defect;
- baseline mode (`--baseline` a result of the plain build, written once) for the
  unchanged build, the bloat and the changed route;
- history mode (`--against-history`, a history holding one run of the plain build) for
  the unchanged build, the bloat and the changed route.

For each (mode, build) it prints how many runs exited 1 (caught), how many 0, any other
exit, the seconds of each run, and in A/B mode the minimum detectable effect each run's
report states. Nothing in the repository is written; timings come from this machine as
it is (shared, loaded), not from a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gate-your-ring"
DEFECTS = {"unchanged": [], "slowdown": ["-DRING_SLOWDOWN"], "bloat": ["-DRING_BLOAT"],
           "route": ["-DRING_ROUTE_CHANGE"]}
HARNESS = [sys.executable, "-m", "harness"]


def build(folder: Path, flags: list[str], into: Path) -> None:
    environment = {**os.environ, "RING_HARNESS": f"{sys.executable} -m harness"}
    subprocess.run(["./build.sh", *flags], cwd=folder, env=environment, check=True)
    shutil.copy(folder / "build" / "libring.so", into)


def gate(folder: Path, arguments: list[str]) -> dict[str, object]:
    report = folder / "report.json"
    started = time.monotonic()
    done = subprocess.run([*HARNESS, "gate", "scenario.toml", *arguments, "--json",
                           str(report)], cwd=folder, capture_output=True, text=True,
                          check=False)
    seconds = time.monotonic() - started
    detectable = None
    failed: list[str] = []
    if report.exists():
        document = json.loads(report.read_text())
        found = [f["detectable"] for f in document["figures"] if f["detectable"] is not None]
        detectable = max(found) if found else None
        failed = [f"{f['subject']} {f['figure']}" for f in document["figures"]
                  if f["verdict"] == "regression"]
        report.unlink()
    if done.returncode not in (0, 1):
        print(done.stderr[-2000:], file=sys.stderr)
    return {"exit": done.returncode, "seconds": round(seconds, 1), "detectable": detectable,
            "failed": failed}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--modes", default="ab,baseline,history")
    args = parser.parse_args()
    modes = args.modes.split(",")
    found: dict[str, list[dict[str, object]]] = {}
    with tempfile.TemporaryDirectory(prefix="gate-targets-") as scratch:
        folder = Path(scratch) / "example"
        shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("build"))
        builds = {name: Path(scratch) / f"{name}.so" for name in DEFECTS}
        for name, flags in DEFECTS.items():
            build(folder, flags, builds[name])
        library = folder / "build" / "libring.so"
        shutil.copy(builds["unchanged"], library)
        baseline = Path(scratch) / "baseline"
        history = Path(scratch) / "history"
        subprocess.run([*HARNESS, "run", "scenario.toml", "--out", str(baseline),
                        "--history", str(history)], cwd=folder, check=True,
                       capture_output=True)
        plan = [("ab", d, ["--base-library", str(builds["unchanged"])]) for d in DEFECTS]
        plan += [(mode, d, extra) for mode, extra in (
            ("baseline", ["--baseline", str(baseline / "gate-your-ring.json")]),
            ("history", ["--against-history", "--history", str(history)]))
            for d in ("unchanged", "bloat", "route")]
        for run in range(args.runs):
            for mode, defect, extra in plan:
                if mode not in modes:
                    continue
                shutil.copy(builds[defect], library)
                outcome = gate(folder, extra)
                found.setdefault(f"{mode} {defect}", []).append(outcome)
                print(f"run {run + 1} {mode} {defect}: {outcome}", flush=True)
    print()
    for key, outcomes in found.items():
        exits = [o["exit"] for o in outcomes]
        seconds = [float(str(o["seconds"])) for o in outcomes]
        detectable = [float(str(o["detectable"])) for o in outcomes
                      if o["detectable"] is not None]
        line = (f"{key}: exit 1 in {exits.count(1)}/{len(exits)}, exit 0 in "
                f"{exits.count(0)}/{len(exits)}; seconds median {statistics.median(seconds):.1f}"
                f" max {max(seconds):.1f}")
        if detectable:
            line += (f"; detectable median {statistics.median(detectable):.3f}x max "
                     f"{max(detectable):.3f}x")
        print(line)
    if args.out:
        args.out.write_text(json.dumps(found, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
