"""Where independent tasks run: a process pool on this machine (`local`, the default) or a
Dask distributed cluster (`dask`), chosen on the command line.

A task is a picklable value and a module-level function of it; its answer depends on
nothing else (its seed is one of its inputs), so the results are the same bits whatever
the worker count and order. Answers come back as they finish, by task index; the caller
keeps them in task order.

Dask is an optional extra (`pip install 'ring-harness[cluster]'`): `dask` names a scheduler
(`tcp://HOST:PORT`) or, with none, starts a `LocalCluster` on this machine; it prints the
dashboard's address. A worker lost mid-run is Dask's to recover: it reruns the lost tasks
elsewhere.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from harness.core.errors import ScenarioError

EXECUTORS = ("local", "dask")
#: metrics whose figures are timings or counts of this machine (the memory metric measures
#: in a subprocess of its own; clients and foreign peers are timed): refused on a cluster
MACHINE_BOUND_METRICS = ("throughput", "counts", "callgrind", "memory", "clients", "foreign")
INSTALL_DASK = "pip install 'ring-harness[cluster]'"


@dataclass(frozen=True)
class ExecutorChoice:
    """The executor the command line chose."""

    kind: str = "local"
    #: tcp://HOST:PORT of a running Dask scheduler (None: a LocalCluster)
    scheduler: str | None = None
    #: workers of the local pool or the LocalCluster (None: this machine's cores)
    workers: int | None = None

    @property
    def distributed(self) -> bool:
        return self.kind == "dask"

    def describe(self) -> str:
        if self.kind == "local":
            return f"local process pool of {self.worker_count()} workers"
        return (f"Dask scheduler {self.scheduler}" if self.scheduler
                else f"Dask LocalCluster of {self.worker_count()} workers")

    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1

    def check(self) -> None:
        """Refuse, before any work, a choice this machine cannot run: Dask not installed."""
        if self.kind not in EXECUTORS:
            raise ScenarioError(f"--executor must be one of {', '.join(EXECUTORS)} "
                               f"(got {self.kind!r})")
        if self.scheduler is not None and self.kind != "dask":
            raise ScenarioError("--scheduler names a Dask scheduler: it needs --executor dask")
        if self.kind == "dask":
            try:
                import distributed  # noqa: F401
            except ImportError:
                raise ScenarioError("--executor dask needs Dask distributed, which is not "
                                   f"installed: {INSTALL_DASK}") from None


    def refuse_machine_bound(self, scenario: str, metrics: Sequence[str]) -> None:
        """Under a distributed executor, a scenario measuring timings or counts is refused:
        those figures belong to one measured machine, not to whichever worker ran them."""
        bound = [m for m in metrics if m in MACHINE_BOUND_METRICS]
        if self.distributed and bound:
            raise ScenarioError(f"{scenario}: measure.metrics {bound[0]!r} is refused under "
                                "--executor dask: timings and counts belong to one measured "
                                "machine (run it with --executor local)")


LOCAL = ExecutorChoice()


def run_tasks(choice: ExecutorChoice, function: Callable[[Any], Any], tasks: Sequence[Any],
              done: Callable[[int, Any], None], say: Callable[[str], None] | None = None) -> None:
    """Run `function` on every task; `done(index, answer)` as each finishes; `say` prints
    what the user needs to know (the Dask dashboard's address; default: to stderr)."""
    if say is None:
        def say(line: str) -> None:
            print(line, file=sys.stderr, flush=True)
    if not tasks:
        return
    if choice.kind == "dask":
        _run_dask(choice, function, tasks, done, say)
        return
    workers = min(choice.worker_count(), len(tasks))
    # Spawned, not forked: a worker is a fresh interpreter (no copy of the parent's arrays
    # or threads), as a Dask worker is, and a process of its own to anything measuring the
    # run's process tree (a forked child reads as a copy of its parent until it execs).
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context,
                             initializer=_unwind_on_sigterm) as pool:
        futures = {pool.submit(_in_worker, function, task): i
                   for i, task in enumerate(tasks)}
        try:
            for future in as_completed(futures):
                done(futures[future], future.result())
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM, a failed task): the running tasks are stopped,
            # not waited for; each worker unwinds, removing its temporary folders.
            workers_now = list(pool._processes.values())
            for process in workers_now:
                process.terminate()
            for process in workers_now:
                process.join()
            with contextlib.suppress(Exception):
                pool.shutdown(wait=True, cancel_futures=True)
            raise


class _Stopped(BaseException):
    """SIGTERM in a local worker, raised where its task is so that it unwinds."""


#: whether this worker is running a task (then SIGTERM unwinds it before the worker ends)
_in_task = False


def _unwind_on_sigterm() -> None:
    """In a local worker: SIGTERM unwinds the running task, so that its `finally` blocks
    and context managers run (its temporary folders go), then ends the worker; Python's
    default would end it where it stands."""
    signal.signal(signal.SIGTERM, _stop)


def _stop(_number: int, _frame: object) -> None:
    if _in_task:
        raise _Stopped
    os._exit(143)


def _in_worker(function: Callable[[Any], Any], task: Any) -> Any:
    """`function(task)` in a local worker; stopped, the worker ends once it has unwound
    (the pool would otherwise take the stop for the task's failure and run the next)."""
    global _in_task
    _in_task = True
    try:
        return function(task)
    except _Stopped:
        os._exit(143)
    finally:
        _in_task = False


def _run_dask(choice: ExecutorChoice, function: Callable[[Any], Any], tasks: Sequence[Any],
              done: Callable[[int, Any], None], say: Callable[[str], None]) -> None:
    from distributed import Client, LocalCluster
    from distributed import as_completed as dask_completed

    cluster = None
    if choice.scheduler is None:
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            # no more workers than tasks: each is a process of its own to start
            n_workers=min(choice.worker_count(), len(tasks)), threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0")
    address = cluster if cluster is not None else choice.scheduler
    try:
        with Client(address) as client:  # type: ignore[no-untyped-call]
            say(f"Dask dashboard: {client.dashboard_link}")
            futures = client.map(function, list(tasks), pure=False)
            index = {future.key: i for i, future in enumerate(futures)}
            for future in dask_completed(futures):  # type: ignore[no-untyped-call]
                done(index[future.key], future.result())
    finally:
        if cluster is not None:
            cluster.close()
