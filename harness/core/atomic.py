"""Write files so that a reader (or a killed run) never sees half of one.

- `write_atomically`: one file, through a temporary file beside it and a rename;
- `write_together`: several files (a result's JSON and Markdown) replaced
  together or not at all, and never interleaved with another process writing
  the same files (the directories are locked while they are replaced);
- `write_numbered`: a new file under the next free number (a run history's entry),
  never replacing one that another process numbered at the same time;
- `locked_directory`: hold a directory's lock while reading and rewriting what it
  holds (a history's index);
- `dumps_strict`: JSON text that refuses NaN and Infinity, which are not JSON.

A replaced file keeps its permission bits; a new one gets 0666 minus the
umask, like any file the user creates (mkstemp's 0600 would hide results
from the group that reads them).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import secrets
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from harness.core.errors import HarnessError

#: characters of the target's name kept in its temporary file's name: a name near the
#: file system's limit (255 bytes) must not make the temporary name too long
_TEMP_NAME_STEM = 64
_NEW_FILE_MODE = 0o666


class _Pending:
    """One target and the temporary file that holds its new content until the rename."""

    def __init__(self, target: Path, data: bytes) -> None:
        self.target = target
        self.temporary = _write_temporary(target, data)
        #: a hard link to the target's old content, made just before the rename
        self.backup: Path | None = None
        self.renamed = False

    def discard(self) -> None:
        for path in (self.temporary, self.backup):
            if path is not None:
                path.unlink(missing_ok=True)


def _beside(target: Path, suffix: str) -> Path:
    """A fresh hidden name in the target's directory."""
    return target.parent / f".{target.name[:_TEMP_NAME_STEM]}.{secrets.token_hex(4)}{suffix}"


def _open_exclusive(target: Path) -> tuple[int, Path]:
    """A new file beside the target, created with O_EXCL and mode 0666 (the kernel applies
    the umask; mkstemp would force 0600)."""
    while True:
        path = _beside(target, ".tmp")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            return os.open(path, flags, _NEW_FILE_MODE), path
        except FileExistsError:
            continue


