"""Reproduce the articles' published figures from measurement: `python -m harness reproduce`.

`bands` (tolerances), `reading` (figures out of results), `checks` (a figure
against its band), `figures` (the declared list), `render` (REPRODUCTION.md),
`plots` (PNGs), `command` (run the scenarios, then write all of it).
"""
