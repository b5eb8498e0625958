"""The bucketed batch lookup's tuning, chosen by measurement on the machine it runs on.

The window width, the pipeline depth and the offsets' prefetch distance of
`ring_bucketed_lookup_many` (cext/bucketed.c) trade cache lines fetched, misses in
flight and mispredicted fallbacks, and the best trade differs between CPUs: on an
Intel Xeon a 32-entry window measured best at 10M entries, on an AMD EPYC (Zen 2)
16 entries. So, as FFTW's planner times candidate plans and ATLAS times candidate
kernels when it is installed, `calibrate` times a small grid of tunings on the ring
itself and keeps the fastest:

1. the window widths (and the plain search) at the default depth and distance, each
   centred on the guess and on whole cache lines;
2. at the fastest width, the depths 8, 16 and 32 with the offsets 1, 2 and 4 times
   the depth ahead, beside the winner of stage 1;
3. at stage 2's choice, its window centred and starting on multiples of 8 and of 16
   entries (a cache line): fewer lines a key, more keys finished by the second pass.
   On an AMD EPYC of the Zen 3 generation a 16-entry window on whole lines took 0.61
   to 0.81 of the centred window's time; on a Zen 2, where a second adjacent line
   cost almost nothing, windows on multiples of 8 measured no faster.

Each stage runs `ROUNDS` interleaved rounds (every candidate once a round, the order
rotated from round to round), after one warm-up round, on `CALIBRATION_KEYS` uniform
keys. A candidate is judged by the median over the rounds of its time divided by the
stage's first candidate's in the same round (the default tuning, then stage one's
winner): paired, so a neighbour's load that comes and goes between rounds cancels
out, as it does not in a ratio of two medians. Calls are timed by this thread's CPU
time, not the wall clock: on a machine with more runnable processes than cores a
call of two milliseconds is often preempted for a whole time slice, which made wall
times bimodal (30 or 215 ns a key for the same candidate under a load average of 8
on two cores); a stall on memory is still CPU time. The first candidate stays chosen
unless another's paired median is `MARGIN` below 1: on a shared machine candidates
within a few percent swap places from run to run, and the choice should not. Every
candidate's routes are checked against the default tuning's on the same keys before
any is chosen.

The choice is cached per CPU (`cpu_model`: its name, family, model and stepping or
ARM implementer and part, and cache sizes, as a masked name is shared by CPUs that time
differently), ring size class (entries from 2**(k-1) to 2**k) and build of the C core
(the digest of the compiled module, so a rebuilt C core measures again): the cache file,
and the strict reader that refuses any record `measure` could not have written on this
machine, are in `bucketed_cache`.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

# Calibration and Trial, the records a calibration makes, are the results model's floor's
# (core/calibration.py); named here too, where they were made before.
from harness.core.calibration import Calibration as Calibration
from harness.core.calibration import Trial as Trial
from harness.core.errors import HarnessError
from harness.core.machine import cpu_model
from harness.core.native import bucketed as c_bucketed
from harness.core.native.bucketed import BucketedTuning

#: keys each candidate routes per round: 1 MiB of keys and 512 KiB of answers, past
#: the L2 cache as the batches of a run are (a scenario routes 1,000,000 keys a call).
#: At 2**16 keys and answers stay in the L2 between calls, and there the window's lines
#: cost nothing beside the floor's one (AMD EPYC, 10M entries: a 16-entry window's count
#: alone timed 1.0x the floor at 2**16 keys a call, 1.4x at 2**18 and at 10**6), so the
#: calibration judged a batch unlike the ones it was choosing for. About 5 ms a call.
CALIBRATION_KEYS = 2**18
#: timed rounds per stage (after one warm-up round): many short rounds, so that a burst
#: of a neighbour's load spoils a few pairs, not a candidate
ROUNDS = 15
#: how much faster than a stage's first candidate another must be to replace it
MARGIN = 0.03
#: the depth and distance the window widths are compared at (bucketed.c's defaults)
STAGE_ONE_DEPTH, STAGE_ONE_AHEAD = 16, 32
#: the depths of stage two, each with the offsets 1, 2 and 4 times as far ahead
STAGE_TWO_DEPTHS = (8, 16, 32)
STAGE_TWO_AHEAD_FACTORS = (1, 2, 4)
#: the window alignments of stage three (each at most the window)
STAGE_THREE_ALIGNMENTS = c_bucketed.ALIGNMENTS
#: entries in a 64-byte cache line: stage one also times every width on whole lines
LINE_ENTRIES = 16
#: the seed of the calibration keys: the same keys on every machine
KEYS_SEED = 28


@runtime_checkable
class Tunable(Protocol):
    """A form whose batch lookup is tuned by measurement before it is timed."""

    def calibrate(self) -> Calibration: ...


def size_class(entries: int) -> int:
    """k such that 2**(k-1) <= entries < 2**k: rings of one class share a tuning."""
    return max(1, entries).bit_length()


@cache
def c_core_digest() -> str:
    """The first 16 hex digits of the compiled C core's SHA-256: a rebuilt core with
    different code measures again."""
    digest = hashlib.sha256(Path(c_bucketed.compiled_module_file()).read_bytes())
    return digest.hexdigest()[:16]


def calibration_keys(count: int) -> npt.NDArray[np.uint32]:
    """Uniform 32-bit keys, the same on every machine (key hashes are uniform)."""
    return np.random.default_rng(KEYS_SEED).integers(0, 2**32, count, dtype=np.uint32)


LookupMany = Callable[[npt.NDArray[np.uint32], BucketedTuning], npt.NDArray[np.uint16]]


def _time_stage(lookup_many: LookupMany, keys: npt.NDArray[np.uint32],
                candidates: Sequence[BucketedTuning], rounds: int,
                expected: npt.NDArray[np.uint16]) -> list[list[float]]:
    """ns per key of each candidate over `rounds` interleaved rounds (after a warm-up
    round that also checks each candidate's routes against `expected`)."""
    samples: list[list[float]] = [[] for _ in candidates]
    for round_number in range(rounds + 1):
        shift = round_number % len(candidates)
        for index in [*range(shift, len(candidates)), *range(shift)]:
            start = time.thread_time_ns()
            routes = lookup_many(keys, candidates[index])
            elapsed = (time.thread_time_ns() - start) / len(keys)
            if round_number == 0:
                if not np.array_equal(routes, expected):
                    raise HarnessError(
                        f"bucketed calibration: {candidates[index].label} routed "
                        f"{int(np.count_nonzero(routes != expected))} of {len(keys)} keys "
                        "unlike the default tuning")
            else:
                samples[index].append(elapsed)
    return samples


def _trials(stage: int, candidates: Sequence[BucketedTuning],
            samples: list[list[float]]) -> list[Trial]:
    first = samples[0]
    return [Trial(stage, tuning.window, tuning.depth, tuning.offsets_ahead,
                  statistics.median(times), min(times), max(times),
                  statistics.median(time / base for time, base in
                                    zip(times, first, strict=True)), tuning.align)
            for tuning, times in zip(candidates, samples, strict=True)]


def stage_one(default: BucketedTuning) -> list[BucketedTuning]:
    """Every window width at the default depth and distance, centred and on whole lines
    (multiples of 16 entries, of 8 for the 8-entry window), the default first. Both
    alignments here, not only in stage three: centred, 8 and 16 entries time alike on a
    Zen 3 EPYC (paired 0.87 to 1.0), on whole lines 16 entries take one line a key and
    8 entries half the keys' answers, so a stage one of centred windows alone chose 8
    entries in one run of five, and stage three could not undo it."""
    widths = [BucketedTuning(window, STAGE_ONE_DEPTH, STAGE_ONE_AHEAD, align)
              for window in c_bucketed.WINDOWS
              for align in ((1, min(window, LINE_ENTRIES)) if window else (1,))]
    return [default, *(tuning for tuning in widths if tuning != default)]


def stage_two(best: BucketedTuning) -> list[BucketedTuning]:
    """The depths and distances around the fastest width, that width's stage-one tuning
    first (the search has neither, so it has no stage two)."""
    if best.window == 0:
        return []
    grid = [BucketedTuning(best.window, depth, depth * factor)
            for depth in STAGE_TWO_DEPTHS for factor in STAGE_TWO_AHEAD_FACTORS]
    return [best, *(tuning for tuning in grid if tuning != best)]


def stage_three(best: BucketedTuning) -> list[BucketedTuning]:
    """Stage two's choice with its window centred and on multiples of 8 and 16 entries,
    the choice first (the search has no window to align)."""
    if best.window == 0:
        return []
    aligned = [replace(best, align=align) for align in STAGE_THREE_ALIGNMENTS
               if align <= best.window]
    return [best, *(tuning for tuning in aligned if tuning != best)]


#: the stages after the first, each from the previous stage's winner (none after a stage
#: that has no candidates)
NEXT_STAGES: tuple[tuple[int, Callable[[BucketedTuning], list[BucketedTuning]]], ...] = (
    (2, stage_two), (3, stage_three))


def winner(trials: Sequence[Trial], first: int) -> int:
    """The index of a stage's winner (its trials start at `first`): the lowest paired
    ratio to the stage's first trial, if it is MARGIN below 1, else that first trial."""
    fastest = min(range(first, len(trials)), key=lambda i: trials[i].paired_ratio)
    return fastest if trials[fastest].paired_ratio < 1 - MARGIN else first


def measure(lookup_many: LookupMany, entries: int, *, keys: int | None = None,
            rounds: int | None = None) -> Calibration:
    """Time the grid on one ring (`lookup_many(keys, tuning)` routes through it), on
    `keys` keys (default CALIBRATION_KEYS) over `rounds` rounds a stage (default ROUNDS)."""
    keys = CALIBRATION_KEYS if keys is None else keys
    rounds = ROUNDS if rounds is None else rounds
    if rounds < 1 or keys < 1:
        raise HarnessError(f"bucketed calibration: rounds and keys must be at least 1 "
                           f"(got rounds={rounds}, keys={keys})")
    key_array = calibration_keys(keys)
    default = c_bucketed.default_tuning(entries)
    expected = lookup_many(key_array, default)
    candidates = stage_one(default)
    trials = _trials(1, candidates,
                     _time_stage(lookup_many, key_array, candidates, rounds, expected))
    chosen = winner(trials, 0)
    for stage, next_stage in NEXT_STAGES:
        candidates = next_stage(trials[chosen].tuning)
        if not candidates:
            break
        first = len(trials)
        trials += _trials(stage, candidates,
                          _time_stage(lookup_many, key_array, candidates, rounds, expected))
        chosen = winner(trials, first)
    return Calibration(
        cpu=cpu_model(), entries=entries, size_class=size_class(entries),
        c_core=c_core_digest(), measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        source="measured", keys=keys, rounds=rounds, trials=trials, chosen=chosen, default=0)


#: candidates one calibration times at most: every width centred and on whole lines (the
#: search has one form), the depth-distance grid, then the alignments
CANDIDATES = (2 * len(c_bucketed.WINDOWS) - 1
              + len(STAGE_TWO_DEPTHS) * len(STAGE_TWO_AHEAD_FACTORS)
              + len(STAGE_THREE_ALIGNMENTS))
#: seconds one calibration takes at most on a ring that does not fit in the caches
#: (every candidate over ROUNDS + 1 rounds at about 60 ns a key, a loaded machine's
#: figure), what the time estimate charges a bucketed form
CALIBRATION_SECONDS = CANDIDATES * (ROUNDS + 1) * CALIBRATION_KEYS * 60e-9
#: bytes a calibration holds: its keys (uint32) and one candidate's routes (uint16)
CALIBRATION_BYTES = CALIBRATION_KEYS * (4 + 2 + 2)
