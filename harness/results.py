"""Result files: one versioned JSON per scenario run, plus its renderings (Markdown).

`load_result` reads any supported format (older ones through the migration
chain in `harness.model`) and refuses other files with a one-line message.
`write_result` writes NAME.json, NAME.md and NAME.html; all are rendered
first and then replaced together (`write_together`), so neither a rendering
bug nor a failed write leaves a lone or mismatched file.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.atomic import write_together
from harness.errors import ResultFormatError
from harness.model import FORMAT_NAME, FORMAT_VERSION, Result

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "load_result", "result_paths", "write_result"]


def load_result(path: str | Path) -> Result:
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultFormatError(f"{path}: cannot read result file ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultFormatError(f"{path}: not a JSON result file ({exc})") from None
    return Result.from_json(document, str(path))


def result_paths(name: str, out_dir: Path) -> dict[str, Path]:
    """Where a result called `name` is written, by rendering."""
    return {kind: out_dir / f"{name}.{kind}" for kind in ("json", "md", "html")}


def write_result(result: Result, out_dir: Path) -> dict[str, Path]:
    """Write every rendering of `result` into out_dir, each atomically; return the paths."""
    from harness import html, markdown
    from harness.report import result_report

    paths = result_paths(result.name, out_dir)
    report = result_report(result)
    contents = {
        "json": json.dumps(result.to_json(), indent=1, allow_nan=False) + "\n",
        "md": markdown.report(report),
        "html": html.report(report),
    }
    write_together({path: contents[kind] for kind, path in paths.items()})
    return paths
