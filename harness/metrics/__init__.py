"""Metric families, one module each: balance, collisions, movement, memory, throughput.

Each module declares its metric (name, what it needs, how it measures, the
record it writes and the tables it contributes); `harness.metrics.registry`
lists them and the runner walks that list. Definitions: docs/design.md.
"""
