"""Command line: `python -m harness run|show|compare|reproduce|explore|plan|abi|scenarios|gate`.

Exit codes: 0 done; 1 a check failed during the run (e.g. parity) or an
internal error; 2 bad input (scenario, result file, output path, name), one
line and nothing written; 130 interrupted (Ctrl-C); 143 terminated
(SIGTERM). On both signals the children are stopped and reaped and the run's
temporary folder removed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType

from harness.apps.doctor import report as doctor_report
from harness.apps.explore import explorer_page, scenario_ring, simulator_ring
from harness.apps.gate import report as gate_report
from harness.apps.gate.ab import GATE_PLAN
from harness.apps.gate.command import GateRequest, run_gate
from harness.apps.identify import identify
from harness.apps.plan import (
    Rings,
    check_hash,
    check_layouts,
    default_layouts,
    numbered_fleet,
    plan_document,
    scenario_fleet,
    weighted_fleet,
)
from harness.apps.reproduction.command import (
    chosen_names,
    missing_results,
    run_scenarios,
    write_report,
)
from harness.cli.common import (
    EXIT_BAD_INPUT,
    OneLineParser,
    escape_unshowable_output,
    one_line,
    parse_arguments,
    terminal_text,
)
from harness.core.atomic import write_atomically, write_together
from harness.core.cost import NOTHING, Cost
from harness.core.errors import (
    HarnessError,
    OutputError,
    ResultFormatError,
    ScenarioError,
    UnknownNameError,
)
from harness.core.executor import EXECUTORS, ExecutorChoice
from harness.core.hashing import HASHES
from harness.core.invocation import HARNESS
from harness.core.native.foreign import ABI_VERSION, HEADER
from harness.core.outputs import Outcome, beside, check_outputs
from harness.core.task_store import default_task_dir
from harness.recipes.peers.foreign.protocol import PROTOCOL_VERSION
from harness.recipes.plugins import plugin_failure
from harness.report import html, markdown
from harness.report.compare import comparison_report
from harness.report.history import (
    default_history_dir,
    find,
    is_history_name,
    machine_name,
    next_number,
    record,
)
from harness.report.history_figures import index_cost, write_sidecar
from harness.report.history_page import write_index
from harness.report.results import (
    load_result,
    only_point,
    result_paths,
    split_point,
    write_result,
)
from harness.report.sections import result_report
from harness.run.builtin import DEFAULT_NAME, builtin_folder, builtin_scenarios, find_scenario
from harness.run.estimate import DEFAULT_MAX_MINUTES, check_memory, check_time
from harness.run.machine_check import check_machine
from harness.run.runner import TaskPlace, run_scenario
from harness.run.scenario import load_scenario

DEFAULT_SCENARIO = builtin_folder() / f"{DEFAULT_NAME}.toml"
EXIT_FAILED, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 130, 143


class Terminated(BaseException):
    """SIGTERM, raised where the run is, so that it unwinds like Ctrl-C (cleanup included)."""


def _terminate(_signum: int, _frame: FrameType | None) -> None:
    raise Terminated


def _minutes(text: str) -> float:
    """--max-minutes: a positive, finite number of minutes."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"a positive number of minutes (got {text!r})")
    return value


def _seed(text: str) -> int:
    """--seed: a hash seed, an integer from 0 to 2**64 - 1 (decimal, or hex with 0x)."""
    try:
        value = int(text, 0)
    except ValueError:
        value = -1
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(
            f"an integer from 0 to 2**64-1, decimal or 0x hex (got {text!r})")
    return value


def _history_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument("--history", type=Path,
                         help="the run history's folder (default: $RING_HARNESS_HISTORY; "
                              "else runs/history here if it exists, or at the top of a git "
                              "work tree that ignores it; else the user data folder)")


def _history(args: argparse.Namespace) -> tuple[Path, str]:
    """The history folder the command uses, and why (the run's last line names both)."""
    if args.history is not None:
        return args.history, "--history names it"
    return default_history_dir()


