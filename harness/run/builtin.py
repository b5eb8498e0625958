"""The built-in scenarios: the checkout's scenarios/, which the wheel carries as a copy.

setup.py's build_py copies scenarios/ into the built package as
harness/run/builtin_scenarios/; a checkout, or an editable install of one, has no copy
and reads scenarios/ in place. A built-in scenario's name is its path below that folder
without `.toml` (`tutorial`, `reproduce/a_balance_sweep`). A result records a built-in
scenario as `scenarios/NAME.toml` wherever it was read from, as a run from the
checkout's root records it, so that no installation's absolute path reaches a result.
"""

from __future__ import annotations

import difflib
import errno
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.core.errors import ScenarioError
from harness.core.model import relative_path

#: the wheel's copy (setup.py writes it into the build, never into the checkout)
PACKAGED = Path(__file__).resolve().parent / "builtin_scenarios"
#: the checkout's folder, for a checkout or an editable install
CHECKOUT = Path(__file__).resolve().parents[2] / "scenarios"
#: how results name the folder, whichever of the two was read
RECORDED_FOLDER = "scenarios"
DEFAULT_NAME = "default"


def builtin_folder() -> Path:
    """Where the built-in scenarios are: the packaged copy if installed from a wheel."""
    return PACKAGED if PACKAGED.is_dir() else CHECKOUT


@dataclass(frozen=True)
class BuiltinScenario:
    name: str
    #: the file's `description` (its name when it gives none), as written: may hold anything
    description: str
    path: Path


def builtin_path(name: str) -> Path | None:
    """The file of the built-in scenario `name` (`.toml` optional), or None. Only names
    below the folder count: an absolute path or `..` names no built-in scenario."""
    relative = PurePosixPath(name.removesuffix(".toml") + ".toml")
    if relative.is_absolute() or ".." in relative.parts or "\\" in name:
        return None
    path = builtin_folder() / relative
    return path if path.is_file() else None


def builtin_names() -> list[str]:
    """Every built-in scenario's name, in order (`reproduce/...` among them)."""
    folder = builtin_folder()
    return sorted(p.relative_to(folder).with_suffix("").as_posix()
                  for p in folder.rglob("*.toml"))


def builtin_scenarios() -> list[BuiltinScenario]:
    """Every built-in scenario with its description, read from the TOML alone (no
    validation: listing them costs no import of what they run)."""
    listed = []
    for name in builtin_names():
        path = builtin_folder() / f"{name}.toml"
        try:
            description = tomllib.loads(path.read_text(encoding="utf-8")).get("description",
                                                                               name)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            description = f"(unreadable: {exc})"
        listed.append(BuiltinScenario(name, str(description), path))
    return listed


def find_scenario(argument: str | Path, listing: str = "the `scenarios` command") -> Path:
    """The scenario file an argument names: an existing file is that file; otherwise the
    built-in scenario of that name; otherwise a ScenarioError saying both, with the
    closest built-in names and `listing`, what lists them all.

    A folder that is no built-in name is returned as it is, for `load_scenario` to refuse
    by its kind, as it refuses a FIFO or a device.
    """
    path = Path(argument)
    if os.path.lexists(path) and not path.is_dir():
        return path
    builtin = builtin_path(str(argument))
    if builtin is not None:
        return builtin
    if os.path.lexists(path):
        return path
    close = difflib.get_close_matches(str(argument).removesuffix(".toml"), builtin_names(), n=3)
    hint = f" (closest: {', '.join(close)})" if close else ""
    raise ScenarioError(f"{argument}: cannot open the scenario file ({os.strerror(errno.ENOENT)}),"
                        f" and no built-in scenario is named so{hint}; {listing} lists them")


def recorded_path(file: str | Path) -> str:
    """A scenario's path as results record it: `scenarios/NAME.toml` for a built-in one,
    otherwise relative to the current directory when inside it (else as given)."""
    absolute = Path(os.path.abspath(file))
    for folder in {builtin_folder().resolve(), CHECKOUT}:
        try:
            inside = absolute.resolve().relative_to(folder)
        except (ValueError, OSError, RuntimeError):
            continue
        return (PurePosixPath(RECORDED_FOLDER) / inside.as_posix()).as_posix()
    return relative_path(file)
