"""`ring-bench-gate RESULTS.json`: compare one run of `benchmarks/` with the committed baseline.

Exit status: 0 when nothing regressed (or a baseline was recorded), 1 on a
regression or on a benchmark of a baseline of this environment that the run did not
measure (and its plan did not leave out), 2 when the results cannot be judged: not
the suite's JSON, a mode the suite does not define, no timings or figures, NaN or
non-positive times, too few samples, nothing in common with a baseline of the same
environment, or a --baseline-dir that is not a directory. A baseline recorded in
another environment has its timings replaced, but its
CPU-independent figures (routing digests, and sizes where Python and the
architecture match) still decide. `--update-baseline` (or RING_BENCH_UPDATE=1
in the environment) rewrites the baseline on purpose.

`ring-bench-gate --against REV` needs no results file and no baseline: it builds REV from
a clean export and runs both suites side by side on this machine, alternating samples
(docs/guide/ab-gate.md). Same exit codes; 2 also when REV is unknown, has no benchmark
suite or does not build.

SIGINT and SIGTERM unwind the gate like an error: the base's build and the two workers
(each in a process group of its own) are killed, a half-built base and every temporary
folder removed, and one line says so; exit 130 (SIGINT) or 143 (SIGTERM).

The help and the flag checks need only the base install; a mode whose dependencies are
missing (NEEDED) exits 2 with one line naming what to install.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType

from harness.apps.benchgate.ab_gate import judge_against
from harness.apps.benchgate.ab_session import SamplingPlan
from harness.apps.benchgate.gate import judge_run
from harness.cli.common import OneLineParser, escape_unshowable_output, one_line, parse_arguments
from harness.core.atomic import write_atomically
from harness.core.errors import HarnessError
from harness.core.invocation import BENCH_GATE
from harness.core.outputs import check_outputs

#: what each mode imports beyond the base install (module: distribution), all in the test
#: extra: judging timings takes scipy's Mann-Whitney U test, and --against runs the suite
#: under pytest-benchmark in this environment. Every mode needs the suite (benchmarks/, in
#: the checkout), whose own run needs that extra too, so the gate names it rather than
#: the base install carrying scipy for everyone.
NEEDED = {"judge": {"scipy": "scipy"},
          "against": {"pytest": "pytest", "pytest_benchmark": "pytest-benchmark"}}
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143
UPDATE_VARIABLE = "RING_BENCH_UPDATE"
REGRESSIONS_VARIABLE = "RING_BENCH_REGRESSIONS"


def _bounded(kind: Callable[[str], float], low: float, high: float,
             what: str) -> Callable[[str], float]:
    """An argparse type: a number of `kind` in [low, high], else a one-line refusal."""

    def convert(text: str) -> float:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            value = math.nan
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {what} from {low:g} to {high:g} "
                                             f"(got {text[:40]!r})")
        return value

    return convert


DEFAULTS = SamplingPlan()


class Terminated(BaseException):
    """SIGTERM, raised where the gate is, so that it unwinds like Ctrl-C (cleanup included)."""


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt and SIGTERM Terminated, once: a second signal while
    the first unwinds is ignored, so the cleanup (killing a build, removing its folder)
    finishes. The previous handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = False

    def stop(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            if number == signal.SIGTERM and handler in (signal.SIG_DFL, None):
                # Between here and the process's exit a SIGTERM would end it unannounced
                # (the default action): the gate has given its verdict, so say so.
                handler = _terminated_after_verdict
            signal.signal(number, handler)


def _terminated_after_verdict(_signum: int, _frame: FrameType | None) -> None:
    try:
        print(f"{BENCH_GATE.name()}: terminated as it was exiting, after its verdict",
              file=sys.stderr, flush=True)
    finally:
        os._exit(EXIT_TERMINATED)


def _stopped(how: str, against: bool) -> str:
    """The one line of a gate stopped by a signal: what it left behind (nothing half-done)."""
    if against:
        return (f"{how}: the base's build and both workers stopped, nothing half-built kept "
                "in the cache, and every file written whole or not at all")
    return f"{how}: the baseline and the regressions file are as they were, or whole"




def _parser(prog: str) -> argparse.ArgumentParser:
    parser = OneLineParser(prog=prog, description=__doc__.splitlines()[0],
                           refusal_prefix=f"{prog}: ")
    parser.add_argument("results", type=Path, nargs="?",
                        help="the suite's --benchmark-json file (not with --against)")
    parser.add_argument("--baseline-dir", type=Path, default=None,
                        help="folder of the committed baselines (default benchmarks/baseline)")
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        default=os.environ.get(UPDATE_VARIABLE, "") not in ("", "0"),
        help=f"rewrite the baseline with this run (also: {UPDATE_VARIABLE}=1)",
    )
    parser.add_argument(
        "--regressions-out",
        type=Path,
        default=os.environ.get(REGRESSIONS_VARIABLE) or None,
        help="write the names of the regressions found, one per line (empty when none), so "
        f"that a second run can confirm them (also: {REGRESSIONS_VARIABLE}=FILE)",
    )
    ab = parser.add_argument_group("A/B against a base commit (the documentation's A/B gate page)")
    ab.add_argument("--against", metavar="REV",
                    help="build REV from a clean export and time both sides, interleaved")
    ab.add_argument("--suite", type=Path, default=Path("benchmarks"),
                    help="the candidate's benchmark suite (default benchmarks)")
    ab.add_argument("--bench-mode", default="short", help="the suite's plan (default short)")
    ab.add_argument("--report-dir", type=Path,
                    help="write ab-gate.md and ab-gate.html there")
    ab.add_argument("--rounds", type=_bounded(int, 1, 1000, "a whole number"),
                    default=DEFAULTS.rounds, help="timed calls per sample")
    ab.add_argument("--min-pairs", type=_bounded(int, 5, 10_000, "a whole number"),
                    default=DEFAULTS.min_pairs, help="pairs of samples every benchmark gets")
    ab.add_argument("--max-pairs", type=_bounded(int, 5, 10_000, "a whole number"),
                    default=DEFAULTS.max_pairs, help="most pairs of one benchmark")
    ab.add_argument("--sensitivity", type=_bounded(float, 1.0001, 100, "a ratio"),
                    default=DEFAULTS.sensitivity,
                    help="stop sampling a benchmark once its detectable effect is this small")
    ab.add_argument("--max-seconds", type=_bounded(float, 0, 86_400, "seconds"),
                    default=DEFAULTS.max_seconds,
                    help="time budget of the sampling (after min-pairs)")
    return parser


def _check_mode_flags(args: argparse.Namespace) -> str | None:
    """Why the flags do not make one gate run (None: they do)."""
    if args.against is None:
        if args.results is None:
            return "expected a results file, or --against REV"
        return None
    if args.results is not None:
        return "--against measures both sides itself: give no results file"
    if args.baseline_dir is not None or args.update_baseline:
        return "--against compares with a base commit, not with a baseline"
    if args.min_pairs > args.max_pairs:
        return f"--min-pairs {args.min_pairs} is above --max-pairs {args.max_pairs}"
    return None


def _check_needed(args: argparse.Namespace) -> str | None:
    """What to install for the mode chosen, in one line (None: nothing missing)."""
    mode = "judge" if args.against is None else "against"
    missing = []
    for module, distribution in NEEDED[mode].items():
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(distribution)
    if not missing:
        return None
    what = "judging a results file" if mode == "judge" else "--against"
    return (f"{what} needs {' and '.join(missing)}, which the base install leaves out: "
            "pip install 'ring-harness[test]'")


def _run(args: argparse.Namespace) -> list[str]:
    if args.against is None:
        baseline_dir = args.baseline_dir or Path("benchmarks/baseline")
        return judge_run(args.results, baseline_dir, update=args.update_baseline)
    plan = SamplingPlan(rounds=int(args.rounds), min_pairs=int(args.min_pairs),
                        max_pairs=int(args.max_pairs), sensitivity=args.sensitivity,
                        max_seconds=args.max_seconds)
    return judge_against(args.suite, args.against, args.bench_mode, plan, args.report_dir)


def main(argv: Sequence[str] | None = None) -> int:
    escape_unshowable_output()
    prog = BENCH_GATE.name()
    args = parse_arguments(_parser(prog), argv)
    if isinstance(args, int):
        return args
    conflict = _check_mode_flags(args) or _check_needed(args)
    if conflict is not None:
        print(f"{prog}: {conflict}", file=sys.stderr)
        return 2
    try:
        with _stopped_by_signals():
            return _judge(args)
    except KeyboardInterrupt:
        print(f"{prog}: {_stopped('interrupted', args.against is not None)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"{prog}: {_stopped('terminated', args.against is not None)}", file=sys.stderr)
        return EXIT_TERMINATED


def _judge(args: argparse.Namespace) -> int:
    prog = BENCH_GATE.name()
    try:
        inputs = [args.results, args.baseline_dir or Path("benchmarks/baseline")]
        if args.against is not None:
            inputs = [args.suite]
            if args.report_dir is not None:
                check_outputs([args.report_dir / "ab-gate.md", args.report_dir / "ab-gate.html"],
                              [args.suite])
        if args.regressions_out is not None:
            # A device, FIFO or directory there would be replaced by the rename that writes it;
            # the baseline folder (made by this run if new) is no place for it either.
            check_outputs([args.regressions_out], inputs)
        regressions = _run(args)
        if args.regressions_out is not None:
            write_atomically(args.regressions_out, "".join(f"{r}\n" for r in regressions))
        return 1 if regressions else 0
    except HarnessError as exc:
        message = f"unusable data: {exc}"
    except OSError as exc:
        message = f"cannot write the baseline or the regressions file: {exc}"
    # Names taken from the file may hold newlines; the message stays one line.
    print(f"{prog}: {one_line(message)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
