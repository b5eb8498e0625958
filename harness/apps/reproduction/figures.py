"""The published figures, declared: published value, how ours is read, the tolerance, why.

Scenario names refer to `scenarios/reproduce/NAME.toml`; percentages are in
percent (not fractions) so that published, ours and band read alike. Sources
are named by the short titles of `harness.apps.reproduction.sources`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from harness.apps.reproduction.bands import (
    SIMULATION_SEED,
    TRIALS,
    Band,
    Samples,
    binomial_band,
    cv_rows,
    poisson_band,
    quantile_band,
    rounding_band,
    simulated_band,
    simulated_shares,
)
from harness.apps.reproduction.checks import Figure
from harness.apps.reproduction.reading import (
    Results,
    balance,
    kib_per_server,
    memory_of,
    movement,
    packing_saving,
    ring_info,
    run_of,
)
from harness.apps.reproduction.sources import (
    CLOUDFLARE,
    DESIGN,
    MOD_N,
    RAM_VIDEO,
    SCRATCH,
    SIMULATOR,
)
from harness.core.stats import expected_collisions, theory_cv

SPACE_32 = 2.0**32
BandOf = Callable[[Results], Band]
KEYS = 200_000

SAMPLED = ("the articles' key and point names are unknown, so this sampled figure matches in "
           "distribution only; band: central 99.7% over 10,000 simulated random rings "
           "(Dirichlet shares, multinomial keys, random seed 0)")
EXACT = "exact quantity: must match to the published rounding"


def _pct(value: float) -> float:
    return 100 * float(value)


def _fixed(band: Band) -> BandOf:
    """A band that does not depend on the results."""
    return lambda _results: band


def _simulated(points: list[int], statistic: Callable[[Samples], Samples],
               keys: int | None = None, scale: float = 100, trials: int = TRIALS) -> BandOf:
    """A simulated band, scaled to the figure's unit; simulated only when evaluated."""
    return lambda _results: _scaled(simulated_band(points, statistic, keys, trials), scale)


def _scaled(band: Band, factor: float) -> Band:
    return band[0] * factor, band[1] * factor


def _min(samples: Samples) -> Samples:
    return np.asarray(samples.min(axis=1), dtype=np.float64)


def _max(samples: Samples) -> Samples:
    return np.asarray(samples.max(axis=1), dtype=np.float64)


def _server0(samples: Samples) -> Samples:
    return samples[:, 0]


def _memory_band(results: Results, scenario: str, k: int, entry_bytes: int) -> Band:
    """entry_bytes x k per server, less the expected collisions, each end +-0.5 KiB rounding.

    The article priced k points; the measured ring holds its de-duplicated entries.
    """
    ring = ring_info(results, scenario, k)
    full = entry_bytes * ring.points / ring.servers / 1024
    kept = entry_bytes * (ring.points - expected_collisions(ring.points, 32))
    return kept / ring.servers / 1024 - 0.5, full + 0.5


def _mod_n_band(before: int, after: int) -> Band:
    """hash mod N keeps a key iff h mod before == h mod after: min/(before*after) of keys."""
    moved = 1 - min(before, after) / (before * after)
    return _scaled(binomial_band(moved, KEYS), 100)


def _collision_rate(results: Results, k: int) -> float:
    """lambda: how many other points share a given point's 32-bit position, on average."""
    return float(ring_info(results, "d_cloudflare_2048_32", k).points - 1) / SPACE_32


def collision_trend_std(rate: float) -> float:
    """Relative std, over servers, of the share moved by lowest-index-wins collisions.

    A point of the server at u = i/N shares its position with m ~ Poisson(rate)
    others and keeps the arc only if all have higher indexes: probability
    exp(-rate u) (in 64 bits it keeps it with 1/(m+1), the same for every u).
    Shares go as exp(-rate u), whose relative variance over uniform u is
    rate (1 + e^-rate) / (2 (1 - e^-rate)) - 1, about rate^2 / 12.
    """
    return math.sqrt(rate * (1 + math.exp(-rate)) / (2 * -math.expm1(-rate)) - 1)


def _half_gap(results: Results, k: int) -> float:
    """(low-index half minus high-index half) mean share, 32-bit minus 64-bit, % of mean."""
    gaps = []
    for bits in (32, 64):
        shares = np.asarray(balance(results, f"d_cloudflare_2048_{bits}", k).arc_shares)
        half = len(shares) // 2
        gaps.append((shares[:half].mean() - shares[half:].mean()) * len(shares))
    return 100 * float(gaps[0] - gaps[1])


