"""Real clients' rings as client traits (`client_traits.ClientTraits`): the shipped
constructions restated, and clients the harness ships no construction for.

Each entry is the `points` construction's parameters; `tests/unit/test_client_traits.py`
holds each restated construction to the shipped one, point for point, and
`tests/live/test_hashring_traits_live.py` holds npm hashring's to the library itself.
"""

from __future__ import annotations

from typing import Any

_KETAMA: dict[str, Any] = {"hash": "md5-32le", "point_name": "{server}-{j}",
                           "points_per_weight": 40, "points_per_digest": 4}

#: a shipped construction (name and parameters) -> the same ring as `points` traits
SHIPPED_AS_TRAITS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "libketama": ({"construction": "libketama"},
                  {**_KETAMA, "weight_rounding": "share-exact", "collision_winner": "last"}),
    "libmemcached": ({"construction": "libmemcached"},
                     {**_KETAMA, "weight_rounding": "share-single",
                      "server_form": "without-port-11211"}),
    "libmemcached spy": ({"construction": "libmemcached", "mode": "spy"},
                         {**_KETAMA, "point_name": "/{server}-{j}",
                          "weight_rounding": "share-single"}),
    "libmemcached ketama": ({"construction": "libmemcached", "mode": "ketama"},
                            {"hash": "md5-32le", "point_name": "{server}-{j}",
                             "points_per_weight": 100, "server_form": "without-port-11211"}),
    "twemproxy md5": ({"construction": "twemproxy", "key_hash": "md5"},
                      {**_KETAMA, "weight_rounding": "share-single",
                       "server_form": "without-port-11211"}),
    "nginx": ({"construction": "nginx"},
              {"hash": "crc32", "chain": "previous", "server_form": "host-nul-port",
               "points_per_weight": 160}),
}

#: clients with no construction of their own: (what they are, algorithm, its parameters);
#: each checked against the client's own routing (tests/fixtures/real_clients/)
OTHER_CLIENTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "npm hashring": (
        "npm hashring 3.2.0, default options: libketama's continuum with each server's "
        "digests floored in double precision", "ring",
        {"construction": "points", **_KETAMA, "weight_rounding": "share-double"}),
    "pypi hashring": (
        "hashring 1.5.1 and hash_ring (PyPI): three points a digest, floor(40 x N x w / "
        "total) in double precision, the next point strictly after the key's hash, the last "
        "listed server keeping an equal point", "ring",
        {"construction": "points", **_KETAMA, "points_per_digest": 3,
         "weight_rounding": "share-double-scaled", "tie": "after",
         "collision_winner": "last"}),
    "python-memcached": (
        "python-memcached 1.62: (CRC-32 >> 16) & 0x7fff mod the buckets, a server in as "
        "many buckets as its weight", "modulo",
        {"key_hash": "crc32", "shift": 16, "mask_bits": 15, "weights": "repeat"}),
    "clandestined": (
        "clandestined 1.1.0: rendezvous, MurmurHash3 of '<server>-<key>', seed 0, a tie to "
        "the greater name", "rendezvous-score", {}),
}
