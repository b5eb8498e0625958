"""Check every output of a run before any work starts, so a run never ends in a traceback
(or a lost result) because of where it was told to write.

Refused, each with one line naming the output:
- two outputs that are one file (two scenarios with the same `name`): the second
  would silently replace the first;
- an output that is also an input (`compare A B --out A.json`);
- an output that exists and is not a regular file (a directory, /dev/null: the rename
  that writes it would replace the device node), or whose directory is a regular file
  or not writable;
- an output under /proc or /sys, kernel pseudo-file systems that take writes as commands;
- a file name or path longer than the file system allows;
- a symlink to nothing on the way (the directory could not be made after the run).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.core.errors import OutputError
from harness.core.safe_read import describe_file_type

#: kernel pseudo-file systems: a file there is an interface, not storage
PSEUDO_FILE_SYSTEMS = (Path("/proc"), Path("/sys"))


def _identity(path: Path) -> tuple[object, ...]:
    """What makes two paths one file: the device and inode of an existing file (hard
    links, symlinks), else the absolute path with symlinked directories resolved."""
    try:
        status = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", status.st_dev, status.st_ino)


def _existing_ancestor(path: Path) -> Path:
    """`path` itself or its nearest ancestor that exists (symlinks resolved)."""
    current = Path(os.path.realpath(path))
    while not os.path.lexists(current):
        current = current.parent
    return current


def _dangling_link(output: Path) -> Path | None:
    """The output itself or a directory on its way that is a symlink to nothing: writing
    there would fail only after the whole run (mkdir cannot create a link's target)."""
    for path in (output, *output.parents):
        if os.path.islink(path) and not os.path.exists(path):
            return path
    return None


def _check_place(output: Path, error: Callable[[str], Exception]) -> None:
    dangling = _dangling_link(output)
    if dangling is not None:
        raise error(f"{output}: {dangling} is a symlink to {os.readlink(dangling)}, which does "
                    "not exist; expected a directory, or a link to one")
    resolved = Path(os.path.realpath(output))
    for pseudo in PSEUDO_FILE_SYSTEMS:
        if resolved.is_relative_to(pseudo):
            raise error(
                f"{output}: output under {pseudo}, a kernel pseudo-file system; "
                "expected a directory on disk"
            )
    place = _existing_ancestor(resolved.parent)
    if not os.path.isdir(place):
        raise error(f"{output}: output directory {place} is not a directory (got a file)")
    name_max = os.pathconf(place, "PC_NAME_MAX")
    for part in resolved.relative_to(place).parts:
        length = len(os.fsencode(part))
        if length > name_max:
            raise error(
                f"{output}: file name of {length} bytes, expected at most {name_max} "
                f"on this file system ({part[:40]}...)"
            )
    path_max = os.pathconf(place, "PC_PATH_MAX")
    if len(os.fsencode(str(resolved))) >= path_max:
        raise error(f"{output}: path longer than this file system allows ({path_max} bytes)")
    try:
        mode = os.stat(resolved).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # The rename that writes an output would replace the device node itself.
        raise error(f"{output}: output is {describe_file_type(mode)}, expected a regular file")
    if not os.access(place, os.W_OK | os.X_OK):
        raise error(f"{output}: output directory {place} is not writable")


def beside(output: Path, suffix: str) -> Path:
    """`output` with `suffix` (an output's companion file, e.g. its .html page), or
    OutputError if `output` names no file ('', '.', '/', 'dir/..')."""
    if output.name in ("", ".."):
        raise OutputError(f"{output}: output names a folder, expected a file name")
    return output.with_suffix(suffix)


def check_outputs(
    outputs: Sequence[Path],
    inputs: Sequence[Path],
    error: Callable[[str], Exception] = OutputError,
) -> None:
    """Raise `error` (one line naming the output) if any output overlaps another or an
    input, or cannot be written where it is meant to go. Writes nothing."""
    inputs_by_identity = {_identity(Path(path)): Path(path) for path in inputs}
    outputs_by_identity: dict[tuple[object, ...], Path] = {}
    for output in map(Path, outputs):
        identity = _identity(output)
        if identity in inputs_by_identity:
            raise error(
                f"{output}: output is also an input ({inputs_by_identity[identity]}); "
                "expected another file name"
            )
        if identity in outputs_by_identity:
            raise error(
                f"{output}: written twice in one run (also as {outputs_by_identity[identity]}); "
                "expected a distinct name for each result"
            )
        outputs_by_identity[identity] = output
        _check_place(output, error)


class Outcome:
    """What a command has written so far and what it is working on, so that a message on
    Ctrl-C or SIGTERM says truthfully what is on disk."""

    def __init__(self) -> None:
        self.written: list[Path] = []
        self.working_on: str | None = None

    def start(self, what: str) -> None:
        self.working_on = what

    def wrote(self, paths: Sequence[Path]) -> None:
        self.written.extend(paths)
        self.working_on = None

    def stopped(self, how: str) -> str:
        """One line: how the command stopped, what it left unwritten and what it wrote."""
        parts = [how]
        if self.working_on is not None:
            parts.append(f"no result file was written for {self.working_on}")
        if self.written:
            parts.append(f"{len(self.written)} file(s) were written before that, complete: "
                         + ", ".join(map(str, self.written)))
        elif self.working_on is None:
            parts.append("no file was written")
        return "; ".join(parts)