def _half_gap_band(k: int) -> BandOf:
    """Shares ~ exp(-rate u): the halves differ by 2 tanh(rate / 4) of the mean; +-5%.

    The two rings share their top 32 bits, so chance barely enters: 5% covers
    the discrete indexes and the continuous-arc approximation.
    """
    def band(results: Results) -> Band:
        model = 200 * math.tanh(_collision_rate(results, k) / 4)
        return 0.95 * model, 1.05 * model
    return band


def _bits_cv_gap_band(k: int) -> BandOf:
    """cv_arcs(32) - cv_arcs(64): the collision trend adds in quadrature; +-3 SE of the cross term.

    The cross term is the sample covariance of the trend with the random
    shares over N servers: standard error trend / sqrt(N) in CV units.
    """
    def band(results: Results) -> Band:
        servers = ring_info(results, "d_cloudflare_2048_32", k).servers
        trend = collision_trend_std(_collision_rate(results, k))
        cv64 = balance(results, "d_cloudflare_2048_64", k).cv_arcs
        model = math.sqrt(cv64**2 + trend**2) - cv64
        spread = 3 * trend / math.sqrt(servers)
        return 100 * (model - spread), 100 * (model + spread)
    return band


def _bits_figures(k: int, keys: tuple[str, str, str]) -> tuple[Figure, Figure, Figure]:
    """2,048 servers at k points: 64-bit balance against theory, and what 32 bits change."""
    where = f"N=2,048, k={k:,}"
    return (
        Figure(keys[0], f"{where}, 64 bits: cv_arcs", round(100 * theory_cv([k] * 2048), 3),
               "formula", "%", 4,
               lambda r: _pct(balance(r, "d_cloudflare_2048_64", k).cv_arcs),
               _simulated([k] * 2048, cv_rows, trials=2_000),
               SAMPLED.replace("10,000 simulated", "2,000 simulated")),
        Figure(keys[1], f"{where}: cv_arcs 32-bit minus 64-bit",
               "32-bit collisions worsen balance", f"{CLOUDFLARE}, via {RAM_VIDEO}", "pp", 4,
               lambda r: _pct(balance(r, "d_cloudflare_2048_32", k).cv_arcs
                              - balance(r, "d_cloudflare_2048_64", k).cv_arcs),
               _bits_cv_gap_band(k),
               "lowest index wins a shared position, so shares fall as exp(-lambda i/N) "
               "(lambda = n/S): a trend added in quadrature; band +-3 SE of its covariance "
               "with the random shares"),
        Figure(keys[2], f"{where}: low-index half minus high-index half share, 32 minus 64 bit",
               "dropped points bias against high-index servers", "our collision rule", "%", 4,
               lambda r: _half_gap(r, k), _half_gap_band(k),
               "model 2 tanh(lambda/4) of the mean share, +-5%"),
    )


def _cv_drop(results: Results, scenario: str, k_low: int, k_high: int, field: str) -> float:
    low, high = balance(results, scenario, k_low), balance(results, scenario, k_high)
    return _pct(getattr(low, field) - getattr(high, field))


def _cv_gap_band(_results: Results) -> Band:
    """cv_arcs(k=10,000) - cv_arcs(k=100,000) of independent simulated rings of 100 servers."""
    low = cv_rows(simulated_shares([10_000] * 100, seed=SIMULATION_SEED))
    high = cv_rows(simulated_shares([100_000] * 100, seed=SIMULATION_SEED + 2))
    return _scaled(quantile_band(low - high), 100)


def _std(samples: Samples) -> Samples:
    return np.asarray(samples.std(axis=1), dtype=np.float64)


def _three_nodes_figure(k: int, published: float) -> Figure:
    """Why hash mod N fails: std of the 3-node load split in pp (cv_keys x mean share 1/3)."""
    return Figure(
        f"h{k}", f"3 nodes, {k} token(s) each: std of the load split", published,
        f"{MOD_N} ('~')", "pp", 1,
        lambda r: 100 * float(balance(r, "h_three_nodes", k).cv_keys) / 3,
        _simulated([k] * 3, _std, 10_000, 100 / 10_000),
        "std over 3 servers is itself very noisy; band: central 99.7% of simulated "
        "rings with 10,000 keys (random seed 0)",
    )


