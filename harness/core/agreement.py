"""How often two routers agree, worked out from their structures rather than sampled.

Two cases cover every pair of clients whose routing we can reproduce:

- **Two rings on the same key hash.** Each ring is a step function of the key hash: the
  hash h goes to the owner of the first point >= h, wrapping past the last point. The
  union of both rings' points cuts the hash space into intervals on which neither
  function changes, so the share of hashes both send to the same server is the summed
  length of the intervals where the owners match, divided by the size of the space.
  That is exact (no sampling): it covers every difference two such rings can have (points
  per server, per digest, digest bytes, names, weight rounding, which server wins a
  collision), since each only moves or removes points.
- **Two routers on unrelated key hashes** (MD5 against CRC-32, a ring against jump or
  slots): a key's owner under one says nothing of its owner under the other, so they agree
  with probability sum over servers of share_a(s) * share_b(s), each router's own share
  of the keys.

Servers are compared by name: the same server may have another index in each client.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from harness.core.ring import Ring


def named_owners(ring: Ring, names: Sequence[str],
                 numbers: dict[str, int]) -> npt.NDArray[np.int64]:
    """The ring's owners as numbers of server names (`numbers`, grown as names appear), so
    that two rings of differently ordered server lists can be compared."""
    table = np.array([numbers.setdefault(name, len(numbers)) for name in names], np.int64)
    return table[ring.owners]


def ring_agreement(a: Ring, a_names: Sequence[str], b: Ring, b_names: Sequence[str]) -> float:
    """The exact share of the hash space that rings `a` and `b` (same width, same key hash)
    send to the same server (by name), both taking the first point >= the hash."""
    if a.bits != b.bits:
        raise ValueError(f"rings of {a.bits} and {b.bits} bits share no hash space")
    numbers: dict[str, int] = {}
    owners_a = named_owners(a, a_names, numbers)
    owners_b = named_owners(b, b_names, numbers)
    cuts = np.union1d(a.positions, b.positions)
    # On (cuts[i-1], cuts[i]] each ring's owner is that of its first point >= cuts[i],
    # wrapping to its first point past its last.
    at_a = np.searchsorted(a.positions, cuts, side="left") % a.entries
    at_b = np.searchsorted(b.positions, cuts, side="left") % b.entries
    same = owners_a[at_a] == owners_b[at_b]
    lengths = np.empty(len(cuts), dtype=np.float64)
    lengths[1:] = np.diff(cuts).astype(np.float64)
    # [0, cuts[0]] goes to both rings' first points, as does the wrap past cuts[-1].
    lengths[0] = float(int(cuts[0]) + 1)
    wrapped = float(2**a.bits - 1 - int(cuts[-1]))
    agreeing = float(lengths[same].sum())
    if owners_a[0] == owners_b[0]:
        agreeing += wrapped
    return agreeing / float(2**a.bits)


def independent_agreement(shares_a: Mapping[str, float], shares_b: Mapping[str, float]) -> float:
    """Agreement of two routers whose choices are independent: the chance that both pick
    the same server, sum of share_a(s) * share_b(s) over the servers both know."""
    return float(sum(share * shares_b.get(name, 0.0) for name, share in shares_a.items()))


def key_shares(owners: npt.NDArray[np.uint16], names: Sequence[str]) -> dict[str, float]:
    """Each server's share of the routed keys, by name."""
    counts = np.bincount(owners, minlength=len(names))
    total = max(1, int(counts.sum()))
    return {name: int(c) / total for name, c in zip(names, counts, strict=True)}
