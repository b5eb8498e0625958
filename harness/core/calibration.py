"""The record of a bucketed lookup's calibration: the tunings tried on a machine, the one
chosen, and the timings that chose it (`recipes/layouts/bucketed_tuning.py` measures it,
`bucketed_cache.py` keeps it, the throughput metric reports it).

On this floor because a result holds it: the results model reads it back (a cached record
or a result file), and each record checks itself as it is made (a tuning the C core
runs, stages in order, a choice among the trials), so that reading one calls nothing
above the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.core.errors import HarnessError
from harness.core.native.bucketed import BucketedTuning


@dataclass(frozen=True)
class Trial:
    """One candidate tuning and its ns per key over the rounds of its stage."""

    stage: int
    window: int
    depth: int
    offsets_ahead: int
    median_ns: float
    min_ns: float
    max_ns: float
    #: median over the rounds of its time over the stage's first candidate's in the same
    #: round (1 for the first itself): what the choice compares
    paired_ratio: float = 1.0
    align: int = 1

    def __post_init__(self) -> None:
        # A trial read back (a cache file, a result) must name a tuning the C core runs.
        try:
            self.tuning  # noqa: B018 - BucketedTuning checks itself
        except HarnessError as exc:
            raise ValueError(str(exc)) from None

    @property
    def tuning(self) -> BucketedTuning:
        return BucketedTuning(self.window, self.depth, self.offsets_ahead, self.align)


@dataclass(frozen=True)
class Calibration:
    """What was tried on which machine, what was chosen, and the timings that chose it."""

    cpu: str
    #: entries of the ring measured, and the size class the choice is kept for
    entries: int
    size_class: int
    #: digest of the compiled C core the timings were taken with
    c_core: str
    measured_at: str
    #: "measured" (in this process) or "cached" (read from the cache file)
    source: str
    keys: int
    rounds: int
    trials: list[Trial] = field(default_factory=list)
    #: the chosen trial (the last stage's winner: see `MARGIN`)
    chosen: int = 0
    #: the trial of the C core's default tuning for this size, in stage one
    default: int = 0
    #: why the cache's record for this CPU, size class and C core was refused, so that
    #: the choice was measured again (None: no record was refused; bucketed_cache)
    cache_refused: str | None = None

    def __post_init__(self) -> None:
        if not self.trials or not (0 <= self.chosen < len(self.trials)
                                   and 0 <= self.default < len(self.trials)):
            raise ValueError(
                f"a bucketed calibration's chosen and default trials must be among its "
                f"{len(self.trials)} trials (got chosen={self.chosen}, default={self.default})")
        stages = [trial.stage for trial in self.trials]
        if stages != sorted(stages) or sorted(set(stages)) != list(range(1, max(stages) + 1)):
            raise ValueError(f"a bucketed calibration's trials must run in stages 1, 2, ... "
                             f"in order (got stages {stages})")
        for stage in range(2, max(stages) + 1):
            first = next(t.tuning for t in self.trials if t.stage == stage)
            if not any(t.stage == stage - 1 and t.tuning == first for t in self.trials):
                raise ValueError(
                    f"a bucketed calibration's stage {stage} must start from a trial of "
                    f"stage {stage - 1} (got {first.label}, which stage {stage - 1} "
                    f"did not try)")

    @property
    def chosen_tuning(self) -> BucketedTuning:
        return self.trials[self.chosen].tuning

    @property
    def speedup_over_default(self) -> float:
        """How many times as fast as the default the choice measured: the product of the
        paired ratios that chose it (stage one's winner against the default, stage two's
        against that winner, and so on to the choice), inverted."""
        chosen = self.trials[self.chosen]
        ratio, stage = chosen.paired_ratio, chosen.stage
        while stage > 1:
            # a stage's first candidate is the previous stage's winner
            tuning = next(t.tuning for t in self.trials if t.stage == stage)
            stage -= 1
            ratio *= next(t.paired_ratio for t in self.trials
                          if t.stage == stage and t.tuning == tuning)
        return 1 / ratio if ratio > 0 else 1.0

    @property
    def size_class_label(self) -> str:
        return f"2**{self.size_class - 1} to 2**{self.size_class} entries"
