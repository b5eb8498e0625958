"""Outputs checked before any work: no overlaps, no output that is an input, a place to write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.errors import OutputError
from harness.core.outputs import check_outputs


def test_distinct_outputs_in_a_new_directory_pass(tmp_path: Path) -> None:
    """Outputs in a directory that does not exist yet are fine, and nothing is created."""
    out = tmp_path / "new" / "dir"
    check_outputs([out / "a.json", out / "a.md", out / "b.json"], [tmp_path / "s.toml"])
    assert list(tmp_path.iterdir()) == []


def test_two_results_with_one_name_are_refused(tmp_path: Path) -> None:
    """Two scenarios named `twin` in one run: the second would replace the first."""
    with pytest.raises(OutputError, match=r"twin\.json: written twice in one run"):
        check_outputs([tmp_path / "twin.json", tmp_path / "sub" / ".." / "twin.json"], [])


def test_hard_link_to_an_output_is_the_same_output(tmp_path: Path) -> None:
    """Two names of one existing file (a hard link) are one output."""
    (tmp_path / "a.md").write_text("")
    os.link(tmp_path / "a.md", tmp_path / "b.md")
    with pytest.raises(OutputError, match="written twice"):
        check_outputs([tmp_path / "a.md", tmp_path / "b.md"], [])


def test_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    """`compare A B --out A.json`: refused, naming the input, A untouched."""
    a = tmp_path / "A.json"
    a.write_text("{}")
    (tmp_path / "link.json").symlink_to(a)
    for out in (a, tmp_path / "link.json"):
        with pytest.raises(OutputError, match=r"output is also an input .*A\.json"):
            check_outputs([out], [a, tmp_path / "B.json"])
    assert a.read_text() == "{}"


def test_out_directory_that_is_a_regular_file_is_refused(tmp_path: Path) -> None:
    """--out naming a regular file: one line, before any work."""
    (tmp_path / "out").write_text("")
    with pytest.raises(OutputError, match=r"is not a directory \(got a file\)"):
        check_outputs([tmp_path / "out" / "r.json"], [])


def test_output_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    """NAME.md that is a directory is refused before the run, not after it."""
    (tmp_path / "r.md").mkdir()
    with pytest.raises(OutputError, match=r"r\.md: output is a directory, expected a regular"):
        check_outputs([tmp_path / "r.json", tmp_path / "r.md"], [])


@pytest.mark.parametrize(
    ("output", "kind"), [("/dev/null", "a character device"), ("FIFO", "a FIFO")]
)
def test_existing_special_file_is_refused(tmp_path: Path, output: str, kind: str) -> None:
    """`--out /dev/null` (or a FIFO): the atomic rename would replace the node itself."""
    if output == "FIFO":
        output = str(tmp_path / "fifo.md")
        os.mkfifo(output)
    with pytest.raises(OutputError, match=f"output is {kind}, expected a regular file"):
        check_outputs([Path(output)], [])


@pytest.mark.parametrize("place", ["/proc", "/sys", "/proc/self", "/sys/kernel"])
def test_kernel_pseudo_file_systems_are_refused(place: str) -> None:
    """/proc and /sys take writes as commands; nothing of ours goes there."""
    with pytest.raises(OutputError, match="kernel pseudo-file system"):
        check_outputs([Path(place) / "r.json"], [])


def test_unwritable_directory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory we may not write to (simulated: these tests may run as root)."""
    monkeypatch.setattr("harness.core.outputs.os.access", lambda path, mode: False)
    with pytest.raises(OutputError, match="is not writable"):
        check_outputs([tmp_path / "r.json"], [])


def test_name_too_long_for_the_file_system_is_refused(tmp_path: Path) -> None:
    """A result named with 300 characters: refused with the limit, not an OSError later."""
    with pytest.raises(OutputError, match=r"file name of 305 bytes, expected at most 255"):
        check_outputs([tmp_path / ("n" * 300 + ".json")], [])


def test_name_at_the_limit_passes(tmp_path: Path) -> None:
    """A 255-byte name is allowed (and atomic.py's temporary names stay within the limit)."""
    check_outputs([tmp_path / ("n" * 250 + ".json")], [])


def test_multibyte_name_is_measured_in_bytes(tmp_path: Path) -> None:
    """The limit is in bytes: 100 three-byte characters are 300 bytes."""
    with pytest.raises(OutputError, match="file name of 305 bytes"):
        check_outputs([tmp_path / ("\u20ac" * 100 + ".json")], [])


def test_a_scenario_path_that_is_not_utf8_is_recorded_escaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file name with a byte that is not UTF-8 (Python holds it as a lone surrogate, which
    no JSON or Markdown file can encode) runs, and results record it as a \\xNN escape."""
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"n\xff.toml")
    Path(name).write_text('name = "odd"\n[servers]\ncount = 3\n[keys]\ncount = 100\n'
                          "[measure]\nrepeats = 1\nscalar_keys = 10\nmetrics = ['balance']\n",
                          encoding="utf-8")
    assert main(["run", name, "--out", "out", "--history", "h"]) == 0
    recorded = json.loads((tmp_path / "out" / "odd.json").read_text(encoding="utf-8"))
    assert recorded["scenario_file"] == "n\\xff.toml"
    assert "n\\xff.toml" in (tmp_path / "out" / "odd.md").read_text(encoding="utf-8")