def _workers(text: str) -> int:
    """--workers: a whole number from 1 to 1024."""
    if not text.isdigit() or not 1 <= int(text) <= 1024:
        raise argparse.ArgumentTypeError(f"a whole number of workers from 1 to 1024 "
                                         f"(got {text!r})")
    return int(text)


def _executor_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--executor", choices=EXECUTORS, default=None,
                         help="where a fleet's data centres (always) and a sweep's points (when "
                              "this is given) run as tasks: a local process pool (the "
                              "default for a fleet) or a Dask cluster (pip install "
                              "'ring-harness[cluster]')")
    command.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                         help="a running Dask scheduler (default with --executor dask: a "
                              "LocalCluster on this machine)")
    command.add_argument("--workers", type=_workers,
                         help="workers of the local pool or LocalCluster (default: the "
                              "machine's cores)")
    command.add_argument("--task-dir", type=Path, default=None,
                         help="where finished tasks are kept, so an interrupted run resumes "
                              "(default: $RING_HARNESS_TASKS, else the user cache folder's "
                              "ring-harness/tasks)")


def _task_place(args: argparse.Namespace) -> TaskPlace:
    choice = ExecutorChoice(args.executor or "local", args.scheduler, args.workers)
    choice.check()
    root = args.task_dir if args.task_dir is not None else default_task_dir()
    # Checked before any work: a fleet's tasks are written there as each finishes.
    blocking = next((p for p in (root, *root.parents) if p.exists()), None)
    if blocking is not None and not blocking.is_dir():
        raise OutputError(f"--task-dir must be a folder, or a path to make one (got {root}: "
                          f"{blocking} is not a folder)")
    # A sweep's points are tasks only when an executor was chosen: a small sweep runs
    # faster in this process than in workers that start and name the keys again.
    return TaskPlace(choice, root, sweep=args.executor is not None)


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=HARNESS.name(),
        description="Benchmark and memory-profile consistent-hash rings in several layouts.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help="run scenarios; keep each result in the run history, and with --out "
                    "write NAME.json, NAME.md and NAME.html")
    run.add_argument("scenarios", nargs="*",
                     help="scenario TOML files, or built-in scenarios by name (the "
                          f"'scenarios' command lists them; default: {DEFAULT_NAME})")
    run.add_argument("--out", type=Path,
                     help="also write the result files to this folder (--out results "
                          "replaces the committed, curated results)")
    _history_argument(run)
    run.add_argument("--no-history", action="store_true",
                     help="keep no history entry (then --out is needed)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="show a progress bar (default: only when stderr is a terminal)")
    run.add_argument("--max-minutes", type=_minutes, default=DEFAULT_MAX_MINUTES,
                     help="refuse, before any work, a scenario whose estimated work takes "
                          f"longer (default {DEFAULT_MAX_MINUTES:g})")
    _executor_arguments(run)
    show = commands.add_parser("show", help="re-render a result as Markdown")
    show.add_argument("result", type=Path)
    show.add_argument("--write", action="store_true",
                      help="also rewrite RESULT.md and RESULT.html beside it from the JSON "
                           "(after a renderer change; the JSON is left as it is)")
    compare = commands.add_parser("compare", help="two results side by side, with changes")
    for side in ("a", "b"):
        compare.add_argument(side, type=Path,
                             help="a result file, 'latest', 'previous' or a run id of the "
                                  "history; any of them with #LABEL for one sweep point of "
                                  "it (such as tutorial.json#k=16)")
    _history_argument(compare)
    compare.add_argument("--out", type=Path,
                         help="also write the table to this Markdown file, and an HTML page "
                              "beside it (same name, .html)")
    reproduce = commands.add_parser(
        "reproduce", help="run the built-in reproduction scenarios (reproduce/...), write "
        "REPRODUCTION.md, REPRODUCTION.html and plots")
    reproduce.add_argument("--out", type=Path, default=Path("results"),
                           help="folder for REPRODUCTION.md and REPRODUCTION.html; results and "
                                "plots go to OUT/reproduce/ (default: results/)")
    reproduce.add_argument("--no-run", action="store_true",
                           help="re-render from the results already in OUT/reproduce/")
    reproduce.add_argument("--only", metavar="NAME,NAME",
                           help="run (or with --no-run, read) these reproduction scenarios "
                                "only; the report holds the figures they answer")
    reproduce.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                           help="show a progress bar (default: only when stderr is a terminal)")
    reproduce.add_argument("--max-minutes", type=_minutes, default=DEFAULT_MAX_MINUTES,
                           help="the time budget checked before any work, per scenario "
                                f"(default {DEFAULT_MAX_MINUTES:g})")
    explore = commands.add_parser(
        "explore", help="write the ring explorer: an interactive page of a ring")
    explore.add_argument("scenario", nargs="?",
                         help="a scenario file or built-in name whose ring to explore "
                              "(default: the simulator's ring)")
    explore.add_argument("--servers", type=int, default=3,
                         help="servers of the simulator's ring (default 3; no scenario only)")
    explore.add_argument("--points", type=int,
                         help="points per unit weight (default: 100, or the scenario's)")
    explore.add_argument("--out", type=Path, required=True, help="the page to write (.html)")
    plan = commands.add_parser(
        "plan", help="the smallest points per server for a balance target, and its cost")
    plan.add_argument("scenario", nargs="?",
                      help="a scenario file or built-in name whose servers to plan for (and, "
                           "with [process], every ring of the process)")
    plan.add_argument("--servers", type=int, help="N servers of weight 1")
    plan.add_argument("--weights", help="or one server per weight, e.g. 1,2,5")
    plan.add_argument("--target-cv", type=float, help="largest CV of load, e.g. 0.01 for 1%%")
    plan.add_argument("--target-peak-to-mean", type=float, help="largest peak-to-mean, e.g. 1.05")
    plan.add_argument("--hash", default="blake2b-32", help="hash of points (default blake2b-32)")
    plan.add_argument("--layouts", default=None,
                      help="comma-separated layouts to cost (default: four of the 32-bit ones)")
    plan.add_argument("--out", type=Path, help="also write FILE.md and FILE.html")
    abi = commands.add_parser(
        "abi", help="print the path of ring_peer.h, the C ABI of foreign peers, its version "
        "and the process protocol's")
    abi.add_argument("--path", action="store_true", help="print the header's path only")
    commands.add_parser(
        "scenarios", help="list the built-in scenarios, which run, plan and explore take by "
        "name, with their descriptions")
    _gate_parser(commands)
    identify = commands.add_parser(
        "identify", help="which recipe routes like observed traffic: a CSV of key,server "
        "and the server list, searched over the shipped clients and the client traits")
    identify.add_argument("routing", type=Path,
                          help="observed routing: a CSV of key,server rows")
    identify.add_argument("servers", type=Path,
                          help="the servers in client order: a TOML file of [[servers]] "
                               "name and weight, or a CSV of name[,weight]")
    identify.add_argument("--max-minutes", type=_minutes, default=DEFAULT_MAX_MINUTES,
                          help="the time budget, held before each stage of the search: a "
                               "stage whose estimate, added to those of the stages run, is "
                               "longer is refused before it starts (exit 2) "
                               f"(default {DEFAULT_MAX_MINUTES:g})")
    identify.add_argument("--out", type=Path, help="also write the report to this file")
    identify.add_argument("--seed", type=_seed, action="append", default=[],
                          help="a rendezvous seed to try besides the search's own (an integer "
                               "from 0 to 2**64-1, decimal or 0x hex; repeatable)")
    commands.add_parser(
        "doctor", help="what this machine has for the harness: the C core, the CPU results "
        "name, the history and tuning folders, each optional tool (or how to install it), "
        "and what would be refused or skipped here")
    return parser


