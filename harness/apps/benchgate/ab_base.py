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

Builds are cached by tree, interpreter, machine and build flags (the compiler, its version
and the flag variables the build reads: a base built at -O0 is never reused for a run at
the usual flags) under the user's cache folder (`ring-harness/ab-bases/`), so the second
run against the same base starts at once. A build goes to a temporary folder first and is
renamed into place only when complete; the export, the compiler's version probe and the
build each run in a process group of their own, killed whole however the call ends (a
timeout, SIGINT, SIGTERM), so no compiler outlives the gate and no half-built base is ever
in the cache. Every refusal (unknown REV, no suite in it, a symlink out of its tree, a
suite its export leaves out, a build that fails) is an `UnusableDataError` with one line
naming the cause: the gate exits 2.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import platform
import posixpath
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

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
#: `cc --version` answers in milliseconds; a compiler that does not is named as unknown
VERSION_TIMEOUT_S = 20
#: what the build of the C core reads from the environment (setup.py, cext/build_ffi.py,
#: and the compiler setup of setuptools): a base built with other values is another base
BUILD_VARIABLES = ("RING_HARNESS_EXTRA_CFLAGS", "RING_HARNESS_EXTRA_LDFLAGS", "CC", "CFLAGS",
                   "CPPFLAGS", "LDFLAGS", "LDSHARED", "ARCHFLAGS")
#: the prefix of a build in progress in the cache folder (never a cache entry: those are
#: named by their key); `.building-PID-...`, so that one whose process died can be removed
BUILDING_PREFIX = ".building-"


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


