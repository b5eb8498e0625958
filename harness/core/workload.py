"""Key workloads: the keys a scenario routes through its ring.

Keys are named by `keys.name` (default "key-{i}"). `uniform` routes `count`
distinct keys; `zipf` draws `count` requests from `universe` distinct keys
with popularity proportional to rank**-exponent (seeded), the skew of real
cache traffic. Each algorithm hashes them its own way (`hash_keys`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DISTRIBUTIONS = ("uniform", "zipf")

#: bytes per key a run holds beyond its name's characters: the name as a str (49 bytes of
#: header) and as bytes (33), with a list's pointer to each; its hash, owners and
#: reference copies; a hash computed in Python (libketama's MD5: a digest and an int a key,
#: about 130 bytes with their lists); and a list of Python ints (40 bytes an item) that any
#: Python-level lookup makes, whose arenas the allocator keeps. About 240 counted; measured
#: on a fuzzed run of 600,000 keys through libketama and the tuples layout, which peaked
#: at 252 MiB (tests/test_estimate_bound.py)
BYTES_PER_KEY = 256


@dataclass(frozen=True)
class KeysSpec:
    count: int = 200_000
    name: str = "key-{i}"
    distribution: str = "uniform"
    #: zipf only: popularity of the key of rank r is proportional to r**-zipf_exponent
    zipf_exponent: float = 1.0
    #: zipf only: number of distinct keys requests are drawn from
    universe: int = 100_000
    seed: int = 1


def key_bytes(keys: KeysSpec) -> float:
    """What a run holds of its workload's names and hashes: every key name (the longest
    one's length, so a template such as "{i:>100000}" counts), and for zipf every distinct
    name plus the popularity, draw and permutation arrays over the universe."""
    longest = max(len(keys.name.format(i=keys.count - 1)), len(keys.name.format(i=0)))
    # The name as a str and again encoded to bytes while hashing: twice its length.
    per_name = BYTES_PER_KEY + 2 * longest
    total = per_name * keys.count
    if keys.distribution == "zipf":
        total += keys.universe * (per_name + 3 * 8)
    return float(total)


def key_names(spec: KeysSpec) -> list[str]:
    """The workload's keys (requests, for zipf), in request order."""
    if spec.distribution == "uniform":
        return [spec.name.format(i=i) for i in range(spec.count)]
    rng = np.random.default_rng(spec.seed)
    ranks = np.arange(1, spec.universe + 1, dtype=np.float64)
    popularity = ranks**-spec.zipf_exponent
    requests = rng.choice(spec.universe, size=spec.count, p=popularity / popularity.sum())
    # Which key holds which rank is itself random, so popular keys are not all low ids.
    key_of_rank = rng.permutation(spec.universe)
    distinct = [spec.name.format(i=i) for i in key_of_rank.tolist()]
    return [distinct[r] for r in requests.tolist()]
