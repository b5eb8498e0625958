"""Fuzzers over every command and flag of the CLI (run, show, compare, reproduce --no-run,
plan, explore, gate) and of the bench gate, called in-process. Each draws hostile flag
values (negative, zero, huge, fractional, NaN and inf numbers, empty and very long
strings), hostile paths (a directory, a FIFO, a dangling symlink, a non-UTF-8 name, a
name too long, a path below a file, the input itself as the output), hostile templates
and deeply nested documents, and scenario or result files mutated like
tests/property/test_fuzz.py does.

Every outcome is exit 0 with complete outputs, exit 2 with one line (`error: ...`; the
gate's `ring-bench-gate: ...`) and nothing written, or exit 1 with one line (the gate's exit
0 and 1 may also print warnings and the regressions it names); argparse's own
refusal of a value of the wrong type is one line too; never an exception (SystemExit included)
escaping main, never a hang (an alarm fails a command that spends more than TIMEOUT_S of
CPU, or WALL_TIMEOUT_S of wall time).

RING_HARNESS_FUZZ_EXAMPLES sets the examples per fuzzer (tests/fuzz_examples.py; CI's short
profile by default), e.g. `RING_HARNESS_FUZZ_EXAMPLES=10000 pytest
tests/property/test_fuzz_commands.py` for a long run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, example, given, settings
from hypothesis import strategies as st

from harness.cli import gate as gate_cli
from harness.cli import main
from harness.core.hashing import HASHES
from tests.fuzz_examples import fuzz_examples
from tests.paths import ROOT
from tests.property.test_fuzz import FORMAT1, JSON_VALUES, REAL, _mutate, scenarios, toml_document
from tests.unit.test_benchgate_baseline import write_results

EXAMPLES = fuzz_examples(30)
TIMEOUT_S = 20
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

INTEGERS = ["0", "-1", "1", "2", "3", "7", str(10**30), str(-(10**30)), str(2**63), "65536",
            "1.5", "1e3", "nan", "inf", "-inf", "", " 3", "0x10", "٣", "9" * 5000]
FLOATS = ["0", "-1", "1", "0.01", "0.5", "1.05", "2", "1e-300", "1e300", "nan", "inf", "-inf",
          "", "1,5", "1e3", str(10**30), "0.001", "x" * 5000]
TEXTS = ["", "x" * 5000, "\n", "a\nb", "nope", "{", "{i.x}", "{i[0]}", "{i:c}", ",", ",,",
         os.fsdecode(b"\xff\xfe")]
#: paths of the sandbox each example gets; "$input" is replaced by the command's input
PLACES = ["dir/..", "new", "dir", "fifo", "dangling", "file", "file/below", "missing/new",
          "\udcff\udcfe", "n" * 300, "", ".", "$input", "dir/new.md", "link-to-dir"]
#: devices as inputs only (read, never written: an output is a FIFO made in the sandbox)
DEVICE_INPUTS = ["/dev/null", "/dev/zero"]
TEMPLATES = ["{i.x}", "{i[0]}", "{i:c}", "{", "}", "{i}{i}", "{server.x}", "{j:c}", "{0}",
             "{i!r}", "{}", "{{i}}", "{server}:{j}", "{i:>300000}", "key-{i}", "s-{i}"]
#: history entries compare takes by name (the sandbox's history is empty: each refused)
HISTORY_NAMES = ["latest", "previous", "7", "m/0001", "latest#k=16"]
#: --history folders drawn for run (apart from every --out place, so the result files
#: of --out stay alone in their folder)
HISTORY_PLACES = ["hist", "file", "fifo", "file/below", "dangling", "n" * 300]
#: --max-minutes as drawn: absent, or any of the float-like values
MINUTES: list[list[str]] = [[], *(["--max-minutes", value] for value in FLOATS)]
#: where a fleet's tasks and a sweep's points run, as drawn: absent, valid, or hostile
EXECUTORS: list[list[str]] = [[], [], ["--executor", "local", "--workers", "1"],
                              ["--executor", "local", "--workers", "2"],
                              ["--workers", "0"], ["--workers", "x"], ["--executor", "nope"],
                              ["--scheduler", "tcp://127.0.0.1:1"],
                              ["--executor", "local", "--task-dir", "file"]]


class Hang(Exception):
    """A command spent more than TIMEOUT_S of CPU, or WALL_TIMEOUT_S of wall time."""


#: wall time a command may take, however loaded the machine: a command blocked (on a FIFO,
#: a lock) spends no CPU, so only the clock on the wall catches it
WALL_TIMEOUT_S = 120


def _cpu_alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang(f"{TIMEOUT_S} s of CPU without an answer")


def _wall_alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang(f"no answer in {WALL_TIMEOUT_S} s")


@contextlib.contextmanager
def deadline() -> Iterator[None]:
    """A command that loops (TIMEOUT_S of this process's CPU: what a loaded machine does
    not stretch, where 20 s of wall time once failed a full rendering of reproduce under
    a load of 10) or blocks (WALL_TIMEOUT_S of wall time) is a hang."""
    previous_cpu = signal.signal(signal.SIGPROF, _cpu_alarm)
    previous_wall = signal.signal(signal.SIGALRM, _wall_alarm)
    signal.setitimer(signal.ITIMER_PROF, TIMEOUT_S)
    signal.alarm(WALL_TIMEOUT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.alarm(0)
        signal.signal(signal.SIGPROF, previous_cpu)
        signal.signal(signal.SIGALRM, previous_wall)


def sandbox(folder: Path) -> None:
    """The hostile places: a directory, a FIFO, a dangling symlink, a file, a link to a dir."""
    (folder / "dir").mkdir()
    os.mkfifo(folder / "fifo")
    (folder / "dangling").symlink_to(folder / "nowhere")
    (folder / "file").write_text("not a result\n")
    (folder / "link-to-dir").symlink_to(folder / "dir")


def place(folder: Path, name: str, given_input: Path | None = None) -> str:
    """The path named `name` in the sandbox; '' stays '' (the command runs in `folder`)."""
    if name in DEVICE_INPUTS:
        return name
    if name == "$input":
        return str(given_input if given_input is not None else folder / "file")
    return str(folder / name) if name else ""


def snapshot(folder: Path) -> dict[str, Any]:
    """Every entry below `folder`: a file's bytes, a link's target, a folder or FIFO's kind."""
    entries: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        key = os.fsencode(path.relative_to(folder))
        if path.is_symlink():
            entries[str(key)] = ("link", os.readlink(path))
        elif path.is_file():
            entries[str(key)] = path.read_bytes()
        else:
            entries[str(key)] = "dir" if path.is_dir() else "other"
    return entries


