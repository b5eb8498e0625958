"""The base side of an A/B gate: the scenario's foreign peers as the base build has them.

Three ways to name the base (the changed side is always the scenario as it stands):
- `--base-library PATH`: the peer's shared library of the base build;
- `--base-command CMD`: the peer's command of the base build (split as a shell would);
- `--base-rev REV --build CMD`: a revision of the user's git repository, exported into a
  scratch folder (`git archive`, so nothing of the work tree leaks in) and built there by
  CMD; every foreign peer's library path, and every argument of its command that names a
  file of the export, is then taken inside the export.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tarfile
from dataclasses import replace
from pathlib import Path

from harness.core.errors import HarnessError, ScenarioError
from harness.recipes.peers.foreign.spec import ForeignPeerSpec
from harness.run.scenario import Scenario

#: seconds the base's build may take
BUILD_TIMEOUT_S = 1800


def _with_peers(scenario: Scenario, peers: tuple[ForeignPeerSpec, ...]) -> Scenario:
    return replace(scenario, measure=replace(scenario.measure, foreign_peers=peers))


def _chosen(scenario: Scenario, peer: str | None, kind: str, flag: str) -> ForeignPeerSpec:
    """The foreign peer the flag replaces: the one named by --peer, or the only one of its
    kind (a library for --base-library, a command for --base-command)."""
    candidates = [p for p in scenario.measure.foreign_peers
                  if p.name == peer or (peer is None and p.kind == kind)]
    if peer is not None and not candidates:
        names = ", ".join(p.name for p in scenario.measure.foreign_peers) or "none"
        raise ScenarioError(f"--peer: expected one of the scenario's foreign peers ({names}) "
                            f"(got {peer!r})")
    if len(candidates) != 1:
        raise ScenarioError(f"{scenario.path}: {flag} needs a scenario with one {kind} "
                            f"peer, or --peer NAME (got {len(candidates)})")
    chosen = candidates[0]
    if chosen.kind != kind:
        raise ScenarioError(f"{flag}: peer {chosen.name!r} is a {chosen.kind} peer, expected "
                            f"a {kind} peer")
    return chosen


def _is_file(path: Path) -> bool:
    """Whether the path names a file; False, not an OSError, for a name the system refuses
    (too long, a NUL, a loop), which is bad input like a missing file."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def base_with_library(scenario: Scenario, library: Path, peer: str | None) -> Scenario:
    if not _is_file(library):
        raise ScenarioError(f"--base-library: expected an existing shared library file "
                            f"(got {str(library)!r})")
    chosen = _chosen(scenario, peer, "library", "--base-library")
    return _with_peers(scenario, tuple(replace(p, library=str(library)) if p is chosen else p
                                       for p in scenario.measure.foreign_peers))


def base_with_command(scenario: Scenario, command: str, peer: str | None) -> Scenario:
    try:
        parts = tuple(shlex.split(command))
    except ValueError as exc:
        raise ScenarioError(f"--base-command: expected a command line ({exc}) "
                            f"(got {command!r})") from None
    if not parts:
        raise ScenarioError(f"--base-command: expected a program and its arguments "
                            f"(got {command!r})")
    chosen = _chosen(scenario, peer, "command", "--base-command")
    return _with_peers(scenario, tuple(replace(p, command=parts) if p is chosen else p
                                       for p in scenario.measure.foreign_peers))


def export_revision(repository: Path, revision: str, into: Path) -> None:
    """`git archive REV` of the repository, unpacked into `into` (HarnessError if git
    cannot: REV unknown, not a repository)."""
    archive = into / "base.tar"
    done = subprocess.run(["git", "-C", str(repository), "archive", "--format=tar",
                           "-o", str(archive), "--", revision, "."],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["git archive failed"])[-1]
        raise ScenarioError(f"--base-rev {revision}: expected a revision of the git "
                            f"repository {str(repository)!r} ({last})")
    tree = into / "base"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()


def build_base(tree: Path, build: str) -> None:
    """Run the build command in the exported tree (HarnessError naming its exit)."""
    try:
        done = subprocess.run(build, shell=True, cwd=tree, capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise HarnessError(f"the base's build ({build!r}) took more than "
                           f"{BUILD_TIMEOUT_S} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines()
                or ["(it printed nothing)"])[-1]
        raise HarnessError(f"the base's build ({build!r}) exited {done.returncode}: {last}")


def base_in_tree(scenario: Scenario, tree: Path, root: Path) -> Scenario:
    """The scenario's foreign peers as found in `tree` (the base's export), paths taken
    relative to `root` (the repository's top, where the scenario's paths start)."""
    here = Path.cwd()

    def moved(path: str) -> str | None:
        where = (here / path).resolve()
        try:
            inside = where.relative_to(root.resolve())
        except ValueError:
            return None
        return str(tree / inside)

    peers = []
    for peer in scenario.measure.foreign_peers:
        if peer.library is not None:
            library = moved(peer.library)
            if library is None or not os.path.isfile(library):
                raise HarnessError(f"peer {peer.name!r}: the base's build made no "
                                   f"{peer.library} (looked for {library})")
            peers.append(replace(peer, library=library))
        else:
            assert peer.command is not None
            parts = [moved(part) if (here / part).exists() and moved(part) else part
                     for part in peer.command]
            peers.append(replace(peer, command=tuple(p for p in parts if p is not None)))
    return _with_peers(scenario, tuple(peers))
