"""Bad foreign peers get clean failures: one line naming the peer and what it did, exit 1,
no result file written, and no process of the peer's left behind (its whole group is
killed). The peers are tests/fake_peer.py, each mode breaking the protocol one way."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from tests.paths import TESTS

FAKE = TESTS / "fake_peer.py"


def scenario(tmp_path: Path, mode: str, timeout: float = 20.0) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad-peer"\n[servers]\ncount = 5\n[keys]\ncount = 300\n'
        '[measure]\nlayouts = ["cffi-packed"]\nmetrics = ["balance"]\nrepeats = 1\n'
        f'peers = [{{ command = ["{sys.executable}", "{FAKE}", "{mode}"], name = "fake", '
        f"timeout = {timeout} }}]\n")
    return path


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def run_bad(tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str],
            monkeypatch: pytest.MonkeyPatch, timeout: float = 20.0) -> str:
    """Run a scenario with the fake peer in `mode`; check exit 1, nothing written, no
    process of the peer alive; return the error line."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("FAKE_PEER_PIDS", str(pids))
    out = tmp_path / "out"
    code = main(["run", str(scenario(tmp_path, mode, timeout)), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 1, err
    assert not out.exists() or not any(out.iterdir())
    started = [int(line) for line in pids.read_text().split()] if pids.exists() else []
    assert started, "the fake peer did not start"
    # An orphaned grandchild is reaped by init once killed: give it a moment to go.
    for _ in range(50):
        if not any(alive(pid) for pid in started):
            break
        time.sleep(0.1)
    assert not [pid for pid in started if alive(pid)], "a process of the peer was left"
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize(("mode", "said"), [
    ("exit-at-start", "exited with status 3 during HELLO"),
    ("crash-on-build", "exited with status 1 during BUILD"),
    ("kill-self-mid-batch", "was killed by SIGKILL during ROUTE"),
    ("wrong-count", "answered ROUTE of 300 keys with 299 owners"),
    ("out-of-range", "answered ROUTE with owner 5 for key 299, out of range for 5 servers"),
    ("garbage", "answered ROUTE with garbage"),
    ("old-version", "speaks protocol version 99, this harness speaks 1 and 2"),
    ("refuse-build", "refused BUILD: no such server"),
    # protocol 2, batches in the shared region: the same faults, the same one line
    ("shared-kill-mid-batch", "was killed by SIGKILL during ROUTE_SHARED"),
    ("shared-wrong-count", "answered ROUTE_SHARED of 300 keys with 299 owners"),
    ("shared-out-of-range",
     "answered ROUTE_SHARED with owner 5 for key 299, out of range for 5 servers"),
    ("shared-refuse-share", "refused SHARE: cannot map"),
    # #38 class 3: error replies whose string is not UTF-8 or runs past the frame
    ("error-not-utf8", "answered BUILD with a malformed error reply"),
    ("error-past-frame", "answered BUILD with a malformed error reply"),
])
def test_bad_peer_fails_in_one_line(tmp_path: Path, mode: str, said: str,
                                    capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Each misbehaviour is named, with the peer, in the run's one error line."""
    err = run_bad(tmp_path, mode, capsys, monkeypatch)
    assert err.startswith("failed: peer 'fake': "), err
    assert said in err, err


def test_crash_shows_the_peers_last_stderr_line(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer that dies says why in its stderr; the error line ends with its last line."""
    err = run_bad(tmp_path, "crash-on-build", capsys, monkeypatch)
    assert "(its stderr: RuntimeError: fake_peer: crashed while building)" in err, err


def test_hung_peer_is_stopped_at_its_timeout_with_its_children(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer that never answers is stopped at its timeout, and the child it started is
    killed with it (the peer's process group)."""
    err = run_bad(tmp_path, "hang-on-route", capsys, monkeypatch, timeout=1.0)
    assert "did not answer ROUTE within its timeout of 1 s" in err, err
    assert len((tmp_path / "pids").read_text().split()) == 2  # the peer and its sleep


def test_a_peer_that_cannot_start_is_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A command whose program does not exist is a scenario error (exit 2), not a run."""
    path = tmp_path / "missing.toml"
    path.write_text('name = "x"\n[servers]\ncount = 2\n[measure]\n'
                    'peers = [{ command = ["/nonexistent/peer"] }]\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "measure.peers[0].command must be a command whose program is an executable " \
           "file on this machine (got ['/nonexistent/peer'], an array)" in err
    assert not (tmp_path / "out").exists()



def test_a_peers_own_name_is_escaped_in_every_rendering(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a peer says it is (HELLO) reaches the tables as text: escaped in the HTML page
    (no live tag) and kept whole in one Markdown cell (no stray column)."""
    monkeypatch.setenv("FAKE_PEER_PIDS", str(tmp_path / "pids"))
    out = tmp_path / "out"
    assert main(["run", str(scenario(tmp_path, "hostile-name")), "--out", str(out)]) == 0, \
        capsys.readouterr().err
    page = (out / "bad-peer.html").read_text()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    document = (out / "bad-peer.md").read_text()
    row = next(line for line in document.splitlines() if line.startswith("| fake "))
    header = next(line for line in document.splitlines() if line.startswith("| peer ")
                  and "door" in line)
    assert row.replace("\\|", "").count("|") == header.count("|")
