"""`python -m harness reproduce`: run every reproduction scenario, then write the report.

Results go to OUT/reproduce/NAME.{json,md,html} (as `python -m harness run`
writes them), plots to OUT/reproduce/*.png and the report to
OUT/REPRODUCTION.md and OUT/REPRODUCTION.html, replaced together.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.apps.reproduction.bands import Band, in_parallel
from harness.apps.reproduction.checks import Check, Figure, evaluate
from harness.apps.reproduction.figures import FIGURES
from harness.apps.reproduction.plots import PLOTS
from harness.apps.reproduction.reading import SCENARIO_DIR, Results
from harness.apps.reproduction.render import reproduction_report
from harness.core.atomic import write_together
from harness.core.outputs import Outcome
from harness.report import html, markdown
from harness.report.results import load_result, write_result
from harness.run.estimate import DEFAULT_MAX_MINUTES, check_memory, check_time
from harness.run.machine_check import check_machine
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario


def scenario_paths() -> list[Path]:
    return sorted(SCENARIO_DIR.glob("*.toml"))


def run_scenarios(out: Path, show_progress: bool | None,
                  outcome: Outcome | None = None,
                  max_minutes: float = DEFAULT_MAX_MINUTES) -> None:
    """Run every reproduction scenario, all validated (memory too) before the first runs.

    The 204.8M-point rings peak near 20 GB: on a smaller machine this refuses
    at once rather than failing minutes in.
    """
    scenarios = [load_scenario(p) for p in scenario_paths()]
    check_machine(scenarios)
    check_memory(scenarios)
    check_time(scenarios, max_minutes)
    outcome = outcome or Outcome()
    for scenario in scenarios:
        outcome.start(f"scenario {scenario.name!r}")
        result = run_scenario(scenario, show_progress=show_progress)
        paths = write_result(result, out / "reproduce")
        outcome.wrote(list(paths.values()))
        print(f"{scenario.name}: wrote {paths['json']} ({result.duration_s} s)")


def load_results(out: Path) -> Results:
    return {p.stem: load_result(out / "reproduce" / f"{p.stem}.json") for p in scenario_paths()}


def write_report(out: Path) -> list[Check]:
    """Evaluate every figure, draw the plots, write REPRODUCTION.md; return the checks.

    The figures' simulated bands and the plots are independent: they run on every core.
    """
    results = load_results(out)

    def band_of(figure: Figure) -> Callable[[], tuple[float, Band]]:
        def task() -> tuple[float, Band]:
            check = evaluate(figure, results)  # a Check holds closures: send its numbers
            return check.ours, check.band
        return task

    def draw(plot: Callable[[Results, Path], None], path: Path) -> Callable[[], None]:
        return lambda: plot(results, path)

    tasks: list[Callable[[], tuple[float, Band] | None]] = [band_of(f) for f in FIGURES]
    tasks += [draw(plot, out / "reproduce" / name) for name, plot in PLOTS.items()]
    checks = []
    for figure, outcome in zip(FIGURES, in_parallel(tasks), strict=False):
        assert outcome is not None  # the first len(FIGURES) tasks are the figures
        checks.append(Check(figure, *outcome))
    report = reproduction_report(results, checks, list(PLOTS))
    write_together({out / "REPRODUCTION.md": markdown.report(report),
                    out / "REPRODUCTION.html": html.report(report)})
    return checks
