"""The JSON Schema (draft 2020-12) of result format 2, generated from the typed model.

`result_schema()` walks the dataclasses a result is read into (`harness.core.model`)
and the record each metric declares (`Metric.record_type`, under `Run.figures` or
`Subject.figures` by the metric's scope), so the schema cannot drift from what
`load_result` reads. Each record is an object whose fields without a default are
required and which takes no other key (the model's converter forbids extra keys);
`X | None` may be null; an `int` is an integer, a `float` any number.

The committed copy, `harness/report/result.schema.json` (shipped in the wheel, and
as `docs/reference/result.schema.json` on the documentation site), is this
function's output; a test compares them. After a change to the model or to a
metric's record, write both copies again with `python -m harness.report.schema`.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

from harness.core.model import FORMAT_NAME, FORMAT_VERSION, Result, Run, Subject
from harness.metrics.registry import BUILT_IN

#: the committed copy, shipped as package data
SCHEMA_PATH = Path(__file__).with_name("result.schema.json")
#: the copy the documentation site serves (in a checkout; an installed wheel has no docs/)
DOCS_COPY = Path(__file__).resolve().parents[2] / "docs" / "reference" / "result.schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

_SCALARS: dict[Any, dict[str, Any]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    type(None): {"type": "null"},
}


def result_schema() -> dict[str, Any]:
    """The schema of a result document of the current format (`FORMAT_VERSION`)."""
    overrides: dict[tuple[type, str], dict[str, Any]] = {
        (Result, "format"): {"const": FORMAT_NAME},
        (Result, "format_version"): {"const": FORMAT_VERSION},
        # The scenario as loaded: its tables are the scenario file's (docs/reference/
        # scenario.md); a result needs only its name and description.
        (Result, "scenario"): {
            "type": "object",
            "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
            "required": ["description", "name"],
        },
    }
    builder = _Builder(overrides)
    # The built-in metrics only: the published schema is the same file wherever it is made,
    # and a plugin metric's figures lie outside it (validate those results without it).
    for field_of, scope in ((Run, "run"), (Subject, "subject")):
        overrides[(field_of, "figures")] = {
            "type": "object",
            "properties": {metric.name: builder.schema(metric.record_type)
                           for metric in BUILT_IN if metric.scope == scope},
            "additionalProperties": False,
        }
    top = builder.schema(Result)
    return {
        "$schema": DIALECT,
        "title": f"{FORMAT_NAME}, format {FORMAT_VERSION}",
        "description": "One ring-harness result: a scenario run, with one run per sweep point. "
                       "Generated from the typed model (harness.report.schema).",
        **top,
        "$defs": dict(sorted(builder.definitions.items())),
    }


def schema_text() -> str:
    """The schema as the committed copies hold it: sorted keys, two-space indents."""
    return json.dumps(result_schema(), indent=2, sort_keys=True) + "\n"


class _Builder:
    """Schemas of annotated types, each dataclass once under `$defs` by its class name."""

    def __init__(self, overrides: dict[tuple[type, str], dict[str, Any]]) -> None:
        self.overrides = overrides
        self.definitions: dict[str, dict[str, Any]] = {}
        self.classes: dict[str, type] = {}

    def schema(self, annotation: Any) -> dict[str, Any]:
        if annotation is Any:
            return {}
        if annotation in _SCALARS:
            return dict(_SCALARS[annotation])
        if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
            return self._reference(annotation)
        origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
        if origin in (types.UnionType, typing.Union):
            return {"anyOf": [self.schema(argument) for argument in arguments]}
        if origin is list or (origin is tuple and arguments[-1:] == (Ellipsis,)):
            return {"type": "array", "items": self.schema(arguments[0])}
        if origin is tuple:
            return {"type": "array", "prefixItems": [self.schema(a) for a in arguments],
                    "items": False, "minItems": len(arguments)}
        if origin is dict and arguments[0] is str:
            values = self.schema(arguments[1])
            return {"type": "object", **({"additionalProperties": values} if values else {})}
        if origin is typing.Literal:
            return {"enum": list(arguments)}
        raise TypeError(f"no JSON Schema rule for the annotation {annotation!r}; expected "
                        "a dataclass, a scalar, a list, a tuple, a dict of str, a union or "
                        "a Literal")

    def _reference(self, cls: type) -> dict[str, Any]:
        name = cls.__name__
        known = self.classes.setdefault(name, cls)
        if known is not cls:
            raise TypeError(f"two records are named {name!r} ({known.__module__} and "
                            f"{cls.__module__}); the schema names each record once")
        if name not in self.definitions:
            self.definitions[name] = {}  # a placeholder: a record may hold itself
            self.definitions[name] = self._record(cls)
        return {"$ref": f"#/$defs/{name}"}

    def _record(self, cls: type) -> dict[str, Any]:
        hints = typing.get_type_hints(cls)
        properties, required = {}, []
        for field in dataclasses.fields(cls):
            override = self.overrides.get((cls, field.name))
            properties[field.name] = (override if override is not None
                                      else self.schema(hints[field.name]))
            if (field.default is dataclasses.MISSING
                    and field.default_factory is dataclasses.MISSING):
                required.append(field.name)
        return {"type": "object", "properties": properties, "required": sorted(required),
                "additionalProperties": False}


def write_copies() -> list[Path]:
    """Write the committed copies: the package's, and in a checkout the documentation
    site's; return their paths."""
    text = schema_text()
    written = []
    for path in (SCHEMA_PATH, DOCS_COPY):
        if path.parent.is_dir():
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    for path in write_copies():
        print(path)
