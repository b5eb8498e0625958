"""The run history: every result `run` writes is also kept, numbered, per machine.

As pytest-benchmark numbers its saved runs and asv keeps results per machine and
commit, each run is kept as `HISTORY/MACHINE/NNNN.json` (and its `.md`), where
MACHINE names this host and NNNN counts up from 0001; the result inside gives its
commit, scenario and time. `default_history_dir` says where HISTORY is when
`--history DIR` does not: never in the committed, curated `results/`, and never where
it would show in `git status`.

`compare` names entries as `latest` (the newest run on this machine), `previous`
(the newest run before it of the same scenario) or a run id (`7`, `0007`, or
`MACHINE/0007` for another machine's), as well as by path. After every run the
history's index page (`HISTORY/index.html`, `harness.report.history_page`) is
rewritten.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from harness.core.atomic import dumps_strict, write_atomically, write_numbered
from harness.core.errors import OutputError, ResultFormatError
from harness.core.model import Result
from harness.report import markdown
from harness.report.results import load_result
from harness.report.sections import result_report

#: the environment variable naming the default history folder (the test suite points it at
#: a temporary folder, so that it writes nothing into the checkout)
HISTORY_VARIABLE = "RING_HARNESS_HISTORY"
#: the history of a project folder, relative to it (the checkout's .gitignore names runs/)
PROJECT_HISTORY = Path("runs") / "history"
#: git answers in milliseconds; this long is a hung network file system, not a project
GIT_TIMEOUT_S = 10
#: what `compare` reads as a history entry rather than a path
NAMED = ("latest", "previous")
_ENTRY = re.compile(r"^(\d{4,9})\.json$")
_RUN_ID = re.compile(r"^(?:([A-Za-z0-9._-]+)/)?(\d{1,9})$")
#: the last run number an entry's name can hold (nine digits, as _ENTRY reads them)
LAST_NUMBER = 999_999_999


def default_history_dir() -> tuple[Path, str]:
    """The history folder when `--history` names none, and why, in words. The first that
    applies:

    1. $RING_HARNESS_HISTORY;
    2. runs/history in the current folder, when it is there already (kept there before);
    3. runs/history at the top of the git work tree the current folder is in, when git
       ignores it there (as the ring-harness checkout's .gitignore does): a project's runs
       stay beside it and out of `git status`;
    4. `history` in the platform's user data folder (platformdirs; on Linux
       $XDG_DATA_HOME/ring-harness, else ~/.local/share/ring-harness).

    A path under the current folder is given relative to it, as the messages print it.
    """
    named = os.environ.get(HISTORY_VARIABLE)
    if named:
        return Path(named), f"${HISTORY_VARIABLE} names it"
    if PROJECT_HISTORY.is_dir():
        return PROJECT_HISTORY, "the current folder holds a run history"
    top = _work_tree_ignoring(PROJECT_HISTORY)
    if top is not None:
        here = Path.cwd().resolve()
        folder = top / PROJECT_HISTORY
        shown = folder.relative_to(here) if folder.is_relative_to(here) else folder
        return shown, f"in the git work tree {top}, which ignores {PROJECT_HISTORY}"
    data = platformdirs.user_data_path("ring-harness", appauthor=False) / "history"
    return data, (f"the user data folder: no {PROJECT_HISTORY} here, and no git work tree "
                  f"around here that ignores it")


def _work_tree_ignoring(relative: Path) -> Path | None:
    """The top of the git work tree the current folder is in, when git ignores `relative`
    there; None outside a work tree, when it does not, or without git."""
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=GIT_TIMEOUT_S, check=False)
        if top.returncode != 0 or not top.stdout.strip():
            return None
        folder = Path(top.stdout.strip())
        ignored = subprocess.run(["git", "check-ignore", "--quiet", "--", str(relative)],
                                 cwd=folder, capture_output=True, timeout=GIT_TIMEOUT_S,
                                 check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return folder if ignored.returncode == 0 else None


def machine_name() -> str:
    """This host's name as a folder name (letters, digits, '.', '_', '-'), as asv names
    machines; 'machine' when the host has none."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", platform.node()).strip(".-")
    return name[:64] or "machine"


