"""Shared fixtures: small scenario files written into a temporary folder.

Every `run` the tests make keeps its history entry in a temporary folder, not in the
checkout's runs/history: RING_HARNESS_HISTORY is set before the harness is imported.
Likewise the bucketed layout's tuning cache (RING_HARNESS_TUNING_CACHE), so the tests
neither read a tuning measured outside them nor leave one in the user's cache.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("RING_HARNESS_HISTORY",
                      tempfile.mkdtemp(prefix="ring-harness-test-history-"))
os.environ.setdefault("RING_HARNESS_TUNING_CACHE",
                      tempfile.mkdtemp(prefix="ring-harness-test-tuning-"))

SMALL_SCENARIO = """
name = "small"
description = "a small end-to-end scenario"

[servers]
count = 10

[generator]
hash = "blake2b-32"
points_per_weight = [4, 40]

[keys]
count = 5000

[measure]
repeats = 2
scalar_keys = 500

[[operations]]
kind = "remove"
server = "server-9"

[[operations]]
kind = "add"
server = "server-10"
"""


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
