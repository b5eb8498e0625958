"""The gate's report: one verdict per figure, rendered for people and for CI.

- JSON (`--json FILE`): the document `gate-report.schema.json` describes (shipped in the
  package beside this module, and in docs/reference/);
- Markdown (printed; `--markdown FILE`) and HTML (`--html FILE`, every outside string
  escaped);
- JUnit XML (`--junit FILE`): one test case per figure, a failure per regression;
- under GitHub Actions (`GITHUB_ACTIONS=true`): the Markdown appended to the file
  `$GITHUB_STEP_SUMMARY` names, and one `::error` annotation per regression.

Every figure shows its interval, or "exact" for a deterministic one, and the report opens
with the verdict in words.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from harness.apps.gate.verdicts import NOT_JUDGED, REGRESSION, UNKNOWN, Check

FORMAT = "ring-harness-gate"
VERSION = 1
SCHEMA = Path(__file__).with_name("gate-report.schema.json")
MODES = ("ab", "baseline", "history")


@dataclass(frozen=True)
class GateReport:
    scenario: str
    mode: str
    checks: list[Check]
    #: how the base was given, in words ("base library build/base/libring.so")
    against: str
    #: whether timings were judged, and why not when not
    timings: str
    cpu: str | None = None
    base_cpu: str | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[Check]:
        return [c for c in self.checks if c.verdict == REGRESSION]

    @property
    def passed(self) -> bool:
        return not self.regressions

    def verdict_text(self) -> str:
        judged = [c for c in self.checks if c.verdict not in (UNKNOWN, NOT_JUDGED)]
        if self.passed:
            return (f"PASS: none of {len(judged)} judged figures of {self.scenario!r} "
                    f"regressed against {self.against}.")
        names = ", ".join(f"{c.subject} {c.figure}" for c in self.regressions)
        return (f"REGRESSION: {len(self.regressions)} of {len(judged)} judged figures of "
                f"{self.scenario!r} regressed against {self.against}: {names}.")


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def to_json(report: GateReport) -> dict[str, Any]:
    figures = []
    for check in report.checks:
        record = asdict(check)
        for key in ("old", "new", "ratio", "low", "high", "threshold", "detectable"):
            record[key] = _finite(record[key])
        record["exact"] = check.figure in EXACT
        record["interval"] = exactness(check)
        figures.append(record)
    return {"format": FORMAT, "version": VERSION, "scenario": report.scenario,
            "mode": report.mode, "against": report.against,
            "verdict": "pass" if report.passed else "regression",
            "verdict_text": report.verdict_text(), "timings": report.timings,
            "cpu": report.cpu, "base_cpu": report.base_cpu,
            "seconds": round(report.seconds, 1), "notes": report.notes, "figures": figures}


def _number(value: float | None, digits: int = 4) -> str:
    return "unknown" if value is None or not math.isfinite(value) else f"{value:.{digits}g}"


#: figures that are the same on every run of the same code: no interval
EXACT = frozenset({"agreement", "routes_as_base", "cv", "moved"})


def exactness(check: Check) -> str:
    """The figure's interval, "exact", or "one measurement" (bytes: an allocator's count
    or what the peer reports, one value per run, judged by its threshold)."""
    if check.low is not None and check.high is not None:
        return f"{check.low:.3f} to {check.high:.3f}"
    if check.verdict in (UNKNOWN, NOT_JUDGED):
        return ""
    return "exact" if check.figure in EXACT else "one measurement"


def _interval(check: Check) -> str:
    return exactness(check)


def rows(report: GateReport) -> list[list[str]]:
    table = []
    for c in report.checks:
        table.append([c.subject, c.figure, _number(c.old), _number(c.new),
                      f"{c.ratio:.3f}x" if c.ratio is not None else "",
                      _interval(c), f"{c.threshold:g}x" if c.threshold is not None else "exact",
                      f"{c.detectable:.3f}x" if c.detectable is not None else "",
                      c.verdict.upper() if c.verdict == REGRESSION else c.verdict, c.note])
    return table


HEADER = ["subject", "figure", "old", "new", "ratio", "interval", "threshold",
          "detectable", "verdict", "note"]


def _cell(text: str) -> str:
    """Markdown table cell: the pipe and line breaks escaped, HTML special characters too
    (a step summary renders HTML)."""
    return html.escape(text.replace("\n", " "), quote=False).replace("|", "\\|")


def markdown(report: GateReport) -> str:
    lines = [f"# Gate: {_cell(report.scenario)} ({report.mode})", "",
             f"**{_cell(report.verdict_text())}**", "",
             f"Against: {_cell(report.against)}. Timings: {_cell(report.timings)}", ""]
    lines += [f"- {_cell(note)}" for note in report.notes]
    if report.notes:
        lines.append("")
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "---|" * len(HEADER))
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows(report)]
    return "\n".join(lines) + "\n"


def html_page(report: GateReport) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    body = "".join("<tr" + (' class="regression"' if row[8] == "REGRESSION" else "") + ">"
                   + "".join(f"<td>{e(v)}</td>" for v in row) + "</tr>"
                   for row in rows(report))
    notes = "".join(f"<li>{e(n)}</li>" for n in report.notes)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Gate: {e(report.scenario)}</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.2em .5em}.regression{background:#fdd}"
            "</style></head><body>"
            f"<h1>Gate: {e(report.scenario)} ({e(report.mode)})</h1>"
            f"<p><strong>{e(report.verdict_text())}</strong></p>"
            f"<p>Against: {e(report.against)}. Timings: {e(report.timings)}</p>"
            f"<ul>{notes}</ul><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></body></html>\n")


def junit(report: GateReport) -> str:
    suite = ElementTree.Element("testsuite", name=f"ring-harness gate {report.scenario}",
                                tests=str(len(report.checks)),
                                failures=str(len(report.regressions)),
                                skipped=str(sum(c.verdict in (UNKNOWN, NOT_JUDGED)
                                                for c in report.checks)),
                                time=f"{report.seconds:.1f}")
    for check in report.checks:
        case = ElementTree.SubElement(suite, "testcase", classname=report.scenario,
                                      name=f"{check.subject} {check.figure}")
        if check.verdict == REGRESSION:
            ElementTree.SubElement(case, "failure", message=check.line())
        elif check.verdict in (UNKNOWN, NOT_JUDGED):
            ElementTree.SubElement(case, "skipped", message=f"{check.verdict}: {check.note}")
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _annotation(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as GitHub reads them."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_annotations(report: GateReport) -> list[str]:
    return [f"::error title=ring-harness gate::{_annotation(c.line())}"
            for c in report.regressions]


def json_text(report: GateReport) -> str:
    return json.dumps(to_json(report), indent=2) + "\n"
