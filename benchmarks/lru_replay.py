"""LRU replay speed: the stream harness.core.cache_model quotes its speed on.

    .venv/bin/python benchmarks/lru_replay.py [--requests 10000000] [--repeats 3]

10M requests drawn zipf (exponent 1) over 1M keys, each key on one of 100 servers of
10,000 objects, replayed by the C model `--repeats` times; prints each replay's time and
the miss ratio. A benchmark to read, not a gate: the machine is shared, so a busy moment
shows as a spread between repeats. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
from time import perf_counter

import numpy as np

from harness.core.cache_model import lru_misses
from harness.metrics.migration.metric import zipf_stream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    # the migration metric's zipf draw, each key on the server a multiplicative hash picks
    keys = zipf_stream(1_000_000, 1.0, args.requests, seed=1)
    servers = (keys.astype(np.uint64) * 2654435761 % 2**32 % 100).astype(np.uint16)
    for _ in range(args.repeats):
        start = perf_counter()
        missed = lru_misses(servers, keys, 100, 10_000)
        print(f"{len(keys):,} requests replayed in {perf_counter() - start:.2f} s, "
              f"miss ratio {np.mean(missed):.4f}")


if __name__ == "__main__":
    main()
