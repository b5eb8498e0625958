"""Result files: one versioned JSON per scenario run, plus its renderings (Markdown).

`load_result` reads any supported format (older ones through the migration
chain in `harness.core.model`) and refuses other files with a one-line message.
`write_result` writes NAME.json, NAME.md and NAME.html; all are rendered
first and then replaced together (`write_together`), so neither a rendering
bug nor a failed write leaves a lone or mismatched file.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.core.atomic import dumps_strict, write_together
from harness.core.errors import HarnessError, ResultFormatError
from harness.core.model import Result
from harness.core.safe_read import bounded_int, read_regular_file
from harness.metrics.registry import record_types
from harness.report import html, markdown
from harness.report.sections import result_report

__all__ = ["load_result", "result_from_json", "result_paths", "write_result"]


#: the largest result file read (the biggest committed one is under 100 KB)
MAX_RESULT_BYTES = 256 << 20


def load_result(path: str | Path) -> Result:
    path = Path(path)
    raw = read_regular_file(path, MAX_RESULT_BYTES, "result file", error=ResultFormatError)
    try:
        document = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant,
                              parse_int=bounded_int)
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise ResultFormatError(f"{path}: not a JSON result file ({exc})") from None
    except RecursionError:
        raise ResultFormatError(f"{path}: not a result file (arrays or objects nested too "
                                "deeply to read)") from None
    return result_from_json(document, str(path))


def result_from_json(document: object, source: str = "result") -> Result:
    """A result document read into the typed model, each figure as its metric's record."""
    try:
        return Result.from_json(document, source, record_types=record_types())
    except RecursionError:
        raise ResultFormatError(f"{source}: not a result file (values nested too deeply "
                                "to read)") from None


def _refuse_constant(name: str) -> float:
    # NaN and Infinity are not JSON; a figure holding one cannot be compared or shown.
    raise ValueError(f"{name} is not a JSON number")


def result_paths(name: str, out_dir: Path) -> dict[str, Path]:
    """Where a result called `name` is written, by rendering."""
    return {kind: out_dir / f"{name}.{kind}" for kind in ("json", "md", "html")}


def write_result(result: Result, out_dir: Path) -> dict[str, Path]:
    """Write every rendering of `result` into out_dir, each atomically; return the paths."""
    paths = result_paths(result.name, out_dir)
    report = result_report(result)
    document = dumps_strict(result.to_json(), f"result {result.name!r}")
    if len(document.encode()) > MAX_RESULT_BYTES:
        # show and compare refuse a file this large: writing it would lose the result anyway.
        raise HarnessError(f"result {result.name!r} is {len(document.encode()) / 2**20:,.0f} "
                           f"MiB, more than show and compare read "
                           f"({MAX_RESULT_BYTES / 2**20:,.0f} MiB); expected fewer sweep "
                           "points, operations or fleets")
    contents = {
        "json": document,
        "md": markdown.report(report),
        "html": html.report(report),
    }
    write_together({path: contents[kind] for kind, path in paths.items()})
    return paths


def split_point(spec: str | Path) -> tuple[Path, str | None]:
    """A compared result named `PATH` or `PATH#LABEL` (one sweep point of it, such as
    `results/tutorial.json#k=16`): the path, and the label or None. A path that exists as
    written is a path, even with a '#' in its name."""
    path = Path(spec)
    text = str(spec)
    if path.exists() or "#" not in text:
        return path, None
    file, _, label = text.rpartition("#")
    return Path(file), label


def only_point(result: Result, label: str, source: str) -> Result:
    """`result` with only its run at sweep point `label`; refused in one line if none is."""
    runs = [run for run in result.runs if run.label == label]
    if not runs:
        labels = ", ".join(run.label for run in result.runs)
        raise ResultFormatError(f"{source}: no sweep point {label!r} in this result "
                                f"(expected one of: {labels})")
    return dataclasses.replace(result, runs=runs)
