"""Ring statistics: pure math on shares and point counts, used by recipes and metrics alike.

For servers of weight w_i, load is judged as share_i / w_i, relative to its
mean over servers, so equal weights reduce to plain shares.

- `cv`: population std / mean.
- `arc_shares`: each server's exact share of the ring (the sum of the arcs it
  owns; arc of point i = (position[i-1], position[i]], wrapping). No sampling noise.
- `theory_cv`: a server holding k_i of K points owns a Beta(k_i, K-k_i) share,
  whose relative std is sqrt((K-k_i) / (k_i (K+1))); the CV over servers is
  the root mean square of that. For N equal servers with k points each this is
  sqrt((N-1) / (N k + 1)), the formula of "Consistent Hashing from Scratch, and
  Why Cloudflare Deleted 90% of It" (docs/design.md, section 5).
- `floor_cv`: theory_cv with the Poisson noise of counting M keys added in
  quadrature: server i expects M k_i / K keys, relative variance K / (M k_i);
  for equal servers sqrt(theory_cv**2 + N/M).
- `expected_collisions`: for n points hashed uniformly into S = 2**bits slots,
  the expected number of occupied slots is S (1 - (1 - 1/S)**n), so the expected
  number of dropped points is n - S (1 - (1 - 1/S)**n), about n**2 / (2 S).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.core.native import lean as c_lean
from harness.core.ring import Ring


def cv(values: npt.ArrayLike) -> float:
    """Coefficient of variation: population std / mean."""
    array = np.asarray(values, dtype=np.float64)
    return float(array.std() / array.mean())


def arc_shares(ring: Ring, servers: int) -> npt.NDArray[np.float64]:
    """Each server's exact share of the ring: the arcs ending at its points, summed.

    One pass in C (cext/lean.c) with no per-point temporaries; it adds the arcs as
    doubles in index order, as `arc_shares_reference` does, so the two are identical.
    """
    return c_lean.arc_sums(ring.positions, ring.owners, servers) / float(2**ring.bits)


def arc_shares_reference(ring: Ring, servers: int) -> npt.NDArray[np.float64]:
    """`arc_shares` in numpy: an arc array (8 bytes per point) and a weighted bincount."""
    space = 2**ring.bits
    arcs = np.empty(ring.entries, dtype=np.float64)
    # Sorted unique positions: differences in their own unsigned dtype are exact.
    arcs[1:] = np.diff(ring.positions)
    arcs[0] = float(int(ring.positions[0]) + space - int(ring.positions[-1]))
    per_server = np.bincount(ring.owners, weights=arcs, minlength=servers)
    return per_server / float(space)


def _with_points(points_per_server: npt.ArrayLike) -> npt.NDArray[np.float64]:
    # A server without points (a construction can round a small weight to none) has no
    # Beta share: it owns nothing, which min_keys shows; theory covers the others.
    k = np.asarray(points_per_server, dtype=np.float64)
    return k[k > 0]


def theory_cv(points_per_server: npt.ArrayLike) -> float:
    """CV of share/weight predicted from point counts (Beta shares, see module doc)."""
    k = _with_points(points_per_server)
    total = k.sum()
    return math.sqrt(float(np.mean((total - k) / (k * (total + 1)))))


def floor_cv(points_per_server: npt.ArrayLike, keys: int) -> float:
    """cv_theory plus the Poisson noise of counting `keys` keys, in quadrature."""
    k = _with_points(points_per_server)
    poisson = float(np.mean(k.sum() / (keys * k)))
    return math.sqrt(theory_cv(k) ** 2 + poisson)


def expected_collisions(points: int, bits: int) -> float:
    """Expected points dropped when `points` uniform hashes share 2**bits slots."""
    slots = float(2**bits)
    # expm1/log1p keep precision where 1/S is far below float epsilon of 1.
    occupied = -slots * math.expm1(points * math.log1p(-1.0 / slots))
    return points - occupied


@dataclass(frozen=True)
class PerWeight:
    """Counts per server judged per unit of weight: what a weighted fleet's peak means.

    A weight-4 server holding 4 times a weight-1 server's keys is exactly as loaded; so
    min, max and mean are of count / weight, and the hottest server is the one whose
    count / weight is largest: the one that sets `peak_to_mean`. With equal weights of 1
    they are the raw counts.
    """

    min: float
    max: float
    mean: float
    peak_to_mean: float
    #: index of the server with the largest count per unit weight (the first, on ties)
    hottest: int
    #: that server's fraction of all counts
    hottest_share: float
    cv: float


def per_weight(counts: npt.ArrayLike, weights: npt.ArrayLike) -> PerWeight:
    """Min, max, mean, peak-to-mean and the hottest server of counts / weights.

    A ValueError for counts and weights no run gives (a crafted result's): weights that are
    not finite and positive, negative counts, no count at all, or loads that overflow.
    Their figures would read NaN or inf, or a negative weight's load, beside numpy's
    warnings."""
    raw = np.asarray(counts, dtype=np.float64)
    scale = np.asarray(weights, dtype=np.float64)
    if raw.shape != scale.shape or raw.ndim != 1 or not len(raw):
        raise ValueError(f"per unit weight needs one weight a count ({raw.size} counts, "
                         f"{scale.size} weights)")
    if not (np.isfinite(scale).all() and (scale > 0).all()):
        raise ValueError("per unit weight needs finite positive weights")
    if not (np.isfinite(raw).all() and (raw >= 0).all() and raw.sum() > 0):
        raise ValueError("per unit weight needs counts of zero or more, not all zero")
    with np.errstate(over="ignore"):
        load = raw / scale
    if not np.isfinite(load).all() or not np.isfinite(load.sum()):
        raise ValueError("per unit weight: counts over weights overflow")
    hottest = int(np.argmax(load))
    mean = float(load.mean())
    return PerWeight(min=float(load.min()), max=float(load.max()), mean=mean,
                     peak_to_mean=float(load.max() / mean), hottest=hottest,
                     hottest_share=float(raw[hottest] / raw.sum()), cv=cv(load))


def is_weighted(weights: Sequence[float] | None) -> bool:
    """Whether the servers' weights differ (equal weights judge per unit weight as raw)."""
    return weights is not None and len(set(weights)) > 1
