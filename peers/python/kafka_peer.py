"""Kafka's default partitioner as a process-protocol peer: kafka-python 3.0's own
`DefaultPartitioner` chooses the partition of every key, the BUILD servers being the
partitions 0..N-1 of one topic; ring-harness's `kafka-murmur2` algorithm routes the same.

    peers = [{ command = [".venv/bin/python", "peers/python/kafka_peer.py"],
               name = "kafka-python", routes_like = { algorithm = "kafka-murmur2" } }]

It needs kafka-python importable by the interpreter that runs it (the `test` extra installs
it in the project's virtual environment). No broker is contacted: the partitioner is given
the topic's partitions through a cluster-metadata stand-in with the three methods it reads.
Partitions have no weights: a weighted BUILD is refused.
"""

from __future__ import annotations

import sys

from kafka.partitioner.default import DefaultPartitioner
from peer_protocol import CHANGE, MEMORY, TIME, serve

TOPIC = "ring-harness"


class Partitions:
    """What DefaultPartitioner.partition reads of a cluster's metadata: one topic's
    partitions, all available."""

    def __init__(self, count: int) -> None:
        self.ids = set(range(count))

    def topics(self) -> set[str]:
        return {TOPIC}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return self.ids

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return self.ids


class Peer:
    def __init__(self) -> None:
        self.partitioner = DefaultPartitioner()
        self.servers: list[tuple[str, float]] = []
        self.cluster = Partitions(0)

    def build(self) -> int:
        for name, weight in self.servers:
            if weight != 1:
                raise ValueError(f"Kafka's partitions have no weights (server {name!r} has "
                                 f"{weight:g})")
        if not self.servers:
            raise ValueError("a topic needs one partition at least")
        self.cluster = Partitions(len(self.servers))
        return -1

    def configure(self, params: str) -> None:
        if params:
            raise ValueError(f"takes no parameters (got {params!r})")

    def route(self, keys: list[bytes]) -> list[int]:
        partition, cluster = self.partitioner.partition, self.cluster
        return [partition(TOPIC, key, key, None, None, cluster) for key in keys]

    def memory(self) -> int:
        # No structure: the partition is computed from the key and the count alone.
        return 0

    def close(self) -> None:
        pass


if __name__ == "__main__":
    sys.exit(serve(Peer(), b"kafka_peer.py", TIME | MEMORY | CHANGE))
