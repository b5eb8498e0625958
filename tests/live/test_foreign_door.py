"""The door a library peer's tables name says where its code ran.

A library that writes the id of the process each of its builds runs in (the file is its
`params`) is run as a scenario runs it: its run's build and routes, the memory metric's
probe, and the clients metric's speed on a fleet of `[clients]`. The pids it wrote are
compared with the harness's own (the run is started in this process), and the label the
Foreign peers and clients tables print for it must say what they show: "in process" only
when some build ran in ours, "a worker" only when none did. The label is not compared with
a string of ours: a change of mechanism without a change of label fails here, and the
other way round.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.fields import Fields
from harness.core.servers import Server
from harness.metrics.clients import metric as clients_metric
from harness.metrics.clients.members import clients_of
from harness.recipes.peers.foreign import DOORS, LibraryPeer, parse_foreign_peer
from harness.recipes.peers.foreign.base import Batch
from tests.live.test_foreign_containment import HEADER_DIR
from tests.toolchains import require_program

#: CRC-32 of the key mod n (our `modulo`, as gomemcache routes); each build appends
#: getpid() to the file its params name
LIBRARY_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "ring_peer.h"
struct ring_peer { uint32_t servers; };
uint32_t ring_peer_abi_version(void) { return RING_PEER_ABI_VERSION; }
ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size) {
    (void)names; (void)weights; (void)error; (void)error_size;
    FILE *pids = fopen(params, "a");
    if (pids) { fprintf(pids, "%ld\n", (long)getpid()); fclose(pids); }
    ring_peer *peer = malloc(sizeof *peer);
    peer->servers = count;
    return peer;
}
int ring_peer_route(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners) {
    for (size_t i = 0; i < n; i++) {
        uint32_t crc = 0xFFFFFFFFu;
        for (uint64_t at = offsets[i]; at < offsets[i + 1]; at++) {
            crc ^= keys[at];
            for (int bit = 0; bit < 8; bit++)
                crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
        owners[i] = (uint16_t)((crc ^ 0xFFFFFFFFu) % peer->servers);
    }
    return 0;
}
int64_t ring_peer_nbytes(const ring_peer *peer) { (void)peer; return 8; }
void ring_peer_free(ring_peer *peer) { free(peer); }
"""


def _library(tmp_path: Path) -> Path:
    source = tmp_path / "where.c"
    source.write_text(LIBRARY_SOURCE)
    library = tmp_path / "libwhere.so"
    subprocess.run([require_program("cc"), "-O1", "-Wall", "-Wextra", "-Werror", "-shared",
                    "-fPIC", f"-I{HEADER_DIR}", str(source), "-o", str(library)], check=True)
    return library


def _table_cell(document: str, section: str, column: str, row: str) -> str:
    """The cell of `row` under `column` in the first table of the Markdown `section`."""
    text = document.split(f"## {section}")[1].split("\n## ")[0]
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == row:
            return cells[header.index(column)]
    raise AssertionError(f"{section}: no row {row!r}")


def test_the_door_names_where_the_library_ran(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    library = _library(tmp_path)
    pids_file = tmp_path / "pids"
    scenario = tmp_path / "door.toml"
    scenario.write_text(
        'name = "door"\n[servers]\ncount = 5\n[keys]\ncount = 500\n'
        '[measure]\nlayouts = ["cffi-packed"]\nmetrics = ["memory"]\nrepeats = 2\n'
        f'peers = [{{ library = "{library}", name = "where", params = "{pids_file}", '
        'routes_like = { algorithm = "modulo" } }]\n'
        '[clients]\nrecipes = [{ name = "gomemcache", algorithm = "modulo" }]\n'
        'fleets = [{ label = "five", servers = 5, remove = "10.0.0.1:11211", '
        'add = "10.0.9.1:11211" }]\n')
    assert main(["run", str(scenario), "--out", str(tmp_path / "out"), "--no-progress",
                 "--no-history"]) == 0, capsys.readouterr().err
    pids = {int(line) for line in pids_file.read_text().split()}
    # the run's worker, the memory probe's (three builds), the clients metric's workers
    assert len(pids) >= 2, pids
    in_ours = os.getpid() in pids
    document = (tmp_path / "out" / "door.md").read_text()
    door = _table_cell(document, "Foreign peers (", "door", "where")
    runtime = _table_cell(document, "Clients' speed and size", "runtime", "where")
    for label in (door, runtime, DOORS["library"]):
        assert ("in process" in label) == in_ours, (label, pids, os.getpid())
        assert ("worker" in label) == (not in_ours), (label, pids, os.getpid())
    # The memory probe ran in a worker of its own: a process other than the run's.
    result = json.loads((tmp_path / "out" / "door.json").read_text())
    (subject,) = [s for s in result["runs"][0]["subjects"] if s["name"] == "where"]
    assert subject["figures"]["memory"]["structure_bytes"] > 0
    # what the table shows is what the run recorded, for either table
    assert subject["figures"]["foreign"]["door_label"] == door
    (speed,) = [s for s in result["runs"][0]["figures"]["clients"]["speeds"]
                if s["client"] == "where"]
    assert speed["runtime"] == runtime


def test_a_library_clients_own_clock_is_its_c_call(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The clients speed table's own clock for a library is the C call its worker timed
    (`last_call_ns`), as its note says, not our clock around the request: each route's
    reported call is set here to 7 ns a key, and that is the figure, round by round."""
    route = LibraryPeer.route_prepared

    def reported(self: LibraryPeer, batch: Batch) -> object:
        owners = route(self, batch)
        self.last_call_ns = (7 * batch.keys, 0)
        return owners

    monkeypatch.setattr(LibraryPeer, "route_prepared", reported)
    spec = parse_foreign_peer(Fields("test", "peer", {
        "library": str(_library(tmp_path)), "name": "where", "params": str(tmp_path / "pids"),
        "routes_like": {"algorithm": "modulo"}}))
    (client,) = clients_of([], [spec], [])
    assert client.runtime == DOORS["library"]
    servers = [Server(f"10.0.{i}.1:11211") for i in range(5)]
    names = [f"key-{i}" for i in range(300)]
    speed = clients_metric._speed(client, servers, [n.encode() for n in names], names,
                                  repeats=3, scalar_keys=10)
    assert speed is not None and speed.protocol_ns is None and speed.own_ns is not None
    assert speed.own_ns.rounds == 3
    assert speed.own_ns.min == speed.own_ns.max == 7.0
