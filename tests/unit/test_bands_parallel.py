"""Simulated bands computed on every core equal the ones computed one after another."""

from __future__ import annotations

import multiprocessing
import signal
from functools import partial

from harness.apps.reproduction.bands import cv_rows, in_parallel, simulated_band


def test_parallel_bands_are_bit_identical_and_in_order() -> None:
    """Each band seeds its own generator: forked workers give the sequential floats."""
    requests = [([50] * 20, None), ([7] * 5, 10_000), ([1000] * 3, None), ([3] * 40, 2_000)]
    tasks = [partial(simulated_band, points, cv_rows, keys, 500) for points, keys in requests]
    assert in_parallel(tasks, workers=2) == [task() for task in tasks]


def test_one_worker_runs_the_tasks_here() -> None:
    """With one worker (or one core) the tasks run in this process, in order."""
    assert in_parallel([lambda: 1, lambda: 2], workers=1) == [1, 2]


def _worker_signals() -> tuple[bool, bool]:
    return (signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
            signal.getsignal(signal.SIGINT) == signal.SIG_IGN)


def test_workers_leave_the_harness_signal_handlers_to_the_parent() -> None:
    """Forked under the CLI's SIGTERM handler (which raises), the workers run with SIGTERM's
    default and SIGINT ignored, and all have exited when the call returns: the pool is
    closed and joined, never left to terminate() (which once hung a CI run on a worker
    that did not die of its signal)."""
    def raise_terminated(_signum: int, _frame: object) -> None:
        raise RuntimeError("the harness's handler ran in a worker")

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        assert in_parallel([_worker_signals] * 4, workers=2) == [(True, True)] * 4
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert multiprocessing.active_children() == []
