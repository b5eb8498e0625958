"""Atomic writes: an interrupted write leaves the old file whole and no temporary file."""

import json
import math
import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.atomic import dumps_strict, write_atomically, write_together
from harness.core.errors import HarnessError


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

    monkeypatch.setattr("harness.core.atomic.os.fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, "new content that must not appear")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_write_atomically_writes_bytes_unchanged(tmp_path: Path) -> None:
    """Bytes (a PNG) are written as given, not encoded as text."""
    data = b"\x89PNG\r\n\x1a\n\x00\xff"
    write_atomically(tmp_path / "p.png", data)
    assert (tmp_path / "p.png").read_bytes() == data


def test_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    """Overwriting a 0644 (or 0640) file leaves it 0644 (0640), not mkstemp's 0600."""
    target = tmp_path / "r.json"
    for mode in (0o644, 0o640):
        target.write_text("old")
        target.chmod(mode)
        write_atomically(target, "new")
        assert stat.S_IMODE(target.stat().st_mode) == mode


def test_new_file_gets_0666_minus_the_umask(tmp_path: Path) -> None:
    """A new file is created like any other: 0666 minus the umask (0644 under 022)."""
    old_umask = os.umask(0o022)
    try:
        write_atomically(tmp_path / "a.json", "x")
        write_together({tmp_path / "b.json": "x", tmp_path / "b.md": "y"})
    finally:
        os.umask(old_umask)
    for name in ("a.json", "b.json", "b.md"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644


def test_long_name_does_not_make_the_temporary_name_too_long(tmp_path: Path) -> None:
    """A 250-character name (under the 255-byte limit) is written; its temporary name
    is shortened, not the name plus a suffix."""
    target = tmp_path / ("n" * 245 + ".json")
    write_atomically(target, "x")
    assert target.read_text() == "x"


def test_write_together_replaces_all(tmp_path: Path) -> None:
    """Both files of a pair get their new content, and nothing else is left behind."""
    pair = {tmp_path / "r.json": "{}", tmp_path / "r.md": "# r"}
    write_together({path: "old" for path in pair})
    write_together(pair)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"r.json": "{}", "r.md": "# r"}


def test_write_together_changes_nothing_when_one_target_is_a_directory(tmp_path: Path) -> None:
    """NAME.md is a directory: NAME.json keeps its old content, no temporary file is left."""
    (tmp_path / "r.json").write_text("old result")
    (tmp_path / "r.md").mkdir()
    with pytest.raises(IsADirectoryError):
        write_together({tmp_path / "r.json": "new result", tmp_path / "r.md": "# new"})
    assert (tmp_path / "r.json").read_text() == "old result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.md"]


def test_write_together_removes_a_new_file_when_a_later_rename_fails(tmp_path: Path) -> None:
    """A target that did not exist before is removed again when the pair fails."""
    (tmp_path / "r.md").mkdir()
    with pytest.raises(IsADirectoryError):
        write_together({tmp_path / "r.json": "new", tmp_path / "r.md": "# new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md"]


def test_write_together_restores_a_symlink(tmp_path: Path) -> None:
    """A target that was a symlink is a symlink to the same place after a failed pair."""
    (tmp_path / "real.json").write_text("kept")
    (tmp_path / "r.json").symlink_to("real.json")
    (tmp_path / "r.md").mkdir()
    with pytest.raises(IsADirectoryError):
        write_together({tmp_path / "r.json": "new", tmp_path / "r.md": "# new"})
    assert os.readlink(tmp_path / "r.json") == "real.json"
    assert (tmp_path / "real.json").read_text() == "kept"


def test_write_together_interrupted_while_writing_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C while the second temporary file is written: both old files whole, no stray."""
    write_together({tmp_path / "r.json": "old json", tmp_path / "r.md": "old md"})
    calls = []

    def interrupt_second(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("harness.core.atomic.os.fsync", interrupt_second)
    with pytest.raises(KeyboardInterrupt):
        write_together({tmp_path / "r.json": "new json", tmp_path / "r.md": "new md"})
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {
        "r.json": "old json",
        "r.md": "old md",
    }


def test_write_together_refuses_one_file_named_twice(tmp_path: Path) -> None:
    """The same target twice (one spelled with ..) is refused before anything is written."""
    with pytest.raises(HarnessError, match="named twice"):
        write_together({tmp_path / "r.json": "a", tmp_path / "x" / ".." / "r.json": "b"})
    assert list(tmp_path.iterdir()) == []


def test_dumps_strict_refuses_nan_and_infinity_naming_the_field() -> None:
    """NaN or Infinity anywhere raises an error naming the field; finite documents pass."""
    assert dumps_strict({"a": [1.5, 2]}, "result x") == '{\n "a": [\n  1.5,\n  2\n ]\n}\n'
    with pytest.raises(HarnessError, match=r"result x: scenario\.zipf_exponent = inf"):
        dumps_strict({"scenario": {"zipf_exponent": math.inf}}, "result x")
    with pytest.raises(ValueError, match=r"figures\[1\] = nan"):
        dumps_strict({"figures": [1.0, math.nan]}, "r", error=ValueError)


@settings(max_examples=200)
@given(
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text()),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=20,
    )
)
def test_dumps_strict_writes_json_or_refuses(document: object) -> None:
    """Any document either becomes standard JSON that reads back, or raises HarnessError."""
    try:
        text = dumps_strict(document, "doc")
    except HarnessError:
        return
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} written"))


@settings(max_examples=100, deadline=None)
@given(
    states=st.lists(st.sampled_from(["missing", "file", "directory"]), min_size=1, max_size=4),
)
def test_write_together_is_all_or_nothing(states: list[str]) -> None:
    """Targets that are missing, files or directories: either every target holds its new
    content, or every file target holds its old content and new ones do not appear."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        files: dict[Path, str | bytes] = {}
        for index, state in enumerate(states):
            target = root / f"r{index}.out"
            if state == "file":
                target.write_text(f"old {index}")
            elif state == "directory":
                target.mkdir()
            files[target] = f"new {index}"
        try:
            write_together(files)
        except IsADirectoryError:
            assert "directory" in states
            for index, state in enumerate(states):
                target = root / f"r{index}.out"
                if state == "file":
                    assert target.read_text() == f"old {index}"
                elif state == "missing":
                    assert not target.exists()
        else:
            assert "directory" not in states
            assert all(path.read_text() == text for path, text in files.items())
        stray = {p.name for p in root.iterdir()} - {p.name for p in files}
        assert stray == set()
