"""Simulated bands computed on every core equal the ones computed one after another."""

from __future__ import annotations

from functools import partial

from harness.reproduction.bands import cv_rows, in_parallel, simulated_band


def test_parallel_bands_are_bit_identical_and_in_order() -> None:
    """Each band seeds its own generator: forked workers give the sequential floats."""
    requests = [([50] * 20, None), ([7] * 5, 10_000), ([1000] * 3, None), ([3] * 40, 2_000)]
    tasks = [partial(simulated_band, points, cv_rows, keys, 500) for points, keys in requests]
    assert in_parallel(tasks, workers=2) == [task() for task in tasks]


def test_one_worker_runs_the_tasks_here() -> None:
    """With one worker (or one core) the tasks run in this process, in order."""
    assert in_parallel([lambda: 1, lambda: 2], workers=1) == [1, 2]
