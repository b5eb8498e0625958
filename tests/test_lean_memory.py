"""The lean ring's peak memory, measured in a fresh process: at most 16 bytes a point."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: Builds a ring in a fresh process and prints the growth of its peak resident set
#: (ru_maxrss, KiB on Linux) over the peak after imports and a small warm-up ring.
PROBE = """
import resource, sys
from harness.recipes.constructions.generator import generate_ring, numbered_servers
from harness.metrics.balance import arc_shares
servers = numbered_servers(1000)
arc_shares(generate_ring(servers, 2, sys.argv[1]), 1000)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ring = generate_ring(servers, int(sys.argv[2]), sys.argv[1])
arc_shares(ring, 1000)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024)
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
@pytest.mark.parametrize(("hash_name", "points_per_server"), [("fnv1a-fmix32", 6000),
                                                              ("blake2b-64", 2000)])
def test_generation_peaks_at_16_bytes_a_point(hash_name: str, points_per_server: int) -> None:
    """Generating, sorting, de-duplicating and summing arcs adds at most 16 bytes a point
    to the peak (32-bit rings: 8 of packed words and 6 of result; 64-bit: 10 in place)."""
    grown = subprocess.run(
        [sys.executable, "-c", PROBE, hash_name, str(points_per_server)],
        capture_output=True, text=True, check=True,
    ).stdout
    points = 1000 * points_per_server
    assert int(grown) / points <= 16
