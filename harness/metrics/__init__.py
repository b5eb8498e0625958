"""Metric families, one module each (balance, collisions, load, movement, memory, ...).

Each module declares its metric: its name, what it needs, how it measures,
the typed record it writes and the tables it contributes.
`harness.metrics.registry` lists them and the runner walks that list.
Definitions: docs/design.md.
"""
