"""The reproduction's plots (matplotlib, PNG): balance against k, collisions against n, memory.

Each function reads result documents only and writes one PNG atomically.
"""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from harness.apps.reproduction.bands import poisson_band
from harness.apps.reproduction.reading import Results, balance, memory_of, ring_info, run_of
from harness.core.atomic import write_atomically
from harness.core.stats import expected_collisions

if TYPE_CHECKING:
    from matplotlib.figure import Figure as PlotFigure


def _pyplot() -> ModuleType:
    """matplotlib's pyplot, drawing to files only (no display on CI or over ssh). Imported
    when a plot is drawn, not with the command line: it takes a third of a second, and a
    run that draws nothing should not pay it (nor load its C++ into a sanitizer build)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(figure: PlotFigure, path: Path) -> None:
    """Render to memory first, so that a failed render leaves no half-written PNG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(figure)
    write_atomically(path, buffer.getvalue())


def plot_cv(results: Results, path: Path) -> None:
    """cv_keys and cv_arcs against k (log-log), with the theory line and the Poisson floor."""
    runs = results["b_doubling"].runs
    balances = [balance(results, "b_doubling", r.points_per_weight) for r in runs]
    k = np.array([r.points_per_weight for r in runs], dtype=np.float64)
    servers, keys = balances[0].servers, balances[0].keys
    line = np.geomspace(k.min(), k.max(), 200)
    theory = np.sqrt((servers - 1) / (servers * line + 1))
    figure, axes = _pyplot().subplots(figsize=(7, 4.5))
    axes.plot(line, 100 * theory, color="black", label="cv_theory = sqrt((N-1)/(Nk+1))")
    axes.plot(line, 100 * np.sqrt(theory**2 + servers / keys), color="grey", linestyle="--",
              label=f"cv_floor (theory + Poisson noise of {keys:,} keys)")
    axes.plot(k, [100 * b.cv_arcs for b in balances], "o", label="cv_arcs (measured)")
    axes.plot(k, [100 * b.cv_keys for b in balances], "x", label="cv_keys (measured)")
    axes.set(xscale="log", yscale="log", xlabel="points per server k",
             ylabel="CV of load across servers (%)",
             title=f"Balance against points per server, N={servers}, blake2b-32")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    _save(figure, path)


def plot_collisions(results: Results, path: Path) -> None:
    """Measured 32-bit collisions against n (log-log) with n - S(1 - (1 - 1/S)^n)."""
    runs = results["e_collisions_32"].runs
    n = np.array([ring_info(results, "e_collisions_32", r.points_per_weight).points
                  for r in runs], dtype=np.float64)
    measured = np.array([r.figure("collisions").collisions for r in runs], dtype=np.float64)
    line = np.geomspace(n.min(), n.max(), 200)
    figure, axes = _pyplot().subplots(figsize=(7, 4.5))
    expected = [expected_collisions(int(x), 32) for x in line]
    axes.plot(line, expected, color="black", label="expected n - S(1 - (1 - 1/S)^n), S = 2^32")
    bands = np.array([poisson_band(e) for e in expected])
    axes.fill_between(line, np.maximum(bands[:, 0], 0.1), np.maximum(bands[:, 1], 0.1),
                      color="grey", alpha=0.25, label="central 99.7% (Poisson)")
    shown = measured > 0  # a log axis cannot show zero
    axes.plot(n[shown], measured[shown], "o", label="measured (blake2b-32)")
    zero64 = run_of(results, "e_collisions_64")
    axes.annotate(f"64 bits: {zero64.figure('collisions').collisions} collisions "
                  f"at {ring_info(results, 'e_collisions_64').points:,} points", xy=(0.03, 0.9),
                  xycoords="axes fraction")
    axes.set(xscale="log", yscale="log", ylim=(0.1, None), xlabel="points n",
             ylabel="points dropped (collisions)",
             title="The birthday curve in a 32-bit ring")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(loc="lower right")
    _save(figure, path)


def plot_memory(results: Results, path: Path) -> None:
    """Allocator-measured bytes per entry of each array layout on the >= 10M-entry ring."""
    run = run_of(results, "f_padding")
    names = [s.name for s in run.of_kind("layout")]
    records = [memory_of(results, "f_padding", None, name) for name in names]
    per_entry = [r.bytes_per_entry for r in records]
    figure, axes = _pyplot().subplots(figsize=(7, 4))
    bars = axes.bar(names, per_entry, color=["tab:orange" if "aligned" in n else "tab:blue"
                                             for n in names])
    for bar, record in zip(bars, records, strict=True):
        axes.annotate(f"{record.bytes_per_entry:.3f} B\n"
                      f"{record.structure_bytes / 2**20:,.1f} MiB",
                      xy=(bar.get_x() + bar.get_width() / 2, bar.get_height()),
                      ha="center", va="bottom")
    axes.set(ylabel="allocator bytes per entry", ylim=(0, 10),
             title=f"Memory per entry by layout "
                   f"({ring_info(results, 'f_padding').entries:,} entries, memray)")
    _save(figure, path)


PLOTS = {"cv_vs_k.png": plot_cv, "collisions_vs_n.png": plot_collisions,
         "memory_per_entry.png": plot_memory}
#: the scenarios whose results each plot reads
PLOT_SCENARIOS = {"cv_vs_k.png": ("b_doubling",),
                  "collisions_vs_n.png": ("e_collisions_32", "e_collisions_64"),
                  "memory_per_entry.png": ("f_padding",)}