def run_in_group(command: Sequence[str], *, timeout: float, cwd: Path | None = None,
                 env: Mapping[str, str] | None = None,
                 stdout: IO[bytes] | int = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    """`subprocess.run` in a process group of its own, the whole group killed if the call
    ends early: a timeout, SIGINT, SIGTERM (raised here by the gate's handlers). Killing
    the direct child alone, as subprocess.run does, would leave the compilers that
    setup.py started running on."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout,
                               stderr=subprocess.PIPE, process_group=0)
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    return subprocess.CompletedProcess(command, process.returncode, out or b"", err or b"")


def _outside_link(member: tarfile.TarInfo) -> str | None:
    """Why the link `member` points out of the exported tree (None: it stays inside)."""
    if not (member.issym() or member.islnk()):
        return None
    target = member.linkname
    if posixpath.isabs(target):
        return "an absolute symlink"
    start = posixpath.dirname(member.name) if member.issym() else ""
    landing = posixpath.normpath(posixpath.join(start, target))
    if landing == ".." or landing.startswith("../"):
        return "a symlink out of the tree"
    return None


def _unpack(archive: Path, into: Path, revision: str, commit: str) -> None:
    """Unpack the export; a link pointing out of the tree refuses the base (links inside
    the tree are kept). The data filter stays as a second guard, for a chain of links."""
    base = f"--against {revision} ({commit[:12]})"
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for member in members:
                why = _outside_link(member)
                if why is not None:
                    raise UnusableDataError(
                        f"{base}: its tree holds {why}, {member.name!r} -> "
                        f"{member.linkname!r}; a base is only exported when every symlink "
                        "stays inside its tree")
            tar.extractall(into, members=members, filter="data")
    except tarfile.FilterError as exc:
        raise UnusableDataError(f"{base}: its tree cannot be exported safely: {exc}") from None
    except (tarfile.TarError, OSError) as exc:
        raise UnusableDataError(f"cannot export {commit[:12]}: {exc}") from None


def _export(repository: Path, commit: str, into: Path, revision: str) -> None:
    archive = into.parent / f"{into.name}.tar"
    with archive.open("wb") as sink:
        try:
            done = run_in_group(["git", "-C", str(repository), "archive", "--format=tar",
                                 commit], stdout=sink, timeout=GIT_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UnusableDataError(f"cannot export {commit[:12]}: {exc}") from None
    if done.returncode != 0:
        raise UnusableDataError(f"git archive {commit[:12]} failed: {_last_line(done.stderr)}")
    _unpack(archive, into, revision, commit)
    archive.unlink()
    check_export(into, revision, commit)


def check_export(source: Path, revision: str, commit: str) -> None:
    """The suite as exported. The commit holds it (check_suite), so what git archive left
    out was marked export-ignore by a .gitattributes of the base."""
    missing: list[str] = []
    for name in REQUIRED_FILES:
        parts = name.split("/")
        for depth in range(1, len(parts) + 1):
            if not os.path.lexists(source.joinpath(*parts[:depth])):
                shown = "/".join(parts[:depth]) + ("/" if depth < len(parts) else "")
                if shown not in missing:
                    missing.append(shown)
                break
    if missing:
        them = "it" if len(missing) == 1 else "them"
        raise UnusableDataError(
            f"--against {revision} ({commit[:12]}): the base's export lacks "
            f"{', '.join(missing)} because its .gitattributes export-ignores {them} (git "
            "archive leaves such paths out); drop the export-ignore at that commit, or gate "
            "against another one")


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
        done = run_in_group([sys.executable, "setup.py", "build_ext", "--inplace",
                             "--parallel", "2", "-q"], cwd=source, env=environment,
                            timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UnusableDataError(
            f"--against {revision} ({commit[:12]}) does not build: no result in "
            f"{BUILD_TIMEOUT_S} s") from None
    except OSError as exc:
        raise UnusableDataError(f"cannot run the base's build: {exc}") from None
    if done.returncode != 0:
        raise UnusableDataError(
            f"--against {revision} ({commit[:12]}) does not build: "
            f"{_last_line(done.stderr + done.stdout)}")


def locate_base(repository: Path, revision: str) -> str:
    """The commit REV names, checked to hold the benchmark suite (git alone: quick)."""
    commit = resolve(repository, revision)
    check_suite(repository, revision, commit)
    return commit


def compiler_version(environment: Mapping[str, str]) -> str:
    """The first line of `$CC --version` (the compiler setuptools would use), or why not."""
    named = environment.get("CC") or sysconfig.get_config_var("CC") or "cc"
    try:
        done = run_in_group([*shlex.split(named)[:1], "--version"], env=environment,
                            timeout=VERSION_TIMEOUT_S)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({type(exc).__name__})"
    lines = done.stdout.decode(errors="replace").splitlines()
    return f"{lines[0] if lines else ''} (exit {done.returncode})"


def build_flags(environment: Mapping[str, str]) -> dict[str, str]:
    """What besides the tree decides what a build of the base is."""
    return {**{name: environment.get(name, "") for name in BUILD_VARIABLES},
            "compiler": compiler_version(environment)}


def cache_key(tree: str, flags: Mapping[str, str]) -> str:
    """The cache folder's name of a build of `tree` with `flags` on this interpreter."""
    digest = hashlib.sha256(repr(sorted(flags.items())).encode(errors="replace")).hexdigest()
    return f"{tree}-{sys.implementation.cache_tag}-{platform.machine()}-{digest[:16]}"


def _remove_abandoned(root: Path) -> None:
    """Builds in progress whose process is gone (killed by SIGKILL, where no cleanup runs)."""
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            owner = entry.name.removeprefix(BUILDING_PREFIX).split("-")[0]
            if not entry.name.startswith(BUILDING_PREFIX) or not owner.isdigit():
                continue
            try:
                os.kill(int(owner), 0)
            except ProcessLookupError:
                shutil.rmtree(entry, ignore_errors=True)
            except OSError:
                continue


def prepare_base(repository: Path, revision: str, commit: str) -> Base:
    """The commit's tree exported and built, or taken from the cache of an earlier build."""
    key = cache_key(_tree(repository, commit), build_flags(os.environ))
    final = cache_root() / key
    if (final / "source").is_dir():
        return Base(revision, commit, final / "source", cached=True)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        _remove_abandoned(final.parent)
        building = Path(tempfile.mkdtemp(prefix=f"{BUILDING_PREFIX}{os.getpid()}-",
                                         dir=final.parent))
    except OSError as exc:
        raise UnusableDataError(f"cannot make a build folder for the base: {exc}") from None
    try:
        _export(repository, commit, building / "source", revision)
        _build(building / "source", revision, commit)
        with contextlib.suppress(OSError):  # another run finished the same build first
            building.rename(final)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)
    if not (final / "source").is_dir():
        raise UnusableDataError(f"the build of {commit[:12]} vanished from {final}")
    return Base(revision, commit, final / "source", cached=False)
