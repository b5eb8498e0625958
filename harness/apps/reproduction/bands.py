"""Tolerance bands: the range a figure may take, from exact rounding or from chance.

The articles do not give their key and point names, so a sampled figure (a key
count, a measured CV) can match the published value only in distribution. Its band is the
central 99.7% (about +-3 standard deviations) of the statistic over many
simulated random rings with a fixed seed: N servers with k_i points each own
Dirichlet(k_1, ..., k_N) shares of a continuous ring (a server's share is the
sum of k_i of the N*k spacings of uniform points), and M keys fall on them
multinomially. Exact quantities (point counts, formula values, the padding
saving) get a band of the published value's rounding.
"""

from __future__ import annotations

import math
import multiprocessing
import signal
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from harness.core.machine import usable_cores

T = TypeVar("T")
Band = tuple[float, float]
Samples = npt.NDArray[np.float64]
#: central coverage of simulated bands: +-3 standard deviations of a normal statistic
COVERAGE = 0.997
#: fixed, so that REPRODUCTION.md is the same on every run from the same results
SIMULATION_SEED = 0
TRIALS = 10_000


def rounding_band(value: float, decimals: int) -> Band:
    """Values that round to `value` at `decimals` decimal places."""
    half = 0.5 * 10.0**-decimals
    return value - half, value + half


def quantile_band(samples: Samples) -> Band:
    """The central COVERAGE of simulated samples."""
    tail = (1 - COVERAGE) / 2
    low, high = np.quantile(samples, [tail, 1 - tail])
    return float(low), float(high)


def binomial_band(p: float, trials: int) -> Band:
    """p +- 3 standard errors of a fraction counted over `trials` independent keys."""
    spread = 3 * float(np.sqrt(p * (1 - p) / trials))
    return p - spread, p + spread


def poisson_band(mean: float) -> Band:
    """Central COVERAGE of Poisson(mean): a count of rare independent events (collisions).

    Exact quantiles, not mean +- 3 sqrt(mean): at a mean of one or two the
    distribution is far from symmetric.
    """
    if mean <= 0:
        return 0.0, 0.0
    counts = np.arange(int(mean + 10 * math.sqrt(mean) + 20))
    log_pmf = counts * math.log(mean) - mean - np.array([math.lgamma(c + 1) for c in counts])
    cdf = np.cumsum(np.exp(log_pmf))
    tail = (1 - COVERAGE) / 2
    return float(np.searchsorted(cdf, tail)), float(np.searchsorted(cdf, 1 - tail))


def simulated_shares(points: Sequence[int], trials: int = TRIALS,
                     seed: int = SIMULATION_SEED) -> Samples:
    """(trials, servers) ring shares of servers holding `points` random points each."""
    rng = np.random.default_rng(seed)
    draws = rng.gamma(np.asarray(points, dtype=np.float64), size=(trials, len(points)))
    return np.asarray(draws / draws.sum(axis=1, keepdims=True), dtype=np.float64)


def simulated_counts(shares: Samples, keys: int, seed: int = SIMULATION_SEED) -> Samples:
    """Keys per server when `keys` uniform keys fall on each simulated ring."""
    rng = np.random.default_rng(seed + 1)
    return np.asarray(rng.multinomial(keys, shares), dtype=np.float64)


def cv_rows(values: Samples) -> Samples:
    """Population std / mean of each row (one simulated ring)."""
    return np.asarray(values.std(axis=1) / values.mean(axis=1), dtype=np.float64)


def simulated_band(points: Sequence[int], statistic: Callable[[Samples], Samples],
                   keys: int | None = None, trials: int = TRIALS) -> Band:
    """Band of `statistic` over simulated rings: of the shares, or of key counts if `keys`."""
    shares = simulated_shares(points, trials)
    return quantile_band(statistic(shares if keys is None else simulated_counts(shares, keys)))


#: the tasks of the running `in_parallel` call, inherited by its forked workers
_TASKS: Sequence[Callable[[], Any]] = ()


def _run_task(index: int) -> Any:
    return _TASKS[index]()


def in_parallel(tasks: Sequence[Callable[[], T]], workers: int | None = None) -> list[T]:
    """[task() for task in tasks], spread over forked processes (default: every core).

    Each simulated band draws from its own generator seeded with SIMULATION_SEED, so
    the bands are the same whichever process computes them. The tasks themselves
    (closures) are never pickled: forked workers inherit them and receive indexes;
    only the results travel back, so they must pickle. Without fork (or with one
    core) the tasks run here, one after another.
    """
    global _TASKS
    workers = min(workers or usable_cores(), len(tasks))
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [task() for task in tasks]
    _TASKS = tasks
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(workers, initializer=_default_signals) as pool:
            results = pool.map(_run_task, range(len(tasks)), chunksize=1)
            # Let the workers finish on their own: leaving the block calls terminate(),
            # which signals them and then waits for each, and a worker that did not die
            # of it (seen once in a clean-clone CI run) kept that wait from ever ending.
            pool.close()
            pool.join()
            return results
    finally:
        _TASKS = ()


def _default_signals() -> None:
    """A worker dies of SIGTERM and ignores SIGINT: the harness's own handlers (cleanup,
    exit 143 or 130) belong to the process that forked it, which terminates the pool."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
