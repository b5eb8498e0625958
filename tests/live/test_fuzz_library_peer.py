"""A fuzzed library peer (#38, class 1, the library kind of "per peer kind"): one shared
library whose every call does what a plan drawn by hypothesis says (given as its build's
`params`, one action a call in the order the calls come): answer correctly, fail with an
error (an error message that fills the whole buffer with no NUL among them), route to
owners out of range, claim negative or huge sizes, print to stdout, exit(), abort(),
crash, spin, sleep, or start a daemon. The harness drives it through its worker as a run
does (build, routes, a lookup of hashes, its size) and then its memory probe, with a
short timeout. Every example ends in routed owners or one HarnessError line naming the
peer, never another exception; no process of it is left (found by a marker in its
environment), no descendant of ours, no descriptor of ours, and no folder in its TMPDIR.

RING_HARNESS_FUZZ_EXAMPLES sets the examples (tests/fuzz_examples.py); a worker is a fresh
Python process, about a third of a second an example on an idle machine."""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.metrics.foreign.memory_probe import measure_library
from harness.recipes.peers.foreign import ForeignPeerSpec
from harness.recipes.peers.foreign.library_peer import LibraryPeer
from harness.recipes.peers.foreign.protocol import packed_keys
from tests.fuzz_examples import fuzz_examples
from tests.live.test_foreign_containment import HEADER_DIR, gone
from tests.toolchains import require_program

SERVERS = [Server(f"10.0.{i}.1:11211", 1 + i % 2) for i in range(4)]
KEYS = [f"key-{i}".encode() for i in range(200)]
#: short, so that hangs end soon; long enough for a worker's start on a busy machine
TIMEOUT_S = 3.0

#: what a call may do: k ok, e an error, E an error filling its buffer with no NUL,
#: o owners out of range, n a size of -7 or 2**62, p printf to stdout, x exit(3),
#: a abort(), s SIGSEGV, l a loop without end, h sleep(600), d a double-forked daemon
ACTIONS = "keEonpxaslhd"

LIBRARY_SOURCE = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ring_peer.h"
struct ring_peer { uint32_t servers; };
static char plan[64];
static unsigned calls;
static volatile unsigned long spin;
static void daemon_child(void) {
    pid_t child = fork();
    if (child != 0) { waitpid(child, NULL, 0); return; }
    setsid();
    if (fork() != 0) _exit(0);
    char *argv[] = {"sleep", "600", NULL};
    execvp("sleep", argv);
    _exit(1);
}
/* the action of this call: its letter in the plan ('k' past its end); the process-ending
   and hanging ones happen here */
static char act(void) {
    char a = calls < strlen(plan) ? plan[calls] : 'k';
    calls++;
    switch (a) {
    case 'x': exit(3);
    case 'a': abort();
    case 's': raise(SIGSEGV); break;
    case 'l': for (;;) { spin++; }
    case 'h': sleep(600); break;
    case 'd': daemon_child(); break;
    case 'p': printf("noise on stdout %u\n", calls); fflush(stdout); break;
    }
    return a;
}
uint32_t ring_peer_abi_version(void) { return RING_PEER_ABI_VERSION; }
ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size) {
    (void)names; (void)weights;
    if (calls == 0) { strncpy(plan, params, sizeof plan - 1); }
    char a = act();
    if (a == 'e') { snprintf(error, error_size, "refused: plan says so"); return NULL; }
    if (a == 'E') { memset(error, 'E', error_size); return NULL; }
    ring_peer *peer = malloc(sizeof *peer);
    peer->servers = count;
    return peer;
}
static int owners_of(const ring_peer *peer, size_t n, uint16_t *owners) {
    char a = act();
    if (a == 'e' || a == 'E') return -1;
    for (size_t i = 0; i < n; i++)
        owners[i] = (uint16_t)(a == 'o' ? peer->servers + i % 3 : i % peer->servers);
    return 0;
}
int ring_peer_route(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners) {
    (void)keys; (void)offsets;
    return owners_of(peer, n, owners);
}
int ring_peer_lookup(const ring_peer *peer, const uint64_t *hashes, size_t n,
                     uint16_t *owners) {
    (void)hashes;
    return owners_of(peer, n, owners);
}
int64_t ring_peer_nbytes(const ring_peer *peer) {
    (void)peer;
    char a = act();
    return a == 'n' ? (calls % 2 ? -7 : (int64_t)1 << 62) : 8;
}
void ring_peer_free(ring_peer *peer) { free(peer); }
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = require_program("cc")
    folder = tmp_path_factory.mktemp("fuzz-library")
    source = folder / "fuzzed.c"
    source.write_text(LIBRARY_SOURCE)
    built = folder / "libfuzzed.so"
    subprocess.run([cc, "-O1", "-shared", "-fPIC", f"-I{HEADER_DIR}", str(source), "-o",
                    str(built)], check=True)
    return built


def _open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def _children() -> set[int]:
    """Our live child processes (a worker's supervisor not reaped would be one)."""
    me, found = str(os.getpid()), set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.add(int(entry.name))
    return found


@settings(max_examples=fuzz_examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plan=st.text(ACTIONS, max_size=10),
       calls=st.lists(st.sampled_from(["route", "lookup", "size"]), max_size=4),
       probe=st.booleans())
def test_a_fuzzed_library_ends_in_owners_or_one_line(library: Path, plan: str,
                                                     calls: list[str], probe: bool) -> None:
    mark = f"ring-fuzz-library-{uuid.uuid4().hex}"
    spec = ForeignPeerSpec("fuzzed", library=str(library), params=plan, timeout_s=TIMEOUT_S)
    before_fds, before_children = _open_fds(), _children()
    with tempfile.TemporaryDirectory(prefix="fuzz-library-") as private:
        environment = {"TMPDIR": private, "FUZZ_LIBRARY_MARK": mark}
        peer: LibraryPeer | None = None
        try:
            peer = LibraryPeer(spec, SERVERS, environment=environment)
            blob, offsets = packed_keys(KEYS)
            for call in calls:
                if call == "size":
                    assert peer.nbytes >= 0
                    continue
                hashes = (np.arange(len(KEYS), dtype=np.uint64) if call == "lookup"
                          else None)
                owners = peer.route_prepared(peer.prepare(blob, offsets, hashes))
                assert len(owners) == len(KEYS) and int(owners.max()) < len(SERVERS)
            peer.close()
            peer = None
            if probe:
                figures = measure_library(spec, SERVERS, [k.decode() for k in KEYS],
                                          Path(private))
                assert figures["structure_bytes"] >= 0
            event("routed")
        except HarnessError as exc:
            message = str(exc)
            assert message.startswith("peer 'fuzzed': "), message
            assert "\n" not in message, message
            event(f"failed: {message[15:45]}")
        finally:
            if peer is not None:
                peer.close()
        assert not gone(mark), "a process of the library was left"
        assert not os.listdir(private), os.listdir(private)
    assert _children() <= before_children, "a child of ours was left"
    assert _open_fds() <= before_fds, "a descriptor was left open"