def outcome(command: Callable[[Sequence[str]], int], argv: list[str], folder: Path,
            capsys: pytest.CaptureFixture[str], prefix: str = "error: ") -> tuple[int, str]:
    """Run one command; check the exit code and stderr's shape, and that a refusal wrote
    nothing below `folder`. Return the code and stderr."""
    before = snapshot(folder)
    # in the sandbox: an empty path ('') is the current folder
    with deadline(), contextlib.chdir(folder):
        code = command(argv)
    captured = capsys.readouterr()
    if currently_in_test_context():
        event(f"{argv[0] if command is main else 'gate'} exit {code}")
    assert code in (0, 1, 2), captured.err
    if code == 2:
        assert len(captured.err.strip().splitlines()) == 1, captured.err
        assert captured.err.startswith(prefix), captured.err
        assert snapshot(folder) == before, argv
    elif code == 1 and command is main:
        assert len(captured.err.strip().splitlines()) == 1, captured.err
    return code, captured.err


def pick(good: Sequence[str], hostile: Sequence[str]) -> st.SearchStrategy[str]:
    """A valid value half the time, so that the rest of the command is reached too."""
    return st.one_of(st.sampled_from(good), st.sampled_from(hostile))


# --- show and compare ---------------------------------------------------------------------

RESULTS = st.one_of(
    st.builds(_mutate, st.just(REAL), st.lists(st.integers(0, 50), max_size=6), JSON_VALUES),
    st.sampled_from(["[" * 3000 + "]" * 3000, '{"a":' * 3000 + "1" + "}" * 3000,
                     "", "\x00", "nan", "\udcff"]))


def write_document(path: Path, document: Any) -> None:
    if isinstance(document, str):
        path.write_bytes(document.encode("utf-8", "surrogateescape"))
    else:
        path.write_text(json.dumps(document), encoding="utf-8")


@SETTINGS
@given(document=RESULTS | st.just(REAL),
       other=pick(["$real", "$same", "$point"], [*PLACES, *DEVICE_INPUTS, "$nopoint",
                                                 *HISTORY_NAMES]),
       out=st.none() | pick(["out.md", "out", "x.html"], PLACES), write=st.booleans())
