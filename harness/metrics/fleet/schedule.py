"""The rollout's timeline: which data centres each wave takes, and each data centre's share
of requests on the new ring in every window of requests.

Window 0 is steady (every data centre on the old ring, after the warm-up). The first wave
starts at window 1; each next wave `windows_between_waves` later (0: when the previous
wave's last stage ends). Inside a data centre each stage lasts `windows_per_stage` windows,
then it stays on the new ring. A rollback after stage k of wave W sends every data centre
back to the old ring from then on, and the waves after it never start. Old rings stay
resident everywhere until the rollout ends (that is what keeps the rollback available);
then they are retired fleet-wide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.core.errors import ScenarioError
from harness.metrics.fleet.options import MAX_WINDOWS, FleetOptions, RolloutOptions, Wave


@dataclass(frozen=True)
class Timeline:
    waves: tuple[Wave, ...]
    #: the window each wave starts in
    starts: tuple[int, ...]
    windows: int
    #: the window from which every data centre is back on the old ring (None: no rollback)
    rollback_window: int | None
    #: the window the old rings are retired in (None: never, after a rollback)
    retired_window: int | None
    #: each data centre's wave (None: in no wave, or in a wave that never started)
    wave_of: tuple[int | None, ...]

    def shares(self, centre: int, stages: tuple[float, ...], per_stage: int,
               staged: bool = True) -> tuple[float, ...]:
        """The data centre's share of requests on the new ring in each window: through its
        stages (`staged`), or all at once when its wave starts."""
        wave = self.wave_of[centre]
        found = []
        for t in range(self.windows):
            share = 0.0
            if wave is not None and t >= self.starts[wave]:
                step = (t - self.starts[wave]) // per_stage
                share = 1.0 if not staged or step >= len(stages) else stages[step]
            if self.rollback_window is not None and t >= self.rollback_window:
                share = 0.0
            found.append(share)
        return tuple(found)

    def holds_new(self, centre: int, t: int) -> bool:
        """Whether the data centre's processes hold the new rings in window t."""
        wave = self.wave_of[centre]
        if wave is None or t < self.starts[wave]:
            return False
        return self.rollback_window is None or t < self.rollback_window

    def holds_old(self, centre: int, t: int) -> bool:
        return self.retired_window is None or t < self.retired_window


def resolve_waves(fleet: FleetOptions, rollout: RolloutOptions, file: str) -> tuple[Wave, ...]:
    """The data centres of each wave, in the fleet's order: `count` takes the next ones,
    `share` those up to that share of the fleet, `data_centres` those named."""
    names = {c.name: i for i, c in enumerate(fleet.data_centres)}
    total = len(fleet.data_centres)
    taken: set[int] = set()
    waves = []
    for i, spec in enumerate(rollout.waves):
        where = f"rollout.waves[{i}]"
        if "data_centres" in spec:
            unknown = [n for n in spec["data_centres"] if n not in names]
            if unknown:
                raise ScenarioError(f"{file}: {where}.data_centres must name data centres of "
                                    f"[fleet] (got {unknown[0]!r})")
            members = [names[n] for n in spec["data_centres"]]
        else:
            free = [j for j in range(total) if j not in taken]
            want = (spec["count"] if "count" in spec
                    else math.ceil(spec["share"] * total - 1e-9) - len(taken))
            members = free[:max(0, want)]
        again = [fleet.data_centres[j].name for j in members if j in taken]
        if again:
            raise ScenarioError(f"{file}: {where} must take data centres no earlier wave "
                                f"took (got {again[0]!r} again)")
        if not members:
            raise ScenarioError(f"{file}: {where} must add at least one data centre (got "
                                f"none: the earlier waves already cover {len(taken)} of "
                                f"{total})")
        taken.update(members)
        waves.append(Wave(spec["name"], tuple(members)))
    return tuple(waves)


def timeline(fleet: FleetOptions, rollout: RolloutOptions, file: str) -> Timeline:
    waves = resolve_waves(fleet, rollout, file)
    length = len(rollout.stages) * rollout.windows_per_stage
    gap = rollout.windows_between_waves or length
    starts = tuple(1 + i * gap for i in range(len(waves)))
    rollback = None
    if rollout.rollback is not None:
        name, stage = rollout.rollback
        index = [w.name for w in waves].index(name)
        rollback = starts[index] + stage * rollout.windows_per_stage
    end = rollback if rollback is not None else starts[-1] + length
    windows = end + rollout.windows_after
    if windows > MAX_WINDOWS:
        raise ScenarioError(f"{file}: rollout must span at most {MAX_WINDOWS} windows (got "
                            f"{windows}: fewer waves, stages or windows_per_stage)")
    wave_of: list[int | None] = [None] * len(fleet.data_centres)
    for w, wave in enumerate(waves):
        if rollback is None or starts[w] < rollback:
            for j in wave.members:
                wave_of[j] = w
    return Timeline(waves, starts, windows, rollback,
                    None if rollback is not None else end, tuple(wave_of))
