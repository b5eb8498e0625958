"""Arrays handed to the C core in every shape numpy allows: misaligned views, strided
views, other dtypes, no keys. On x86 a misaligned load happens to work, so a plain build
passes these either way; under `tox -e sanitize` (UBSan) the misaligned case aborted
("load of misaligned address") until the C bindings copied such arrays
(harness.core.native._c.c_input)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from harness.core.hashing import fmix32, fnv1a32, hash_many
from harness.core.ring import Ring, reference_owners
from harness.core.servers import numbered_servers
from harness.recipes.algorithms import ALGORITHMS
from harness.recipes.layouts import LAYOUTS

pytestmark = pytest.mark.c_core


def misaligned(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A copy of `values` one byte past an aligned address: contiguous but not aligned."""
    buffer = np.zeros(values.nbytes + 1, dtype=np.uint8)
    view = buffer[1:].view(values.dtype)
    view[:] = values
    assert view.flags.c_contiguous and not view.flags.aligned
    return view


def ring_of(bits: int) -> Ring:
    top = 2**bits - 1
    return Ring.from_points([3, 2**16 + 7, top // 2, top - 4], [1, 2, 3, 4], bits=bits)


def keys_of(bits: int) -> npt.NDArray[np.unsignedinteger]:
    top = 2**bits - 1
    dtype = np.uint32 if bits == 32 else np.uint64
    return np.array([0, 3, 4, 2**16 + 7, top // 2 + 1, top - 4, top], dtype=dtype)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_misaligned_positions_owners_and_keys(name: str) -> None:
    """A layout built from misaligned positions and owners routes misaligned keys right."""
    bits = LAYOUTS[name].hash_bits
    ring, keys = ring_of(bits), keys_of(bits)
    layout = LAYOUTS[name].build(misaligned(ring.positions), misaligned(ring.owners))
    expected = reference_owners(ring, keys)
    np.testing.assert_array_equal(layout.lookup_many(misaligned(keys)), expected)
    assert [layout.lookup(int(k)) for k in misaligned(keys)] == expected.tolist()


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_strided_and_converted_inputs(name: str) -> None:
    """Every other element of a larger array, and keys of a wider signed dtype."""
    bits = LAYOUTS[name].hash_bits
    ring, keys = ring_of(bits), keys_of(bits)
    positions = np.repeat(ring.positions, 2)[::2]
    owners = np.repeat(ring.owners, 2)[::2]
    layout = LAYOUTS[name].build(positions, owners)
    np.testing.assert_array_equal(
        layout.lookup_many(np.repeat(keys, 2)[::2]), reference_owners(ring, keys)
    )
    if bits == 32:
        wide = keys.astype(np.int64)
        # A signed array on purpose: the C path must convert what the API types refuse.
        np.testing.assert_array_equal(layout.lookup_many(wide),  # type: ignore[arg-type]
                                      reference_owners(ring, keys))


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_no_keys(name: str) -> None:
    """An empty batch reads nothing and returns an empty answer."""
    bits = LAYOUTS[name].hash_bits
    ring = ring_of(bits)
    layout = LAYOUTS[name].build(ring.positions, ring.owners)
    assert layout.lookup_many(keys_of(bits)[:0]).tolist() == []


def test_batch_hash_of_empty_and_no_names() -> None:
    """The C batch hash of empty names equals the Python one; no names gives no hashes."""
    names = [b"", b"a", b"", b"server-1"]
    assert hash_many("fnv1a-fmix32", names).tolist() == [fmix32(fnv1a32(n)) for n in names]
    assert hash_many("fnv1a-fmix32", []).tolist() == []


@pytest.mark.parametrize("name", sorted(n for n in LAYOUTS if n.startswith("cffi-")))
def test_empty_c_layout_is_refused_before_any_lookup(name: str) -> None:
    """C lookups read entries[0] when they wrap, so a ring of no entries never gets one."""
    dtype = np.uint32 if LAYOUTS[name].hash_bits == 32 else np.uint64
    with pytest.raises(ValueError, match="at least one entry"):
        LAYOUTS[name].build(np.array([], dtype=dtype), np.array([], dtype=np.uint16))


@pytest.mark.parametrize("name", ["jump", "maglev", "multi-probe", "rendezvous", "bounded-load",
                                  "rendezvous-weighted", "binomial", "fliphash", "powerch",
                                  "anchor", "memento", "jumpback", "dx"])
def test_algorithms_take_misaligned_and_strided_key_hashes(name: str) -> None:
    """The algorithms' C batch paths read misaligned, strided and signed key hashes right."""
    algorithm = ALGORITHMS[name].build(numbered_servers(7))
    hashes = algorithm.hash_keys([f"key-{i}".encode() for i in range(40)])
    expected = algorithm.reference_owners(hashes)
    np.testing.assert_array_equal(algorithm.lookup_many(misaligned(hashes)), expected)
    np.testing.assert_array_equal(algorithm.lookup_many(np.repeat(hashes, 2)[::2]), expected)
    np.testing.assert_array_equal(algorithm.lookup_many(hashes[:0]), expected[:0])
    if int(hashes.max()) < 2**63:
        np.testing.assert_array_equal(algorithm.lookup_many(hashes.astype(np.int64)), expected)
