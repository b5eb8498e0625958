"""Parity: every form of an algorithm routes every key as its reference does.

`check_parity` compares each form's batch lookup on all keys, and its scalar
lookup on the first `PLAIN_REFERENCE_KEYS`, with the vectorised reference, and
that with the plain-Python one; the first disagreement is a `ParityError`
naming the form, the key hash and both answers. `KeyHashes` holds the keys
hashed the way each algorithm hashes them, computed once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import ParityError
from harness.core.model import Parity
from harness.recipes.algorithms.base import Algorithm

#: keys checked against the plain-Python reference itself (the rest against its vectorised form)
PLAIN_REFERENCE_KEYS = 2_000


def check_parity(
    reference: Algorithm, keys: npt.NDArray[np.unsignedinteger], forms: dict[str, Algorithm]
) -> tuple[npt.NDArray[np.uint16], Parity]:
    """Owners of every key, after checking that every form agrees with the reference."""
    expected = reference.reference_owners(keys)
    sample = keys[:PLAIN_REFERENCE_KEYS]
    if reference.reference_lookup_many(sample) != expected[: len(sample)].tolist():
        raise ParityError("the vectorised reference disagrees with the plain-Python reference")
    for name, form in forms.items():
        got = np.asarray(form.lookup_many(keys))
        if got.shape != expected.shape:
            # A plugin's layout can return anything: a wrong count is a wrong answer too.
            raise ParityError(f"layout {name} returned {got.size:,} owners for "
                              f"{len(keys):,} keys (shape {got.shape}); expected one per key")
        wrong = np.flatnonzero(got != expected)
        # A stateful form (bounded-load) routes `lookup` calls as one stream of requests:
        # the sample must be its first requests, as it is the workload's.
        form.reset()
        scalar = [form.lookup(int(h)) for h in sample]
        scalar_wrong = np.flatnonzero(np.asarray(scalar) != expected[: len(sample)])
        if len(wrong) or len(scalar_wrong):
            # Name the first wrong answer of the path that gave it, batch before scalar.
            first, answer = (
                (int(wrong[0]), int(got[wrong[0]])) if len(wrong)
                else (int(scalar_wrong[0]), scalar[int(scalar_wrong[0])])
            )
            raise ParityError(
                f"layout {name} routes {len(wrong)} of {len(keys)} keys (batch) and "
                f"{len(scalar_wrong)} of {len(sample)} (scalar) differently from the "
                f"reference; first: key hash {int(keys[first])} -> {answer}, "
                f"expected {int(expected[first])}"
            )
    return expected, Parity(len(keys), len(sample), list(forms), True)


class KeyHashes:
    """Keys hashed once per way of hashing: the key hash depends on the algorithm and its
    key-hash parameters, never on the servers or the points, so a sweep or a set of fleets
    hashes its keys once per algorithm."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        self._encoded = list(keys)
        self._by_hasher: dict[str, npt.NDArray[np.unsignedinteger]] = {}

    def of(self, algorithm: Algorithm) -> npt.NDArray[np.unsignedinteger]:
        params = {k: v for k, v in algorithm.params.items()
                  if k not in ("points_per_weight", "layout")}
        hasher = f"{type(algorithm).name} {sorted(params.items())}"
        if hasher not in self._by_hasher:
            self._by_hasher[hasher] = algorithm.hash_keys(self._encoded)
        return self._by_hasher[hasher]