@example(document='{"a":' * 3000 + "1" + "}" * 3000, other="$real", out=None, write=False)
@example(document=REAL, other="$real", out="", write=False)  # was: ValueError (with_suffix)
@example(document=REAL, other="$real", out="dir/..", write=False)
@example(document=REAL, other="$point", out=None, write=True)
def test_show_and_compare(document: Any, other: str, out: str | None, write: bool,
                          tmp_path_factory: pytest.TempPathFactory,
                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("show")
    sandbox(folder)
    path = folder / "r.json"
    write_document(path, document)
    code, _ = outcome(main, ["show", str(path), *(["--write"] if write else [])], folder,
                      capsys)
    if code == 0 and write:
        assert path.with_suffix(".md").is_file() and path.with_suffix(".html").is_file()
    b = {"$real": str(FORMAT1 / "nginx.json"), "$same": str(path),
         "$point": f"{FORMAT1 / 'nginx.json'}#nginx",
         "$nopoint": f"{path}#nope", **{name: name for name in HISTORY_NAMES}}.get(
             other) or place(folder, other, path)
    argv = ["compare", str(path), b, "--history", str(folder / "hist")] + (
        [] if out is None else ["--out", place(folder, out, path)])
    code, _ = outcome(main, argv, folder, capsys)
    if code == 0 and out is not None:
        written = folder / place(folder, out, path)
        assert written.is_file() and written.with_suffix(".html").is_file()


@pytest.mark.parametrize("parity", [[""], ["ab"], [[1, 2, 3]]])
def test_format_1_result_with_a_parity_that_is_no_mapping_is_refused(
        parity: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by test_show_and_compare: the upgrade from format 1 ran dict() on it and the
    ValueError escaped show and compare as a traceback."""
    document = json.loads(json.dumps(REAL))
    document["runs"][0]["parity"] = parity
    path = tmp_path / "r.json"
    write_document(path, document)
    for argv in (["show", str(path)], ["compare", str(path), str(FORMAT1 / "nginx.json")]):
        code, err = outcome(main, argv, tmp_path, capsys)
        assert code == 2 and "not well-formed" in err


# --- run ----------------------------------------------------------------------------------

@st.composite
def scenario_texts(draw: st.DrawFn) -> str:
    """A scenario of the grammar (tests/property/test_fuzz.py), now and then with a hostile template
    or a deeply nested value."""
    document = draw(scenarios())
    # small enough that a run takes milliseconds (tests/property/test_fuzz.py fuzzes these values)
    count = document["keys"].get("count")
    document["keys"]["count"] = min(max(count, 1), 300) if type(count) is int else 300
    document["measure"]["metrics"] = ["balance"]
    document["measure"]["repeats"] = 1
    if isinstance(document.get("removals"), dict):
        document["removals"]["memory"] = False  # a fresh process per algorithm and order
    for section, key in draw(st.lists(st.sampled_from(
            [("servers", "name"), ("generator", "point_name"), ("keys", "name")]), max_size=2)):
        if isinstance(document.get(section), dict):  # [algorithm] leaves out [generator]
            document[section][key] = draw(st.sampled_from(TEMPLATES))
    text = toml_document(document)
    if draw(st.booleans()) and draw(st.booleans()):
        text += "deep = " + "[" * 5000 + "]" * 5000 + "\n"
    return text


@SETTINGS
@given(texts=st.lists(scenario_texts(), min_size=1, max_size=2),
       out=st.sampled_from(["out", *PLACES]), progress=st.sampled_from([[], ["--no-progress"]]),
       twice=st.booleans(), minutes=st.sampled_from(MINUTES),
       history=st.sampled_from([None, "--no-history", *HISTORY_PLACES]),
       with_out=st.booleans(), executor=st.sampled_from(EXECUTORS))
def test_run(texts: list[str], out: str, progress: list[str], twice: bool, minutes: list[str],
             history: str | None, with_out: bool, executor: list[str],
             tmp_path_factory: pytest.TempPathFactory,
             capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("run")
    sandbox(folder)
    paths = []
    for n, text in enumerate(texts):
        paths.append(folder / f"s{n}.toml")
        paths[-1].write_text(text, encoding="utf-8")
    inputs = [str(p) for p in paths] + ([str(paths[0])] if twice else [])
    target = place(folder, out, paths[0])
    kept = ([] if history is None else [history] if history == "--no-history"
            else ["--history", place(folder, history)])
    outs = ["--out", target] if with_out else []
    code, _ = outcome(main, ["run", *inputs, *outs, *progress, *minutes, *kept, *executor],
                      folder, capsys)
    if code == 0 and history not in (None, "--no-history"):
        assert (Path(place(folder, history)) / "index.html").is_file()
    if code == 0 and with_out:
        stems: dict[str, set[str]] = {}
        for p in Path(target or folder).iterdir():
            if p.suffix in (".json", ".md", ".html"):
                stems.setdefault(p.stem, set()).add(p.suffix)
        assert stems
        assert all(s == {".json", ".md", ".html"} for s in stems.values()), stems


# --- plan ---------------------------------------------------------------------------------

LAYOUTS = ["numpy-packed", "cffi-packed", "bucketed", "numpy-aligned", "nope", "", ",",
           "numpy-packed,numpy-packed", "numpy-packed,nope", "numpy-packed," * 500]


@SETTINGS
@given(fleet=st.sampled_from(["servers", "servers", "weights", "weights", "scenario", "none",
                              "two"]),
       servers=pick(["1", "3", "7"], INTEGERS), weights=pick(["1,2,5", "1", "3,1"], [
           "", ",", "1,,2", "0", "-1", "nan", "inf", "1e308,1", "1,-1", "0.5", "1," * 3000 + "1",
           "x", str(10**30), "1e-300", "1,1e-300", *TEXTS]),
       target=st.sampled_from(["cv", "cv", "peak", "peak", "both", "none"]),
       value=pick(["0.05", "0.1", "1.2", "1.5"], FLOATS),
       hash_name=st.none() | pick(list(HASHES), ["", "nope", "BLAKE2B-32", "x" * 5000]),
       layouts=st.none() | pick(["numpy-packed", "numpy-packed,bucketed"], LAYOUTS),
       out=st.none() | pick(["plan", "plan.md", "p.html"], PLACES), text=scenario_texts())
@example(fleet="servers", servers="3", weights="", target="cv", value="0.05", hash_name=None,
         layouts=None, out="plan", text="")
@example(fleet="servers", servers="3", weights="", target="cv", value="0.05", hash_name=None,
         layouts=None, out="", text="")  # was: ValueError from Path("").with_suffix
@example(fleet="servers", servers="3", weights="", target="cv", value="1e-300", hash_name=None,
         layouts=None, out=None, text="")  # was: ZeroDivisionError (1e-300 squared is 0.0)
def test_plan(fleet: str, servers: str, weights: str, target: str, value: str,
              hash_name: str | None, layouts: str | None, out: str | None, text: str,
              tmp_path_factory: pytest.TempPathFactory,
              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("plan")
    sandbox(folder)
    scenario = folder / "s.toml"
    scenario.write_text(text, encoding="utf-8")
    argv = ["plan"]
    if fleet in ("servers", "two"):
        argv += ["--servers", servers]
    if fleet in ("weights", "two"):
        argv += ["--weights", weights]
    if fleet == "scenario":
        argv += [str(scenario)]
    if target in ("cv", "both"):
        argv += [f"--target-cv={value}"]
    if target in ("peak", "both"):
        argv += [f"--target-peak-to-mean={value}"]
    for flag, flag_value in (("--hash", hash_name), ("--layouts", layouts)):
        if flag_value is not None:
            argv += [f"{flag}={flag_value}"]
    if out is not None:
        argv += ["--out", place(folder, out, scenario)]
    code, _ = outcome(main, argv, folder, capsys)
    if code == 0 and out is not None:
        written = folder / place(folder, out, scenario)
        assert written.with_suffix(".md").is_file() and written.with_suffix(".html").is_file()


# --- explore ------------------------------------------------------------------------------

@SETTINGS
@given(with_scenario=st.booleans(), servers=st.none() | pick(["1", "3", "7"], INTEGERS),
       points=st.none() | pick(["1", "5", "100"], INTEGERS),
       out=st.none() | pick(["ring.html", "ring"], PLACES), text=scenario_texts())
def test_explore(with_scenario: bool, servers: str | None, points: str | None, out: str | None,
                 text: str, tmp_path_factory: pytest.TempPathFactory,
                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("explore")
    sandbox(folder)
    scenario = folder / "s.toml"
    scenario.write_text(text, encoding="utf-8")
    argv = ["explore"] + ([str(scenario)] if with_scenario else [])
    if servers is not None:
        argv += [f"--servers={servers}"]
    if points is not None:
        argv += [f"--points={points}"]
    if out is not None:
        argv += ["--out", place(folder, out, scenario)]
    code, _ = outcome(main, argv, folder, capsys)
    if code == 0:
        assert out is not None and (folder / place(folder, out, scenario)).is_file()


# --- abi ----------------------------------------------------------------------------------

@SETTINGS
@given(flags=st.lists(pick(["--path"], ["--path=1", "--nope", "extra", "", "-p", "--"]),
                      max_size=3))
def test_abi(flags: list[str], tmp_path_factory: pytest.TempPathFactory,
             capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("abi")
    sandbox(folder)
    code, _ = outcome(main, ["abi", *flags], folder, capsys)
    assert code in (0, 2)
    if code == 0:
        assert set(flags) <= {"--path"}


# --- reproduce --no-run -------------------------------------------------------------------

REPRODUCED = sorted((FORMAT1 / "reproduce").glob("*.json"))


def mutated_result(victim: Path) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(_mutate, st.just(json.loads(victim.read_text())),
                  st.lists(st.integers(0, 50), max_size=6), JSON_VALUES),
        st.sampled_from(["[" * 3000 + "]" * 3000, "", "\x00", "nan"]))


@SETTINGS
@given(out=pick(["out"], PLACES), present=st.sampled_from(["none", "empty", "first"]),
       document=st.none() | mutated_result(REPRODUCED[0]),
       progress=st.sampled_from([[], ["--progress"], ["--no-progress"]]),
       minutes=st.sampled_from(MINUTES))
def test_reproduce_no_run(out: str, present: str, document: Any, progress: list[str],
                          minutes: list[str], tmp_path_factory: pytest.TempPathFactory,
                          capsys: pytest.CaptureFixture[str]) -> None:
    """Hostile --out places, and OUT/reproduce/ missing, empty, or holding only its first
    result (mutated): each refused in one line before anything is rendered."""
    folder = tmp_path_factory.mktemp("reproduce")
    sandbox(folder)
    target = place(folder, out)
    if out == "out" and present != "none":
        (Path(target) / "reproduce").mkdir(parents=True)
        if present == "first":
            shutil.copy(REPRODUCED[0], Path(target) / "reproduce")
            if document is not None:
                write_document(Path(target) / "reproduce" / REPRODUCED[0].name, document)
    outcome(main, ["reproduce", "--no-run", "--out", target, *progress, *minutes], folder,
            capsys)


@settings(SETTINGS, max_examples=max(2, EXAMPLES // 15))
@given(victim=st.sampled_from(REPRODUCED), data=st.data())
def test_reproduce_no_run_of_a_mutated_folder(victim: Path, data: st.DataObject,
                                              tmp_path_factory: pytest.TempPathFactory,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Every result of scenarios/reproduce/ there, one of them mutated: the report, or one
    line. (A full rendering takes seconds, hence fewer examples.)"""
    folder = tmp_path_factory.mktemp("reproduce-all")
    out = folder / "out"
    shutil.copytree(FORMAT1 / "reproduce", out / "reproduce")
    write_document(out / "reproduce" / victim.name, data.draw(mutated_result(victim)))
    code, err = outcome(main, ["reproduce", "--no-run", "--out", str(out)], folder, capsys)
    written = (out / "REPRODUCTION.md").is_file() and (out / "REPRODUCTION.html").is_file()
    if code == 0:
        assert written
    elif code == 1:
        # A figure failing its band is in the report; a result that lacks a sweep point the
        # reproduction reads (`runs = []`) is one line naming it, and no report.
        assert written or f"result {victim.stem!r}" in err, err


# --- the gate -----------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _no_gate_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RING_BENCH_UPDATE", raising=False)
    monkeypatch.delenv("RING_BENCH_REGRESSIONS", raising=False)


GATE_VALUES: st.SearchStrategy[Any] = st.sampled_from(
    [0, -1, 10**30, 1.5, float("nan"), float("inf"), "", "x" * 5000, None, [], {}, "../x",
     "smoke", "short", "full", "counts"])


@SETTINGS
@given(path=st.lists(st.integers(0, 50), max_size=6), value=GATE_VALUES | JSON_VALUES,
       mutate=st.booleans(), results=pick(["r.json"], [*PLACES, *DEVICE_INPUTS]),
       baseline=pick(["base"], PLACES), update=st.booleans(),
       regressions=st.none() | pick(["regressions.txt"], PLACES),
       recorded=st.booleans())
@example(path=[], value=0, mutate=False, results="r.json", baseline="new", update=False,
         regressions="new", recorded=False)  # was: baseline written, then exit 2 (EISDIR)
def test_gate(path: list[int], value: Any, mutate: bool, results: str, baseline: str,
              update: bool, regressions: str | None, recorded: bool,
              tmp_path_factory: pytest.TempPathFactory,
              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("gate")
    sandbox(folder)
    good = write_results(folder / "r.json")
    base = folder / "base"
    base.mkdir()
    if recorded:
        assert gate_cli.main([str(good), "--baseline-dir", str(base), "--update-baseline"]) == 0
        capsys.readouterr()
    if mutate:
        document = json.loads(good.read_text())
        good.write_text(json.dumps(_mutate(document, path, value), default=str))
    argv = [place(folder, results, good), "--baseline-dir", place(folder, baseline, good)]
    argv += ["--update-baseline"] if update else []
    if regressions is not None:
        argv += ["--regressions-out", place(folder, regressions, good)]
    code, _ = outcome(gate_cli.main, argv, folder, capsys, prefix="ring-bench-gate: ")
    if code in (0, 1) and regressions is not None:
        assert (folder / place(folder, regressions, good)).is_file()


# --- the gate against a base commit (--against) -----------------------------------------------

REVISIONS = ["nope", "", "-x", "--help", "HEAD~5", "\n", "x" * 5000, "HEAD:README.md", "@{u}",
             "HEAD^{tree}", os.fsdecode(b"\xff")]
ORDINAL_FLAGS = ("--rounds", "--min-pairs", "--max-pairs")
REAL_FLAGS = ("--sensitivity", "--max-seconds")


def _git_sandbox(folder: Path) -> None:
    """The sandbox as a git repository whose one commit has no benchmark suite, and an
    uncommitted candidate suite in `suite/`: every run that gets as far as the base is
    refused there, in a moment, having written nothing."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "README.md").write_text("no suite\n")
    subprocess.run(["git", "-C", str(folder), "add", "README.md"], check=True)
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=f", "-c", "user.email=f@f",
                    "commit", "-q", "-m", "one"], check=True)
    (folder / "suite").mkdir()
    (folder / "suite" / "conftest.py").write_text("")


@SETTINGS
@given(revision=pick(["HEAD"], REVISIONS), suite=pick(["suite"], PLACES),
       mode=st.none() | pick(["short", "smoke"], [*TEXTS, "counts", "../x", "full/.."]),
       report=st.none() | pick(["report"], PLACES),
       regressions=st.none() | pick(["regressions.txt"], PLACES),
       ordinals=st.lists(st.tuples(st.sampled_from(ORDINAL_FLAGS), st.sampled_from(INTEGERS)),
                         max_size=3),
       reals=st.lists(st.tuples(st.sampled_from(REAL_FLAGS), st.sampled_from(FLOATS)),
                      max_size=2),
       results=st.booleans(), baseline=st.booleans(), update=st.booleans())
def test_gate_against(revision: str, suite: str, mode: str | None, report: str | None,
                      regressions: str | None, ordinals: list[tuple[str, str]],
                      reals: list[tuple[str, str]], results: bool, baseline: bool,
                      update: bool, tmp_path_factory: pytest.TempPathFactory,
                      capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`--against` with hostile revisions, suites, modes, outputs and sampling numbers, mixed
    with the flags of the baseline gate: one line and exit 2, nothing written (the base's
    commit has no suite, so no valid combination runs for long)."""
    folder = tmp_path_factory.mktemp("against")
    sandbox(folder)
    _git_sandbox(folder)
    monkeypatch.setenv("RING_BENCH_AB_CACHE", str(tmp_path_factory.mktemp("ab-cache")))
    argv = ["--against", revision, "--suite", place(folder, suite)]
    argv += ["--bench-mode", mode] if mode is not None else []
    argv += ["--report-dir", place(folder, report)] if report is not None else []
    argv += ["--regressions-out", place(folder, regressions)] if regressions is not None else []
    for flag, value in [*ordinals, *reals]:
        argv += [f"{flag}={value}"]
    argv += [str(write_results(folder / "r.json"))] if results else []
    argv += ["--baseline-dir", str(folder / "base")] if baseline else []
    argv += ["--update-baseline"] if update else []
    if results:
        # the results file is an input the sandbox now holds; the refusal must not touch it
        capsys.readouterr()
    code, err = outcome(gate_cli.main, argv, folder, capsys, prefix="ring-bench-gate: ")
    assert code == 2, err


# --- ring-harness gate ----------------------------------------------------------------------

GATE_SCENARIO = ROOT / "scenarios" / "foreign-python.toml"
GATE_RESULT = ROOT / "results" / "foreign-python.json"
GATE_MODES = ["baseline", "baseline", "history", "library", "command", "rev", "none", "two"]
GATE_FIGURES = ["ns_per_key", "structure_bytes", "cv", "moved", "agreement", "", "x" * 300]
GATE_OUTPUTS = ("--json", "--junit", "--html", "--markdown")


@SETTINGS
@given(real_scenario=st.booleans(), text=scenario_texts(), mode=st.sampled_from(GATE_MODES),
       given=pick(["$good", "$mutated"], [*PLACES, *DEVICE_INPUTS]),
       path=st.lists(st.integers(0, 50), max_size=6), value=JSON_VALUES,
       thresholds=st.lists(st.tuples(st.sampled_from(GATE_FIGURES), st.sampled_from(FLOATS)),
                           max_size=2),
       outputs=st.lists(st.tuples(st.sampled_from(GATE_OUTPUTS),
                                  pick(["report.out"], PLACES)), max_size=2),
       command=st.sampled_from(TEXTS), seconds=st.none() | st.sampled_from(FLOATS),
       judge=st.booleans())
@example(real_scenario=True, text="", mode="baseline", given="$good", path=[], value=None,
         thresholds=[], outputs=[("--json", "report.out")], command="", seconds=None,
         judge=True)
def test_ring_harness_gate(real_scenario: bool, text: str, mode: str, given: str,
                           path: list[int], value: Any, thresholds: list[tuple[str, str]],
                           outputs: list[tuple[str, str]], command: str, seconds: str | None,
                           judge: bool, tmp_path_factory: pytest.TempPathFactory,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """`ring-harness gate` with hostile scenarios, modes, results (mutated real ones, hostile
    places), thresholds, outputs and base commands. Baseline and history modes always judge
    a result given with --result, and no A/B draw gets as far as starting a peer, so no
    example runs a scenario: exit 0 or 1 with the outputs written (exit 1: one line per
    failed figure), or exit 2 in one line with nothing written."""
    folder = tmp_path_factory.mktemp("ring-gate")
    sandbox(folder)
    scenario = folder / "s.toml"
    if real_scenario:
        shutil.copy(GATE_SCENARIO, scenario)
    else:
        scenario.write_text(text, encoding="utf-8")
    good = folder / "good.json"
    shutil.copy(GATE_RESULT, good)
    mutated = folder / "mutated.json"
    mutated.write_text(json.dumps(_mutate(json.loads(good.read_text()), path, value),
                                  default=str))
    chosen = {"$good": str(good), "$mutated": str(mutated)}.get(given) or place(
        folder, given, good)
    argv = ["gate", str(scenario)]
    if mode in ("baseline", "two"):
        argv += ["--baseline", chosen, "--result", str(good)]
    if mode in ("history", "two"):
        argv += ["--against-history", "--history", str(folder / "hist"), "--result", chosen]
    if mode == "library":
        argv += ["--base-library", chosen]
    if mode == "command":
        argv += ["--base-command", command]  # never a program on PATH
    if mode == "rev":
        argv += ["--base-rev", "HEAD", "--build", "true", "--repository", str(folder)]
    for figure, ratio in thresholds:
        argv += ["--threshold", f"{figure}={ratio}"]
    for flag, where in outputs:
        argv += [flag, place(folder, where, good)]
    argv += ["--max-seconds", seconds] if seconds is not None else []
    argv += ["--judge-timings"] if judge else []
    code, err = outcome(lambda args: main(args), argv, folder, capsys)
    if code == 1:
        assert all(line.startswith(("regression: ", "failed: "))
                   for line in err.strip().splitlines()), err
    if code in (0, 1):
        for _, where in outputs:
            assert (folder / place(folder, where, good)).is_file()


# --- two writers into one --out -------------------------------------------------------------

def test_concurrent_runs_into_one_out_leave_one_runs_three_files(tmp_path: Path) -> None:
    """Two processes run scenarios of the same name into the same --out at once: the JSON,
    Markdown and HTML left are all three of one run (never a mix), and both exit 0."""
    out = tmp_path / "out"
    scenarios_written = []
    for tag in ("alpha", "omega"):
        path = tmp_path / f"{tag}.toml"
        path.write_text(f'name = "same"\ndescription = "written by {tag}"\n'
                        '[servers]\ncount = 3\n[keys]\ncount = 200\n'
                        '[generator]\npoints_per_weight = 5\n'
                        '[measure]\nlayouts = ["numpy-packed"]\nmetrics = ["balance"]\n'
                        'repeats = 1\n', encoding="utf-8")
        scenarios_written.append(path)
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(3):
        runs = [subprocess.Popen([sys.executable, "-m", "harness", "run", str(p), "--out",
                                  str(out), "--no-progress"], env=environment, cwd=tmp_path,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for p in scenarios_written]
        for run in runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
        assert sorted(p.name for p in out.iterdir()) == ["same.html", "same.json", "same.md"]
        described = json.loads((out / "same.json").read_text())["scenario"]["description"]
        assert described in ("written by alpha", "written by omega")
        for suffix in (".md", ".html"):
            assert described in (out / f"same{suffix}").read_text(encoding="utf-8")


def test_the_deadline_catches_a_loop_by_cpu_and_a_block_by_the_wall(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fuzzers' hang detector: a busy loop is stopped by its CPU time, a command
    blocked on nothing by the wall clock."""
    import tests.property.test_fuzz_commands as fuzz

    monkeypatch.setattr(fuzz, "TIMEOUT_S", 0.2)
    with pytest.raises(Hang, match="of CPU"), deadline():
        while True:
            pass
    monkeypatch.setattr(fuzz, "WALL_TIMEOUT_S", 1)
    with pytest.raises(Hang, match="no answer in 1 s"), deadline():
        time.sleep(5)


# --- identify -----------------------------------------------------------------------------

#: a client's own routing (libketama, three servers): found among the shipped recipes at
#: once, so that an example whose inputs stay valid ends in a second or so
_IDENTIFY_SERVERS = ["a:1", "b:2", "c:3"]
_IDENTIFY_KEYS = [f"k{i}" for i in range(30)]


def _identify_routing() -> str:
    from harness.core.servers import Server
    from harness.recipes.algorithms import get_algorithm

    ring = get_algorithm("ring").build([Server(n) for n in _IDENTIFY_SERVERS],
                                       construction="libketama")
    owners = ring.route([k.encode() for k in _IDENTIFY_KEYS]).tolist()
    return "key,server\n" + "".join(f"{k},{_IDENTIFY_SERVERS[o]}\n"
                                    for k, o in zip(_IDENTIFY_KEYS, owners, strict=True))


IDENTIFY_ROUTING = _identify_routing()
IDENTIFY_SERVERS = "".join(f'[[servers]]\nname = "{n}"\n' for n in _IDENTIFY_SERVERS)
#: a line that breaks the routing file, appended to it
HOSTILE_ROWS = ["k,s9\n", "k1,a:1,x\n", "k0,c:3\nk0,a:1\n", '"unclosed\n', "\x00,\x00\n",
                "x" * 100_000 + ",a:1\n", ",\n", "\udcff,a:1\n"]
HOSTILE_SERVERS = ['[[servers]]\nname = "a:1"\n', "[[servers]]\nname = 3\n",
                   '[[servers]]\nname = "d"\nweight = nan\n', '[[servers]]\nname = ""\n',
                   '[[servers]]\nname = "d"\nweight = "2"\n', "servers = 3\n", "[x]\n",
                   '[[servers]]\nname = "d\\n"\nweight = 1e300\n', "[[servers]\n"]
#: --seed as drawn: absent, valid (decimal, hex, repeated), or hostile
SEEDS: list[list[str]] = [[], ["--seed", "0"], ["--seed", "0x9747b28c", "--seed", "7"],
                          ["--seed", "-1"], ["--seed", "x"], ["--seed", str(2**64)],
                          ["--seed", "\udcff"], ["--seed", "1e3"], ["--seed"]]


@SETTINGS
@given(row=st.none() | st.sampled_from(HOSTILE_ROWS),
       server=st.none() | st.sampled_from(HOSTILE_SERVERS),
       routing=pick(["$routing"], [*PLACES, *DEVICE_INPUTS]),
       servers=pick(["$servers"], [*PLACES, *DEVICE_INPUTS]),
       out=st.none() | pick(["report.txt"], PLACES), minutes=st.sampled_from(MINUTES),
       extra=st.sampled_from([[], ["--nope"], ["more"]]), seeds=st.sampled_from(SEEDS))
def test_identify(row: str | None, server: str | None, routing: str, servers: str,
                  out: str | None, minutes: list[str], extra: list[str], seeds: list[str],
                  tmp_path_factory: pytest.TempPathFactory,
                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("identify")
    sandbox(folder)
    routing_file, servers_file = folder / "observed.csv", folder / "servers.toml"
    routing_file.write_bytes((IDENTIFY_ROUTING + (row or "")).encode("utf-8", "surrogateescape"))
    servers_file.write_text(IDENTIFY_SERVERS + (server or ""), encoding="utf-8")
    inputs = {"$routing": str(routing_file), "$servers": str(servers_file)}
    argv = ["identify", inputs.get(routing) or place(folder, routing, routing_file),
            inputs.get(servers) or place(folder, servers, servers_file), *minutes, *extra,
            *seeds]
    if out is not None:
        argv += ["--out", place(folder, out, routing_file)]
    code, _ = outcome(main, argv, folder, capsys)
    if code == 0 and out is not None:
        assert (folder / place(folder, out, routing_file)).is_file()
