"""`python -m harness reproduce`: run every reproduction scenario, then write the report.

The scenarios are the built-in ones under `reproduce/` (scenarios/reproduce/ in the
checkout; the wheel carries a copy). Results go to OUT/reproduce/NAME.{json,md,html}
(as `python -m harness run` writes them), plots to OUT/reproduce/*.png and the report
to OUT/REPRODUCTION.md and OUT/REPRODUCTION.html, replaced together. `--only` runs
some of them, and the report then holds the figures their results answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from harness.apps.reproduction.bands import Band, in_parallel
from harness.apps.reproduction.checks import Check, Figure, evaluate
from harness.apps.reproduction.figures import FIGURES
from harness.apps.reproduction.plots import PLOT_SCENARIOS, PLOTS
from harness.apps.reproduction.reading import MissingResult, Results
from harness.apps.reproduction.render import reproduction_report
from harness.core.atomic import write_together
from harness.core.errors import HarnessError, UnknownNameError
from harness.core.invocation import HARNESS
from harness.core.outputs import Outcome
from harness.report import html, markdown
from harness.report.results import load_result, write_result
from harness.run.builtin import builtin_folder
from harness.run.estimate import DEFAULT_MAX_MINUTES, check_memory, check_time
from harness.run.machine_check import check_machine
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario

#: the built-in scenarios' subfolder that holds the reproduction's
SUBFOLDER = "reproduce"


def scenario_names() -> list[str]:
    """Every reproduction scenario, by name (its file's stem), in order."""
    return sorted(p.stem for p in (builtin_folder() / SUBFOLDER).glob("*.toml"))


def chosen_names(only: str | None) -> list[str]:
    """The scenarios `--only NAME,NAME` names (each also as `reproduce/NAME` or with
    `.toml`), in order; every one of them without it."""
    names = scenario_names()
    if only is None:
        return names
    chosen = set()
    for given in only.split(","):
        name = given.strip().removeprefix(f"{SUBFOLDER}/").removesuffix(".toml")
        if name not in names:
            raise UnknownNameError("reproduction scenario", given.strip(), names)
        chosen.add(name)
    return sorted(chosen)


def missing_results(out: Path, names: Sequence[str]) -> list[str]:
    """The names among `names` whose result OUT/reproduce/ does not hold."""
    return [n for n in names if not (out / SUBFOLDER / f"{n}.json").exists()]


def run_scenarios(out: Path, show_progress: bool | None,
                  outcome: Outcome | None = None,
                  max_minutes: float = DEFAULT_MAX_MINUTES,
                  names: Sequence[str] | None = None) -> None:
    """Run the reproduction scenarios (`names`, default all), all validated (memory too)
    before the first runs.

    The 204.8M-point rings peak near 20 GB: on a smaller machine this refuses
    at once rather than failing minutes in.
    """
    folder = builtin_folder() / SUBFOLDER
    scenarios = [load_scenario(folder / f"{n}.toml") for n in names or scenario_names()]
    check_machine(scenarios)
    check_memory(scenarios)
    check_time(scenarios, max_minutes)
    outcome = outcome or Outcome()
    for scenario in scenarios:
        outcome.start(f"scenario {scenario.name!r}")
        result = run_scenario(scenario, show_progress=show_progress)
        paths = write_result(result, out / SUBFOLDER)
        outcome.wrote(list(paths.values()))
        print(f"{scenario.name}: wrote {paths['json']} ({result.duration_s} s)")


def load_results(out: Path, names: Sequence[str] | None = None) -> Results:
    return {n: load_result(out / SUBFOLDER / f"{n}.json") for n in names or scenario_names()}


def _answers(figure: Figure, results: Results) -> bool:
    """Whether the results hold every scenario the figure reads."""
    try:
        figure.read(results)
    except MissingResult:
        return False
    return True


class InconsistentResult(HarnessError):
    """A result file that reads as format 2 but whose figures contradict each other (no
    servers, no subjects, figures missing): one line, not a traceback from the arithmetic."""


@contextlib.contextmanager
def _read_as_results(out: Path, what: str) -> Iterator[None]:
    """Turn what a figure's or a plot's arithmetic raises on a result that does not hold
    together (a file written by hand, or by another program) into one line naming it."""
    try:
        yield
    except HarnessError:
        raise
    except (ArithmeticError, AssertionError, LookupError, StopIteration, ValueError,
            TypeError) as exc:
        raise InconsistentResult(
            f"{out / SUBFOLDER}: the results do not give {what}: "
            f"{type(exc).__name__}: {str(exc) or 'an inconsistent figure'}; run them again "
            f"(`{HARNESS.name()} reproduce --out {out}`)") from None


def write_report(out: Path, names: Sequence[str] | None = None) -> list[Check]:
    """Evaluate the figures, draw the plots, write REPRODUCTION.md; return the checks.

    With `names` short of every scenario, only the figures and plots their results
    answer. The figures' simulated bands and the plots are independent: they run on
    every core.
    """
    results = load_results(out, names)
    left_out = [n for n in scenario_names() if n not in results]
    figures = [f for f in FIGURES if _answers(f, results)] if left_out else FIGURES
    plots = {name: plot for name, plot in PLOTS.items()
             if all(s in results for s in PLOT_SCENARIOS[name])}

    def band_of(figure: Figure) -> Callable[[], tuple[float, Band]]:
        def task() -> tuple[float, Band]:
            with _read_as_results(out, f"figure {figure.key!r} ({figure.what})"):
                check = evaluate(figure, results)  # a Check holds closures: its numbers
            return check.ours, check.band
        return task

    def draw(plot: Callable[[Results, Path], None], path: Path) -> Callable[[], None]:
        def task() -> None:
            with _read_as_results(out, f"plot {path.name!r}"):
                plot(results, path)
        return task

    tasks: list[Callable[[], tuple[float, Band] | None]] = [band_of(f) for f in figures]
    tasks += [draw(plot, out / SUBFOLDER / name) for name, plot in plots.items()]
    checks = []
    for figure, outcome in zip(figures, in_parallel(tasks), strict=False):
        assert outcome is not None  # the first len(figures) tasks are the figures
        checks.append(Check(figure, *outcome))
    report = reproduction_report(results, checks, list(plots), left_out)
    write_together({out / "REPRODUCTION.md": markdown.report(report),
                    out / "REPRODUCTION.html": html.report(report)})
    return checks
