"""A fuzzed peer speaking a mutated protocol (#38, classes 2 and 3): tests/fuzz_peer.py
answers each request correctly or breaks its reply one way hypothesis draws (bytes
flipped, frames cut short, lengths that lie, replies too many, answers before the request
was read, garbage, unknown statuses, error replies whose string is not UTF-8 or runs past
its frame, owners out of range, figures that are no numbers, exits, hangs), and the
harness's process-peer client drives it through every request it makes with a short
timeout. Every example ends in routed owners (each a server) or in one HarnessError line
naming the peer, never another exception; no process of the peer is left, and no
descriptor of ours (pipes, the shared region) stays open.

Also: a peer that answers BUILD before reading its payload, and leaves a process of its
own reading the pipe later, reads the request, never other memory of ours (class 2)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from harness.core.errors import HarnessError
from harness.core.servers import Server
from harness.recipes.peers.foreign import ForeignPeerSpec, ProcessPeer, protocol
from harness.recipes.peers.foreign import process as process_module
from tests.fuzz_examples import fuzz_examples
from tests.paths import TESTS

FUZZ_PEER = TESTS / "fuzz_peer.py"
SERVERS = [Server(f"10.0.{i}.1:11211", 1 + i % 2) for i in range(4)]
KEYS = [f"key-{i}".encode() for i in range(300)]
#: short, so that hangs end soon; long enough for a Python peer's start on a busy machine
TIMEOUT_S = 1.5

_hex = st.binary(min_size=0, max_size=24).map(bytes.hex)
_mutation = st.one_of(
    st.just(["ok"]),
    st.tuples(st.just("flip"), st.integers(0, 64), st.integers(1, 255)).map(list),
    st.tuples(st.just("truncate"), st.integers(0, 64)).map(list),
    st.tuples(st.just("length"), st.one_of(st.integers(0, 16), st.sampled_from(
        [2**16, 2**16 + 1, 2**28, 2**28 + 1, 2**31, 2**32 - 1]))).map(list),
    st.tuples(st.just("extra"), st.binary(min_size=1, max_size=16).map(bytes.hex)).map(list),
    st.just(["twice"]),
    st.tuples(st.just("early"), st.booleans()).map(list),
    st.tuples(st.just("garbage"), _hex).map(list),
    st.tuples(st.just("status"), st.integers(0, 255).filter(lambda b: b != ord("K"))).map(list),
    st.tuples(st.just("error"), st.one_of(_hex, st.text(max_size=20).map(
        lambda t: t.encode().hex())), st.sampled_from([0, 0, 1, 7, -1, -3, 2**31])).map(list),
    st.tuples(st.just("owner"), st.sampled_from([4, 5, 255, 65535])).map(list),
    st.tuples(st.just("figure"), st.sampled_from(["nan", "inf", "-1", "1e300"])).map(list),
    st.tuples(st.just("exit"), st.sampled_from([0, 1, 3])).map(list),
)
#: what the client asks after HELLO and BUILD, in the order drawn
_call = st.sampled_from(["route", "lookup", "time", "memory", "add", "remove"])


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def _drive(peer: ProcessPeer, calls: list[str]) -> None:
    """Every request the client makes, the owners and figures checked as the run uses them."""
    servers = list(SERVERS)
    for call in calls:
        if call == "route":
            owners = peer.route_many(KEYS)
            assert len(owners) == len(KEYS) and int(owners.max()) < len(servers)
        elif call == "lookup":
            owners = peer.lookup_hashes(np.arange(len(KEYS), dtype=np.uint64))
            assert len(owners) == len(KEYS) and int(owners.max()) < len(servers)
        elif call == "time":
            blob, offsets = protocol.packed_keys(KEYS)
            figures = peer.self_timed(blob, offsets, 3)
            assert len(figures) == 3 and all(0 <= f <= protocol.MAX_SELF_TIMED_NS
                                              for f in figures)
        elif call == "memory":
            assert peer.nbytes >= 0
        elif call == "add":
            server = Server(f"added-{len(servers)}", 1)
            peer.add(server.name, server.weight)
            servers.append(server)
        elif len(servers) > 1:
            peer.remove(servers[0].name)
            servers.pop(0)


@settings(max_examples=fuzz_examples(150),
          deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from([1, 2]),
       mutations=st.lists(_mutation, min_size=1, max_size=6),
       calls=st.lists(_call, max_size=6),
       start=st.integers(0, 8), hang=st.integers(0, 40))
def test_a_fuzzed_peer_ends_in_owners_or_one_line(version: int, mutations: list[list[Any]],
                                                   calls: list[str], start: int,
                                                   hang: int) -> None:
    # The mutations from request `start` on (HELLO is 0, BUILD 1, then the calls', a
    # shared region's SHARE among them); rarely a hang, which costs the whole timeout.
    mutations = [["ok"]] * start + mutations + ([["hang"]] if hang == 0 else [])
    folder = tempfile.mkdtemp(prefix="fuzz-peer-")
    pids = Path(folder) / "pids"
    plan = json.dumps({"version": version, "pids": str(pids), "mutations": mutations})
    spec = ForeignPeerSpec("fuzz", command=(sys.executable, str(FUZZ_PEER), plan),
                           timeout_s=TIMEOUT_S)
    before = _open_fds()
    try:
        peer: ProcessPeer | None = None
        try:
            peer = ProcessPeer(spec, SERVERS)
            _drive(peer, calls)
            event("routed")
        except HarnessError as exc:
            message = str(exc)
            assert message.startswith("peer 'fuzz': "), message
            assert "\n" not in message.split(" (its stderr:")[0], message
            event(f"failed: {message[13:40]}")
        finally:
            if peer is not None:
                peer.close()
        started = [int(line) for line in pids.read_text().split()] if pids.exists() else []
        assert not [pid for pid in started if _alive(pid)], "a peer process was left"
        assert _open_fds() <= before, "a descriptor was left open"
    finally:
        shutil.rmtree(folder)


EARLY_ANSWER = r"""
import os, struct, time
def read(size):  # unbuffered: what is not read here stays in the pipe
    got = b""
    while len(got) < size and (chunk := os.read(0, size - len(got))):
        got += chunk
    return got
