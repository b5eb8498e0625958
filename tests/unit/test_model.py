"""Typed results: format 2 round trips, every committed format-1 file reads and renders,
bad documents are refused in one line, and scenario paths are recorded relative."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.errors import ResultFormatError
from harness.core.model import FORMAT_VERSION, relative_path, upgrade
from harness.report.results import load_result, result_from_json
from tests.paths import FIXTURES

FORMAT1 = FIXTURES / "format1"
FORMAT1_FILES = sorted(FORMAT1.glob("*.json")) + sorted((FORMAT1 / "reproduce").glob("*.json"))


@pytest.mark.parametrize("path", FORMAT1_FILES, ids=lambda p: p.name)
def test_every_committed_format_1_file_shows(path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`show` renders each format-1 result through the migration chain, with its figures."""
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ") and "## Parity" in out
    raw = json.loads(path.read_text())
    assert raw["format_version"] == 1
    first = raw["runs"][0]
    if "balance" in first:
        assert f"{100 * first['balance']['cv_keys']:.2f}%" in out


@pytest.mark.parametrize("path", FORMAT1_FILES[:3], ids=lambda p: p.name)
def test_format_2_round_trips(path: Path) -> None:
    """to_json then from_json gives back the same result, figures typed."""
    result = load_result(path)
    again = result_from_json(json.loads(json.dumps(result.to_json())))
    assert again == result
    assert again.format_version == FORMAT_VERSION


def test_migration_moves_figures_into_subjects() -> None:
    """Format 1's flat layout records become subjects with memory and throughput figures."""
    document = upgrade(json.loads((FORMAT1 / "default.json").read_text()))
    run = document["runs"][0]
    assert run["algorithm"] == "ring" and run["params"]["points_per_weight"] == 160
    subject = run["subjects"][1]
    assert subject["kind"] == "layout" and "structure_bytes" in subject["figures"]["memory"]
    assert set(run["figures"]) == {"balance", "collisions", "movement"}


@pytest.mark.parametrize(("text", "message"), [
    ('{"format": "ring-harness-result", "format_version": 1}', "not well-formed"),
    ('{"format": "ring-harness-result", "format_version": "2"}', "format version '2'"),
    ('{"format": "ring-harness-result", "format_version": 2, "runs": []}', "not a well-formed"),
    ("[]", "not a ring-harness result"),
    ('{"format": "other"}', "not a ring-harness result"),
])
def test_bad_documents_are_refused_in_one_line(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A wrong-shape result gets exit 2 and one line naming the file, never a traceback."""
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", [None, [], 3, "x"])
@pytest.mark.parametrize("where", ["figures", "subjects"])
def test_a_figure_that_is_not_a_record_is_refused_by_name(
    value: object, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A metric's figure that is not a JSON object (found by the fuzz test: null crashed
    cattrs's generated reader) is refused in one line naming where it is."""
    document = load_result(FORMAT1 / "nginx.json").to_json()
    run = document["runs"][0]
    if where == "figures":
        run["figures"]["collisions"] = value
        named = "runs[0].figures.collisions must be an object"
    else:
        run["subjects"][1]["figures"]["memory"] = value
        named = "runs[0].subjects[1].figures.memory must be an object"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_non_utf8_result_is_refused(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are not a result."""
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ResultFormatError, match="not a JSON result"):
        load_result(path)


def test_scenario_paths_are_relative_inside_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside the current directory a path is recorded relative to it; outside, as given."""
    monkeypatch.chdir(tmp_path)
    assert relative_path(tmp_path / "scenarios" / "a.toml") == "scenarios/a.toml"
    assert relative_path("scenarios/a.toml") == "scenarios/a.toml"
    assert relative_path("/elsewhere/a.toml") == "/elsewhere/a.toml"
