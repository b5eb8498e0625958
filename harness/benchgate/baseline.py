"""The committed baseline: one JSON file per plan, written only by the gate.

A baseline is usable only if its format version, plan and environment
(Python, machine, CPU) match the current run: ratios measured on another
CPU or interpreter say nothing about this one. An unusable or missing
baseline is reported and replaced, never an error.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.benchgate.results import BenchRun

#: bump when the file's structure or the meaning of its figures changes
FORMAT_VERSION = 1


def baseline_path(directory: Path, mode: str) -> Path:
    return directory / f"{mode}.json"


def write_baseline(path: Path, run: BenchRun) -> None:
    document = {
        "format_version": FORMAT_VERSION,
        "mode": run.mode,
        "environment": run.environment,
        # 6 significant digits: far below the noise, and keeps diffs of the file readable.
        "ratios": {key: [float(f"{r:.6g}") for r in rs] for key, rs in sorted(run.ratios.items())},
        "figures": dict(sorted(run.figures.items())),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + "\n")


def read_baseline(path: Path, current: BenchRun) -> tuple[BenchRun | None, str]:
    """The baseline at `path` if it can be compared with `current`, else None and why not."""
    if not path.exists():
        return None, f"no baseline at {path}"
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return None, f"{path} is not readable JSON ({exc})"
    if not isinstance(document, dict):
        return None, f"{path}: expected a JSON object"
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        return None, f"{path}: format_version {version!r}, this gate reads {FORMAT_VERSION}"
    if document.get("mode") != current.mode:
        return None, f"{path}: recorded in mode {document.get('mode')!r}, not {current.mode!r}"
    environment = document.get("environment")
    if environment != current.environment:
        return None, f"{path}: recorded on {environment}, this run is on {current.environment}"
    try:
        baseline = BenchRun(
            mode=current.mode,
            environment=environment,
            ratios={key: [float(r) for r in rs] for key, rs in document["ratios"].items()},
            figures=dict(document["figures"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return None, f"{path}: malformed baseline ({exc!r})"
    return baseline, ""
