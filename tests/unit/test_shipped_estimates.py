"""Every shipped scenario's estimate is the committed one (tests/shipped_estimates.py):
a change to the cost model that moves one shows here, and its commit states the reason."""

from __future__ import annotations

import json

import pytest

from tests.shipped_estimates import FIXTURE, shipped_estimates

#: the layouts' memory lines are measured by tracemalloc on each run: their last bytes
#: move by a few hundredths of a MiB between runs (0.03 MiB of 1,036 measured)
RELATIVE_BYTES = 0.005


def test_shipped_estimates_match_the_committed_ones() -> None:
    """Bytes (within the layouts' measuring noise), seconds and both culprits of every
    shipped scenario equal tests/fixtures/shipped_estimates.json."""
    committed = json.loads(FIXTURE.read_text())
    found = shipped_estimates()
    assert sorted(found) == sorted(committed)
    for path, now in found.items():
        then = committed[path]
        assert now["added_mib"] == pytest.approx(then["added_mib"], rel=RELATIVE_BYTES), path
        assert (now["culprit"], now["seconds"], now["seconds_culprit"]) == (
            then["culprit"], then["seconds"], then["seconds_culprit"]), path
