"""The committed baseline: one JSON file per plan, written only by the gate.

The file is named after its mode, which must be one of the suite's plans, so it
is always `<baseline dir>/<plan>.json` and never a path that leaves the
directory; it is replaced atomically. A baseline of another format version or
mode, or one that is not readable, is reported and replaced, never an error.
Whether its timings and figures can be compared with a run is decided by the
gate (decide.py: `comparable_figures`), from the environments of both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.apps.benchgate.results import (
    BenchRun,
    UnusableDataError,
    check_figures,
    check_mode,
    positive_times,
)
from harness.core.atomic import dumps_strict, write_atomically
from harness.core.safe_read import bounded_int, read_regular_file

#: bump when the file's structure or the meaning of its figures changes
BASELINE_FORMAT_VERSION = 1
#: a baseline of the full plan is about 100 KB
BASELINE_LIMIT_BYTES = 64 * 2**20


def check_directory(directory: Path) -> None:
    """`--baseline-dir` must be a directory, or a path that can become one (it is created
    when the baseline is written): its nearest existing ancestor must be a directory."""
    existing = directory
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UnusableDataError(
            f"--baseline-dir {directory}: expected a directory (got a file at {existing})"
        )


def baseline_path(directory: Path, mode: str) -> Path:
    """The baseline file of `mode` (one of the suite's plans) inside `directory`."""
    return directory / f"{check_mode(mode, 'baseline mode')}.json"


def write_baseline(path: Path, run: BenchRun) -> None:
    document = {
        "format_version": BASELINE_FORMAT_VERSION,
        "mode": run.mode,
        "environment": run.environment,
        # 6 significant digits: far below the noise, and keeps diffs of the file readable.
        "ratios": {key: [float(f"{r:.6g}") for r in rs] for key, rs in sorted(run.ratios.items())},
        "figures": dict(sorted(run.figures.items())),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, dumps_strict(document, f"baseline {path}", error=UnusableDataError))


def read_baseline(path: Path, mode: str) -> tuple[BenchRun | None, str]:
    """The baseline at `path` if it is one of `mode` in this format, else None and why not."""
    if not path.exists():
        return None, f"no baseline at {path}"
    try:
        document = json.loads(
            read_regular_file(path, BASELINE_LIMIT_BYTES, "baseline", UnusableDataError),
            parse_int=bounded_int,
        )
    except (UnusableDataError, ValueError, RecursionError) as exc:
        return None, f"{path} is not readable JSON ({str(exc)[:100]})"
    if not isinstance(document, dict):
        return None, f"{path}: expected a JSON object"
    version = document.get("format_version")
    if version != BASELINE_FORMAT_VERSION:
        return None, (f"{path}: format_version {version!r}, this gate reads "
                      f"{BASELINE_FORMAT_VERSION}")
    if document.get("mode") != mode:
        return None, f"{path}: recorded in mode {document.get('mode')!r}, not {mode!r}"
    environment = document.get("environment")
    ratios = document.get("ratios")
    try:
        if not isinstance(environment, dict) or not isinstance(ratios, dict):
            raise UnusableDataError("environment and ratios must be objects")
        baseline = BenchRun(
            mode=mode,
            environment={str(key): str(value) for key, value in environment.items()},
            ratios={key: positive_times(rs, f"ratios.{key}") for key, rs in ratios.items()},
            figures=check_figures(document.get("figures"), "figures"),
        )
    except UnusableDataError as exc:
        return None, f"{path}: malformed baseline ({exc})"
    return baseline, ""
