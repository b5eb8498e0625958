"""Typed results (format 2): dataclasses read and written as JSON, and older formats migrated.

A result is one document per scenario run: metadata (machine, versions,
commit, scenario) and one `Run` per sweep point. A run holds the figures of
run-wide metrics (`figures`: balance, collisions, load, movement, ...) and its
`subjects`: each physical form measured (the ring's layouts, an algorithm,
a peer library), with per-subject figures (memory, throughput). Each figure's
type is declared by its metric module (`harness.metrics.registry`), so a new
metric adds its record without touching this module.

Older files are read through a chain of migrations, as asv does
(`update_to_2`, ...): `upgrade` brings any supported version to the current
one, so `show` and `compare` read every committed file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import cattrs

from harness.core.errors import ResultFormatError, UnknownNameError
from harness.core.invocation import HARNESS
from harness.core.redact import without_keys

FORMAT_NAME = "ring-harness-result"
#: the result format version: the one definition (`harness.run.runner` writes it; a scenario
#: file's format is `harness.run.scenario.SCENARIO_FORMAT_VERSION`, another concept)
FORMAT_VERSION = 2
T = TypeVar("T")


@dataclass
class RingInfo:
    servers: int
    points: int
    entries: int
    bits: int
    #: the hash placing points, or the construction that fixes its own
    hash: str


@dataclass
class Parity:
    keys: int
    plain_reference_keys: int
    #: the forms (layouts) checked against the reference
    forms: list[str]
    ok: bool


@dataclass
class Subject:
    """One thing measured side by side: a layout of the ring, an algorithm, or a peer library."""

    name: str
    #: "layout", "algorithm" or "peer"
    kind: str
    entries: int
    nbytes: int
    entry_size: int | None = None
    #: peers: share of sampled keys routed to the same server as our reference
    agreement: float | None = None
    agreement_keys: int | None = None
    figures: dict[str, Any] = field(default_factory=dict)

    def figure(self, metric: str) -> Any:
        return self.figures.get(metric)


@dataclass
class Run:
    """Everything measured at one sweep point."""

    label: str
    algorithm: str
    params: dict[str, Any]
    points_per_weight: int | None
    parity: Parity
    ring: RingInfo | None = None
    subjects: list[Subject] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    #: wall time of this sweep point and the process's peak resident set after it
    wall_s: float | None = None
    peak_rss_bytes: int | None = None

    def figure(self, metric: str) -> Any:
        return self.figures.get(metric)

    def of_kind(self, kind: str) -> list[Subject]:
        return [s for s in self.subjects if s.kind == kind]

    def subject(self, name: str) -> Subject:
        return next(s for s in self.subjects if s.name == name)


@dataclass
class Machine:
    """Where a result was measured (`harness.core.machine.machine_info`)."""

    cpu: str
    cores: int | None
    memory_bytes: int | None
    os: str
    python: str
    implementation: str
    versions: dict[str, str | None]


@dataclass
class Result:
    format: str
    format_version: int
    harness_version: str
    #: the scenario as loaded (defaults filled in)
    scenario: dict[str, Any]
    scenario_file: str
    scenario_sha256: str
    machine: Machine
    git_commit: str | None
    started_at: str
    duration_s: float
    runs: list[Run]
    #: the memory estimate made before the run (`harness.run.estimate`): this process's
    #: resident set then, plus what the run was expected to add at most (None in results
    #: written before runs recorded it)
    estimated_peak_bytes: int | None = None
    #: where the sweep points ran and where the memory figures came from (None: one after
    #: another in the measuring process, or a result written before runs recorded it)
    executor: str | None = None

    @property
    def name(self) -> str:
        return str(self.scenario["name"])

    def to_json(self) -> dict[str, Any]:
        """The document as written, with no secret key in it (`harness.core.redact`)."""
        document: dict[str, Any] = without_keys(_converter.unstructure(self))
        return document

    @classmethod
    def from_json(cls, document: Any, source: str = "result", *,
                  record_types: Mapping[str, type[Any]]) -> Result:
        """Read a result document of any supported format version; refuse others.

        Each figure is read as the record its metric declares: `record_types[name]` (the
        metric registry's table of them), given by the caller as data, so that the model
        imports no metric and calls nothing above it.
        """
        document = upgrade(document, source)
        try:
            result = _converter.structure(document, cls)
            for key in ("name", "description"):
                if not isinstance(result.scenario.get(key), str):
                    raise ValueError(f"scenario.{key} must be a string")
            for i, run in enumerate(result.runs):
                run.figures = _figures(run.figures, f"runs[{i}].figures", record_types)
                for j, subject in enumerate(run.subjects):
                    subject.figures = _figures(subject.figures,
                                               f"runs[{i}].subjects[{j}].figures",
                                               record_types)
        # AttributeError: cattrs's generated code reads a record's fields with .keys()
        except (cattrs.BaseValidationError, AttributeError, KeyError, TypeError,
                ValueError) as exc:
            raise ResultFormatError(
                f"{source}: not a well-formed result of format {FORMAT_VERSION} "
                f"({_first_problem(exc)})") from None
        return result


_converter = cattrs.Converter(forbid_extra_keys=True)


def _first_problem(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(exc))[:300]
    return str(exc)[:300]


def _figures(raw: dict[str, Any], where: str,
             record_types: Mapping[str, type[Any]]) -> dict[str, Any]:
    figures = {}
    for name, value in raw.items():
        cls = record_types.get(name)
        if cls is None:
            raise UnknownNameError("metric", name, list(record_types))
        # A record is a JSON object; say so by name rather than let cattrs fail on .keys().
        if dataclasses.is_dataclass(cls) and not isinstance(value, dict):
            raise ValueError(f"{where}.{name} must be an object (got {type(value).__name__})")
        figures[name] = _converter.structure(value, cls)
    return figures


def run_to_json(run: Run) -> dict[str, Any]:
    """One sweep point's record as a result document holds it (no secret key in it): what
    a worker sends back and the task store keeps."""
    document: dict[str, Any] = without_keys(_converter.unstructure(run))
    return document


def run_from_json(document: Any, source: str, *,
                  record_types: Mapping[str, type[Any]]) -> Run:
    """A sweep point's record read back (`run_to_json`), its figures as their records."""
    try:
        run = _converter.structure(document, Run)
        run.figures = _figures(run.figures, f"{source}.figures", record_types)
        for j, subject in enumerate(run.subjects):
            subject.figures = _figures(subject.figures, f"{source}.subjects[{j}].figures",
                                       record_types)
    except (cattrs.BaseValidationError, AttributeError, KeyError, TypeError,
            ValueError) as exc:
        raise ResultFormatError(f"{source}: not a well-formed sweep point "
                                f"({_first_problem(exc)})") from None
    return run


def structure(value: Any, cls: type[T]) -> T:
    """Read one record (a metric's figure) from its JSON form."""
    return _converter.structure(value, cls)


def relative_path(path: str | Path) -> str:
    """A scenario path as results record it: relative to the current directory when inside it,
    as text (see `shown_path`)."""
    absolute = Path(os.path.abspath(path))
    try:
        return shown_path(absolute.relative_to(Path.cwd()).as_posix())
    except ValueError:
        return shown_path(str(path))


def shown_path(text: str) -> str:
    """A path as text any file can hold: the bytes of a name that is not UTF-8 (which Python
    carries as lone surrogates, and no UTF-8 file can encode) written as \\xNN escapes."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


# --- migrations: each takes a document of version N-1 and returns version N ---------------


def update_to_2(document: dict[str, Any]) -> dict[str, Any]:
    """Format 1 -> 2: runs name their algorithm and parameters; figures are grouped by
    metric; layouts and peers become subjects with their own figures."""
    scenario = document["scenario"]
    generator, measure = scenario["generator"], scenario["measure"]
    memory_keys = ("structure_bytes", "bytes_per_entry", "build_peak_bytes",
                   "lookup_peak_bytes", "rss_before_bytes", "rss_after_bytes",
                   "tracemalloc_bytes")
    runs = []
    for run in document["runs"]:
        params: dict[str, Any] = {"construction": generator["construction"]}
        if generator["construction"] == "points":
            params.update(hash=generator["hash"], point_name=generator["point_name"],
                          points_per_weight=run["points_per_weight"])
        params["layout"] = measure["base_layout"]
        subjects = []
        for record in run.get("layouts", []):
            figures: dict[str, Any] = {}
            if "structure_bytes" in record:
                figures["memory"] = {k: record.get(k) for k in memory_keys}
            if "scalar_ns" in record:
                figures["throughput"] = {"scalar_ns": record["scalar_ns"],
                                         "batch_ns": record.get("batch_ns")}
            subjects.append({"name": record["layout"], "kind": "layout",
                             "entries": record["entries"], "nbytes": record["nbytes"],
                             "entry_size": record["entry_size"], "figures": figures})
        for record in run.get("peers", []):
            figures = {}
            if "structure_bytes" in record:
                figures["memory"] = {k: record.get(k) for k in memory_keys}
            if "scalar_ns" in record:
                figures["throughput"] = {"scalar_ns": record["scalar_ns"], "batch_ns": None}
            subjects.append({"name": record["peer"], "kind": "peer",
                             "entries": record["entries"], "nbytes": record["nbytes"],
                             "agreement": record["agreement"],
                             "agreement_keys": record["agreement_keys"], "figures": figures})
        parity = dict(run["parity"])
        parity["forms"] = parity.pop("layouts")
        runs.append({
            "label": run["label"], "algorithm": "ring", "params": params,
            "points_per_weight": run["points_per_weight"], "parity": parity,
            "ring": run["ring"], "subjects": subjects,
            "figures": {k: run[k] for k in ("collisions", "balance", "movement") if k in run},
        })
    return {**document, "format_version": 2, "runs": runs,
            "scenario_file": relative_path(document["scenario_file"])}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: update_to_2}


def upgrade(document: Any, source: str = "result") -> dict[str, Any]:
    """Bring a document of any supported version up to FORMAT_VERSION."""
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ResultFormatError(f"{source}: not a ring-harness result (no format {FORMAT_NAME!r})")
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not (
        1 <= version <= FORMAT_VERSION
    ):
        raise ResultFormatError(
            f"{source}: result format version {version!r}, but this harness reads versions "
            f"1 to {FORMAT_VERSION}; re-run its scenario with `{HARNESS.name()} run`")
    try:
        while version < FORMAT_VERSION:
            document = MIGRATIONS[version](document)
            version = document["format_version"]
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ResultFormatError(
            f"{source}: a format {version} result, but not well-formed (missing or wrong "
            f"{exc}); re-run its scenario with `{HARNESS.name()} run`") from None
    upgraded: dict[str, Any] = document
    return upgraded
