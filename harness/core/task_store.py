"""Finished tasks kept on disk, so that an interrupted run resumes computing only what is
missing: one JSON file per task, keyed by the scenario's hash, the task's inputs and the C
build (`c_build_id`), each written atomically (`write_atomically`: a file is whole or
absent). A file that does not parse is ignored and computed again; nothing is mixed, since
a key names every input."""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import platformdirs

from harness.core.atomic import write_atomically


@cache
def c_build_id() -> str:
    """The C core as built: a hash of the compiled extension modules' bytes."""
    compiled = Path(__file__).parent / "native" / "compiled"
    digest = hashlib.sha256()
    for path in sorted(compiled.glob("*.so")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def default_task_dir() -> Path:
    """$RING_HARNESS_TASKS, else the user cache folder's `ring-harness/tasks`
    (platformdirs)."""
    given = os.environ.get("RING_HARNESS_TASKS")
    if given:
        return Path(given)
    return platformdirs.user_cache_path("ring-harness", appauthor=False) / "tasks"


class TaskStore:
    """Answers of finished tasks of one scenario, under `root/SCENARIO_HASH/`."""

    def __init__(self, root: Path, scenario_sha256: str) -> None:
        self.folder = root / scenario_sha256[:16]

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> Any | None:
        try:
            return json.loads(self._path(key).read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, answer: Any) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomically(self._path(key), json.dumps(answer, sort_keys=True))
