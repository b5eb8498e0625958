"""Foreign code is contained: hostile libraries and process peers, generated, each run ends
with exit 1 and one line (or exit 0 when the peer behaves apart from what it starts), no
process of theirs left (found by a unique marker in their command line or environment,
by a /proc scan), and no ring-harness-* folder left in a private TMPDIR; and a harness
killed by SIGKILL mid-run leaves no descendant behind."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.toolchains import require_program

HEADER_DIR = ROOT / "harness" / "core" / "native" / "abi"

#: what a hostile library does, and where (C, selected with -D)
LIBRARY_ACTIONS = {
    "exit3": "exit(3);", "abort": "abort();", "segv": "raise(SIGSEGV);",
    "loop": "for (;;) { spin++; }", "sleep": "sleep(600);",
    "daemon": "escape(0);", "group": "escape(1);", "session": "escape(2);",
}
#: actions that leave the call returning normally (the run itself succeeds)
RETURNS = {"daemon", "group", "session"}

LIBRARY_SOURCE = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ring_peer.h"
struct ring_peer { uint32_t servers; };
static volatile unsigned long spin;
/* how = 0: a double-forked daemon; 1: a child in its own process group; 2: a new session */
static void escape(int how) {
    pid_t child = fork();
    if (child != 0) { if (how == 0) waitpid(child, NULL, 0); return; }
    if (how == 1) setpgid(0, 0);
    if (how != 1) setsid();
    if (how == 0 && fork() != 0) _exit(0);
    char *argv[] = {"sleep", "600", MARK, NULL};
    execvp("sleep", argv);
    _exit(1);
}
uint32_t ring_peer_abi_version(void) { return RING_PEER_ABI_VERSION; }
ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size) {
    (void)names; (void)weights; (void)params; (void)error; (void)error_size;
#ifdef IN_BUILD
    ACTION
#endif
#ifdef IN_PROBE
    /* the second build of a process: the memory probe's first measured one (its worker
       builds once unmeasured), never the run's */
    static int builds;
    if (++builds == 2) { ACTION }
#endif
    ring_peer *peer = malloc(sizeof *peer);
    peer->servers = count;
    return peer;
}
int ring_peer_route(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners) {
    (void)keys; (void)offsets;
#ifdef IN_ROUTE
    ACTION
#endif
    for (size_t i = 0; i < n; i++) owners[i] = (uint16_t)(i % peer->servers);
    return 0;
}
int64_t ring_peer_nbytes(const ring_peer *peer) { (void)peer; return 8; }
void ring_peer_free(ring_peer *peer) { free(peer); }
"""

#: a process peer: escapes at start (a daemon, a child in its own group or session), then
#: answers as the mod-n peer does, or dies / hangs at ROUTE
PEER_SOURCE = r'''
import os, struct, subprocess, sys, time
mark, how, then = sys.argv[1], sys.argv[2], sys.argv[3]
argv = [sys.executable, "-c", "import time; time.sleep(600)", mark]
if how == "daemon":
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(argv[0], argv)
        os._exit(0)
    os.wait()
elif how == "group":
    subprocess.Popen(argv, process_group=0)
elif how == "session":
    subprocess.Popen(argv, start_new_session=True, env={})
stdin, stdout, servers = sys.stdin.buffer, sys.stdout.buffer, 1
while len(header := stdin.read(4)) == 4:
    body = stdin.read(struct.unpack("<I", header)[0])
    opcode, payload = body[:1], b""
    if opcode == b"Q":
        sys.exit(0)
    if opcode == b"H":
        payload = struct.pack("<III", 1, 0, 4) + b"host" + struct.pack("<I", 1) + b"1"
    elif opcode == b"B":
        servers = struct.unpack("<I", body[1:5])[0]
        payload = struct.pack("<q", -1)
    elif opcode == b"R":
        if then == "exit3":
            sys.exit(3)
        if then == "sleep":
            time.sleep(600)
        n = struct.unpack("<I", body[1:5])[0]
        payload = struct.pack(f"<I{n}H", n, *[i % servers for i in range(n)])
    stdout.write(struct.pack("<I", 1 + len(payload)) + b"K" + payload)
    stdout.flush()
'''


def marked(mark: str) -> list[int]:
    """Live (not zombie) processes whose command line or environment carries `mark`."""
    found, needle = [], mark.encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
            seen = Path(entry.path, "cmdline").read_bytes()
            with contextlib.suppress(OSError):
                seen += Path(entry.path, "environ").read_bytes()
        except OSError:
            continue
        if needle in seen and state != "Z":
            found.append(int(entry.name))
    return found


