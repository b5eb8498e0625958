"""The scenario reference (docs/reference/scenario.md) against validation: the committed page is
the current rendering, every key validation accepts is on it, and every key on it is accepted."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.errors import ScenarioError
from harness.core.fields import recording
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.constructions import CONSTRUCTIONS
from harness.run.reference import (
    ALIASES,
    FREE_FORM,
    build_entries,
    corpus,
    listed,
    page_keys,
    render,
)
from harness.run.scenario import parse_scenario
from tests.paths import ROOT

PAGE = ROOT / "docs" / "reference" / "scenario.md"
ENTRIES = build_entries(ROOT)
KEYS = page_keys(ENTRIES)
#: every shipped scenario and specimen, and one minimal scenario per construction and
#: algorithm (where their own parameters are read)
DOCUMENTS: list[tuple[str, dict[str, Any]]] = [
    *corpus(ROOT),
    # servers named as socket addresses, which pingora requires and the others accept
    *((f"construction-{name}.toml", {"servers": {"count": 3, "name": "10.0.0.1:{i}"},
                                     "generator": {"construction": name}})
      for name in CONSTRUCTIONS),
    *((f"algorithm-{name}.toml", {"servers": {"count": 3}, "algorithm": {"name": name}})
      for name in ALGORITHMS if name != "ring"),
]


def _records(document: dict[str, Any], file: str = "fuzzed.toml") -> list[Any]:
    with recording() as records:
        parse_scenario(document, file)
    return records


def test_the_committed_page_is_the_current_rendering() -> None:
    """docs/reference/scenario.md is what the declarations render today (regenerate it with
    `python -m harness.run.reference docs/reference/scenario.md`)."""
    assert PAGE.read_text(encoding="utf-8") == render(ENTRIES)


@pytest.mark.parametrize(("file", "document"), DOCUMENTS, ids=[f for f, _ in DOCUMENTS])
def test_every_key_read_while_validating_a_scenario_is_on_the_page(
        file: str, document: dict[str, Any]) -> None:
    """Each scenario of the corpus is accepted, and each key validation read in it (given or
    defaulted) is listed on the page."""
    missing = [(r.table, r.key) for r in _records(document, file) if not listed(r, KEYS)]
    assert missing == []


def _set(document: dict[str, Any], table: str, key: str, value: Any) -> dict[str, Any]:
    """A copy of the document with table.key set (tables created; a list's first entry)."""
    changed = copy.deepcopy(document)
    here: Any = changed
    for part in [p for p in table.split(".") if p]:
        name, is_list = part.removesuffix("[]"), part.endswith("[]")
        # An earlier change may have put a value where a table goes: a table replaces it.
        if is_list:
            if not (isinstance(here.get(name), list) and here[name]
                    and isinstance(here[name][0], dict)):
                here[name] = [{}]
            here = here[name][0]
        else:
            if not isinstance(here.get(name), dict):
                here[name] = {}
            here = here[name]
    here[key] = value
    return changed


def _toml_value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_toml_value(v) for v in value]
    return value


def _readers(table: str, key: str) -> list[tuple[str, dict[str, Any], Any]]:
    """(file, document, record) for each document of the corpus whose validation reads the
    key, with the record of that read (its default, or that it was required)."""
    found = []
    for file, document, records in _corpus_records():
        for record in records:
            if ALIASES.get(record.table, record.table) == table and record.key == key:
                found.append((file, document, record))
                break
    return found


@functools.cache
def _corpus_records() -> list[tuple[str, dict[str, Any], list[Any]]]:
    """Each corpus document with the keys its validation read: parsed once for every entry
    the tests below look up, not once per entry."""
    return [(file, document, _records(document, file)) for file, document in DOCUMENTS]


def _variants(document: dict[str, Any], table: str, key: str,
              value: Any) -> list[dict[str, Any]]:
    """The document with table.key set to value; for an entry of a table metric's
    algorithms ([comparison], [removals], [range_scans]), once per algorithm it could be a
    parameter of."""
    if table.endswith(".algorithms[]"):
        metric = table.split(".")[0]
        return [_set(_set(document, metric, "algorithms", [{"name": name}]),
                     table, key, value) for name in ALGORITHMS]
    return [_set(document, table, key, value)]


def _accepted(document: dict[str, Any], file: str) -> bool:
    try:
        parse_scenario(document, file)
    except ScenarioError:
        return False
    return True


def _given(document: dict[str, Any], table: str, key: str) -> bool:
    here: Any = document
    for part in [p for p in table.split(".") if p]:
        here = here.get(part.removesuffix("[]"), {}) if isinstance(here, dict) else {}
        if isinstance(here, list):
            here = here[0] if here else {}
    return isinstance(here, dict) and key in here


#: keys that hold a table or tables: their contents are each a table of the page
STRUCTURE = {"a table", "an array of tables"}


@pytest.mark.parametrize("entry", [e for e in ENTRIES
                                   if not e.required and not set(e.expected) & STRUCTURE],
                         ids=lambda e: f"{e.table or 'top'}.{e.key}")
def test_every_key_on_the_page_is_accepted(entry: Any) -> None:
    """Each optional key the page lists is accepted when a scenario gives it: set to the
    default it was read with, in some scenario that reads it; or, where the default is
    described in words, as a scenario of the corpus gives it. So the page lists no key that
    validation refuses."""
    readers = _readers(entry.table, entry.key)
    assert readers, f"no scenario of the corpus reads {entry.table}.{entry.key}"
    literal = [(f, d, r) for f, d, r in readers if not r.required and not r.shown_default]
    if not literal:
        assert any(_given(d, entry.table, entry.key) for _, d, _ in readers), (
            f"{entry.table}.{entry.key}: no scenario gives it, and its default is in words")
        return
    assert any(_accepted(variant, file) for file, document, record in literal
               for variant in _variants(document, entry.table, entry.key,
                                        _toml_value(record.default)))


def test_a_key_the_page_lacks_is_refused() -> None:
    """The check above can fail: a key that is not on the page makes the scenario refused."""
    assert ("keys", "colour") not in KEYS
    with pytest.raises(ScenarioError, match=r"unknown key 'keys\.colour'"):
        parse_scenario(_set(DOCUMENTS[0][1], "keys", "colour", 1), "x.toml")


TABLE_NAMES = sorted({e.table for e in ENTRIES} - set(FREE_FORM))
#: keys drawn for a table: those the page lists for any table, and some no table has
KEY_NAMES = sorted({key for _, key in KEYS} | {"colour", "point_per_weight", "layout_"})
VALUES: list[Any] = [0, 1, 2, 16, 160, 1.5, True, "numpy-packed", "points", "x-{i}",
                     "{server}-{j}", [1], [[1, 2]], ["numpy-packed"], {}, {"a": 1}]


@settings(max_examples=150, deadline=None)
@given(start=st.integers(0, len(DOCUMENTS) - 1),
       changes=st.lists(st.tuples(st.sampled_from(TABLE_NAMES), st.sampled_from(KEY_NAMES),
                                  st.sampled_from(VALUES)), min_size=1, max_size=3))
def test_whatever_validation_accepts_is_on_the_page(
        start: int, changes: list[tuple[str, str, Any]]) -> None:
    """Scenarios with keys of every table set to assorted values: when one is accepted,
    every key it was read with is on the page."""
    file, document = DOCUMENTS[start]
    for table, key, value in changes:
        document = _set(document, table, key, value)
    try:
        records = _records(document, file)
    except ScenarioError:
        return
    assert [(r.table, r.key) for r in records if not listed(r, KEYS)] == []

