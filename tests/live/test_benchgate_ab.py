"""The A/B gate (`ring-bench-gate --against REV`): its statistics, its sampling order, its
refusals (an unknown REV, a REV without the suite, a base that does not build, flags that
do not make one run), its report's escaping, and one real run of the checkout against its
own HEAD.

The targets of the issue (a 1.25x slowdown caught 10 times in 10, no false alarm in 10
unchanged runs) are measured by benchmarks/ab_targets.py, outside the unit suite: each run
takes a minute.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.apps.benchgate import ab_base
from harness.apps.benchgate.ab_base import REQUIRED_FILES
from harness.apps.benchgate.ab_decide import (
    BUILD_THRESHOLD,
    MEMORY_BOUND_RINGS,
    MEMORY_BOUND_THRESHOLD,
    THRESHOLD,
    Interval,
    detectable_effect,
    judge_pairs,
    paired_interval,
    sampling_need,
    threshold_for,
)
from harness.apps.benchgate.ab_gate import check_own_harness
from harness.apps.benchgate.ab_report import ABOutcome, build_report, write_report
from harness.apps.benchgate.ab_session import SamplingPlan, SideInfo, sample
from harness.apps.benchgate.results import UnusableDataError
from harness.cli.gate import main
from tests.paths import ROOT


def noisy_pairs(ratio: float, count: int, spread: float = 0.03,
                seed: int = 1) -> list[tuple[float, float]]:
    """Pairs (base, candidate) whose candidate is `ratio` times slower, both sides under
    a common drift plus independent noise of `spread` (log scale)."""
    rng = np.random.default_rng(seed)
    drift = np.exp(rng.normal(0, 0.2, count))
    base = 1e-4 * drift * np.exp(rng.normal(0, spread, count))
    candidate = ratio * 1e-4 * drift * np.exp(rng.normal(0, spread, count))
    return list(zip(base.tolist(), candidate.tolist(), strict=True))


# --- statistics ------------------------------------------------------------------------------

def test_identical_sides_give_ratio_one_and_no_verdict() -> None:
    """Pairs of equal times: ratio 1, an interval of width 0, detectable = the threshold."""
    verdict = judge_pairs("batch/x/16k", [(2e-4, 2e-4)] * 12, (1, 1))
    assert verdict.interval == Interval(1.0, 1.0, 1.0)
    assert verdict.verdict == "ok" and not verdict.regressed
    assert verdict.detectable == pytest.approx(THRESHOLD)


def test_a_quarter_slower_is_a_regression_and_its_interval_covers_it() -> None:
    """A 1.25x slowdown under a common drift of 20% and 3% noise: the drift cancels in the
    pairs, the interval holds 1.25, and its lower end is above the threshold."""
    verdict = judge_pairs("batch/cffi-packed/16k", noisy_pairs(1.25, 20), (1, 1))
    assert verdict.interval.low < 1.25 < verdict.interval.high
    assert verdict.regressed and verdict.verdict == "REGRESSION"
    assert verdict.detectable < 1.10


def test_rings_bigger_than_the_l2_cache_get_the_memory_bound_threshold() -> None:
    """On the 1M and 4M rings (lookups and builds) a 10% offset between two processes of
    the same code is not a regression; a quarter slower still is."""
    assert sorted(MEMORY_BOUND_RINGS) == ["1M", "4M"]
    for benchmark in ("batch/cffi-packed/1M", "build/tuples/4M", "batch/random-access/1M"):
        assert threshold_for(benchmark) == MEMORY_BOUND_THRESHOLD
    assert threshold_for("scalar/cffi-packed/16k") == THRESHOLD
    assert not judge_pairs("batch/cffi-packed/1M", noisy_pairs(1.10, 40, spread=0.005),
                           (1, 1)).regressed
    assert judge_pairs("batch/cffi-packed/1M", noisy_pairs(1.25, 20), (1, 1)).regressed


def test_builds_need_the_larger_threshold() -> None:
    """An 8% slower build is above the lookups' threshold but not the builds'."""
    pairs = noisy_pairs(1.08, 30, spread=0.005)
    assert judge_pairs("batch/x/16k", pairs, (1, 1)).regressed
    assert not judge_pairs("build/x/16k", pairs, (1, 1)).regressed
    assert judge_pairs("build/x/16k", pairs, (1, 1)).threshold == BUILD_THRESHOLD


def test_faster_and_slower_within_threshold() -> None:
    assert judge_pairs("scalar/x/16k", noisy_pairs(0.8, 20), (1, 1)).verdict == "faster"
    within = judge_pairs("scalar/x/16k", noisy_pairs(1.025, 40, spread=0.002), (1, 1))
    assert within.verdict == "slower, within the threshold"


def test_the_interval_is_reproducible() -> None:
    """A fixed bootstrap seed: the same pairs give the same report, run after run."""
    pairs = noisy_pairs(1.1, 15)
    assert paired_interval(pairs) == paired_interval(list(pairs))


def test_detectable_effect_is_the_threshold_times_the_lower_half_width() -> None:
    assert detectable_effect("batch/x/16k", Interval(1.0, 0.95, 1.05)) == pytest.approx(
        THRESHOLD / 0.95)
    assert detectable_effect("build/x/16k", Interval(2.0, 1.6, 2.2)) == pytest.approx(
        BUILD_THRESHOLD * 2.0 / 1.6)
    assert detectable_effect("batch/x/1M", Interval(1.0, 0.95, 1.05)) == pytest.approx(
        MEMORY_BOUND_THRESHOLD / 0.95)


def test_builds_stop_sampling_at_the_width_a_lookup_needs() -> None:
    """The sampler's measure is the detectable effect at the lookups' threshold, so that a
    build, whose own detectable effect can never drop below its 1.10x threshold, still
    stops once its interval is as narrow as a lookup's."""
    interval = Interval(1.0, 0.98, 1.02)
    assert sampling_need(interval) == pytest.approx(THRESHOLD / 0.98)
    assert sampling_need(interval) < 1.10
    assert detectable_effect("build/x/1M", interval) > 1.10


