"""The base side of an A/B gate run: a commit, exported clean from git and built.

`locate_base` resolves REV in the candidate's repository and checks that its tree
holds the benchmark suite; `prepare_base` exports it with `git archive` (so nothing of
the working tree, no untracked file, no stale build leaks in) and compiles its C core
in place with this interpreter's setuptools and cffi, exactly as a checkout is built for
development. The
base then runs from that folder (`PYTHONPATH`), on this environment's dependencies:
the same numpy, cffi and pytest on both sides, so an A/B run measures our code and
nothing else. (A virtual environment of its own would need every dependency installed
again, from the network, for minutes, and would differ from the candidate's in more than
the code under test.)

Builds are cached by tree, interpreter and machine under the user's cache folder
(`ring-harness/ab-bases/`), so the second run against the same base starts at once; a
build goes to a temporary folder first and is renamed into place only when complete.
Every refusal (unknown REV, no suite in it, a build that fails) is an `UnusableDataError`
with one line naming the cause: the gate exits 2.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from harness.apps.benchgate.results import UnusableDataError

#: what the base's tree must hold to be measured: the suite's fixtures and timings, and the
#: package with the build script of its C core
REQUIRED_FILES = ("benchmarks/conftest.py", "benchmarks/test_timing.py", "setup.py",
                  "harness/__init__.py")
#: what compiling the C core in place needs from this environment
BUILD_TOOLS = ("setuptools", "cffi")
CACHE_VARIABLE = "RING_BENCH_AB_CACHE"
#: a build of the C core takes ~5 s here; far longer is a hung compiler or a full disk
BUILD_TIMEOUT_S = 600
GIT_TIMEOUT_S = 60


@dataclass(frozen=True)
class Base:
    """A built base: `source` holds the exported tree, its `harness` built in place."""

    revision: str
    commit: str
    source: Path
    #: reused from an earlier run (no export, no build this time)
    cached: bool

    @property
    def suite(self) -> Path:
        return self.source / "benchmarks"


def cache_root() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured)
    return platformdirs.user_cache_path("ring-harness", appauthor=False) / "ab-bases"


def _git(repository: Path, *arguments: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(repository), *arguments], capture_output=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnusableDataError(f"cannot run git in {repository}: {exc}") from None


def repository_of(folder: Path) -> Path:
    """The top folder of the git repository holding `folder`."""
    found = _git(folder, "rev-parse", "--show-toplevel")
    if found.returncode != 0:
        raise UnusableDataError(f"--against needs a git repository; {folder} is not in one")
    return Path(os.fsdecode(found.stdout.strip()))


def resolve(repository: Path, revision: str) -> str:
    """The commit `revision` names in `repository`, or a one-line refusal."""
    if not revision or revision.startswith("-") or "\n" in revision or "\0" in revision:
        raise UnusableDataError(f"--against {revision!r}: expected a git revision")
    found = _git(repository, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if found.returncode != 0:
        raise UnusableDataError(
            f"--against {revision}: no such commit in {repository} (a shallow clone may "
            "lack it: fetch it, or gate against the committed baseline)")
    return found.stdout.decode().strip()


def check_suite(repository: Path, revision: str, commit: str) -> None:
    missing = [name for name in REQUIRED_FILES
               if _git(repository, "cat-file", "-e", f"{commit}:{name}").returncode != 0]
    if missing:
        raise UnusableDataError(
            f"--against {revision} ({commit[:12]}) has no benchmark suite to run: "
            f"missing {', '.join(missing)}")


def _tree(repository: Path, commit: str) -> str:
    return _git(repository, "rev-parse", f"{commit}^{{tree}}").stdout.decode().strip()


def _export(repository: Path, commit: str, into: Path) -> None:
    archive = into.parent / f"{into.name}.tar"
    with archive.open("wb") as sink:
        try:
            done = subprocess.run(["git", "-C", str(repository), "archive", "--format=tar",
                                   commit], stdout=sink, stderr=subprocess.PIPE,
                                  timeout=GIT_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UnusableDataError(f"cannot export {commit[:12]}: {exc}") from None
    if done.returncode != 0:
        raise UnusableDataError(f"git archive {commit[:12]} failed: {_last_line(done.stderr)}")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()


def _last_line(output: bytes) -> str:
    lines = [line.strip() for line in output.decode(errors="replace").splitlines()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or [line for line in lines if line] or ["(no output)"])[-1][:300]


def _build(source: Path, revision: str, commit: str) -> None:
    """Compile the base's C core in place, as `setup.py build_ext --inplace` in a checkout."""
    # Missing tools of this environment are not the base's fault: say so, not "does not build".
    missing = [name for name in BUILD_TOOLS if importlib.util.find_spec(name) is None]
    if missing:
        raise UnusableDataError(
            f"cannot build the base here: {', '.join(missing)} not installed in this "
            f"environment ({sys.executable} -m pip install {' '.join(missing)})")
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    try:
        done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace",
                               "--parallel", "2", "-q"], cwd=source, env=environment,
                              capture_output=True, timeout=BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise UnusableDataError(
            f"--against {revision} ({commit[:12]}) does not build: no result in "
            f"{BUILD_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise UnusableDataError(
            f"--against {revision} ({commit[:12]}) does not build: "
            f"{_last_line(done.stderr + done.stdout)}")


def locate_base(repository: Path, revision: str) -> str:
    """The commit REV names, checked to hold the benchmark suite (git alone: quick)."""
    commit = resolve(repository, revision)
    check_suite(repository, revision, commit)
    return commit


def prepare_base(repository: Path, revision: str, commit: str) -> Base:
    """The commit's tree exported and built, or taken from the cache of an earlier build."""
    key = f"{_tree(repository, commit)}-{sys.implementation.cache_tag}-{platform.machine()}"
    final = cache_root() / key
    if (final / "source").is_dir():
        return Base(revision, commit, final / "source", cached=True)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f"{key[:12]}-", dir=final.parent))
    except OSError as exc:
        raise UnusableDataError(f"cannot make a build folder for the base: {exc}") from None
    try:
        _export(repository, commit, building / "source")
        _build(building / "source", revision, commit)
        with contextlib.suppress(OSError):  # another run finished the same build first
            building.rename(final)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
    if not (final / "source").is_dir():
        raise UnusableDataError(f"the build of {commit[:12]} vanished from {final}")
    return Base(revision, commit, final / "source", cached=False)