def _add_figures(n: int, ring_published: float, mod_published: float) -> tuple[Figure, Figure]:
    """Why hash mod N fails / Semicolony: n -> n+1 servers, keys moved on the ring and mod N."""
    scenario = f"g_add_{n}"
    return (
        Figure(f"g{n}r", f"{n} -> {n + 1} servers: ring moved", ring_published,
               f"{MOD_N}; {SIMULATOR} ('about')", "%", 2,
               lambda r: _pct(movement(r, scenario).ring_moved_fraction),
               _simulated([160] * (n + 1), _server0, KEYS, 100 / KEYS),
               "the added server's key share: " + SAMPLED),
        Figure(f"g{n}m", f"{n} -> {n + 1} servers: mod N moved", mod_published,
               f"{MOD_N}; {SIMULATOR} ('about')", "%", 2,
               lambda r: _pct(movement(r, scenario).mod_n_moved_fraction),
               _fixed(_mod_n_band(n, n + 1)),
               f"N/(N+1) = {n}/{n + 1} of keys, +-3 binomial SE over 200,000 keys"),
    )


def _weight_figure(key: str, server: int, name: str, weight: int) -> Figure:
    return Figure(
        key, f"server {name} (weight {weight}) share of the ring, weights 1/2/10 at 160",
        round(100 * weight / 13, 2), f"{SCRATCH} (share = weight / 13)", "%", 2,
        lambda r: _pct(balance(r, "c_weights").arc_shares[server]),
        _simulated([160, 320, 1600], lambda s: s[:, server]),
        "share ~ Beta(160 w, 2,080 - 160 w): a sampled figure; band: central 99.7% of "
        "simulated rings (random seed 0)",
    )