def _write_temporary(target: Path, data: bytes) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = _open_exclusive(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            # The replaced file's permission bits, not the umask's, if it exists (not its
            # setuid, setgid or sticky bits: a result is never meant to carry those).
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(handle.fileno(), os.stat(target).st_mode & 0o777)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def _as_bytes(text: str | bytes) -> bytes:
    return text.encode() if isinstance(text, str) else text


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes, e.g. a PNG) to a temporary file beside `path`, flush it, rename it.

    rename within one directory is atomic on POSIX: `path` holds either its old
    content or all of the new one, whatever interrupts the run.
    """
    pending = _Pending(path, _as_bytes(text))
    try:
        os.replace(pending.temporary, path)
    except BaseException:
        pending.discard()
        raise


def write_numbered(directory: Path, name: Callable[[int], str], first: int,
                   text: str | bytes, siblings: Sequence[str] = ()) -> tuple[int, Path]:
    """Write `text` under the first name `name(n)`, n >= first, that no file holds yet, and
    return n and the path. The content is written whole beside it first and then
    hard-linked to the name, which fails if the name is taken: so two processes numbering
    entries in one directory at once each get their own number, neither replaces the
    other's file, and no reader sees a partial one. A number is also passed over while the
    name with any suffix of `siblings` exists as anything (a file, a FIFO, a symlink): the
    caller writes those beside it next, and must not replace what is there."""
    number = first
    temporary = _write_temporary(directory / name(number), _as_bytes(text))
    try:
        while True:
            target = directory / name(number)
            if any(os.path.lexists(target.with_suffix(suffix)) for suffix in siblings):
                number += 1
                continue
            try:
                os.link(temporary, target)
            except FileExistsError:
                number += 1
                continue
            return number, target
    finally:
        temporary.unlink(missing_ok=True)


def write_together(files: Mapping[Path, str | bytes]) -> None:
    """Replace every file of `files` or none of them.

    All contents go to temporary files first; only when every one is written are
    they renamed over their targets. If a rename fails (a target that is a
    directory), the targets already renamed get their old content back from hard
    links made just before. A kill between two renames (microseconds) can leave
    a new file beside an old one, never half a file.
    """
    targets = [Path(path) for path in files]
    if len({os.path.abspath(path) for path in targets}) != len(targets):
        raise HarnessError(f"write_together: a file is named twice in {targets}")
    pending: list[_Pending] = []
    with _locked_directories(targets):
        try:
            for path, text in files.items():
                pending.append(_Pending(Path(path), _as_bytes(text)))
            for item in pending:
                _keep_old_content(item)
            for item in pending:
                os.replace(item.temporary, item.target)
                item.renamed = True
        except BaseException:
            _roll_back(pending)
            raise
        finally:
            for item in pending:
                item.discard()


@contextlib.contextmanager
def _locked_directories(targets: list[Path]) -> Iterator[None]:
    """Hold an exclusive lock on every directory the targets are in, so that two processes
    writing the same set of files replace it one after the other, never interleaved (which
    would leave one's JSON beside the other's HTML). The lock is flock(2) on the directory
    itself: no lock file is left behind. Directories are locked in one order (sorted), so
    two writers cannot each hold one and wait for the other."""
    directories = sorted({os.path.realpath(path.parent) for path in targets})
    descriptors: list[int] = []
    try:
        for directory in directories:
            os.makedirs(directory, exist_ok=True)
            descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            descriptors.append(descriptor)
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        for descriptor in descriptors:
            os.close(descriptor)  # closing the last descriptor releases its lock


@contextlib.contextmanager
def locked_directory(directory: Path) -> Iterator[None]:
    """Hold the lock `write_together` takes on `directory` (write files in it meanwhile with
    `write_atomically` or `write_numbered`, which take no lock, not with `write_together`)."""
    with _locked_directories([directory / "entry"]):  # the lock is on its parent
        yield


def _keep_old_content(item: _Pending) -> None:
    """Keep the target's current content under a hidden name (a hard link, or a copy where
    the file system has none; a symlink is kept as a symlink), if it has any."""
    target = item.target
    if not (os.path.islink(target) or os.path.isfile(target)):
        return
    while True:
        backup = _beside(target, ".old")
        try:
            if os.path.islink(target):
                os.symlink(os.readlink(target), backup)
            else:
                try:
                    os.link(target, backup)
                except FileExistsError:
                    raise
                except OSError:
                    shutil.copy2(target, backup)
        except FileExistsError:
            continue
        item.backup = backup
        return


def _roll_back(pending: list[_Pending]) -> None:
    """Give every renamed target its old content back (or remove it if it is new). A
    restore that fails leaves the hidden copy of the old content in place, not deleted."""
    for item in pending:
        if not item.renamed:
            continue
        with contextlib.suppress(OSError):
            if item.backup is not None:
                os.replace(item.backup, item.target)
            else:
                item.target.unlink(missing_ok=True)
        item.backup = None


def _non_finite(value: object, where: str) -> Iterator[str]:
    """Paths (`a.b[2]`) of the NaN and infinite floats inside a JSON-like value."""
    if isinstance(value, float) and not math.isfinite(value):
        yield f"{where} = {value}"
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _non_finite(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _non_finite(item, f"{where}[{index}]")


def dumps_strict(
    document: object,
    what: str,
    *,
    indent: int | None = 1,
    error: Callable[[str], Exception] = HarnessError,
) -> str:
    """`document` as JSON text and a final newline; NaN or Infinity anywhere in it raises
    `error` with a message naming `what` and the field, instead of writing `NaN` (not JSON)."""
    try:
        return json.dumps(document, indent=indent, allow_nan=False) + "\n"
    except ValueError:
        fields = list(_non_finite(document, ""))
        if not fields:
            raise
        raise error(
            f"{what}: {fields[0]} cannot be written as JSON (a finite number was expected)"
        ) from None
