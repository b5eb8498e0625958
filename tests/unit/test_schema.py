"""The published JSON Schema of result format 2: generated from the typed model, committed
as generated, and met by every committed result (and refusing a broken one)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.core.model import FORMAT_NAME, upgrade
from harness.report.schema import DOCS_COPY, SCHEMA_PATH, result_schema, schema_text
from tests.paths import FIXTURES, ROOT

RESULTS = ROOT / "results"
FORMAT_1 = FIXTURES / "format1"
REGENERATE = "write it again with `python -m harness.report.schema`"


def _is_result(document: object) -> bool:
    """A result file by its shape: REPRODUCTION data and other JSON beside results are not."""
    return isinstance(document, dict) and document.get("format") == FORMAT_NAME


def _results(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json")
                  if _is_result(json.loads(p.read_text(encoding="utf-8"))))


COMMITTED = _results(RESULTS)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(result_schema())


def _problems(validator: jsonschema.Draft202012Validator, document: object) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message[:200]}"
            for error in validator.iter_errors(document)]


def test_the_committed_schema_is_the_generated_one() -> None:
    """harness/report/result.schema.json, shipped in the wheel, is what the model gives."""
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), REGENERATE


def test_the_documentation_copy_is_the_generated_one() -> None:
    """The copy the documentation site serves is the same schema."""
    if not DOCS_COPY.parent.is_dir():
        pytest.skip("no docs/ beside the package (an installed copy)")
    assert DOCS_COPY.read_text(encoding="utf-8") == schema_text(), REGENERATE


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    """The generated schema is itself valid under the draft 2020-12 meta-schema."""
    schema = result_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_there_are_committed_results_to_validate() -> None:
    """The check below has something to check."""
    assert len(COMMITTED) > 20


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_each_committed_result_meets_the_schema(
        path: Path, validator: jsonschema.Draft202012Validator) -> None:
    """Every committed result file, read as the harness reads it (a file of an older format
    migrated first; one of the current format as it is), validates against the schema."""
    document = upgrade(json.loads(path.read_text(encoding="utf-8")), str(path))
    assert _problems(validator, document) == []


@pytest.mark.parametrize("path", _results(FORMAT_1), ids=lambda p: str(p.relative_to(FORMAT_1)))
def test_each_format_1_fixture_upgraded_meets_the_schema(
        path: Path, validator: jsonschema.Draft202012Validator) -> None:
    """A format 1 file brought forward by the migration chain is a valid format 2 result."""
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format_version"] == 1
    assert _problems(validator, upgrade(document, str(path))) == []


def _figure_of_wrong_type(document: dict[str, Any]) -> None:
    document["runs"][0]["figures"]["collisions"]["collisions"] = "none"


def _float_where_an_integer_belongs(document: dict[str, Any]) -> None:
    document["runs"][0]["figures"]["collisions"]["collisions"] = 0.5


def _missing_required_field(document: dict[str, Any]) -> None:
    del document["runs"][0]["parity"]


def _missing_required_figure_field(document: dict[str, Any]) -> None:
    del document["runs"][0]["subjects"][0]["figures"]["memory"]["structure_bytes"]


def _unknown_key(document: dict[str, Any]) -> None:
    document["runs"][0]["ring"]["colour"] = "blue"


def _unknown_metric(document: dict[str, Any]) -> None:
    document["runs"][0]["figures"]["happiness"] = {"score": 1}


def _subject_figure_among_run_figures(document: dict[str, Any]) -> None:
    subject = document["runs"][0]["subjects"][0]
    document["runs"][0]["figures"]["memory"] = subject["figures"]["memory"]


def _another_format_version(document: dict[str, Any]) -> None:
    document["format_version"] = 1


def _no_scenario_name(document: dict[str, Any]) -> None:
    del document["scenario"]["name"]


MUTATIONS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_figure_of_wrong_type, "runs/0/figures/collisions/collisions"),
    (_float_where_an_integer_belongs, "runs/0/figures/collisions/collisions"),
    (_missing_required_field, "runs/0"),
    (_missing_required_figure_field, "runs/0/subjects/0/figures/memory"),
    (_unknown_key, "runs/0/ring"),
    (_unknown_metric, "runs/0/figures"),
    (_subject_figure_among_run_figures, "runs/0/figures"),
    (_another_format_version, "format_version"),
    (_no_scenario_name, "scenario"),
]


@pytest.mark.parametrize(("mutate", "where"), MUTATIONS, ids=[m.__name__ for m, _ in MUTATIONS])
def test_a_broken_result_fails_validation_where_it_is_broken(
        mutate: Callable[[dict[str, Any]], None], where: str,
        validator: jsonschema.Draft202012Validator) -> None:
    """A valid result, broken in one place, fails validation, and the error names that place."""
    document = json.loads((RESULTS / "default.json").read_text(encoding="utf-8"))
    assert _problems(validator, document) == []
    broken = copy.deepcopy(document)
    mutate(broken)
    problems = _problems(validator, broken)
    assert problems
    assert any(problem.startswith(f"{where}:") for problem in problems), problems
