"""Atomic writes: an interrupted write leaves the old file whole and no temporary file."""

from pathlib import Path

import pytest

from harness.atomic import write_atomically


def test_write_replaces_content(tmp_path: Path) -> None:
    """A completed write replaces the file's content and leaves only that file."""
    target = tmp_path / "r.json"
    write_atomically(target, "old")
    write_atomically(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_interrupted_write_keeps_old_content(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C in the middle of a write leaves the previous content and no stray file."""
    target = tmp_path / "r.json"
    write_atomically(target, "old")

    def interrupt(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("harness.atomic.os.fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, "new content that must not appear")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_write_atomically_writes_bytes_unchanged(tmp_path: Path) -> None:
    """Bytes (a PNG) are written as given, not encoded as text."""
    data = b"\x89PNG\r\n\x1a\n\x00\xff"
    write_atomically(tmp_path / "p.png", data)
    assert (tmp_path / "p.png").read_bytes() == data
