"""Write files so that a reader (or a killed run) never sees half of one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes, e.g. a PNG) to a temporary file beside `path`, flush it, rename it.

    rename within one directory is atomic on POSIX: `path` holds either its old
    content or all of the new one, whatever interrupts the run.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        data = text.encode() if isinstance(text, str) else text
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_together(files: Mapping[Path, str | bytes]) -> None:
    """Write several files so that they are replaced together or not at all.

    Every file is first written in full to a temporary file beside its
    target; only when all are written are they renamed into place, so a
    failure while writing (a full disk, a target that is a directory) leaves
    every target as it was and no temporary file behind.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, content in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            staged.append((tmp, path))
            data = content.encode() if isinstance(content, str) else content
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if path.is_dir():
                raise IsADirectoryError(f"{path} is a directory")
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
