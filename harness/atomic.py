"""Write files so that a reader (or a killed run) never sees half of one."""

from __future__ import annotations

import os
import tempfile
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
