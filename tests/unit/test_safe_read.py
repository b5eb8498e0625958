"""Reading inputs: only regular files of bounded size, and never a hang or an unbounded read."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from harness.core.errors import ResultFormatError, ScenarioError
from harness.core.safe_read import read_regular_file


def test_reads_a_regular_file(tmp_path: Path) -> None:
    """A file within the limit comes back byte for byte, at the limit too."""
    path = tmp_path / "s.toml"
    path.write_bytes(b"x" * 10)
    assert read_regular_file(path, 10, "scenario file") == b"x" * 10


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO with no writer is refused at once (a plain open would wait forever)."""
    fifo = tmp_path / "scenario.toml"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_regular_file(fifo, 1000, "scenario file")
        except ScenarioError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive(), "read_regular_file blocked on a FIFO"
    assert str(outcome[0]) == (
        f"{fifo}: scenario file must be a regular file of at most 1000 bytes (got a FIFO)"
    )


def test_dev_zero_is_refused() -> None:
    """/dev/zero (endless) is refused as a character device, not read until memory runs out."""
    with pytest.raises(ScenarioError, match=r"^/dev/zero: .* \(got a character device\)$"):
        read_regular_file("/dev/zero", 1000, "scenario file")


def test_directory_is_refused(tmp_path: Path) -> None:
    """A directory gets one line naming it."""
    with pytest.raises(ScenarioError, match=r"\(got a directory\)$"):
        read_regular_file(tmp_path, 1000, "scenario file")


def test_socket_is_refused(tmp_path: Path) -> None:
    """A Unix socket is not a file to read (and cannot even be opened)."""
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(ScenarioError, match=str(path)):
            read_regular_file(path, 1000, "scenario file")


def test_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    """One byte over the limit is refused, naming the limit and the size."""
    path = tmp_path / "big.toml"
    path.write_bytes(b"x" * 11)
    with pytest.raises(ScenarioError, match=r"at most 10 bytes \(got 11 bytes\)$"):
        read_regular_file(path, 10, "scenario file")


def test_file_growing_past_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that fstat calls small but that holds more (it grew, or /proc-like files
    report 0) is still read only to limit + 1 bytes and refused."""
    path = tmp_path / "growing.toml"
    path.write_bytes(b"x" * 100)
    real_fstat = os.fstat

    class Small:
        def __init__(self, status: os.stat_result) -> None:
            self.st_mode, self.st_size = status.st_mode, 0

    monkeypatch.setattr(os, "fstat", lambda fd: Small(real_fstat(fd)))
    with pytest.raises(ScenarioError, match=r"\(got more than 10 bytes\)$"):
        read_regular_file(path, 10, "scenario file")


def test_missing_file_and_error_class(tmp_path: Path) -> None:
    """A missing file names the file and the reason, in the error class asked for."""
    with pytest.raises(ResultFormatError, match=r"nope\.json: cannot open the result file"):
        read_regular_file(tmp_path / "nope.json", 10, "result file", ResultFormatError)
