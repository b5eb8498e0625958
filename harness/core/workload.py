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
