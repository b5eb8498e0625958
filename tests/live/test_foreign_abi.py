"""The C ABI of library foreign peers: the header shipped in the package, its loader,
and libmemcached 1.1.4's ketama through it, checked live on every key against our
`libmemcached` construction (and through the process protocol, via peers/c/abi_pipe.c)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.errors import HarnessError
from harness.core.fields import Fields
from harness.core.native.bucketed import compiled_module_file
from harness.core.native.foreign import ABI_VERSION, DECLARATIONS, HEADER, ForeignLibrary
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
from harness.recipes.constructions.libmemcached import float32_digest_counts
from harness.recipes.peers.foreign import DOORS, ForeignPeerSpec, open_foreign_peer
from harness.recipes.peers.foreign.claims import batch_for
from harness.recipes.peers.foreign.protocol import PROTOCOL_VERSION
from tests.paths import ROOT
from tests.toolchains import require_program, require_tool

KEYS = [f"key-{i}".encode() for i in range(100_000)]


def _prototypes(text: str) -> list[str]:
    """The declarations of a C text, one normalised string each, comments and
    preprocessor lines left out."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    lines = [line for line in text.splitlines()
             if not line.lstrip().startswith("#") and "extern" not in line
             and line.strip() != "}"]
    return [" ".join(part.split()) for part in " ".join(lines).split(";") if part.strip()]


def test_header_declares_what_the_loader_declares() -> None:
    """cffi reads DECLARATIONS; they are the header's, word for word (whitespace aside)."""
    assert _prototypes(HEADER.read_text()) == _prototypes(DECLARATIONS)
    assert f"#define RING_PEER_ABI_VERSION {ABI_VERSION}" in HEADER.read_text()


