"""`[keys] hash_part = "tag"` (harness/core/workload.py, on names) and the Redis Cluster
client's tag (harness/core/client_hashes.py, on bytes; one function serves both forms,
checked against Redis's own `keyHashSlot` vectors in tests/unit/test_client_recipes.py)
take the same part of every key: braces anywhere, empty tags, unmatched braces,
multi-byte text around them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.core import client_hashes, workload

NAMES = st.text(alphabet=st.sampled_from(["{", "}", "a", "é", "\u4e2d", "\U0001f600", " ", "\x1b"]),
                max_size=24)


@settings(max_examples=1_000, deadline=None)
@given(NAMES)
def test_the_key_option_and_the_redis_client_hash_the_same_part(name: str) -> None:
    option = workload.hashed_part(workload.KeysSpec(hash_part="tag"))
    assert option(name).encode() == client_hashes.hash_tag(name.encode())
