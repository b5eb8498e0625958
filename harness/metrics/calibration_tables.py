"""The table a tuned form's calibration adds beside its lookup times: every candidate
tried, its ns per key over the rounds, and which was chosen and why (the fastest median
of the last stage), so a reader sees what ran and on what evidence."""

from __future__ import annotations

from harness.core.calibration import Calibration, Trial
from harness.core.tables import Cell, Table, code, literal, number, text
from harness.recipes.layouts.bucketed_tuning import MARGIN


def _tuning(trial: Trial) -> Cell:
    return text(trial.tuning.label)


def _role(calibration: Calibration, index: int) -> Cell:
    roles = (["chosen"] if index == calibration.chosen else []) + (
        ["default"] if index == calibration.default else [])
    return text(", ".join(roles))


def _alignments(calibration: Calibration) -> tuple[str, str]:
    """What stage 1 adds to "each window width" and what stage 3 is, as this calibration
    ran them: results written before windows could be aligned have neither, and render
    as they were written."""
    stage_one_aligned = any(trial.stage == 1 and trial.align > 1
                            for trial in calibration.trials)
    has_stage_three = any(trial.stage == 3 for trial in calibration.trials)
    return ((", centred on the guess and on whole cache lines" if stage_one_aligned else ""),
            (", stage 3 that choice's window centred and on multiples of 8 and 16 entries "
             "(16 are a cache line)" if has_stage_three else ""))


def calibration_table(form: str, calibration: Calibration) -> Table:
    """One row per trial, in the order tried, with the chosen one and the default marked."""
    chosen = calibration.trials[calibration.chosen]
    rows = [[text(str(trial.stage)), _tuning(trial),
             Cell(f"{trial.median_ns:,.1f} ({trial.min_ns:,.1f}-{trial.max_ns:,.1f})",
                  trial.median_ns),
             number(trial.paired_ratio, 3), _role(calibration, index)]
            for index, trial in enumerate(calibration.trials)]
    stage_one, stage_three = _alignments(calibration)
    where = ("measured in this run" if calibration.source == "measured"
             else f"read from the cache, measured {literal(calibration.measured_at)}")
    if calibration.cache_refused is not None:
        where += (f" (the tuning cache's record for this CPU, size class and C core was "
                  f"refused: {literal(calibration.cache_refused)})")
    notes = [
        f"How {code(form)}'s batch lookup was tuned before it was timed: "
        f"on {literal(calibration.cpu)}, for rings of {calibration.size_class_label} "
        f"(measured on one of {calibration.entries:,}), {where}, C core "
        f"{code(calibration.c_core)}. Stage 1 times each window width{stage_one}, stage 2 "
        f"the pipeline depths and offset distances at the fastest width{stage_three}; "
        f"each candidate "
        f"routes {calibration.keys:,} uniform keys in {calibration.rounds} interleaved "
        f"rounds after a warm-up (which checks its routes against the default's). "
        f"`vs first` is the median over the rounds of a candidate's time over its "
        f"stage's first candidate's in the same round; the first stays chosen unless "
        f"another's is {MARGIN:.0%} below 1. Chosen: {literal(chosen.tuning.label)}, "
        f"{calibration.speedup_over_default:.2f}x as fast as the default "
        f"({literal(calibration.trials[calibration.default].tuning.label)}).",
    ]
    return Table.of(["stage", "tuning", "ns per key median (min-max)", "vs first", "role"],
                    rows, notes=notes)