def _gate_parser(commands: argparse._SubParsersAction[OneLineParser]) -> None:
    gate = commands.add_parser(
        "gate", help="judge a change of a ring implementation (a foreign peer, or the "
        "layouts) by its figures: A/B against a base build, against a baseline result, or "
        "against the run history; exit 1 on a regression")
    gate.add_argument("scenario", help="the scenario file (or a built-in name); its [gate] "
                                       "table holds the thresholds")
    base = gate.add_argument_group("A/B: the base build, timed interleaved in this job")
    base.add_argument("--base-library", type=Path, metavar="PATH",
                      help="the base build of the scenario's library peer")
    base.add_argument("--base-command", metavar="CMD",
                      help="the base build's command of the scenario's command peer")
    base.add_argument("--base-rev", metavar="REV",
                      help="a revision of the git repository (with --build): exported and "
                           "built in a scratch folder")
    base.add_argument("--build", metavar="CMD", help="the shell command that builds --base-rev")
    base.add_argument("--repository", type=Path, default=Path("."),
                      help="the git repository of --base-rev (default: here)")
    base.add_argument("--peer", metavar="NAME",
                      help="the foreign peer --base-library or --base-command replaces "
                           "(default: the only one)")
    base.add_argument("--max-seconds", type=float, default=None,
                      help="seconds of interleaved sampling (default 20)")
    gate.add_argument("--baseline", type=Path, metavar="RESULT",
                      help="baseline mode: a committed result file of the scenario")
    gate.add_argument("--against-history", action="store_true",
                      help="history mode: this machine's run history (--history)")
    gate.add_argument("--judge-timings", action="store_true",
                      help="baseline and history modes: judge timings too, on the same CPU "
                           "(off by default: runs apart differ by more than any threshold "
                           "on a shared machine; A/B mode times in one job)")
    _history_argument(gate)
    gate.add_argument("--result", type=Path, metavar="RESULT",
                      help="judge this result instead of running the scenario (baseline "
                           "and history modes)")
    gate.add_argument("--threshold", action="append", default=[], metavar="FIGURE=RATIO",
                      help="replace one of the [gate] table's thresholds (repeatable)")
    gate.add_argument("--json", type=Path, metavar="FILE", help="write the JSON report")
    gate.add_argument("--markdown", type=Path, metavar="FILE", help="write the Markdown report")
    gate.add_argument("--html", type=Path, metavar="FILE", help="write the HTML report")
    gate.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML")
    gate.add_argument("--max-minutes", type=_minutes, default=DEFAULT_MAX_MINUTES,
                      help="refuse, before any work, a gate whose estimated work takes "
                           f"longer (default {DEFAULT_MAX_MINUTES:g})")