TIMES = st.floats(1e-7, 1.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(pairs=st.lists(st.tuples(TIMES, TIMES), min_size=1, max_size=40),
       factor=st.floats(0.1, 10))
def test_interval_holds_the_ratio_and_scales_with_the_candidate(
        pairs: list[tuple[float, float]], factor: float) -> None:
    """low <= ratio <= high, always; a candidate `factor` times slower in every pair moves
    the ratio and both ends by exactly that factor (the rule sees ratios only)."""
    interval = paired_interval(pairs)
    assert interval.low <= interval.ratio * (1 + 1e-12)
    assert interval.ratio <= interval.high * (1 + 1e-12)
    scaled = paired_interval([(then, now * factor) for then, now in pairs])
    for before, after in zip((interval.ratio, interval.low, interval.high),
                             (scaled.ratio, scaled.low, scaled.high), strict=True):
        assert math.isclose(after, before * factor, rel_tol=1e-9)


# --- the sampling order --------------------------------------------------------------------

class RecordingWorker:
    """Answers samples with fixed times, and records the order it was asked in."""

    def __init__(self, name: str, log: list[str], seconds: float) -> None:
        self.name, self.log, self.seconds = name, log, seconds

    def sample(self, benchmark: str, rounds: int) -> float:
        self.log.append(f"{self.name}:{benchmark}")
        return self.seconds


def test_sides_alternate_and_steady_benchmarks_stop_early() -> None:
    """Base first on even passes, candidate first on odd ones; a benchmark whose interval
    is tight stops after min_pairs, a noisy one goes on to max_pairs."""
    log: list[str] = []
    base, candidate = RecordingWorker("A", log, 1e-4), RecordingWorker("B", log, 2e-4)
    plan = SamplingPlan(min_pairs=4, max_pairs=10, check_every=2, max_seconds=1e9)
    samples = sample(base, candidate, {"steady": (1, 1), "noisy": (1, 4)}, plan,
                     lambda b, _pairs: 1.0 if b == "steady" else 5.0)
    assert log[:8] == ["A:steady", "B:steady", "A:noisy", "B:noisy",
                       "B:steady", "A:steady", "B:noisy", "A:noisy"]
    assert len(samples.pairs["steady"]) == 4 and len(samples.pairs["noisy"]) == 10
    # per key: the candidate's round scale of 4 divides its time
    assert samples.pairs["noisy"][0] == (1e-4, 0.5e-4)


def test_the_time_budget_stops_sampling_after_min_pairs() -> None:
    log: list[str] = []
    plan = SamplingPlan(min_pairs=5, max_pairs=50, max_seconds=0)
    samples = sample(RecordingWorker("A", log, 1e-4), RecordingWorker("B", log, 1e-4),
                     {"x": (1, 1)}, plan, lambda _b, _p: 9.0)
    assert len(samples.pairs["x"]) == 5


# --- refusals --------------------------------------------------------------------------------

def git(folder: Path, *arguments: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c",
                           "user.email=t@t", *arguments], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def repository(folder: Path, files: dict[str, str]) -> Path:
    """A git repository with one commit of `files`, and a candidate suite folder."""
    folder.mkdir()
    git(folder, "init", "-q")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "one")
    return folder


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line of a gate run that must exit 2."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("ring-bench-gate: ")
    return err


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RING_BENCH_AB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_unknown_revision_is_refused(tmp_path: Path, cache: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    repo = repository(tmp_path / "repo", {"benchmarks/conftest.py": ""})
    err = refusal(["--against", "no-such-branch", "--suite", str(repo / "benchmarks")], capsys)
    assert "no-such-branch: no such commit" in err


@pytest.mark.parametrize("revision", ["-x", "--help", "", "a\nb"])
def test_revisions_that_are_not_names_are_refused(revision: str, tmp_path: Path, cache: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = repository(tmp_path / "repo", {"benchmarks/conftest.py": ""})
    err = refusal([f"--against={revision}", "--suite", str(repo / "benchmarks")], capsys)
    assert "expected a git revision" in err


def test_a_revision_without_the_suite_is_refused(tmp_path: Path, cache: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo = repository(tmp_path / "repo", {"README.md": "no suite here\n"})
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "conftest.py").write_text("")
    err = refusal(["--against", "HEAD", "--suite", str(repo / "benchmarks")], capsys)
    assert "has no benchmark suite to run: missing benchmarks/conftest.py" in err
    assert not cache.exists() or not any(cache.iterdir())


def test_a_base_that_does_not_build_is_refused(tmp_path: Path, cache: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Every file the suite needs, but a setup.py that fails: exit 2 naming the compiler's
    complaint, and nothing left in the cache."""
    files = {name: "" for name in REQUIRED_FILES}
    files["setup.py"] = "raise SystemExit('error: ring.c:12: expected ; before }')\n"
    repo = repository(tmp_path / "repo", files)
    err = refusal(["--against", "HEAD", "--suite", str(repo / "benchmarks")], capsys)
    assert "does not build: error: ring.c:12: expected ; before }" in err
    assert [p.name for p in cache.iterdir()] == []


def test_missing_build_tools_are_named_not_blamed_on_the_base(
        tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without setuptools here the base cannot be compiled; the line says what to install."""
    repo = repository(tmp_path / "repo", {name: "" for name in REQUIRED_FILES})
    monkeypatch.setattr(ab_base, "BUILD_TOOLS", ("setuptools", "no_such_build_tool"))
    err = refusal(["--against", "HEAD", "--suite", str(repo / "benchmarks")], capsys)
    assert "cannot build the base here: no_such_build_tool not installed" in err


def test_a_suite_outside_git_is_refused(tmp_path: Path, cache: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "conftest.py").write_text("")
    env_ceiling = os.environ.get("GIT_CEILING_DIRECTORIES")
    os.environ["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    try:
        err = refusal(["--against", "HEAD", "--suite", str(tmp_path / "benchmarks")], capsys)
    finally:
        if env_ceiling is None:
            del os.environ["GIT_CEILING_DIRECTORIES"]
        else:
            os.environ["GIT_CEILING_DIRECTORIES"] = env_ceiling
    assert "needs a git repository" in err


@pytest.mark.parametrize(("argv", "expected"), [
    (["r.json", "--against", "HEAD"], "give no results file"),
    (["--against", "HEAD", "--baseline-dir", "b"], "not with a baseline"),
    (["--against", "HEAD", "--update-baseline"], "not with a baseline"),
    (["--against", "HEAD", "--min-pairs", "20", "--max-pairs", "10"], "above --max-pairs"),
    ([], "expected a results file, or --against REV"),
    (["--against", "HEAD", "--rounds", "0"], "--rounds: expected a whole number"),
    (["--against", "HEAD", "--sensitivity", "1"], "--sensitivity: expected a ratio"),
    (["--against", "HEAD", "--sensitivity", "nan"], "--sensitivity: expected a ratio"),
    (["--against", "HEAD", "--max-seconds", "-1"], "--max-seconds: expected seconds"),
    (["--against", "HEAD", "--bench-mode", "../x", "--suite", "benchmarks"], "mode must be"),
    (["--against", "HEAD", "--suite", "nowhere"], "no benchmark suite there"),
])
def test_flags_that_do_not_make_one_run(argv: list[str], expected: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        assert expected in refusal(argv, capsys)


def test_a_side_that_imported_the_wrong_harness_is_refused(tmp_path: Path) -> None:
    """The base must run its own build and the candidate anything but the base's: else the
    run would compare one side with itself and pass whatever changed."""
    source = tmp_path / "source"
    own = SideInfo({}, {}, str(source / "harness" / "__init__.py"))
    elsewhere = SideInfo({}, {}, str(tmp_path / "checkout" / "harness" / "__init__.py"))
    check_own_harness(source, [own, elsewhere])
    with pytest.raises(UnusableDataError, match="not from its own build"):
        check_own_harness(source, [elsewhere, elsewhere])
    with pytest.raises(UnusableDataError, match="candidate's suite imported the base's"):
        check_own_harness(source, [own, own])


# --- the report ------------------------------------------------------------------------------

HOSTILE_REVISION = '"><img src=x onerror=window.__pwned=1>'
HOSTILE_BENCHMARK = "batch/<script>window.__pwned=2</script>|x|/16k"


def hostile_outcome() -> ABOutcome:
    regressed = judge_pairs(HOSTILE_BENCHMARK, noisy_pairs(1.5, 12), (1, 4))
    steady = judge_pairs("batch/cffi-packed/16k", noisy_pairs(1.0, 12), (1, 1))
    return ABOutcome(HOSTILE_REVISION, "0" * 40, "short", [steady, regressed], [],
                     [("Only in the candidate (not judged)", ["<b>new</b>/16k"])],
                     [HOSTILE_BENCHMARK], 1.0, [("base", HOSTILE_REVISION)])


def test_report_escapes_every_name(tmp_path: Path) -> None:
    """Names from the suite and the revision show as written, in Markdown and HTML alike,
    and add no markup; the regression comes first."""
    md, page = write_report(build_report(hostile_outcome()), tmp_path)
    html_text, md_text = page.read_text(), md.read_text()
    for hostile in ("<script>window", "<img src=x", "<b>new"):
        assert hostile not in html_text
    # every '<' of a name is escaped in the Markdown, so no viewer reads a tag
    assert re.search(r"(?<!\\)<", md_text) is None
    assert "&lt;script&gt;window.__pwned=2&lt;/script&gt;" in html_text
    rows = [line for line in md_text.splitlines() if line.startswith("| batch")]
    assert "REGRESSION" in rows[0] and "(scales 1, 4)" in rows[0]
    assert "ok" in rows[1]


@pytest.mark.tools("chromium")
def test_report_page_runs_nothing_injected(tmp_path: Path) -> None:
    """The HTML page in headless chromium: no injected script ran, the hostile names are
    in its text exactly as written."""
    from tests.browser import browser
    from tests.live.test_hostile_pages import HOOK, _assert_nothing_ran, _load

    _, page = write_report(build_report(hostile_outcome()), tmp_path)
    with browser() as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOOK})
        state: dict[str, Any] = _load(driver, page, "null")
    _assert_nothing_ran(state, f"A/B timing gate against {HOSTILE_REVISION}", scripts=2)
    assert HOSTILE_BENCHMARK in state["text"] and HOSTILE_REVISION in state["text"]


# --- one real run -----------------------------------------------------------------------------

@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="the checkout is not a git clone")
def test_checkout_against_its_own_head(tmp_path: Path, cache: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The real thing on the smoke plan: HEAD exported and built, both suites run, every
    timing of the small ring sampled in pairs and judged; unchanged code (the checkout's
    harness, against HEAD's) passes as CI judges it, and the report is written in both
    forms.

    As in .ci/bench.sh, a regression must show in two runs: on a shared machine one run
    of 8 pairs flagged scalar/bucketed/16k at 1.17x between identical trees (while a
    neighbour slowed every candidate sample by 10 to 30%), and a check that fails on
    unchanged code is a check CI cannot keep."""
    def gate(run: str) -> tuple[int, str, set[str]]:
        regressions = tmp_path / f"regressions-{run}.txt"
        code = main(["--against", "HEAD", "--suite", str(ROOT / "benchmarks"), "--bench-mode",
                     "smoke", "--min-pairs", "8", "--max-pairs", "8", "--report-dir",
                     str(tmp_path / "report"), "--regressions-out", str(regressions)])
        return code, capsys.readouterr().out, set(regressions.read_text().split())

    code, out, first = gate("first")
    assert "exported and built" in out
    if code != 0:
        assert first, out  # a failing run names what regressed
        code, out, second = gate("second")
        assert not first & second, f"regressed in both runs: {first & second}\n{out}"
    else:
        assert "PASS" in out and not first
    md = (tmp_path / "report" / "ab-gate.md").read_text()
    for benchmark in ("batch/cffi-packed/16k", "scalar/tuples/16k", "build/bucketed/16k"):
        row = next(line for line in md.splitlines() if line.startswith(f"| {benchmark} "))
        assert row.count("|") == 7 and " 8 " in row
    assert (tmp_path / "report" / "ab-gate.html").is_file()
