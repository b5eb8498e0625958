"""`ring-bench-gate --against REV`: the candidate (this checkout's suite on this
interpreter's harness) measured side by side with REV's build, in one job.

Steps: build the base (ab_base.py), start one worker per side (ab_session.py), sample
every benchmark both sides define in pairs until the intervals are tight enough
(ab_session.sample), judge each ratio (ab_decide.py) and the suite's deterministic
figures of both sides (decide.py's rules, all comparable: one machine), then print the
table and write the report (ab_report.py). Returns the names of the regressions.
"""

from __future__ import annotations

import platform
import sys
import tempfile
import time
from pathlib import Path

from harness.apps.benchgate.ab_base import locate_base, prepare_base, repository_of
from harness.apps.benchgate.ab_decide import judge_pairs, paired_interval, sampling_need
from harness.apps.benchgate.ab_report import ABOutcome, build_report, timing_table, write_report
from harness.apps.benchgate.ab_session import (
    SamplingPlan,
    Side,
    SideInfo,
    Worker,
    base_environment,
    candidate_environment,
    sample,
)
from harness.apps.benchgate.decide import FigureVerdict, unmatched
from harness.apps.benchgate.plan import get_plan
from harness.apps.benchgate.results import BenchRun, UnusableDataError, check_mode
from harness.report import markdown


def _say(message: str) -> None:
    print(f"ab-gate: {message}", flush=True)


def _as_run(mode: str, info: SideInfo) -> BenchRun:
    figures = info.ring_bench.get("figures")
    skipped = info.ring_bench.get("skipped")
    return BenchRun(mode=mode, environment={},
                    ratios={benchmark: [1.0] for benchmark in info.benchmarks},
                    figures=dict(figures) if isinstance(figures, dict) else {},
                    skipped=dict(skipped) if isinstance(skipped, dict) else {})


def _log_tail(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"


def _hello(worker: Worker, log: Path) -> SideInfo:
    try:
        return worker.hello()
    except UnusableDataError as exc:
        raise UnusableDataError(f"{exc}; its last output: {_log_tail(log)}") from None


def judge_against(suite: Path, revision: str, mode: str, plan: SamplingPlan,
                  report_dir: Path | None) -> list[str]:
    if get_plan(check_mode(mode, "--bench-mode")).measures != "time":
        raise UnusableDataError(f"--bench-mode {mode}: a counts plan times nothing; the A/B "
                                "gate needs a timing plan (full, short or smoke)")
    if not (suite / "conftest.py").is_file():
        raise UnusableDataError(f"--suite {suite}: no benchmark suite there (no conftest.py)")
    began = time.monotonic()
    repository = repository_of(suite)
    commit = locate_base(repository, revision)
    candidate = Side("candidate", suite.resolve(), candidate_environment())
    with tempfile.TemporaryDirectory(prefix="ring-ab-") as logs_dir:
        logs = [Path(logs_dir) / f"{name}.log" for name in ("base", "candidate")]
        handles = [log.open("wb") for log in logs]
        workers: list[Worker] = []
        abandon = True
        try:
            # The candidate's suite sets itself up while the base compiles: two cores.
            candidate_worker = Worker(candidate, mode, handles[1])
            workers.append(candidate_worker)
            base = prepare_base(repository, revision, commit)
            built = "from the cache" if base.cached else "exported and built"
            _say(f"A/B mode: base {revision} ({base.commit[:12]}) {built} in "
                 f"{time.monotonic() - began:.1f} s; candidate: this checkout's suite on "
                 f"{sys.executable}")
            base_worker = Worker(Side("base", base.suite, base_environment(base.source)),
                                 mode, handles[0])
            workers.append(base_worker)
            infos = [_hello(worker, log) for worker, log
                     in zip((base_worker, candidate_worker), logs, strict=True)]
            check_own_harness(base.source, infos)
            shared = [b for b in infos[1].benchmarks if b in infos[0].benchmarks]
            if not shared:
                raise UnusableDataError("the two sides share no benchmark: nothing to compare")
            _say(f"suites ready after {time.monotonic() - began:.1f} s; sampling "
                 f"{len(shared)} benchmarks in pairs")
            scales = {b: (infos[0].benchmarks[b], infos[1].benchmarks[b]) for b in shared}
            samples = sample(
                base_worker, candidate_worker, scales, plan,
                lambda _benchmark, pairs: sampling_need(paired_interval(pairs)))
            abandon = False
        finally:
            for worker in workers:
                worker.close(abandon)
            for handle in handles:
                handle.close()
    timings = [judge_pairs(b, samples.pairs[b], scales[b]) for b in shared]
    base_run, candidate_run = (_as_run(mode, info) for info in infos)
    figures = [FigureVerdict(f, base_run.figures[f], candidate_run.figures[f])
               for f in sorted(base_run.figures.keys() & candidate_run.figures.keys())]
    new, missing, planned = unmatched(candidate_run, base_run)
    regressions = ([v.benchmark for v in timings if v.regressed]
                   + [v.figure for v in figures if v.regressed] + missing)
    outcome = ABOutcome(
        revision, base.commit, mode, timings, figures,
        [("Only in the candidate (not judged)", new),
         ("In the base, not measured by the candidate", missing),
         ("In the base, left out by the candidate's plan (not judged)", planned)],
        regressions, samples.seconds,
        [("base", f"{revision} ({base.commit[:12]})"), ("mode", mode),
         ("sampling", f"{samples.seconds:.1f} s, {plan.rounds} timed calls per sample"),
         ("machine", f"{platform.machine()}, Python {platform.python_version()}")])
    print(markdown.table(timing_table(timings)))
    if report_dir is not None:
        for path in write_report(build_report(outcome), report_dir):
            _say(f"report written: {path}")
    if missing:
        print(f"\nin the base but not measured by the candidate: {', '.join(missing)}")
    total = time.monotonic() - began
    if regressions:
        print(f"\nFAIL: {len(regressions)} regression(s) against {revision}: "
              f"{', '.join(regressions)} ({total:.0f} s)")
    else:
        print(f"\nPASS: {len(timings)} timings and {len(figures)} figures against {revision} "
              f"({total:.0f} s)")
    return regressions


def check_own_harness(base_source: Path, infos: list[SideInfo]) -> None:
    """Each side must have run its own harness: the base's from its export, the
    candidate's from anywhere else. Otherwise the run would compare one side with itself."""
    base_harness, candidate_harness = (Path(info.harness) for info in infos)
    if not base_harness.is_relative_to(base_source):
        raise UnusableDataError(
            f"the base's suite imported harness from {base_harness}, not from its own build")
    if candidate_harness.is_relative_to(base_source):
        raise UnusableDataError("the candidate's suite imported the base's harness")