def _gate(args: argparse.Namespace) -> int:
    if args.max_seconds is not None and not 0 < args.max_seconds <= 3600:
        raise ScenarioError(f"--max-seconds: expected a number of seconds from 0 to 3600 "
                            f"(got {args.max_seconds:g})")
    outputs = {args.json: gate_report.json_text, args.markdown: gate_report.markdown,
               args.html: gate_report.html_page, args.junit: gate_report.junit}
    written = [path for path in outputs if path is not None]
    summary = os.environ.get("GITHUB_STEP_SUMMARY") if os.environ.get(
        "GITHUB_ACTIONS") == "true" else None
    inputs = [p for p in (args.baseline, args.result, args.base_library) if p is not None]
    check_outputs(written, [_scenario(args.scenario), *inputs])
    plan = GATE_PLAN if args.max_seconds is None else dataclasses.replace(
        GATE_PLAN, max_seconds=args.max_seconds)
    request = GateRequest(
        _scenario(args.scenario), args.threshold, args.base_library, args.base_command,
        args.base_rev, args.build, args.repository, args.peer, args.baseline,
        args.against_history, args.history if args.history is not None else None,
        args.result, args.max_minutes, plan, args.judge_timings)
    history = _history(args)[0] if args.against_history else Path()
    report = run_gate(request, history)
    if written:
        write_together({path: outputs[path](report) for path in written})
        args.outcome.wrote(written)
    print(terminal_text(gate_report.markdown(report)), end="")
    if summary:
        with open(summary, "a", encoding="utf-8") as stream:
            stream.write(gate_report.markdown(report))
        for line in gate_report.github_annotations(report):
            print(one_line(line))
    # Exit 1: one line per failed figure on stderr (the report on stdout says the rest).
    for check in report.regressions:
        print(f"regression: {one_line(check.line())}", file=sys.stderr)
    return 0 if report.passed else EXIT_FAILED


