"""How many examples a fuzzer draws: its own small default for CI, or
RING_HARNESS_FUZZ_EXAMPLES for a long run (#38's target is 10,000 per command and per peer
kind), e.g. `RING_HARNESS_FUZZ_EXAMPLES=10000 pytest tests/property/test_fuzz_commands.py`.

RING_FUZZ_EXAMPLES, its older name, is still read when the new one is not set. A value
that is not a positive integer stops the collection with one line naming the variable."""

from __future__ import annotations

import os

VARIABLE = "RING_HARNESS_FUZZ_EXAMPLES"
OLD_VARIABLE = "RING_FUZZ_EXAMPLES"


def fuzz_examples(default: int, *, share: int = 1, least: int = 1) -> int:
    """The examples of one fuzzer: `default`, or the variable's count divided by `share`
    (for a fuzzer whose examples cost `share` times another's), at least `least`."""
    for name in (VARIABLE, OLD_VARIABLE):
        given = os.environ.get(name)
        if given is None:
            continue
        try:
            count = int(given)
        except ValueError:
            count = 0
        if count < 1:
            raise ValueError(f"{name}: expected a positive integer, got {given!r}")
        return max(least, count // share)
    return default
