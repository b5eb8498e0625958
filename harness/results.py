"""Result documents: one versioned JSON per scenario run, plus its Markdown rendering.

A result carries `format` and `format_version`. `load_result` refuses files
of another format, or of a version this harness cannot read, with a message
that says what to do (re-run the scenario with this version).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.atomic import write_atomically
from harness.errors import ResultFormatError

FORMAT_NAME = "ring-harness-result"
FORMAT_VERSION = 1


def load_result(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultFormatError(f"{path}: cannot read result file ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise ResultFormatError(f"{path}: not a JSON result file ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ResultFormatError(f"{path}: not a ring-harness result (no format {FORMAT_NAME!r})")
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        raise ResultFormatError(
            f"{path}: result format version {version!r}, but this harness reads version "
            f"{FORMAT_VERSION}; re-run its scenario ({document.get('scenario_file')}) with "
            f"`python -m harness run` to upgrade it"
        )
    return document


def write_result(document: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write NAME.json and NAME.md into out_dir, each atomically; return both paths."""
    from harness.report import render_result

    name = document["scenario"]["name"]
    json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    markdown = render_result(document)  # render first: a rendering bug must not leave a lone JSON
    write_atomically(json_path, json.dumps(document, indent=1) + "\n")
    write_atomically(md_path, markdown)
    return json_path, md_path