def _scenario(argument: str) -> Path:
    """A scenario argument's file: the file itself, or the built-in scenario so named."""
    return find_scenario(argument, f"`{HARNESS.name()} scenarios`")


def _scenarios(_args: argparse.Namespace) -> int:
    listed = builtin_scenarios()
    width = max((len(s.name) for s in listed), default=0)
    print(f"{len(listed)} built-in scenarios, in {one_line(builtin_folder())}; run one by "
          f"name (`{HARNESS.name()} run tutorial`), or copy its file to change it:")
    for scenario in listed:
        print(f"{one_line(scenario.name):<{width}}  {one_line(scenario.description)}")
    return 0


def _doctor(_args: argparse.Namespace) -> int:
    for line in doctor_report(HARNESS.name()):
        print(one_line(line) if line else "")
    return 0


def _identify(args: argparse.Namespace) -> int:
    if args.out is not None:
        check_outputs([args.out], [args.routing, args.servers])

    def say(text: str) -> None:
        print(terminal_text(text), file=sys.stderr, flush=True)

    report, _ = identify(args.routing, args.servers, args.max_minutes, say, args.seed)
    if args.out is not None:
        write_atomically(args.out, report)
    print(terminal_text(report), end="")
    return 0


def _abi(args: argparse.Namespace) -> int:
    print(HEADER if args.path else f"{HEADER}\nring_peer ABI version {ABI_VERSION}\n"
          f"process protocol version {PROTOCOL_VERSION}")
    return 0


def command_cost(history: Path, runs: int) -> Cost:
    """What `run` does beside its runs, with each run's result still held: the history's
    index rewritten after each (`index_cost`), its bytes on top of the run's."""
    index = index_cost(history)
    why = (f"the run history's index ({history}, {index.entries:,} entries: --history, "
           "or --no-history)")
    return Cost(held=index.bytes, seconds=index.seconds * runs, why=why, why_seconds=why)


def _run(args: argparse.Namespace) -> int:
    if args.no_history and args.out is None:
        raise OutputError("run: --no-history without --out would keep no result; give "
                          "--out DIR, or leave the history on")
    paths = [_scenario(s) for s in args.scenarios] or [DEFAULT_SCENARIO]
    # Validate every file, every output, and the memory estimate before any work starts.
    scenarios = [load_scenario(p) for p in paths]
    tasks = _task_place(args)
    for scenario in scenarios:
        tasks.executor.refuse_machine_bound(scenario.path or scenario.name,
                                            scenario.measure.metrics)
    outputs = [p for s in scenarios for p in result_paths(s.name, args.out).values()
               ] if args.out is not None else []
    history, why = _history(args)
    if not args.no_history:
        # Where the entries and the index go, checked as places like any output: a name no
        # entry takes stands for the next entry, whose number is known only when written.
        outputs += [history / machine_name() / "NNNN.json", history / "index.html"]
    check_outputs(outputs, paths)
    command = NOTHING
    if not args.no_history:
        next_number(history)
        command = command_cost(history, len(scenarios))
    # What the files say was checked as they were read; whether this machine has what they
    # name (valgrind, a peer's library or program) is asked here, still before any work.
    check_machine(scenarios)
    # Sweep points that are tasks run on this many workers at once (harness.run.sweep).
    workers = tasks.executor.worker_count() if tasks.sweep else None
    check_memory(scenarios, command, workers)
    check_time(scenarios, args.max_minutes, command, workers)
    for scenario in scenarios:
        args.outcome.start(f"scenario {scenario.name!r}")
        result = run_scenario(scenario, show_progress=args.progress, tasks=tasks)
        written: list[Path] = []
        if args.out is not None:
            written += write_result(result, args.out).values()
        if not args.no_history:
            entry = record(result, history)
            written += [entry.path, entry.path.with_suffix(".md"),
                        write_sidecar(entry, result), write_index(history)]
        args.outcome.wrote(written)
        kept = (f"; kept as run {entry.run_id} of {entry.machine}"
                if not args.no_history else "")
        print(one_line(f"{scenario.name}: wrote {' and '.join(map(str, written))} "
                       f"({result.duration_s} s){kept}"))
        if len(scenarios) > 1:  # each scenario's answers as it ends; one prints its page
            print(terminal_text(markdown.answers_text(result_report(result))))
    if not args.no_history:
        print(one_line(f"run history: {history} ({why})"))
    if len(scenarios) == 1:
        print()
        print(terminal_text(markdown.report(result_report(result))), end="")
    return 0


