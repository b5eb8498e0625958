"""Two CPUs that /proc/cpuinfo tells apart never share a name, whatever it holds
(hypothesis over cpuinfo texts: arm64 codes, bare fields, odd bytes)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core.machine import cpu_model

CODES = ("CPU implementer", "CPU part", "CPU variant", "CPU revision")
hex_codes = st.integers(0, 0xfff).map(hex)
arm_codes = st.fixed_dictionaries({field: hex_codes for field in CODES})


def _name(text: bytes) -> str:
    with tempfile.TemporaryDirectory() as folder:
        info = Path(folder) / "cpuinfo"
        info.write_bytes(text)
        return cpu_model(info, Path(folder) / "no-caches")


def _arm(codes: dict[str, str]) -> bytes:
    lines = ["processor\t: 0", "BogoMIPS\t: 50.00", "Features\t: fp asimd",
             *(f"{field}\t: {value}" for field, value in codes.items())]
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=300, deadline=None)
@given(arm_codes, arm_codes)
def test_arm64_cpus_of_different_codes_have_different_names(
    first: dict[str, str], second: dict[str, str]
) -> None:
    """arm64 (no model name): the names are equal exactly when every code is."""
    assert (_name(_arm(first)) == _name(_arm(second))) == (first == second)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400) | st.lists(
    st.tuples(st.text(max_size=20), st.text(max_size=40)), max_size=8).map(
        lambda pairs: "\n".join(f"{k}: {v}" for k, v in pairs).encode("utf-8", "surrogatepass")))
def test_any_cpuinfo_gives_a_printable_name(text: bytes) -> None:
    """Whatever cpuinfo holds (bytes that are not UTF-8, controls, no fields), a result
    names a CPU: a non-empty name with no control characters."""
    name = _name(text)
    assert name and name.isprintable()
