"""Construction registry and the nginx / libketama recipes, without their peers."""

import hashlib
import zlib

import numpy as np
import pytest

from harness.core.errors import HarnessError, ScenarioError, UnknownNameError
from harness.core.servers import Server
from harness.recipes.constructions import CONSTRUCTIONS, get_construction
from harness.recipes.constructions.libketama import digest_counts
from harness.recipes.constructions.nginx import server_points, split_host_port


def nginx_crc32_register(data: bytes, register: int) -> int:
    """ngx_crc32_update, bit by bit: the raw (unfinalized) CRC-32 register."""
    for byte in data:
        register ^= byte
        for _ in range(8):
            register = (register >> 1) ^ (0xEDB88320 if register & 1 else 0)
    return register


def test_registry_names_and_unknown_name() -> None:
    """The registry holds the generic recipe, nginx, libketama, allocated, haproxy,
    libmemcached, twemproxy, envoy_ring_hash, pingora and cassandra; an unknown name lists
    them."""
    assert list(CONSTRUCTIONS) == ["points", "nginx", "libketama", "allocated", "haproxy",
                                   "libmemcached", "twemproxy", "envoy_ring_hash", "pingora",
                                   "cassandra"]
    assert all(c.name == name for name, c in CONSTRUCTIONS.items())
    with pytest.raises(UnknownNameError, match="points, nginx, libketama, allocated, haproxy"):
        get_construction("jump")


@pytest.mark.parametrize(
    ("server", "host", "port"),
    [
        ("10.0.0.1:8080", b"10.0.0.1", b"8080"),
        ("backend", b"backend", b""),
        ("[::1]:80", b"[::1]", b"80"),
        ("unix:/run/app.sock", b"/run/app.sock", b""),
        ("UNIX:/run/app.sock", b"/run/app.sock", b""),
        ("host:http", b"host:http", b""),
        ("host:", b"host", b""),
    ],
)
def test_nginx_splits_host_and_port_like_init_chash(server: str, host: bytes, port: bytes) -> None:
    """The address text splits at the last ':' only before digits; no default port is added."""
    assert split_host_port(server) == (host, port)


def test_nginx_points_equal_the_raw_register_chain() -> None:
    """zlib's running CRC equals nginx's raw register continued, then xor 0xffffffff."""
    base = nginx_crc32_register(b"127.0.0.1\x008080", 0xFFFFFFFF)
    expected, previous = [], 0
    for _ in range(5):
        previous = nginx_crc32_register(previous.to_bytes(4, "little"), base) ^ 0xFFFFFFFF
        expected.append(previous)
    assert server_points("127.0.0.1:8080", 5) == expected


def test_nginx_weights_and_port_matter() -> None:
    """160 points per unit of weight; "host" and "host:80" are different rings."""
    nginx = get_construction("nginx")
    ring = nginx.build_ring([Server("a:1", 1), Server("b:2", 3)])
    assert ring.entries + ring.collisions == 640
    assert np.bincount(ring.owners).tolist() == [160, 480]
    assert server_points("backend", 3) != server_points("backend:80", 3)


def test_nginx_refuses_fractional_weights() -> None:
    """nginx weights are integers, so a weight of 1.5 is an error naming the server."""
    with pytest.raises(HarnessError, match=r"positive integer.*'a:1'.*1\.5"):
        get_construction("nginx").build_ring([Server("a:1", 1.5)])


def test_nginx_collisions_keep_the_server_listed_first() -> None:
    """Two servers written alike collide on every point; the one listed first keeps them all."""
    ring = get_construction("nginx").build_ring([Server("a:1"), Server("a:1")])
    assert ring.collisions == 160
    assert set(ring.owners.tolist()) == {0}


def test_key_hashes() -> None:
    """nginx hashes keys with CRC-32; libketama with MD5's first 4 bytes, little-endian."""
    keys = [b"alpha", b"", b"key-42"]
    assert get_construction("nginx").key_hashes(keys).tolist() == [zlib.crc32(k) for k in keys]
    ketama = get_construction("libketama").key_hashes(keys)
    assert ketama.dtype == np.uint32
    assert ketama.tolist() == [
        int.from_bytes(hashlib.md5(k).digest()[:4], "little") for k in keys
    ]


def test_libketama_digest_counts_floor_the_exact_share() -> None:
    """floor(share * 40 * n) on exact fractions: 61 equal servers get 40 digests, not C's 39."""
    assert digest_counts([Server(f"s{i}") for i in range(61)]) == [40] * 61
    weights = [1, 2, 3, 1, 5]
    servers = [Server(f"s{i}", w) for i, w in enumerate(weights)]
    assert digest_counts(servers) == [40 * 5 * w // 12 for w in weights] == [16, 33, 50, 16, 83]
    assert digest_counts([Server("a", 0.5), Server("b", 1.5)]) == [20, 60]


def test_libketama_refuses_non_positive_weights() -> None:
    """A weight of zero would leave the server off the ring and is refused."""
    with pytest.raises(HarnessError, match=r"'b'.*positive.*0"):
        get_construction("libketama").build_ring([Server("a"), Server("b", 0)])


def test_empty_server_list_is_refused() -> None:
    """Every construction refuses an empty server list with its own name in the message."""
    for name in CONSTRUCTIONS:
        with pytest.raises(HarnessError, match="a ring needs at least one server"):
            get_construction(name).build_ring([])


def test_construction_parameters_are_declared_and_checked() -> None:
    """The points recipe takes its declared parameters; production recipes take none."""
    points = get_construction("points", hash="md5-32", points_per_weight=3)
    assert points.bits == 32 and points.label == "k=3"
    assert points.point_counts([Server("a", 2)]) == [6]
    with pytest.raises(ScenarioError, match="points_per_weight must be an integer from 1"):
        get_construction("points", points_per_weight=0)
    with pytest.raises(ScenarioError, match="unknown key 'hash'"):
        get_construction("nginx", hash="md5-32")
    assert get_construction("points", hash="blake2b-64").bits == 64