FIGURES: tuple[Figure, ...] = (
    # a. balance sweep, 100 servers, 200,000 keys
    Figure("a1", "k=1: fewest keys on a server", 2, SCRATCH, "keys", 0,
           lambda r: balance(r, "a_balance_sweep", 1).min_keys,
           _simulated([1] * 100, _min, KEYS, 1), SAMPLED),
    Figure("a2", "k=1: most keys on a server", 10_955, SCRATCH, "keys", 0,
           lambda r: balance(r, "a_balance_sweep", 1).max_keys,
           _simulated([1] * 100, _max, KEYS, 1), SAMPLED),
    Figure("a3", "k=160: fewest keys on a server", 1_540, SCRATCH, "keys", 0,
           lambda r: balance(r, "a_balance_sweep", 160).min_keys,
           _simulated([160] * 100, _min, KEYS, 1), SAMPLED),
    Figure("a4", "k=160: most keys on a server", 2_386, SCRATCH, "keys", 0,
           lambda r: balance(r, "a_balance_sweep", 160).max_keys,
           _simulated([160] * 100, _max, KEYS, 1), SAMPLED),
    Figure("a5", "k=1: cv_theory ('typical miss 0.99% of a 1% target')", 99, SCRATCH, "%", 2,
           lambda r: _pct(balance(r, "a_balance_sweep", 1).cv_theory),
           _fixed(rounding_band(99, 0)), EXACT),
    Figure("a6", "k=1,000: cv_keys (measured CV)", 3.86, SCRATCH, "%", 2,
           lambda r: _pct(balance(r, "a_balance_sweep", 1000).cv_keys),
           _simulated([1000] * 100, cv_rows, KEYS), SAMPLED),
    Figure("a7", "k=1,000: cv_theory (formula)", 3.15, SCRATCH, "%", 3,
           lambda r: _pct(balance(r, "a_balance_sweep", 1000).cv_theory),
           _fixed(rounding_band(3.15, 2)), EXACT),
    Figure("a8", "k=1,000: cv_floor (the article: quadrature sum = the measured 3.86%)", 3.86,
           SCRATCH, "%", 3, lambda r: _pct(balance(r, "a_balance_sweep", 1000).cv_floor),
           _fixed(rounding_band(3.86, 2)), EXACT),
    Figure("a9", "k=1,000: cv_arcs (no key noise: scatters round the formula, not the floor)",
           3.15, f"{SCRATCH} (formula)", "%", 2,
           lambda r: _pct(balance(r, "a_balance_sweep", 1000).cv_arcs),
           _simulated([1000] * 100, cv_rows), SAMPLED),
    # b. doubling
    Figure("b1", "each doubling of k divides cv_theory by sqrt 2 (k=65,536 to 131,072)",
           round(math.sqrt(2), 3), SCRATCH, "x", 3,
           lambda r: balance(r, "b_doubling", 65536).cv_theory
           / balance(r, "b_doubling", 131072).cv_theory,
           _fixed(rounding_band(round(math.sqrt(2), 3), 3)), EXACT),
    Figure("b2", "packed bytes per entry at k=131,072 (memory per server = 6 B x k)", 6,
           SCRATCH, "B", 3,
           lambda r: memory_of(r, "b_doubling", 131072, "numpy-packed").bytes_per_entry,
           _fixed(rounding_band(6, 2)),
           "allocator-measured; one array header over 13 million entries is below rounding"),
    # c. weights
    Figure("c1", "points for weights 1/2/10 at 160 per unit weight", 2_080, SCRATCH,
           "points", 0, lambda r: ring_info(r, "c_weights").points,
           _fixed(rounding_band(2_080, 0)), EXACT),
    _weight_figure("c2", 0, "A", 1),
    _weight_figure("c3", 1, "B", 2),
    _weight_figure("c4", 2, "C", 10),
    # d. Cloudflare
    Figure("d1", "cv_theory at k=100,000 (160 x 625), N=100", 0.315, SCRATCH, "%", 4,
           lambda r: _pct(balance(r, "d_cloudflare", 100_000).cv_theory),
           _fixed(rounding_band(0.315, 3)), EXACT),
    Figure("d2", "cv_theory at k=10,000, N=100", 0.995, SCRATCH, "%", 4,
           lambda r: _pct(balance(r, "d_cloudflare", 10_000).cv_theory),
           _fixed(rounding_band(0.995, 3)), EXACT),
    Figure("d3", "cv_theory gap, 10,000 vs 100,000 (Cloudflare: 'about 0.7')", 0.68,
           SCRATCH, "pp", 4, lambda r: _cv_drop(r, "d_cloudflare", 10_000, 100_000, "cv_theory"),
           _fixed(rounding_band(0.68, 2)), EXACT),
    Figure("d4", "cv_arcs at k=100,000, N=100", 0.315, f"{SCRATCH} (formula)", "%", 4,
           lambda r: _pct(balance(r, "d_cloudflare", 100_000).cv_arcs),
           _simulated([100_000] * 100, cv_rows), SAMPLED),
    Figure("d5", "cv_arcs at k=10,000, N=100", 0.995, f"{SCRATCH} (formula)", "%", 4,
           lambda r: _pct(balance(r, "d_cloudflare", 10_000).cv_arcs),
           _simulated([10_000] * 100, cv_rows), SAMPLED),
    Figure("d6", "cv_arcs gap, 10,000 vs 100,000 (measured)", 0.68, f"{SCRATCH} (formula)",
           "pp", 4, lambda r: _cv_drop(r, "d_cloudflare", 10_000, 100_000, "cv_arcs"),
           _cv_gap_band, SAMPLED),
    Figure("d7", "memory per server, 6 B entries, k=100,000", 586, SCRATCH, "KiB", 1,
           lambda r: kib_per_server(r, "d_cloudflare", 100_000, "numpy-packed"),
           lambda r: _memory_band(r, "d_cloudflare", 100_000, 6),
           "the article priced 6 B x k; measured bytes hold the de-duplicated entries: band from "
           "6 B x (k less expected collisions) to 6 B x k, +-0.5 KiB rounding"),
    Figure("d8", "memory per server, 6 B entries, k=10,000", 59, SCRATCH, "KiB", 1,
           lambda r: kib_per_server(r, "d_cloudflare", 10_000, "numpy-packed"),
           lambda r: _memory_band(r, "d_cloudflare", 10_000, 6),
           "as d7"),
    Figure("d9", "memory per server, 8 B entries, k=100,000", round(8 * 100_000 / 1024),
           "8 B x k (derived)", "KiB",
           1, lambda r: kib_per_server(r, "d_cloudflare", 100_000, "numpy-aligned"),
           lambda r: _memory_band(r, "d_cloudflare", 100_000, 8), "as d7"),
    Figure("d10", "memory per server, 8 B entries, k=10,000", round(8 * 10_000 / 1024),
           "8 B x k (derived)", "KiB",
           1, lambda r: kib_per_server(r, "d_cloudflare", 10_000, "numpy-aligned"),
           lambda r: _memory_band(r, "d_cloudflare", 10_000, 8), "as d7"),
    *_bits_figures(10_000, ("d11", "d12", "d13")),
    *_bits_figures(100_000, ("d14", "d15", "d16")),
    Figure("d17", "N=2,048, 32 bits: cv_arcs at k=100,000 minus at k=10,000",
           "worse at 100,000 than at 10,000", f"{CLOUDFLARE}, via {RAM_VIDEO}", "pp", 4,
           lambda r: _cv_drop(r, "d_cloudflare_2048_32", 100_000, 10_000, "cv_arcs"),
           _fixed((0.0, math.inf)),
           "Cloudflare's claim is qualitative: worse means a positive difference"),
    # e. collisions
    Figure("e1", "collisions among 8,000,000 points, 32 bits", 7_486, SCRATCH, "points", 0,
           lambda r: run_of(r, "e_collisions_32", 80_000).figure("collisions").collisions,
           lambda r: poisson_band(expected_collisions(8_000_000, 32)),
           "a count of rare, nearly independent events: central 99.7% of Poisson(expectation)"),
    Figure("e2", "expected collisions among 8,000,000 points, 32 bits", 7_450,
           f"{DESIGN} ('about')", "points", 1,
           lambda r: run_of(r, "e_collisions_32", 80_000).figure("collisions").collisions_expected,
           _fixed(rounding_band(7_450, -1)),
           "formula n - S(1 - (1 - 1/S)^n); the design rounds n^2/(2S) = 7,450.6 to tens"),
    Figure("e3", "collisions among 8,000,000 points, 64 bits", 0, SCRATCH,
           "points", 0,
           lambda r: run_of(r, "e_collisions_64", 80_000).figure("collisions").collisions,
           _fixed((0.0, 0.0)), "expectation 1.7e-6: exactly zero"),
    # f. padding
    Figure("f1", "entries of the padding ring (at least 10,000,000)", 10_000_000, DESIGN,
           "entries", 0, lambda r: ring_info(r, "f_padding").entries,
           _fixed((10_000_000, math.inf)), "a lower bound"),
    Figure("f2", "numpy: packed saves vs aligned (allocator bytes)", 25.0,
           f"{SCRATCH}; {RAM_VIDEO}", "%", 3, lambda r: packing_saving(r, "f_padding", "numpy"),
           _fixed((24.5, 25.5)), "2 of 8 bytes are padding; +-0.5 pp allows allocator headers"),
    Figure("f3", "cffi: packed saves vs aligned (allocator bytes)", 25.0, f"{SCRATCH}; {RAM_VIDEO}",
           "%", 3, lambda r: packing_saving(r, "f_padding", "cffi"),
           _fixed((24.5, 25.5)), "as f2"),
    # g. movement
    Figure("g1", "100 -> 99 servers: ring moved", 1.08, SCRATCH, "%", 2,
           lambda r: _pct(movement(r, "g_remove_100").ring_moved_fraction),
           _simulated([160] * 100, _server0, KEYS, 100 / KEYS),
           "the removed server's key share: " + SAMPLED),
    Figure("g2", "100 -> 99 servers: mod N moved", 99.01, SCRATCH, "%", 2,
           lambda r: _pct(movement(r, "g_remove_100").mod_n_moved_fraction),
           _fixed(_mod_n_band(100, 99)),
           "1 - 99/9,900 of keys, +-3 binomial SE over 200,000 keys"),
    *_add_figures(3, 25, 75),
    *_add_figures(10, 9, 91),
    *_add_figures(100, 1, 99),
    Figure("g9", "operations whose ring moves all go to / come from the changed server", 4,
           f"{SCRATCH}; {SIMULATOR}", "of 4", 0,
           lambda r: sum(movement(r, s).ring_only_changed_server
                         for s in ("g_remove_100", "g_add_3", "g_add_10", "g_add_100")),
           _fixed(rounding_band(4, 0)), "a property of the ring: must always hold"),
    # h. the three nodes of "why hash mod N fails"
    _three_nodes_figure(1, 30),
    _three_nodes_figure(10, 10),
    _three_nodes_figure(100, 1),
)
