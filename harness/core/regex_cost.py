"""What a user's regular expression can cost on a name, before it is run on any.

Python's `re` backtracks. A quantifier over something that itself repeats or branches
(`(a+)+$`, `(a|aa)*b`, `(.*,)*x`) can try exponentially many ways to split a name before it
gives up: `(a+)+$` on thirty `a`s and a `b` ran for minutes. Such patterns are refused
(`backtracking_problem`), and so is a varying quantifier (`a?`, `a*`) under a repeating
one. What is left backtracks at most polynomially: each varying quantifier can stop at any
of at most n + 1 places, and `search` tries every start, so one search takes at most about
`(n + 1) ** (quantifiers + 1)` steps times the product of the pattern's alternations' arms
(`search_steps`). The run is priced at that bound, so that a
pattern that is slow on long names is refused by the time budget, before any work.
"""

from __future__ import annotations

import re

# The parser `re` itself compiles with (Python 3.11+; typeshed stubs only its deprecated
# alias sre_parse, which warns on import).
import re._parser as sre_parse  # type: ignore[import-not-found]
from typing import Any

#: seconds one step of the bound takes: `(a*)b` searched in 20,000 and 40,000 `a`s took
#: 3.8 and 12.2 s, against bounds of 4.0e8 and 1.6e9 steps (1e-8 s a step left a margin of
#: only 1.05 to 1.3); `a*a*b` in 1,000 and 2,000 took 2.5e-9 s per bound step. With a
#: margin of about 2.5 over the worst measured
SECONDS_PER_REGEX_STEP = 2.5e-8
#: the bound's cap, so that the arithmetic of an absurd pattern stays a float
_MAX_STEPS = 1e300

_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT}
NESTED = ("no quantifier over a part that itself varies, branches or refers back to a "
          "group, such as (a+)+, (a?a)* or (a|aa)* (they backtrack exponentially)")


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns of one parsed item (a group, a repeat's body, a branch's arms...)."""
    if op in _REPEATS:
        return [av[2]]
    if op is sre_parse.SUBPATTERN:
        return [av[3]]
    if op is sre_parse.BRANCH:
        return list(av[1])
    if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
        return [av[1]]
    if op is sre_parse.ATOMIC_GROUP:
        return [av]
    if op is sre_parse.GROUPREF_EXISTS:
        return [arm for arm in av[1:] if arm is not None]
    return []


def _varies(op: Any, av: Any) -> bool:
    """Whether this item is a quantifier that can match its body a varying number of times
    (an optional `a?` too: `(a?a)+` splits a run of `a`s as many ways as `(a|aa)+`)."""
    return op in _REPEATS and av[0] != av[1]


def _walk(pattern: Any, under_repeat: bool, found: dict[str, Any]) -> str | None:
    """Why the pattern can backtrack exponentially, or None; collects the largest count of
    each varying quantifier and multiplies its alternations' arms on the way."""
    for op, av in pattern:
        varies = _varies(op, av)
        if under_repeat and (varies or op in (sre_parse.BRANCH, sre_parse.GROUPREF,
                                              sre_parse.GROUPREF_EXISTS)):
            return NESTED
        if varies:
            found["maxima"].append(av[1])
        if op is sre_parse.BRANCH:
            found["arms"] *= len(av[1])
        for child in _children(op, av):
            problem = _walk(child, under_repeat or (op in _REPEATS and av[1] > 1), found)
            if problem:
                return problem
    return None


def _analyse(pattern: str) -> tuple[str | None, dict[str, Any]]:
    found: dict[str, Any] = {"maxima": [], "arms": 1}
    return _walk(sre_parse.parse(pattern), False, found), found


def backtracking_problem(pattern: str) -> str | None:
    """Why `pattern` (one that compiles) may backtrack exponentially, or None."""
    return _analyse(pattern)[0]


def _anchored(pattern: str) -> bool:
    """Whether `search` tries the pattern at the name's start only: it begins with `\\A`,
    or with `^` outside multi-line mode (where `^` also matches after each newline)."""
    parsed = sre_parse.parse(pattern)
    if not parsed.data:
        return False
    op, av = parsed.data[0]
    multiline = bool(parsed.state.flags & re.MULTILINE)
    return op is sre_parse.AT and (av is sre_parse.AT_BEGINNING_STRING
                                   or (av is sre_parse.AT_BEGINNING and not multiline))


def search_steps(pattern: str, name_length: int) -> float:
    """An upper bound on the steps one `search` of `pattern` (one with no backtracking
    problem) takes on a name of `name_length` characters: every start, times the counts each
    varying quantifier can stop at (at most its maximum, at most the name's length), times
    the alternations' arms (one start for an anchored pattern)."""
    _, found = _analyse(pattern)
    steps = float(1 if _anchored(pattern) else name_length + 1) * float(found["arms"])
    maxima: list[int] = found["maxima"]
    for maximum in maxima:
        steps *= min(maximum, name_length) + 1
        if steps >= _MAX_STEPS:
            return _MAX_STEPS
    return min(steps, _MAX_STEPS)