@dataclass(frozen=True)
class Entry:
    machine: str
    number: int
    path: Path

    @property
    def run_id(self) -> str:
        return f"{self.number:04d}"


def entries(history: Path, machine: str) -> list[Entry]:
    """The numbered entries of one machine, oldest first (other files are left alone)."""
    folder = history / machine
    if not folder.is_dir():
        return []
    found = [Entry(machine, int(m.group(1)), path) for path in folder.iterdir()
             if (m := _ENTRY.match(path.name)) and path.is_file()]
    return sorted(found, key=lambda entry: entry.number)


def machines(history: Path) -> list[str]:
    if not history.is_dir():
        return []
    return sorted(p.name for p in history.iterdir() if p.is_dir() and entries(history, p.name))


def next_number(history: Path) -> int:
    """The number the next entry of this machine takes at least, checked before any work:
    past LAST_NUMBER an entry would be written that no listing reads, and `latest` would
    name an older run."""
    existing = entries(history, machine_name())
    first = existing[-1].number + 1 if existing else 1
    if first > LAST_NUMBER:
        raise _full(history)
    return first


def _full(history: Path) -> OutputError:
    return OutputError(f"{history / machine_name()}: holds run {LAST_NUMBER}, the last "
                       "number the history can take; expected a history with room (move "
                       "its entries, or give another --history)")


def record(result: Result, history: Path) -> Entry:
    """Keep `result` as the next numbered entry of this machine; its Markdown beside it
    (under a number whose .md and .figures.json names are free too: a FIFO or symlink
    there is left alone)."""
    machine = machine_name()
    folder = history / machine
    document = dumps_strict(result.to_json(), f"result {result.name!r}")
    number, path = write_numbered(folder, lambda n: f"{n:04d}.json", next_number(history),
                                  document, siblings=(".md", ".figures.json"))
    if number > LAST_NUMBER:  # another process took the last numbers meanwhile
        path.unlink()
        raise _full(history)
    write_atomically(path.with_suffix(".md"), markdown.report(result_report(result)))
    return Entry(machine, number, path)


def is_history_name(spec: str) -> bool:
    """Whether `compare` reads `spec` as a history entry: latest, previous or a run id."""
    return spec in NAMED or _RUN_ID.match(spec) is not None


def find(spec: str, history: Path) -> Path:
    """The file of history entry `spec` (latest, previous, 7, 0007, MACHINE/0007); refused in
    one line naming the history when it has no such entry."""
    machine = machine_name()
    listed = entries(history, machine)
    where = history / machine
    if spec in NAMED:
        if not listed:
            raise ResultFormatError(f"{where}: no run history here to take {spec!r} from "
                                    "(run a scenario first, or give --history)")
        latest = listed[-1]
        if spec == "latest":
            return latest.path
        name = _scenario_name(latest)
        # Newest first, reading one entry at a time, up to the first of the same scenario.
        for earlier in reversed(listed[:-1]):
            if _scenario_name(earlier, quiet=True) == name:
                return earlier.path
        raise ResultFormatError(f"{where}: no run of scenario {name!r} before the latest "
                                f"({latest.run_id}) to take 'previous' from")
    match = _RUN_ID.match(spec)
    assert match is not None, "is_history_name chose this spec"
    machine = match.group(1) or machine
    number = int(match.group(2))
    chosen = [e for e in entries(history, machine) if e.number == number]
    if not chosen:
        raise ResultFormatError(f"{history / machine}: no run {number:04d} in the history "
                                "(expected a result file, 'latest', 'previous' or a run id "
                                "listed in its index.html)")
    return chosen[0].path


def _scenario_name(entry: Entry, quiet: bool = False) -> str | None:
    """The scenario an entry ran; an unreadable entry is refused, or None when `quiet`."""
    try:
        return load_result(entry.path).name
    except ResultFormatError:
        if quiet:
            return None
        raise