def test_abi_command_prints_the_header_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m harness abi` gives the header's path and the version; --path the path."""
    assert main(["abi"]) == 0
    assert capsys.readouterr().out == (f"{HEADER}\nring_peer ABI version {ABI_VERSION}\n"
                                       f"process protocol version {PROTOCOL_VERSION}\n")
    assert main(["abi", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()).read_text() == HEADER.read_text()


@pytest.fixture(scope="module")
def adapters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The C adapters, built by peers/build.sh from what .ci/install-peers.sh installs."""
    require_program("cc")
    require_tool("libmemcached")
    out = tmp_path_factory.mktemp("peers")
    subprocess.run(["bash", str(ROOT / "peers" / "build.sh"), str(out)], check=True)
    yield out


def _ours(construction: str, servers: list[Server]) -> np.ndarray:
    ring = get_algorithm("ring")
    params = ring.parse_params(Fields("test", "routes_like", {"construction": construction}))
    return ring.from_params(servers, params).route(KEYS)


FLEETS = {
    "100 equal, port 11211": [Server(f"10.0.{i}.1:11211") for i in range(100)],
    "100 equal, port 11212": [Server(f"10.0.{i}.1:11212") for i in range(100)],
    "99 at 1:2:4": [Server(f"10.0.{i}.1:11212", (1, 2, 4)[i % 3]) for i in range(99)],
    "3 at 1:2:4, no port": [Server(f"cache-{i}", (1, 2, 4)[i]) for i in range(3)],
}


@pytest.mark.parametrize("fleet", list(FLEETS))
def test_libmemcached_routes_like_our_construction(adapters: Path, fleet: str) -> None:
    """libmemcached's ketama, in process and through the pipe, routes each of 100,000 keys
    as our libmemcached construction, with as many points."""
    servers = FLEETS[fleet]
    library = str(adapters / "libmemcached_ketama.so")
    ours = _ours("libmemcached", servers)
    for spec in (ForeignPeerSpec("abi", library=library),
                 ForeignPeerSpec("pipe", command=(str(adapters / "abi_pipe"), library))):
        peer = open_foreign_peer(spec, servers)
        try:
            assert np.array_equal(peer.route_many(KEYS), ours), spec.name
            assert peer.entries == 4 * sum(float32_digest_counts(servers))
        finally:
            peer.close()


def test_libmemcached_differs_from_libketama_where_predicted(adapters: Path) -> None:
    """At 100 equal servers libmemcached's float32 share gives 39 digests, not 40: the two
    rings share 39 of every 40 names, and agree on about 97.6% of keys; on port 11211 the
    point names differ entirely and the rings agree only by chance (about 1/N)."""
    assert float32_digest_counts(FLEETS["100 equal, port 11212"]) == [39] * 100
    assert float32_digest_counts([Server(f"s{i}") for i in range(7)]) == [40] * 7
    library = str(adapters / "libmemcached_ketama.so")
    for fleet, low, high in (("100 equal, port 11212", 0.97, 0.98),
                             ("100 equal, port 11211", 0.0, 0.03),
                             ("99 at 1:2:4", 1.0, 1.0)):
        servers = FLEETS[fleet]
        routed = open_foreign_peer(ForeignPeerSpec("abi", library=library),
                                   servers).route_many(KEYS)
        agreement = float(np.mean(routed == _ours("libketama", servers)))
        assert low <= agreement <= high, (fleet, agreement)


def test_library_refusals_are_one_line(adapters: Path) -> None:
    """A library's build error comes back as its message, not an abort of our process
    (libmemcached 1.1.4 asserts past 100 servers; the adapter refuses first)."""
    library = str(adapters / "libmemcached_ketama.so")
    with pytest.raises(HarnessError, match=r"peer 'abi': library .*: build failed: "
                       r"libmemcached 1.1.4 holds at most 100 servers in its continuum "
                       r"\(got 101\)"):
        open_foreign_peer(ForeignPeerSpec("abi", library=library),
                          [Server(f"s{i}") for i in range(101)])
    with pytest.raises(HarnessError, match="weight must be a positive integer"):
        open_foreign_peer(ForeignPeerSpec("abi", library=library), [Server("a", 1.5)])


def test_a_library_without_the_abi_is_refused(adapters: Path) -> None:
    """A shared library that is not a ring_peer says which symbols it lacks (our own C
    core: a library by its path, as every library is now loaded)."""
    with pytest.raises(HarnessError, match="does not export ring_peer_abi_version, "
                                           "ring_peer_build"):
        ForeignLibrary.open(compiled_module_file())
    with pytest.raises(HarnessError, match="cannot be loaded"):
        ForeignLibrary.open(str(adapters / "abi_pipe.c-not-there.so"))


def test_run_measures_the_library_like_a_layout(adapters: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A scenario naming the library and its pipe twin: parity claimed and held, memray's
    bytes for the library, both timed in the same rounds, the pipe's own clock apart."""
    library = adapters / "libmemcached_ketama.so"
    path = tmp_path / "foreign.toml"
    path.write_text(
        'name = "foreign"\n[servers]\ncount = 10\nname = "10.0.{i}.1:11212"\n'
        '[generator]\nconstruction = "libmemcached"\n[keys]\ncount = 2000\n'
        '[measure]\nlayouts = ["cffi-packed"]\nmetrics = ["memory"]\nrepeats = 2\n'
        f'peers = [{{ library = "{library}", name = "abi", '
        'routes_like = { construction = "libmemcached" } },\n'
        f'  {{ command = ["{adapters / "abi_pipe"}", "{library}"], name = "pipe", '
        'routes_like = { construction = "libmemcached" } }]\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0, \
        capsys.readouterr().err
    document = (tmp_path / "out" / "foreign.md").read_text()
    assert "## Foreign peers (libmemcached)" in document
    section = document.split("## Foreign peers (libmemcached)")[1].split("\n## ")[0]
    # The peers' own table; the pair's overhead table after it names them too.
    section, overhead = section.split("| library, through the C ABI")
    assert overhead.splitlines()[2].startswith("| abi ")
    rows = {line.split("|")[1].strip(): line for line in section.splitlines()
            if line.startswith("| abi ") or line.startswith("| pipe ")}
    assert f"| {DOORS['library']} " in rows["abi"] and "1.000000" in rows["abi"]
    assert "process protocol (pipe)" in rows["pipe"] and "KiB ->" in rows["pipe"]
    result = json.loads((tmp_path / "out" / "foreign.json").read_text())
    subjects = {s["name"]: s for s in result["runs"][0]["subjects"]}
    assert subjects["abi"]["agreement"] == 1.0
    # The continuum (1,600 points of 8 bytes) and the client around it, seen by memray.
    assert subjects["abi"]["figures"]["memory"]["structure_bytes"] > 1600 * 8
    assert "memory" not in subjects["pipe"]["figures"]
    assert subjects["pipe"]["figures"]["foreign"]["self_timed_ns"]["rounds"] == 2


JUMP_C = r"""
#include <stdlib.h>
#include "ring_peer.h"
struct ring_peer { int64_t buckets; };
uint32_t ring_peer_abi_version(void) { return RING_PEER_ABI_VERSION; }
ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size) {
    (void)names; (void)weights; (void)params; (void)error; (void)error_size;
    ring_peer *peer = malloc(sizeof *peer);
    peer->buckets = count;
    return peer;
}
/* Jump consistent hash as Lamping and Veach print it. */
int ring_peer_lookup(const ring_peer *peer, const uint64_t *hashes, size_t n,
                     uint16_t *owners) {
    for (size_t i = 0; i < n; i++) {
        uint64_t key = hashes[i];
        int64_t b = -1, j = 0;
        while (j < peer->buckets) {
            b = j;
            key = key * 2862933555777941757ULL + 1;
            j = (int64_t)((b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
        }
        owners[i] = (uint16_t)b;
    }
    return 0;
}
int ring_peer_route(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners) {
    (void)peer; (void)keys; (void)offsets; (void)n; (void)owners;
    return -1;  /* given hashes only */
}
int64_t ring_peer_nbytes(const ring_peer *peer) { (void)peer; return 0; }
void ring_peer_free(ring_peer *peer) { free(peer); }
"""


def test_lookup_of_key_hashes_through_both_doors(adapters: Path, tmp_path: Path) -> None:
    """A library exporting ring_peer_lookup, given our jump recipe's key hashes (input =
    'hashes'), in process and through abi_pipe's LOOKUP, puts every key where our jump
    does; asked to route names instead, its -1 is one line naming the call."""
    source = tmp_path / "jump.c"
    source.write_text(JUMP_C)
    library = tmp_path / "libjump.so"
    subprocess.run([require_program("cc"), "-O2", "-Wall", "-Wextra", "-Werror", "-shared",
                    "-fPIC", "-I", str(HEADER.parent), str(source), "-o", str(library)],
                   check=True)
    servers = [Server(f"s{i}") for i in range(100)]
    jump = get_algorithm("jump").build(servers)
    for spec in (ForeignPeerSpec("abi", library=str(library), input="hashes",
                                 routes_like={"algorithm": "jump"}),
                 ForeignPeerSpec("pipe", command=(str(adapters / "abi_pipe"), str(library)),
                                 input="hashes", routes_like={"algorithm": "jump"})):
        peer = open_foreign_peer(spec, servers)
        try:
            assert np.array_equal(peer.route_prepared(batch_for(peer, servers, KEYS)),
                                  jump.route(KEYS)), spec.name
        finally:
            peer.close()
    with pytest.raises(HarnessError, match=r"^peer 'abi': library .*libjump.so: "
                                           r"ring_peer_route failed "
                                           r"\(returned -1\)"):
        open_foreign_peer(ForeignPeerSpec("abi", library=str(library)),
                          servers).route_many(KEYS[:10])


def test_a_library_owner_out_of_range_is_one_line(tmp_path: Path) -> None:
    """Owners a library writes are checked: one past the servers is named, with the key."""
    source = tmp_path / "bad.c"
    source.write_text(JUMP_C.replace("return -1;  /* given hashes only */",
                                     "for (size_t i = 0; i < n; i++) owners[i] = "
                                     "(uint16_t)peer->buckets; return 0;"))
    library = tmp_path / "libbad.so"
    subprocess.run([require_program("cc"), "-O2", "-shared", "-fPIC", "-I",
                    str(HEADER.parent), str(source), "-o", str(library)], check=True)
    peer = open_foreign_peer(ForeignPeerSpec("bad", library=str(library)),
                             [Server("a"), Server("b"), Server("c")])
    with pytest.raises(HarnessError, match=r"^peer 'bad': routed key 0 to owner 3, out of "
                                           r"range for 3 servers$"):
        peer.route_many(KEYS[:10])