def _explore(args: argparse.Namespace) -> int:
    scenario = _scenario(args.scenario) if args.scenario is not None else None
    check_outputs([args.out], [scenario] if scenario is not None else [])
    if scenario is not None:
        if args.servers != 3:
            raise ScenarioError("explore: --servers applies to the simulator's ring only; "
                                "a scenario names its own servers")
        if args.points is not None and args.points < 1:
            raise ScenarioError(f"explore: --points must be at least 1 (got {args.points})")
        ring = scenario_ring(load_scenario(scenario), args.points)
    else:
        ring = simulator_ring(args.servers, 100 if args.points is None else args.points)
    write_atomically(args.out, explorer_page(ring))
    print(one_line(f"wrote {args.out}: open it in a browser (it needs no network)"))
    return 0


def _show(args: argparse.Namespace) -> int:
    outputs = ([beside(args.result, ".md"), beside(args.result, ".html")] if args.write
               else [])
    check_outputs(outputs, [args.result])
    result = load_result(args.result)
    with _unshowable(args.result):
        report = result_report(result)
        text = markdown.report(report)
        page = html.report(report) if args.write else ""
    if args.write:
        # The JSON is the measurement and stays as it is; only its renderings are replaced.
        write_together({outputs[0]: text, outputs[1]: page})
    print(terminal_text(text), end="")
    return 0


@contextlib.contextmanager
def _unshowable(path: Path) -> Iterator[None]:
    """A result read whole but whose figures cannot be rendered (a zero where a ratio's base
    belongs, a list of the wrong length) is bad input, named in one line."""
    try:
        yield
    except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError) as exc:
        raise ResultFormatError(f"{path}: a result whose figures cannot be shown "
                                f"({type(exc).__name__}: {exc})") from None


def _compared(spec: Path, args: argparse.Namespace) -> tuple[Path, str | None]:
    """A compared result's file and sweep point: a path, or a history entry by name."""
    path, point = split_point(spec)
    if not path.exists() and is_history_name(str(path)):
        return find(str(path), _history(args)[0]), point
    return path, point


def _named(spec: Path, path: Path) -> str:
    """How the comparison names a side: as given, with the file a history name stands for."""
    given = str(spec)
    return given if given.startswith(str(path)) else f"{given} = {path}"


def _compare(args: argparse.Namespace) -> int:
    outputs = [args.out, beside(args.out, ".html")] if args.out else []
    (path_a, point_a), (path_b, point_b) = _compared(args.a, args), _compared(args.b, args)
    check_outputs(outputs, [path_a, path_b])
    a, b = load_result(path_a), load_result(path_b)
    if point_a is not None:
        a = only_point(a, point_a, str(path_a))
    if point_b is not None:
        b = only_point(b, point_b, str(path_b))
    with _unshowable(args.a if args.a == args.b else Path(f"{args.a} or {args.b}")):
        report = comparison_report(a, b, _named(args.a, path_a), _named(args.b, path_b))
        table = markdown.report(report)
        page = html.report(report) if args.out else ""
    if args.out:
        write_together({outputs[0]: table, outputs[1]: page})
    print(terminal_text(table), end="")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    names = chosen_names(args.only)
    check_outputs([args.out / "REPRODUCTION.md", args.out / "REPRODUCTION.html"], [])
    missing = missing_results(args.out, names) if args.no_run else []
    if missing:
        named = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if missing[3:] else "")
        only = f" --only {shlex.quote(args.only)}" if args.only else ""
        raise ResultFormatError(
            f"{args.out / 'reproduce'}: no result of {named}; `{HARNESS.name()} reproduce "
            f"--out {shlex.quote(str(args.out))}{only}` runs them and writes the report")
    if not args.no_run:
        run_scenarios(args.out, args.progress, args.outcome, args.max_minutes, names)
    checks = write_report(args.out, names)
    outside = [c.figure.key for c in checks if not c.inside]
    print(one_line(f"wrote {args.out / 'REPRODUCTION.md'}: {len(checks) - len(outside)} of "
                   f"{len(checks)} figures inside their tolerance"
                   + (f"; outside: {', '.join(outside)}" if outside else "")))
    # A figure outside its band is a failed check: the report is still written, to read why.
    return EXIT_FAILED if outside else 0


