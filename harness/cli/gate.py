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
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.apps.benchgate.gate import judge_run
from harness.cli.common import OneLineParser, escape_unshowable_output, parse_arguments
from harness.core.atomic import write_atomically
from harness.core.errors import HarnessError
from harness.core.outputs import check_outputs

UPDATE_VARIABLE = "RING_BENCH_UPDATE"
REGRESSIONS_VARIABLE = "RING_BENCH_REGRESSIONS"


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="ring-bench-gate", description=__doc__.splitlines()[0],
                           refusal_prefix="ring-bench-gate: ")
    parser.add_argument("results", type=Path, help="the suite's --benchmark-json file")
    parser.add_argument("--baseline-dir", type=Path, default=Path("benchmarks/baseline"))
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    escape_unshowable_output()
    args = parse_arguments(_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        if args.regressions_out is not None:
            # A device, FIFO or directory there would be replaced by the rename that writes it;
            # the baseline folder (made by this run if new) is no place for it either.
            check_outputs([args.regressions_out], [args.results, args.baseline_dir])
        regressions = judge_run(args.results, args.baseline_dir, update=args.update_baseline)
        if args.regressions_out is not None:
            write_atomically(args.regressions_out, "".join(f"{r}\n" for r in regressions))
        return 1 if regressions else 0
    except HarnessError as exc:
        message = f"unusable data: {exc}"
    except OSError as exc:
        message = f"cannot write the baseline or the regressions file: {exc}"
    # Names taken from the file may hold newlines; the message stays one line.
    print(f"ring-bench-gate: {message}".replace("\n", "\\n"), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