def answer(payload):
    os.write(1, struct.pack("<I", 1 + len(payload)) + b"K" + payload)
length = struct.unpack("<I", read(4))[0]
read(length)  # HELLO, read whole
answer(struct.pack("<III", 1, 0, 4) + b"read" + struct.pack("<I", 1) + b"1")
read(4)  # BUILD: answered at once, its payload left in the pipe
answer(struct.pack("<q", -1))
time.sleep(60)
"""


def test_an_early_answer_fails_and_the_pipe_still_holds_the_request() -> None:
    """Class 2: the harness fails the peer in one line, and the request it handed to the pipe
    by reference stays the request: its bytes are kept for the rest of the run, so whatever
    reads that pipe before the peer's supervisor ends it reads the request, never reused
    heap. (A reader outliving the peer, the issue's trial, no longer exists: every
    descendant of a peer is ended with it, tests/live/test_foreign_containment.py.)"""
    # Names long enough that the BUILD request is about 110 kB, as in the trial.
    servers = [Server(f"server-{i:05d}-" + "x" * 90, 1) for i in range(1000)]
    spec = ForeignPeerSpec("early", command=(sys.executable, "-c", EARLY_ANSWER),
                           timeout_s=10.0)
    expected = protocol.build([s.name for s in servers], [1.0] * len(servers), "")
    with pytest.raises(HarnessError, match=r"^peer 'early': answered BUILD before reading "
                                           r"all of it"):
        ProcessPeer(spec, servers)
    assert any(kept == expected for kept in process_module._PINNED)