def _plan(args: argparse.Namespace) -> int:
    given = [args.servers is not None, args.weights is not None, args.scenario is not None]
    if sum(given) != 1:
        raise ScenarioError("plan: give exactly one of --servers N, --weights W1,W2,... or "
                            "a scenario")
    rings: Rings = []
    scenario = _scenario(args.scenario) if args.scenario is not None else None
    if scenario is not None:
        servers, rings = scenario_fleet(load_scenario(scenario))
    elif args.servers is not None:
        servers = numbered_fleet(args.servers)
    else:
        servers = weighted_fleet(args.weights)
    hash_name = check_hash(args.hash)
    layouts = check_layouts(args.layouts.split(",") if args.layouts else
                            default_layouts(hash_name), HASHES[hash_name].bits)
    outputs = [beside(args.out, ".md"), beside(args.out, ".html")] if args.out else []
    check_outputs(outputs, [scenario] if scenario is not None else [])
    report = plan_document(servers, rings, args.target_cv, args.target_peak_to_mean,
                           hash_name, layouts)
    text = markdown.report(report)
    if args.out:
        write_together({outputs[0]: text, outputs[1]: html.report(report)})
    print(terminal_text(text), end="")
    return 0


COMMANDS = {"run": _run, "show": _show, "compare": _compare, "reproduce": _reproduce,
            "explore": _explore, "plan": _plan, "abi": _abi, "scenarios": _scenarios,
            "doctor": _doctor, "gate": _gate, "identify": _identify}


def main(argv: Sequence[str] | None = None) -> int:
    escape_unshowable_output()
    args = parse_arguments(_parser(), argv)
    if isinstance(args, int):
        return args
    # What the command writes, as it goes: the message if it is stopped says what is on disk.
    outcome = args.outcome = Outcome()
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return COMMANDS[args.command](args)
    except (ScenarioError, ResultFormatError, UnknownNameError, OutputError) as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except HarnessError as exc:
        print(f"failed: {one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader went away (`show big.json | head -1`): not an error of ours. Point
        # stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        # Writing failed (disk full, permissions changed during the run): the rename that
        # replaces a result never happened, so the previous files are intact.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"failed: {where}{exc.strerror or exc}; files already there are kept as they "
              "were", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(outcome.stopped("interrupted"), file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(outcome.stopped("terminated"), file=sys.stderr)
        return EXIT_TERMINATED
    except (Exception, SystemExit) as exc:
        # A plugin's own code failing is reported as its failure, in one line; anything
        # else is a bug of ours, and its traceback is what a report needs.
        blamed = plugin_failure(exc.__traceback__)
        if blamed is None:
            raise
        print(f"{'error' if blamed.validating else 'failed'}: {blamed.message(exc)}",
              file=sys.stderr)
        return EXIT_BAD_INPUT if blamed.validating else EXIT_FAILED
    finally:
        # A SIGTERM between here and the process's exit must not end it unannounced (the
        # default action): the command has finished, so say what it wrote and exit 143.
        default = previous in (signal.SIG_DFL, None) or hasattr(previous, "after_command")
        signal.signal(signal.SIGTERM, _terminated_after(outcome) if default else previous)


def _terminated_after(outcome: Outcome) -> Callable[[int, FrameType | None], None]:
    """The SIGTERM handler once the command has returned: its files are complete."""
    def handler(_signum: int, _frame: FrameType | None) -> None:
        try:
            print(outcome.stopped("terminated as it was exiting"), file=sys.stderr,
                  flush=True)
        finally:
            os._exit(EXIT_TERMINATED)
    handler.after_command = True  # type: ignore[attr-defined]  # a later main replaces it
    return handler
