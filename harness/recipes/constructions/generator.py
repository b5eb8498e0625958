"""Ring generation: servers x points per unit weight x naming scheme x hash -> Ring.

Server `s` with weight `w` gets `max(1, round(points_per_weight * w))` points,
named by `point_name.format(server=s, j=j)` for j = 0, 1, ... (default
"{server}:{j}", the naming of "Consistent Hashing from Scratch, and Why
Cloudflare Deleted 90% of It" and of Semicolony's "Consistent hashing
simulator") and hashed with the chosen hash. Collisions follow
`Ring.from_points`: the lowest server index wins.

Names are formatted and hashed in C (cext/generate.c) when the template is
made of `{server}` and `{j}` fields and literal text (`{{`/`}}` included);
any other template (a format spec such as `{j:04d}`, a conversion such as
`{server!r}`, another field) is formatted by Python and hashed by
`harness.core.hashing`, as `generate_ring_reference` does for every template; so
are the names of a keyed hash (the C generator takes no key), hashed in batches in C.
Both give the same positions and owners; tests compare them. This is the
`points` construction (`harness.recipes.constructions.points`); the server-count
rule lives in `harness.core.servers.server_list_problem`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from harness.core.errors import HarnessError
from harness.core.fleet_points import FleetPoints
from harness.core.hashing import HashFunction, get_hash, is_keyed
from harness.core.machine import usable_cores
from harness.core.native import generate as c_generate
from harness.core.ring import Ring, sort_points_reference
from harness.core.servers import Server, server_list_problem

DEFAULT_POINT_NAME = "{server}:{j}"
#: bytes per point while generating a ring in C: packed 64-bit words sorted in place, then
#: split into positions and owners (14 B measured at the peak; tests/unit/test_lean_memory.py)
GENERATION_BYTES_PER_POINT = 16
#: the same through Python (a template C does not format): each encoded name beside its hash
PYTHON_GENERATION_BYTES_PER_POINT = 110


def points_for(weight: float, points_per_weight: int) -> int:
    """Points a server of this weight gets (at least one, so every server is on the ring)."""
    return max(1, round(points_per_weight * weight))


#: template segments of cext/generate.h: literal text, the server's name, the point number
_LITERAL, _SERVER, _J = 0, 1, 2


def generation_threads() -> int:
    """Threads for point generation: every core this process may run on."""
    return usable_cores()


def parse_template(point_name: str) -> tuple[bytes, list[tuple[int, int, int]]] | None:
    """(literal bytes, segments) for a template the C generator formats, or None.

    C formats `{server}` and `{j}` with no format spec or conversion, and literal
    text; str.format has already turned `{{` and `}}` into single braces here.
    """
    literals = bytearray()
    segments: list[tuple[int, int, int]] = []
    try:
        parsed = list(string.Formatter().parse(point_name))
    except ValueError:
        return None  # str.format raises on it too; the Python path says how
    for literal_text, field, spec, conversion in parsed:
        if literal_text:
            data = literal_text.encode()
            segments.append((_LITERAL, len(literals), len(data)))
            literals += data
        if field is None:
            continue
        if field not in ("server", "j") or spec or conversion:
            return None
        segments.append((_SERVER if field == "server" else _J, 0, 0))
    return bytes(literals), segments


def _check_ring_request(servers: Sequence[Server], points_per_weight: int) -> None:
    problem = server_list_problem(servers)
    if problem:
        raise HarnessError(f"a ring needs {problem}")
    if points_per_weight < 1:
        raise HarnessError(f"points_per_weight must be >= 1 (got {points_per_weight})")


def generate_ring(
    servers: Sequence[Server],
    points_per_weight: int,
    hash_name: str = "blake2b-32",
    point_name: str = DEFAULT_POINT_NAME,
    hash_key: bytes | None = None,
) -> Ring:
    """Hash every point of every server and build the sorted, de-duplicated ring (a keyed
    hash under `hash_key`)."""
    hash_function = get_hash(hash_name, hash_key)
    _check_ring_request(servers, points_per_weight)
    counts = [points_for(s.weight, points_per_weight) for s in servers]
    names = tuple(s.name for s in servers)
    template = parse_template(point_name)
    if template is None or is_keyed(hash_name):
        positions, owners = _python_points(servers, counts, hash_function, point_name)
        return Ring.from_points(positions, owners, bits=hash_function.bits, servers=names)
    points, owners_or_none = _c_points(hash_name, template, names, counts)
    return Ring.from_owned_points(points, owners_or_none, bits=hash_function.bits, servers=names)


def _c_points(hash_name: str, template: tuple[bytes, list[tuple[int, int, int]]],
              names: Sequence[str], counts: Sequence[int]) -> c_generate.Points:
    literals, segments = template
    return c_generate.generate_points(hash_name, literals, segments,
                                      [name.encode() for name in names], counts,
                                      generation_threads())


def generate_fleet_points(
    servers: Sequence[Server],
    points_per_weight: int,
    hash_name: str = "blake2b-32",
    point_name: str = DEFAULT_POINT_NAME,
    hash_key: bytes | None = None,
) -> FleetPoints | None:
    """Every point of `generate_ring`, sorted with collided points kept, so that the ring
    of any part of the fleet is one pass over them (`FleetPoints.ring_of`); None for a
    64-bit hash, whose positions leave no room for the owner in a packed word."""
    hash_function = get_hash(hash_name, hash_key)
    if hash_function.bits != 32:
        return None
    _check_ring_request(servers, points_per_weight)
    counts = [points_for(s.weight, points_per_weight) for s in servers]
    names = tuple(s.name for s in servers)
    template = parse_template(point_name)
    if template is None or is_keyed(hash_name):
        positions, owners = _python_points(servers, counts, hash_function, point_name)
        words = positions.astype(np.uint64)
        words <<= np.uint64(16)
        words |= owners
        del positions, owners
    else:
        words, _ = _c_points(hash_name, template, names, counts)
    return FleetPoints.from_words(words, names, counts)


def _python_points(
    servers: Sequence[Server], counts: Sequence[int], hash_function: HashFunction,
    point_name: str,
) -> tuple[npt.NDArray[np.unsignedinteger], npt.NDArray[np.uint16]]:
    """Positions and owners in server order, names formatted by Python and hashed by hashlib."""
    positions = np.empty(sum(counts), dtype=hash_function.dtype)
    start = 0
    # One server at a time: the encoded names of all points would outweigh the ring itself.
    for server, count in zip(servers, counts, strict=True):
        names = [point_name.format(server=server.name, j=j).encode() for j in range(count)]
        positions[start : start + count] = hash_function.many(names)
        start += count
    owners = np.repeat(np.arange(len(servers), dtype=np.uint16), counts)
    return positions, owners


def generate_ring_reference(
    servers: Sequence[Server],
    points_per_weight: int,
    hash_name: str = "blake2b-32",
    point_name: str = DEFAULT_POINT_NAME,
    hash_key: bytes | None = None,
) -> Ring:
    """`generate_ring` in Python and numpy alone (str.format, hashlib, lexsort): the
    definition the C path is tested against, and the "before" of its benchmark."""
    hash_function = get_hash(hash_name, hash_key)
    _check_ring_request(servers, points_per_weight)
    counts = [points_for(s.weight, points_per_weight) for s in servers]
    positions, owners = _python_points(servers, counts, hash_function, point_name)
    kept_positions, kept_owners, collisions = sort_points_reference(positions, owners)
    return Ring(positions=kept_positions, owners=kept_owners, bits=hash_function.bits,
                collisions=collisions, servers=tuple(s.name for s in servers))
