"""A foreign library named by a bare file name is the file validated: the harness dlopens
it by its absolute path, never by a search of the system's folders (#38, class 5)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.native.foreign import HEADER, ForeignLibrary
from tests.toolchains import require_program

#: a ring_peer library routing every key to its last server, whatever the names
PEER_SOURCE = r"""
#include <stdlib.h>
#include "ring_peer.h"
struct ring_peer { uint32_t count; };
uint32_t ring_peer_abi_version(void) { return RING_PEER_ABI_VERSION; }
ring_peer *ring_peer_build(const char *const *names, const double *weights, uint32_t count,
                           const char *params, char *error, size_t error_size) {
    (void)names; (void)weights; (void)params; (void)error; (void)error_size;
    ring_peer *peer = malloc(sizeof *peer);
    if (peer) peer->count = count;
    return peer;
}
int ring_peer_route(const ring_peer *peer, const uint8_t *keys, const uint64_t *offsets,
                    size_t n, uint16_t *owners) {
    (void)keys; (void)offsets;
    for (size_t i = 0; i < n; i++) owners[i] = (uint16_t)(peer->count - 1);
    return 0;
}
int64_t ring_peer_nbytes(const ring_peer *peer) { (void)peer; return 4; }
void ring_peer_free(ring_peer *peer) { free(peer); }
"""

#: names of libraries every Linux system has on its loader's path (a bare name of one of
#: them, searched, would load the system's library instead of the file in the folder)
SHADOWED = ["libz.so.1", "libc.so.6", "libm.so.6"]


def _build(folder: Path, name: str) -> Path:
    source = folder / "peer.c"
    source.write_text(PEER_SOURCE)
    target = folder / name
    subprocess.run([require_program("cc"), "-shared", "-fPIC", "-O1", f"-I{HEADER.parent}",
                    "-o", str(target), str(source)], check=True)
    return target


@pytest.mark.parametrize("name", SHADOWED)
def test_a_bare_name_loads_the_file_in_the_folder(name: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A library named `libz.so.1` (or libc's, libm's name) in the current folder is the
    library loaded: it exports the ring_peer ABI, which the system's library does not."""
    _build(tmp_path, name)
    monkeypatch.chdir(tmp_path)
    library = ForeignLibrary.open(name)
    ring = library.build(["a", "b", "c"], [1.0, 1.0, 1.0], "")
    assert ring.nbytes == 4


def test_a_run_with_a_bare_library_name_measures_that_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`library = "libz.so.1"` in a run: validated as the folder's file, and loaded as it."""
    _build(tmp_path, "libz.so.1")
    monkeypatch.chdir(tmp_path)
    Path("s.toml").write_text(
        '[servers]\ncount = 3\n[generator]\npoints_per_weight = 4\n[keys]\ncount = 200\n'
        '[measure]\nlayouts = ["numpy-packed"]\nmetrics = ["balance"]\nrepeats = 1\n'
        'peers = [{ library = "libz.so.1", name = "mine" }]\n')
    assert main(["run", "s.toml", "--out", "out", "--no-history", "--no-progress"]) == 0, \
        capsys.readouterr().err
    assert "mine" in Path("out/s.md").read_text()
