"""What we hold for a foreign peer, before it is started: each peer's own share.

A library peer's ring is in its worker, a process kept beside ours through the run, so
its structure is counted with ours (an upper bound for our process alone);
a process peer's structure is in its own process (the report gives its PSS), but the
batch we hold for it is ours: the packed keys, and for the pipe the encoded request and
the reply. All peers' batches are held at once through the timing rounds; the check of a
peer's claim routes every key through our recipe, one peer at a time.

Measured with tracemalloc (libmemcached's ketama through both doors, 200,000 keys of 10
and 60 characters): a library's batch held 19.5 and 70 bytes a key, a pipe's 33 and 134,
so about 10 + L and 13 + 2L for names of L bytes; the claim check took 130 bytes a key
beyond, whatever the length. Each bound below has a margin of about two.

A process peer of protocol 2 takes its batches in a shared region (a memfd we map, which
tracemalloc does not see): the batch's u64 offsets, u16 owners and the names once, 10 + L
bytes a key (hashes: 10), rounded up to pages and grown by a quarter at most at a time.
Whether a peer shares batches is known only from its HELLO, so every process peer is
charged the region (with a margin, 16 + L) beside the pipe's request, which a sharing peer
no longer holds: an upper bound either way.
"""

from __future__ import annotations

from harness.recipes.peers.foreign.spec import ForeignPeerSpec

#: a batch's bytes per key beyond its names, and how many copies of the names it holds
#: (a library: the packed keys; the pipe: those and the request; hashes: 8 bytes more)
BATCH_BYTES_PER_KEY = {"library": 32, "command": 48}
NAME_COPIES = {"library": 2, "command": 3}
HASHES_BYTES_PER_KEY = 16
#: the shared region of a process peer (protocol 2): per key beyond one copy of the names
REGION_BYTES_PER_KEY = 16
#: what we assume of a library's own structure per point of its recipe (ours is 6 to 100)
LIBRARY_BYTES_PER_POINT = 128
#: bytes per key held once for all the peers: the names encoded (a bytes object and its
#: list slot, 41 bytes and the name), and one claim check at a time (130 measured)
SHARED_BYTES_PER_KEY = 320
SHARED_NAME_COPIES = 2


def held_bytes(spec: ForeignPeerSpec, keys: int, longest_name: int, points: int) -> float:
    """Bytes we hold for this peer through a run: its batch, and a library's structure."""
    per_key = BATCH_BYTES_PER_KEY[spec.kind] + NAME_COPIES[spec.kind] * longest_name
    if spec.input == "hashes":
        per_key += HASHES_BYTES_PER_KEY
    if spec.kind == "command":
        per_key += REGION_BYTES_PER_KEY + longest_name
    structure = LIBRARY_BYTES_PER_POINT * points if spec.kind == "library" else 0
    return float(per_key * keys + structure)


def shared_bytes(keys: int, longest_name: int) -> float:
    """Bytes held once whatever the peers: the encoded names, one claim check."""
    return float((SHARED_BYTES_PER_KEY + SHARED_NAME_COPIES * longest_name) * keys)