def gone(mark: str, within_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within_s
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def scenario(tmp_path: Path, peer: str, metric: str = "balance") -> Path:
    path = tmp_path / "hostile.toml"
    path.write_text(
        'name = "hostile"\n[servers]\ncount = 5\n[keys]\ncount = 300\n'
        f'[measure]\nlayouts = ["cffi-packed"]\nmetrics = ["{metric}"]\nrepeats = 1\n'
        f"peers = [{peer}]\n")
    return path


def run(tmp_path: Path, mark: str, toml: Path, timeout_s: float = 120) -> tuple[int, str]:
    """The harness in a subprocess with a private TMPDIR and the marker in its
    environment; its exit code and stderr, after checking nothing was left behind."""
    private = tmp_path / "tmp"
    private.mkdir()
    env = {**os.environ, "TMPDIR": str(private), "HOSTILE_MARK": mark}
    done = subprocess.run([sys.executable, "-m", "harness", "run", str(toml), "--out",
                           str(tmp_path / "out")], env=env, capture_output=True, text=True,
                          timeout=timeout_s, check=False)
    assert not gone(mark), f"left running: {gone(mark, 0)}"
    assert not list(private.glob("ring-harness-*")), list(private.iterdir())
    return done.returncode, done.stderr


def build_library(tmp_path: Path, action: str, where: str, mark: str) -> Path:
    cc = require_program("cc")
    source = tmp_path / "hostile.c"
    source.write_text(LIBRARY_SOURCE)
    library = tmp_path / f"libhostile_{action}_{where}.so"
    subprocess.run([cc, "-O1", "-shared", "-fPIC", f"-I{HEADER_DIR}", f"-DMARK=\"{mark}\"",
                    f"-DACTION={LIBRARY_ACTIONS[action]}", f"-DIN_{where.upper()}",
                    str(source), "-o", str(library)], check=True)
    return library


#: where: in the run's build or route, or in the memory probe's measured build (`probe`)
LIBRARY_CASES = list(itertools.product(sorted(LIBRARY_ACTIONS), ["build", "route", "probe"]))


@pytest.mark.parametrize(("action", "where"), LIBRARY_CASES)
def test_hostile_library_is_contained(tmp_path: Path, action: str, where: str) -> None:
    """Every hostile library, at build or at route, or while the memory metric measures
    it, ends the run in one line (exit 1), or runs to the end when its call returns (exit
    0), with nothing of it left behind."""
    mark = f"ring-hostile-{uuid.uuid4().hex}"
    library = build_library(tmp_path, action, where, mark)
    toml = scenario(tmp_path, f'{{ library = "{library}", name = "evil", timeout = 2 }}',
                    "memory" if where == "probe" else "balance")
    started = time.monotonic()
    code, err = run(tmp_path, mark, toml)
    lines = err.strip().splitlines()
    if action in RETURNS:
        assert code == 0, err
        return
    assert code == 1 and len(lines) == 1, err
    assert "peer 'evil'" in lines[0], err
    expected = {"exit3": "exited with status 3", "abort": "SIGABRT", "segv": "SIGSEGV",
                "loop": "within its timeout of 2 s", "sleep": "within its timeout of 2 s"}
    assert expected[action] in lines[0], err
    call = "ring_peer_build (measured by memray)" if where == "probe" else f"ring_peer_{where}"
    assert call in lines[0], err
    assert time.monotonic() - started < 60


PEER_CASES = list(itertools.product(["daemon", "group", "session"],
                                    ["ok", "exit3", "sleep"]))


@pytest.mark.parametrize(("how", "then"), PEER_CASES)
def test_hostile_process_peer_is_contained(tmp_path: Path, how: str, then: str) -> None:
    """A process peer that starts a daemon, a child in its own group or in a new session
    (its environment emptied: found by its command line) leaves nothing behind, whether
    the run succeeds, the peer exits or it hangs past its timeout."""
    mark = f"ring-hostile-{uuid.uuid4().hex}"
    peer = tmp_path / "peer.py"
    peer.write_text(PEER_SOURCE)
    toml = scenario(tmp_path, f'{{ command = ["{sys.executable}", "{peer}", "{mark}", '
                              f'"{how}", "{then}"], name = "evil", timeout = 2 }}')
    code, err = run(tmp_path, mark, toml)
    if then == "ok":
        assert code == 0, err
    else:
        assert code == 1 and len(err.strip().splitlines()) == 1, err
        assert "peer 'evil'" in err


@pytest.mark.parametrize("kind", ["process", "library"])
def test_sigkilled_harness_leaves_no_descendant(tmp_path: Path, kind: str) -> None:
    """The harness SIGKILLed while its peer (which started a daemon) hangs: every process
    of the peer is gone within a few seconds."""
    mark = f"ring-hostile-{uuid.uuid4().hex}"
    if kind == "process":
        peer = tmp_path / "peer.py"
        peer.write_text(PEER_SOURCE)
        entry = (f'{{ command = ["{sys.executable}", "{peer}", "{mark}", "daemon", "sleep"], '
                 'name = "evil", timeout = 600 }')
    else:
        library = build_library(tmp_path, "daemon", "build", mark)
        source = tmp_path / "hostile.c"
        # the daemon at build, then a route that never returns
        source.write_text(LIBRARY_SOURCE.replace(
            "#ifdef IN_ROUTE", "sleep(600);\n#ifdef IN_ROUTE"))
        subprocess.run([require_program("cc"), "-shared", "-fPIC", f"-I{HEADER_DIR}",
                        f"-DMARK=\"{mark}\"", "-DACTION=escape(0);", "-DIN_BUILD",
                        str(source), "-o", str(library)], check=True)
        entry = f'{{ library = "{library}", name = "evil", timeout = 600 }}'
    private = tmp_path / "tmp"
    private.mkdir()
    harness = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(scenario(tmp_path, entry)), "--out",
         str(tmp_path / "out")], env={**os.environ, "TMPDIR": str(private),
                                      "HOSTILE_MARK": mark},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(marked(mark)) < 3 and time.monotonic() < deadline:  # harness, peer, daemon
        time.sleep(0.1)
    time.sleep(1.0)
    harness.send_signal(signal.SIGKILL)
    harness.wait()
    assert not gone(mark), "a descendant outlived the SIGKILLed harness"
