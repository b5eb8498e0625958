"""The replication metric ([replication]): R copies of each object, their balance, one
failure and one join. `metric` measures; `changes` says which copies a change moves."""
