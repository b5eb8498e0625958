"""`[keys] hash_part_regex` patterns that backtrack exponentially are refused before any
work, whatever their shape; the rest are priced at their polynomial bound, which grows with
the name's length and the pattern's quantifiers, so that a slow one is refused by the time
budget instead of running past it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.core.regex_cost import backtracking_problem, search_steps
from harness.core.workload import KeysSpec, key_seconds

ATOMS = ["a", ".", "[ab]", r"\d", r"\w", "x"]
#: quantifiers that repeat their body more than once
REPEATING = ["*", "+", "{2,}", "{1,5}", "*?", "+?"]
#: quantifiers that vary how often they match their body, "?" too
VARYING = [*REPEATING, "?", "??"]


@st.composite
def repeating_bodies(draw: st.DrawFn) -> str:
    """A body that itself repeats, branches or refers back to a group."""
    atom = draw(st.sampled_from(ATOMS))
    kind = draw(st.sampled_from(["repeat", "branch", "both"]))
    inner = atom + draw(st.sampled_from(VARYING))
    if kind == "repeat":
        return inner
    other = draw(st.sampled_from(ATOMS)) + draw(st.sampled_from(["", "b", "aa"]))
    if kind == "branch":
        return f"{atom}aa|{other}"
    return f"{inner}|{other}"


@st.composite
def nested_patterns(draw: st.DrawFn) -> str:
    """A pattern with a repeating quantifier over a repeating or branching body, inside any
    prefix, suffix and groups."""
    body = draw(repeating_bodies())
    quantifier = draw(st.sampled_from(REPEATING))
    group = draw(st.sampled_from(["(?:{})", "(?:(?:{}))", "(?={})x", "(?>{})"]))
    nested = f"(?:{body}){quantifier}"
    core = group.format(nested) if draw(st.booleans()) else nested
    prefix = draw(st.sampled_from(["", "^", "k-", r"\A", "(?i)"]))
    suffix = draw(st.sampled_from(["$", "b$", "", r"\Z"]))
    return f"{prefix}({core}){suffix}"


@settings(max_examples=200, deadline=None)
@given(nested_patterns())
def test_nested_quantifiers_are_refused(pattern: str) -> None:
    re.compile(pattern)  # every drawn pattern is valid Python: the refusal is the check's
    assert backtracking_problem(pattern) is not None, pattern


@pytest.mark.parametrize("pattern", [
    r"^tenant-([0-9]+)/", r"\{([^}]*)\}", r"(\w+)-\d+", r"^(?:ab|cd)-(x*)",
    r"(a|b)*-(c)", r"(?=k)(key)-\d{3}", r"^([^:]*):.*$"])
def test_linear_and_polynomial_patterns_pass(pattern: str) -> None:
    assert backtracking_problem(pattern) is None


@pytest.mark.parametrize("pattern", [
    "(a+)+$", "(a|aa)*b", "(.*,)*x", "((ab)*)*", r"(a)(?:\1)*", "(?:a?a)+$", "(?:(a)?x?)*"])
def test_known_exponential_patterns_are_refused(pattern: str) -> None:
    assert backtracking_problem(pattern) is not None


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3), st.integers(1, 10_000), st.integers(1, 10_000))
def test_the_bound_grows_with_length_and_quantifiers(quantifiers: int, short: int,
                                                     extra: int) -> None:
    pattern = "a*" * quantifiers + "(b)"
    more = "a*" + pattern
    assert search_steps(pattern, short) < search_steps(pattern, short + extra)
    assert search_steps(pattern, short) < search_steps(more, short)
    assert search_steps(pattern, short) <= search_steps("a?" + pattern, short)
    assert search_steps(pattern, short) >= short  # a search visits every start


def test_absurd_bounds_stay_finite() -> None:
    assert search_steps("a*" * 400 + "(b)", 100_000) == 1e300


def test_the_run_is_priced_by_its_pattern() -> None:
    keys = KeysSpec(count=200_000, name="{i:a>30}b", hash_part="regex",
                    hash_part_regex="a*a*a*a*a*(b)$")
    fewer = KeysSpec(count=200_000, name="{i:a>30}b", hash_part="regex",
                     hash_part_regex="(b)$")
    assert key_seconds(keys) > 600 > key_seconds(fewer)


SCENARIO = """name = "re"
[servers]
count = 3
[keys]
count = 20
name = "{{i:a>30}}b"
hash_part = "regex"
hash_part_regex = '{pattern}'
[measure]
layouts = ["numpy-aligned"]
metrics = ["balance"]
"""


@pytest.mark.parametrize("pattern,message", [
    ("(a+)+$", "keys.hash_part_regex must be a Python regular expression with exactly one "
               "group, the part of the key that is hashed, with no quantifier over a part "
               "that itself varies"),
    ("a*a*a*a*a*a*a*a*(b)$", "the run must fit the time budget of --max-minutes 10"),
])
def test_a_hostile_pattern_is_one_line_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pattern: str, message: str) -> None:
    scenario = tmp_path / "re.toml"
    scenario.write_text(SCENARIO.format(pattern=pattern))
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--out", str(out), "--no-history"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("pattern", [r"^(a*)b", r"\A(a*)b", r"^(a)"])
def test_an_anchored_pattern_is_tried_at_the_start_only(pattern: str) -> None:
    assert search_steps(pattern, 1_000) * 500 < search_steps(pattern.lstrip("^\\A"), 1_000)


@pytest.mark.parametrize("pattern", [r"(?m)^(a*)b", r"x^(a)", r"(?:^|x)(a)"])
def test_a_pattern_search_can_start_anywhere_is_priced_at_every_start(pattern: str) -> None:
    assert search_steps(pattern, 1_000) >= 1_000
