"""Metric families, one module each: balance, collisions, movement, memory, throughput.

Names and definitions follow DESIGN.md; the result tables use these names.
"""
