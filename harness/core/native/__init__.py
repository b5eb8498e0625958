"""The C binding package: the only code that touches cffi and the compiled modules.

One binding module per C unit of cext/, named after it: `ring` (ring.c), `bucketed`
(bucketed.c), `lru` (lru.c), `hashes` (hashes.c), `algorithms` (algorithms.c),
`range_hashes` (range_hashes.c), `generate` (generate.c and blake2b_lanes.c), `lean`
(lean.c), `random_access` (random_access.c), `replicas` (replicas.c), `md5_many`
(md5_many.c), `crc32_many` (crc32_many.c), `scalar` (scalar.c) and `counted` (counted.c).
What they share, the cffi handle of `compiled._ring_c` (built from cext/build_ffi.py) and
the array helpers, is in the private `_c`. `compiled._scalar` holds the vectorcall lookups
of cext/scalar.c, `compiled._counted` callgrind's marker. Everything above this package
takes and returns numpy arrays and Python values, and imports a unit as
`from harness.core.native import algorithms as c_algorithms`.
"""
