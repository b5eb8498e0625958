"""What a fleet rollout records (every field a plain value: the same bits from any executor)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CentreFigures:
    name: str
    #: its wave (None: in no wave that started)
    wave: str | None
    servers: int
    rings: int
    #: one router process per server: its rings' bytes before and after the change
    process_bytes_before: int
    process_bytes_after: int
    moved_fraction: float
    moved_requests_fraction: float
    formula_moved_fraction: float | None
    #: origin fetches over every window after the warm-up, three ways
    fetches_steady: int
    fetches_at_once: int
    fetches_staged: int
    #: origin fetches in the busiest window, staged and all at once
    peak_window_staged: int
    peak_window_at_once: int
    #: origin fetches per window, staged (the rollback included)
    staged_windows: list[int]
    #: fetches above the steady state from the rollback on (None: no rollback reached it)
    rollback_extra: int | None


@dataclass
class WaveFigures:
    name: str
    data_centres: int
    start_window: int
    #: origin fetches above the steady state over its data centres, staged / all at once
    extra_staged: int
    extra_at_once: int
    started: bool


@dataclass
class RollbackFigures:
    wave: str
    stage: int
    window: int
    data_centres: int
    #: fleet origin fetches above the steady state from the rollback window on
    extra_fetches: int
    #: the fleet's misses per request in the first window after the rollback, and steady
    first_window_rate: float
    steady_rate: float
    #: "warm" or "partly cold" as the LRU replay says (first window within 5% of steady)
    caches: str
    #: the new rings held until the rollback, over the fleet
    new_bytes_freed: int


@dataclass
class Fleet:
    made: str
    data_centres: int
    servers: int
    #: (servers per data centre, data centres) as drawn
    drawn_sizes: list[list[int]]
    memory_source: str
    bytes_per_entry: int
    to_label: str
    #: fleet bytes: before, at the peak (both rings resident) and after
    bytes_before: int
    bytes_peak: int
    bytes_after: int
    peak_window: int
    largest_process_before: int
    largest_process_after: int
    window_requests: int
    windows: int
    #: (series, window, origin fetches) over the fleet, and (window, bytes)
    timeline: list[tuple[str, int, int]]
    memory_timeline: list[tuple[int, int]]
    centres: list[CentreFigures]
    waves: list[WaveFigures]
    worst_centre: str
    worst_wave: str
    tasks: int
    rollback: RollbackFigures | None = None


@dataclass
class WavePlan:
    name: str
    data_centres: list[str]
    #: the window it starts in (None: it never starts, the rollback came first)
    start_window: int | None


@dataclass
class RolloutPlan:
    """The rollout as resolved against the fleet: each wave's data centres and start."""

    stages: list[float]
    windows_per_stage: int
    windows: int
    waves: list[WavePlan]
    rollback_window: int | None = None
