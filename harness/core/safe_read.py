"""Read an input file only if it is a regular file of bounded size, without ever blocking.

`open(path).read()` waits forever on a FIFO with no writer and reads `/dev/zero`
until memory runs out. Here the file is opened with O_NONBLOCK (opening a FIFO
then returns at once), its type is checked on the open descriptor (so a rename
between check and read cannot swap it), and at most `limit_bytes + 1` bytes are
read, which tells a file that grew past the limit from one that fits.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from harness.core.errors import ScenarioError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_file_type(mode: int) -> str:
    """'a FIFO', 'a directory', ... for an st_mode that is not a regular file's."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def read_regular_file(
    path: Path | str,
    limit_bytes: int,
    what: str,
    error: Callable[[str], Exception] = ScenarioError,
) -> bytes:
    """The bytes of `path`, or `error` with one line naming the file if it is not a regular
    file (FIFO, device, directory, socket), cannot be opened, or holds more than
    `limit_bytes`. `what` names the input in the message ("scenario file")."""
    expected = f"{what} must be a regular file of at most {limit_bytes} bytes"
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise error(f"{path}: cannot open the {what} ({exc.strerror})") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise error(f"{path}: {expected} (got {describe_file_type(status.st_mode)})")
        if status.st_size > limit_bytes:
            raise error(f"{path}: {expected} (got {status.st_size} bytes)")
        chunks: list[bytes] = []
        remaining = limit_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit_bytes:
        raise error(f"{path}: {expected} (got more than {limit_bytes} bytes)")
    return data


#: the longest integer literal read from JSON: 64 bits hold at most 20 decimal digits
MAX_INTEGER_DIGITS = 20


def bounded_int(text: str) -> int:
    """An integer literal of JSON, refused (ValueError) beyond 64 bits: every count and size
    we read fits, and a larger one would overflow when it meets a float."""
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits, beyond 64 bits")
    return int(text)
