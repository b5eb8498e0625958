"""Key workloads: the key hashes a scenario routes through its ring.

Keys are named by `keys.name` (default "key-{i}") and hashed with the ring's
hash. `uniform` routes `count` distinct keys; `zipf` draws `count` requests
from `universe` distinct keys with popularity proportional to rank**-exponent
(seeded), the skew of real cache traffic.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from harness.hashing import hash_many
from harness.scenario import KeysSpec


def key_hashes(spec: KeysSpec, hash_name: str) -> npt.NDArray[np.unsignedinteger]:
    """Hashes of the workload's keys (requests, for zipf), in request order."""
    if spec.distribution == "uniform":
        return _hash_names(spec, hash_name, np.arange(spec.count))
    rng = np.random.default_rng(spec.seed)
    ranks = np.arange(1, spec.universe + 1, dtype=np.float64)
    popularity = ranks ** -spec.zipf_exponent
    requests = rng.choice(spec.universe, size=spec.count, p=popularity / popularity.sum())
    # Which key holds which rank is itself random, so popular keys are not all low ids.
    key_of_rank = rng.permutation(spec.universe)
    distinct_hashes = _hash_names(spec, hash_name, key_of_rank)
    return distinct_hashes[requests]


def _hash_names(
    spec: KeysSpec, hash_name: str, ids: npt.NDArray[np.integer]
) -> npt.NDArray[np.unsignedinteger]:
    template = spec.name
    return hash_many(hash_name, [template.format(i=i).encode() for i in ids.tolist()])
