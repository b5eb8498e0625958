"""The bottom layer: plain concepts every other layer builds on.

Errors, typed fields and declared parameters, servers, the ring and its
statistics, hashing, the workload, the cache model, the results and table
models, safe file handling, the machine, and the C binding package
(`harness.core.native`). Nothing here imports a layer above it.
"""
